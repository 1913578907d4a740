/*
 * Packet fixtures for the flow dump (lib/xlb_flow_dump.h): a worker context with flows answers
 * an XLB_MSG_FLOWS_DUMP a bounded slice of its table per poll loop, publishes completion only
 * at the table's end, and its records are its flows, filtered and capped as asked.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "nat/nat.h"
#include "nat_segments.h"
#include "xlb_flow_dump.h"
#include "xlb_msg.h"

#define TABLE   2500 /* entries: three slices */
#define N_FLOWS 40   /* the first half established, the rest SYN_SENT */
#define WORKER  1

static int setup(void **state)
{
    struct nat_fixture *n = nat_fixture_two_clusters("dump", TABLE, 0, 0);
    n->f->ctx.worker_id = WORKER;
    for (uint16_t i = 0; i < N_FLOWS; i++) {
        fixture_clear_tx(n->f); /* three segments per flow: more than a TX batch holds */
        client_syn4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
        if (i < N_FLOWS / 2) {
            backend_syn_ack4(n, (uint16_t)(PORT_BASE + i), (uint16_t)(CLIENT_PORT + i));
            client_ack4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
        }
    }
    assert_int_equal(n->flows->n_used, N_FLOWS);
    *state = n;
    return 0;
}

/* A dump with room for capacity records, as the control plane makes one. */
static struct xlb_flow_dump *dump_new(uint32_t capacity)
{
    struct xlb_flow_dump *d = calloc(1, sizeof(*d) + capacity * sizeof(struct xlb_flow_record));
    assert_non_null(d);
    d->records = (struct xlb_flow_record *)(d + 1);
    d->capacity = capacity;
    return d;
}

/* Hand the dump to the worker by message, then run its poll loops' steps until it is done;
 * returns how many loops it took. Each loop reads at most one slice of the table, and the
 * dump is done only after the last. */
static unsigned run_dump(struct nat_fixture *n, struct xlb_flow_dump *d)
{
    struct xlb_msg msg = {.type = XLB_MSG_FLOWS_DUMP, .dump = d};
    xlb_burst_handle_message(&n->f->ctx, n->f->snap, &msg);
    unsigned loops = 0;
    uint32_t before = 0;
    while (!xlb_flow_dump_done(d)) {
        assert_true(loops < 100);
        xlb_burst_dump_step(&n->f->ctx);
        loops++;
        assert_true(d->cursor - before <= XLB_FLOW_DUMP_SLICE);
        uint32_t end = n->f->ctx.flows != NULL ? n->flows->capacity : 0;
        assert_true(d->cursor == end || !xlb_flow_dump_done(d));
        before = d->cursor;
    }
    assert_null(n->f->ctx.dump);
    return loops;
}

