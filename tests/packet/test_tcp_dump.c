/*
 * What a worker tells the control plane about its TCP endpoint (dataplane/tcp/xlb_tcp_report.c):
 * the connection dump (lib/xlb_tcp_dump.h) reads a bounded slice of control blocks per poll
 * loop, publishes completion only at the pool's end, and records each connection as `xlbctl
 * tcp` shows it, capped as asked; the published counters are the endpoint's, field for field,
 * with the connections gauge and its high-water mark; a worker's two endpoints (relay and
 * stream engine) are dumped one after the other and their counters summed.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_fixture.h"
#include "xlb_tcp_report.h"

#define POOL      300 /* control blocks: three slices */
#define N_PASSIVE 5
#define WORKER    3

static struct tf *with_connections(struct xlb_tcp_conn **active)
{
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = POOL;
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    for (uint16_t i = 0; i < N_PASSIVE; i++) {
        f->peer.local_port = htons((uint16_t)(40000 + i));
        tf_passive(f, 100 + i, true, &iss);
    }
    struct xlb_tcp_tuple t = {
        .family = AF_INET, .local_port = htons(5000), .remote_port = htons(9002)};
    inet_pton(AF_INET, "198.18.0.100", t.local);
    inet_pton(AF_INET, "198.18.0.21", t.remote);
    *active = xlb_tcp_connect(f->ep, &t, 7, f->now, &tf_callbacks, f);
    assert_non_null(*active);
    tf_clear_tx(f);
    return f;
}

static struct xlb_tcp_dump *dump_new(uint32_t capacity)
{
    struct xlb_tcp_dump *d = calloc(1, sizeof(*d) + capacity * sizeof(struct xlb_tcp_conn_record));
    assert_non_null(d);
    d->records = (struct xlb_tcp_conn_record *)(d + 1);
    d->capacity = capacity;
    return d;
}

/* Steps until done, as the worker's loops would; returns how many it took. */
static unsigned run_dump(const struct xlb_tcp_endpoint *ep, struct xlb_tcp_dump *d)
{
    unsigned loops = 0;
    uint32_t before = 0;
    while (!xlb_tcp_dump_done(d)) {
        assert_true(loops < 100);
        bool finished = xlb_tcp_dump_step(&ep, 1, d, WORKER);
        loops++;
        assert_true(d->cursor - before <= XLB_TCP_DUMP_SLICE);
        assert_int_equal(finished, xlb_tcp_dump_done(d));
        assert_true(!finished || ep == NULL || d->cursor == POOL);
        before = d->cursor;
    }
    return loops;
}

static void dump_records_every_connection_in_bounded_slices(void **state)
{
    (void)state;
    struct xlb_tcp_conn *active;
    struct tf *f = with_connections(&active);
    struct xlb_tcp_dump *d = dump_new(100);
    assert_int_equal(run_dump(f->ep, d), (POOL + XLB_TCP_DUMP_SLICE - 1) / XLB_TCP_DUMP_SLICE);
    assert_int_equal(d->n_conns, N_PASSIVE + 1);
    assert_int_equal(d->n_records, N_PASSIVE + 1);
    uint8_t vip[16] = {0}, client[16] = {0}, backend[16] = {0};
    inet_pton(AF_INET, "198.18.0.100", vip);
    inet_pton(AF_INET, "198.18.0.2", client);
    inet_pton(AF_INET, "198.18.0.21", backend);
    bool seen[N_PASSIVE] = {false};
    unsigned syn_sent = 0;
    for (uint32_t i = 0; i < d->n_records; i++) {
        const struct xlb_tcp_conn_record *r = &d->records[i];
        assert_int_equal(r->family, AF_INET);
        assert_int_equal(r->worker, WORKER);
        assert_memory_equal(r->local, vip, 16);
        assert_true(r->memory >= xlb_tcp_conn_size());
        assert_true(r->rto_ms >= 200);
        if (strcmp(r->state, "SYN-SENT") == 0) {
            syn_sent++;
            assert_memory_equal(r->remote, backend, 16);
            assert_int_equal(r->local_port, 5000);
            assert_int_equal(r->remote_port, 9002);
            assert_int_equal(r->cwnd, 0);
            continue;
        }
        assert_string_equal(r->state, "ESTABLISHED");
        assert_memory_equal(r->remote, client, 16);
        assert_int_equal(r->local_port, 443);
        unsigned k = r->remote_port - 40000u;
        assert_true(k < N_PASSIVE);
        assert_false(seen[k]);
        seen[k] = true;
        /* The same values as the endpoint's own listing. */
        struct xlb_tcp_conn_info info[N_PASSIVE + 1];
        uint32_t n = xlb_tcp_list(f->ep, info, N_PASSIVE + 1);
        bool matched = false;
        for (uint32_t j = 0; j < n; j++)
            if (info[j].tuple.remote_port == htons(r->remote_port)) {
                matched = true;
                assert_int_equal(r->cwnd, info[j].cwnd);
                assert_int_equal(r->ssthresh, info[j].ssthresh);
                assert_int_equal(r->mss, info[j].mss);
                assert_int_equal(r->snd_wnd, info[j].snd_wnd);
                assert_int_equal(r->rcv_wnd, info[j].rcv_wnd);
                assert_int_equal(r->srtt_us, info[j].srtt_us);
                assert_int_equal(r->memory, info[j].memory);
            }
        assert_true(matched);
        assert_true(r->mss > 0 && r->cwnd > 0 && r->rcv_wnd > 0);
    }
    assert_int_equal(syn_sent, 1);
    free(d);
    xlb_tcp_abort(f->ep, active);
    tf_destroy(f);
}