static void dump_answers_in_bounded_slices_with_every_flow(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_flow_dump *d = dump_new(100);
    unsigned loops = run_dump(n, d);
    uint32_t cap = n->flows->capacity;
    assert_true(cap >= TABLE);
    assert_int_equal(loops, (cap + XLB_FLOW_DUMP_SLICE - 1) / XLB_FLOW_DUMP_SLICE);
    assert_int_equal(d->n_matching, N_FLOWS);
    assert_int_equal(d->n_records, N_FLOWS);

    bool seen[N_FLOWS] = {false};
    for (uint32_t i = 0; i < d->n_records; i++) {
        const struct xlb_flow_record *r = &d->records[i];
        unsigned k = r->client_port - CLIENT_PORT;
        assert_true(k < N_FLOWS);
        assert_false(seen[k]);
        seen[k] = true;
        const struct xlb_flow *f = client_flow(n, FIX_PEER4, r->client_port);
        assert_non_null(f);
        assert_int_equal(r->family, AF_INET);
        assert_int_equal(r->worker, WORKER);
        assert_int_equal(r->kind, XLB_FLOW_RECORD_L4);
        assert_int_equal(r->state, f->state);
        assert_int_equal(r->state, k < N_FLOWS / 2 ? XLB_FLOW_ESTABLISHED : XLB_FLOW_SYN_SENT);
        uint8_t want[16] = {0};
        assert_int_equal(inet_pton(AF_INET, FIX_PEER4, want), 1);
        assert_memory_equal(r->client, want, 16);
        memset(want, 0, sizeof(want));
        assert_int_equal(inet_pton(AF_INET, FIX_VIP4, want), 1);
        assert_memory_equal(r->vip, want, 16);
        memset(want, 0, sizeof(want));
        assert_int_equal(inet_pton(AF_INET, BACKEND4, want), 1);
        assert_memory_equal(r->backend, want, 16);
        memset(want, 0, sizeof(want));
        assert_int_equal(inet_pton(AF_INET, SNAT4, want), 1);
        assert_memory_equal(r->snat, want, 16);
        assert_int_equal(r->vip_port, VIP_PORT);
        assert_int_equal(r->backend_port, 9001);
        assert_int_equal(r->snat_port, f->snat_port);
        assert_int_equal(r->snat_port, PORT_BASE + k);
        assert_int_equal(r->endpoint_slot, SLOT4);
        assert_int_equal(r->cluster_slot, CLUSTER4);
        uint64_t due = xlb_flow_due_tsc(n->flows, f);
        assert_true(due > n->f->ctx.now_tsc);
        assert_int_equal(r->expires_in_tsc, due - n->f->ctx.now_tsc);
    }
    free(d);
}

static void dump_filters_and_caps_its_records(void **state)
{
    struct nat_fixture *n = *state;
    /* By endpoint (address and port): every flow matches; only capacity records are kept. */
    struct xlb_flow_dump *d = dump_new(5);
    d->filter.by_endpoint = true;
    d->filter.endpoint_port = 9001;
    assert_int_equal(xlb_addr_parse(BACKEND4, &d->filter.endpoint), 0);
    run_dump(n, d);
    assert_int_equal(d->n_matching, N_FLOWS);
    assert_int_equal(d->n_records, 5);
    free(d);

    /* Another port of the backend, or the other VIP: none. */
    d = dump_new(5);
    d->filter.by_endpoint = true;
    d->filter.endpoint_port = 9002;
    assert_int_equal(xlb_addr_parse(BACKEND4, &d->filter.endpoint), 0);
    run_dump(n, d);
    assert_int_equal(d->n_matching, 0);
    assert_int_equal(d->n_records, 0);
    free(d);

    d = dump_new(5);
    d->filter.by_vip = true;
    assert_int_equal(xlb_addr_parse(FIX_VIP6, &d->filter.vip), 0);
    run_dump(n, d);
    assert_int_equal(d->n_matching, 0);
    free(d);

    /* By VIP and port: all. */
    d = dump_new(N_FLOWS);
    d->filter.by_vip = true;
    d->filter.vip_port = VIP_PORT;
    assert_int_equal(xlb_addr_parse(FIX_VIP4, &d->filter.vip), 0);
    run_dump(n, d);
    assert_int_equal(d->n_matching, N_FLOWS);
    assert_int_equal(d->n_records, N_FLOWS);
    free(d);
}

static void worker_without_flows_finishes_at_once(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_flow_table *flows = n->f->ctx.flows;
    n->f->ctx.flows = NULL;
    struct xlb_flow_dump *d = dump_new(5);
    assert_int_equal(run_dump(n, d), 1);
    assert_int_equal(d->n_matching, 0);
    assert_int_equal(d->n_records, 0);
    free(d);
    n->f->ctx.flows = flows;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(dump_answers_in_bounded_slices_with_every_flow, setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(dump_filters_and_caps_its_records, setup, nat_teardown),
        cmocka_unit_test_setup_teardown(worker_without_flows_finishes_at_once, setup, nat_teardown),
    };
    return cmocka_run_group_tests_name("flow_dump", tests, NULL, NULL);
}