static void dump_caps_records_but_counts_all(void **state)
{
    (void)state;
    struct xlb_tcp_conn *active;
    struct tf *f = with_connections(&active);
    struct xlb_tcp_dump *d = dump_new(2);
    run_dump(f->ep, d);
    assert_int_equal(d->n_conns, N_PASSIVE + 1);
    assert_int_equal(d->n_records, 2);
    free(d);
    xlb_tcp_abort(f->ep, active);
    tf_destroy(f);
}

static void dump_without_endpoint_is_done_at_once(void **state)
{
    (void)state;
    struct xlb_tcp_dump *d = dump_new(4);
    assert_int_equal(run_dump(NULL, d), 1);
    assert_int_equal(d->n_conns, 0);
    assert_int_equal(d->n_records, 0);
    free(d);
}

static void published_counters_are_the_endpoints(void **state)
{
    (void)state;
    struct xlb_tcp_conn *active;
    struct tf *f = with_connections(&active);
    struct xlb_tcp_stats st;
    memset(&st, 0, sizeof(st));
    xlb_tcp_stats_publish((const struct xlb_tcp_endpoint *const[]){f->ep}, 1, &st);
    assert_memory_equal(st.counters, xlb_tcp_counters(f->ep), sizeof(st.counters));
    assert_int_equal(st.counters[XLB_TCP_C_PASSIVE_OPENS], N_PASSIVE);
    assert_int_equal(st.counters[XLB_TCP_C_ACTIVE_OPENS], 1);
    assert_int_equal(st.conns_in_use, N_PASSIVE + 1);
    assert_int_equal(st.conns_high_water, N_PASSIVE + 1);
    assert_string_equal(xlb_tcp_counter_descs[XLB_TCP_C_RST_OUT_ABORT].name, "rst_out_abort");
    assert_string_equal(xlb_tcp_counter_descs[XLB_TCP_C_RST_OUT_ABORT].family, "resets_sent");
    assert_string_equal(xlb_tcp_counter_descs[XLB_TCP_C_RST_OUT_ABORT].value, "abort");

    xlb_tcp_abort(f->ep, active);
    xlb_tcp_stats_publish((const struct xlb_tcp_endpoint *const[]){f->ep}, 1, &st);
    assert_memory_equal(st.counters, xlb_tcp_counters(f->ep), sizeof(st.counters));
    assert_int_equal(st.conns_in_use, N_PASSIVE);
    assert_int_equal(st.conns_high_water, N_PASSIVE + 1);
    xlb_tcp_stats_publish((const struct xlb_tcp_endpoint *const[]){NULL}, 1, &st); /* none */
    assert_int_equal(st.conns_in_use, N_PASSIVE);
    tf_destroy(f);
}

/* A worker with a relay and a stream engine has two endpoints: the dump reads the one after
 * the other, in slices of each, and the counters published are their sums. */
static void two_endpoints_are_dumped_and_summed(void **state)
{
    (void)state;
    struct xlb_tcp_conn *active1, *active2;
    struct tf *f1 = with_connections(&active1);
    struct tf *f2 = with_connections(&active2);
    const struct xlb_tcp_endpoint *const eps[] = {f1->ep, NULL, f2->ep};
    struct xlb_tcp_dump *d = dump_new(100);
    unsigned loops = 0;
    while (!xlb_tcp_dump_done(d) && loops < 100) {
        xlb_tcp_dump_step(eps, 3, d, WORKER);
        loops++;
    }
    assert_int_equal(loops, 2 * ((POOL + XLB_TCP_DUMP_SLICE - 1) / XLB_TCP_DUMP_SLICE));
    assert_int_equal(d->n_conns, 2 * (N_PASSIVE + 1));
    assert_int_equal(d->n_records, 2 * (N_PASSIVE + 1));
    struct xlb_tcp_stats st;
    memset(&st, 0, sizeof(st));
    xlb_tcp_stats_publish(eps, 3, &st);
    assert_int_equal(st.counters[XLB_TCP_C_PASSIVE_OPENS], 2 * N_PASSIVE);
    assert_int_equal(st.counters[XLB_TCP_C_ACTIVE_OPENS], 2);
    assert_int_equal(st.conns_in_use, 2 * (N_PASSIVE + 1));
    free(d);
    tf_destroy(f2);
    tf_destroy(f1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dump_records_every_connection_in_bounded_slices),
        cmocka_unit_test(dump_caps_records_but_counts_all),
        cmocka_unit_test(dump_without_endpoint_is_done_at_once),
        cmocka_unit_test(published_counters_are_the_endpoints),
        cmocka_unit_test(two_endpoints_are_dumped_and_summed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
