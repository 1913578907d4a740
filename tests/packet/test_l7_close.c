/*
 * Packet fixtures for the end of L7 connections (dataplane/l7/l7_closed.c; docs/l7.md "A
 * connection's life"): once the exchange is over (FINs from both sides, a RST, or a connection
 * xlb ended whose client FIN it acknowledged), the connection's pool entry is back at once; its
 * flow (kind XLB_FLOW_KIND_L7_CLOSED) still passes the last segments both ways translated byte
 * for byte as while spliced, answers a client's retransmitted FIN to a connection xlb ended,
 * counts nothing twice, and ends after the CLOSED timeout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#include "l7/l7_conn.h"
#include "l7_fixture.h"

#define POOL 8u /* the fixture's pool (and flow table) */

struct spliced {
    struct l7_conn c;
    struct h2_peer client, backend;
};

static unsigned pool_free(const struct l7_fixture *x)
{
    return rte_mempool_avail_count(x->l7->conns);
}

static unsigned bindings_free(const struct l7_fixture *x)
{
    return rte_mempool_avail_count(x->l7->bindings);
}

static void establish(struct l7_fixture *x, struct spliced *s, uint16_t port)
{
    l7_conn_init(&s->c, false);
    s->c.port = port;
    h2_peer_init(&s->client);
    h2_peer_init(&s->backend);
    l7_establish(x, &s->c, &s->client, "/svc/M", NULL);
}

static void finish(struct spliced *s)
{
    h2_peer_fini(&s->client);
    h2_peer_fini(&s->backend);
}

/* The backend answers stream 1 with grpc-status 0 (counted a success). */
static void answer(struct l7_fixture *x, struct spliced *s)
{
    struct h2_bytes b = {.len = 0}, block = {.len = 0};
    h2_backend_settings(&b);
    h2_response_block(&s->backend, &block);
    h2_headers(&b, 1, false, &block);
    h2_message(&b, 1, false, 8);
    h2_trailers_block(&s->backend, &block, "0");
    h2_headers(&b, 1, true, &block);
    l7_pass_to_client(x, &s->c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b.b, b.len);
}

/* The client's FIN, then the backend's: both pass translated; the second gives the entry back. */
static void close_both(struct l7_fixture *x, struct l7_conn *c)
{
    unsigned before = pool_free(x);
    l7_pass_to_backend(x, c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, NULL, 0);
    c->c_seq += 1;
    assert_int_equal(pool_free(x), before); /* half closed: the connection goes on */
    assert_int_equal(l7_flow(x, c)->kind, XLB_FLOW_KIND_L7_SPLICE);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, NULL, 0);
    c->b_seq += 1;
    c->x_seq += 1;
    assert_int_equal(pool_free(x), before + 1);
    struct xlb_flow *f = l7_flow(x, c);
    assert_non_null(f);
    assert_int_equal(f->kind, XLB_FLOW_KIND_L7_CLOSED);
    assert_int_equal(f->state, XLB_FLOW_CLOSED);
}

/* Past the CLOSED timeout the flow is gone. */
static void expires(struct l7_fixture *x, const struct l7_conn *c)
{
    l7_advance_ms(x, (XLB_FLOW_CLOSED_TIMEOUT_S + 2) * 1000);
    for (int i = 0; i < 4; i++)
        xlb_flow_expire(&x->n->f->ctx, x->n->f->snap);
    assert_null(l7_flow(x, c));
}

/*
 * Both FINs: the entry is free at once; the client's last ACK (with a D-SACK of the backend's
 * FIN), a retransmitted FIN from either side still pass with seq, ACK, SACK edges, timestamps and
 * window translated; the RPC is counted once; the flow ends after the CLOSED timeout.
 */
static void fins_free_the_entry_and_the_flow_translates_the_rest(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s, L7_CLIENT_PORT);
    struct l7_conn *c = &s.c;
    struct xlb_worker_load *load = x->n->load;
    assert_int_equal(pool_free(x), POOL - 1);
    answer(x, &s);
    close_both(x, c);
    assert_int_equal(pool_free(x), POOL);

    /* The client's last ACK, with a D-SACK block of the backend's FIN. */
    uint32_t tsval = c->c_tsval;
    struct l7_seg in = l7_from_client(c, RTE_TCP_ACK_FLAG, c->c_seq, c->x_seq, NULL, 0);
    uint32_t left = c->x_seq - 1, right = c->x_seq;
    opts_ts_sack(&in, tsval, c->x_tsval, 1, &left, &right);
    assert_int_equal(l7_send(x, &in), 1);
    struct l7_seg want = l7_spliced_to_backend(c, in);
    want.seq = c->c_seq - c->stripped;
    want.ack = c->b_seq;
    uint32_t b_left = c->b_seq - 1, b_right = c->b_seq;
    opts_ts_sack(&want, tsval, c->x_tsval - c->ts_add, 1, &b_left, &b_right);
    l7_expect(x, 0, &want);
    l7_clear(x);

    /* The backend's FIN again (its ACK was lost): to the client in its numbers. */
    l7_advance_ms(x, 200);
    c->b_tsval += 200;
    in = l7_from_backend(c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, c->b_seq - 1,
                         c->c_seq - c->stripped, NULL, 0);
    in.window = 3000;
    assert_int_equal(l7_send(x, &in), 1);
    l7_expect_to_client(x, c, 0, &in, c->x_seq - 1, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, NULL, 0);
    l7_clear(x);

    /* The client's FIN again: to the backend in its numbers. */
    tsval = c->c_tsval;
    in = l7_from_client(c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, c->c_seq - 1, c->x_seq, NULL, 0);
    assert_int_equal(l7_send(x, &in), 1);
    want = l7_spliced_to_backend(c, in);
    want.seq = c->c_seq - 1 - c->stripped;
    want.ack = c->b_seq;
    opts_ts(&want, tsval, c->x_tsval - c->ts_add);
    l7_expect(x, 0, &want);
    l7_clear(x);

    /* The backend's last ACK. */
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, NULL, 0);
    assert_int_equal(fixture_total_drops(x->n->f), 0);
    assert_int_equal(pool_free(x), POOL);

    /* Counted once: at the close, not again at the flow's end. */
    assert_int_equal(load->endpoints[L7_SLOT4].succeeded, 1);
    assert_int_equal(load->endpoints[L7_SLOT4].failed, 0);
    assert_int_equal(load->clusters[CLUSTER4].started, 1);
    assert_int_equal(load->clusters[CLUSTER4].finished, 1);
    assert_int_equal(load->endpoints[L7_SLOT4].in_flight, 0);
    expires(x, c);
    assert_int_equal(load->endpoints[L7_SLOT4].succeeded, 1);
    assert_int_equal(load->endpoints[L7_SLOT4].failed, 0);
    assert_int_equal(load->clusters[CLUSTER4].finished, 1);
    assert_int_equal(pool_free(x), POOL);
    finish(&s);
}

/* The fixture's worker L7 state replaced by one with a pool of `n` entries. */
static void small_pool(struct l7_fixture *x, uint32_t n)
{
    xlb_l7_worker_free(x->l7);
    x->l7 = xlb_l7_worker_create(0, n, SOCKET_ID_ANY);
    assert_non_null(x->l7);
    x->l7->tsc_per_ms = L7_TSC_PER_MS;
    x->l7->rotate_tsc = UINT64_MAX;
    x->n->f->ctx.l7 = x->l7;
}

/*
 * With a pool of one entry, connections opened and closed one after another within the CLOSED
 * timeout each find it: the closed ones keep only their flows (as many as the table holds).
 */
static void a_pool_of_one_serves_connections_one_after_another(void **state)
{
    struct l7_fixture *x = *state;
    small_pool(x, 1);
    uint16_t n = POOL - 1; /* flows: the table's size */
    for (uint16_t i = 0; i < n; i++) {
        struct spliced s;
        establish(x, &s, (uint16_t)(L7_CLIENT_PORT + i));
        assert_int_equal(pool_free(x), 0);
        answer(x, &s);
        close_both(x, &s.c);
        assert_int_equal(pool_free(x), 1);
        l7_advance_ms(x, 10);
        finish(&s);
    }
    assert_int_equal(l7_event(x, XLB_EVENT_L7_POOL_FULL), 0);
    assert_int_equal(x->n->flows->n_used, n);
    assert_int_equal(x->n->load->clusters[CLUSTER4].started, n);
    assert_int_equal(x->n->load->clusters[CLUSTER4].finished, n);
    assert_int_equal(x->n->load->endpoints[L7_SLOT4].succeeded, n);
}

/*
 * With the 8 entries of the pool taken, the 9th client's cookie ACK is refused: one RST back
 * (seq = the ACK's ack), so the client gives up at once, no flow, the refusal counted once
 * (events.l7_pool_full) and nothing counted as dropped. Every frame in is accounted for exactly
 * once: sent, dropped or handled (the robustness tests' invariant).
 */
static void the_ninth_connection_is_refused_and_counted_once(void **state)
{
    struct l7_fixture *x = *state;
    const struct fixture *f = x->n->f;
    uint64_t answered = 0; /* frames in turned around and sent: SYN-ACKs and RSTs */
    for (uint16_t i = 0; i < POOL; i++) {
        struct l7_conn c;
        l7_conn_init(&c, false);
        c.port = (uint16_t)(L7_CLIENT_PORT + i);
        l7_syn(x, &c);            /* the SYN turned into the SYN-ACK */
        l7_hello(x, &c, NULL, 0); /* the ACK handled; xlb's SETTINGS are a frame of its own */
        answered++;
    }
    assert_int_equal(pool_free(x), 0);
    uint32_t flows = x->n->flows->n_used;
    uint64_t resets = l7_event(x, XLB_EVENT_TCP_RESETS_SENT);

    struct l7_conn c;
    l7_conn_init(&c, false);
    c.port = (uint16_t)(L7_CLIENT_PORT + POOL);
    l7_syn(x, &c); /* cookies need no entry */
    answered++;
    struct l7_seg ack = l7_from_client(&c, RTE_TCP_ACK_FLAG, c.c_seq, c.x_seq, NULL, 0);
    assert_int_equal(l7_send(x, &ack), 1);
    answered++; /* the ACK turned into the RST */
    struct l7_out o;
    l7_read(x, 0, &o);
    assert_int_equal(o.flags, RTE_TCP_RST_FLAG);
    assert_int_equal(o.seq, c.x_seq);
    assert_int_equal(o.sport, VIP_PORT);
    assert_int_equal(o.dport, c.port);
    l7_clear(x);

    assert_int_equal(l7_event(x, XLB_EVENT_L7_POOL_FULL), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_TCP_RESETS_SENT), resets + 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_CONNECTIONS), POOL);
    assert_int_equal(x->n->flows->n_used, flows);
    assert_int_equal(fixture_total_drops(f), 0);
    assert_int_equal(f->stats.rx_packets,
                     answered + fixture_total_drops(f) + f->stats.events[XLB_EVENT_CONSUMED]);
}

/*
 * The binding entry (the kept client bytes and the first request) is taken at the handshake and
 * given back once the backend acknowledges the replay, while the connection goes on with its
 * pool entry alone; the next connection gets it again.
 */
static void the_binding_entry_is_back_once_the_replay_is_acknowledged(void **state)
{
    struct l7_fixture *x = *state;
    unsigned all = bindings_free(x);
    struct spliced s;
    establish(x, &s, L7_CLIENT_PORT);
    assert_int_equal(bindings_free(x), all - 1); /* the replay is not acknowledged yet */
    assert_non_null(xlb_l7_conn_of(&x->n->f->ctx, l7_flow(x, &s.c))->binding);
    answer(x, &s); /* the backend's response acknowledges the replay */
    assert_int_equal(bindings_free(x), all);
    assert_null(xlb_l7_conn_of(&x->n->f->ctx, l7_flow(x, &s.c))->binding);
    assert_int_equal(pool_free(x), POOL - 1); /* the connection itself goes on */
    close_both(x, &s.c);
    assert_int_equal(bindings_free(x), all);
    finish(&s);

    struct spliced t; /* a connection after it binds as well */
    establish(x, &t, L7_CLIENT_PORT + 1);
    assert_int_equal(bindings_free(x), all - 1);
    answer(x, &t);
    assert_int_equal(bindings_free(x), all);
    finish(&t);
}

/* A RST ends the exchange: it passes translated, the entry is back, the open RPC failed once;
 * a backend segment still in flight passes translated; the flow ends after the CLOSED time. */
static void a_reset_frees_the_entry(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s, L7_CLIENT_PORT);
    struct l7_conn *c = &s.c;
    struct xlb_worker_load *load = x->n->load;
    uint32_t tsval = c->c_tsval;
    struct l7_seg in =
        l7_from_client(c, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, c->c_seq, c->x_seq, NULL, 0);
    assert_int_equal(l7_send(x, &in), 1);
    struct l7_seg want = l7_spliced_to_backend(c, in);
    want.seq = c->c_seq - c->stripped;
    want.ack = c->b_seq;
    opts_ts(&want, tsval, c->x_tsval - c->ts_add);
    l7_expect(x, 0, &want);
    l7_clear(x);
    c->b_tsecr = tsval;
    assert_int_equal(pool_free(x), POOL);
    assert_int_equal(bindings_free(x), POOL); /* the replay was never acknowledged: back too */
    struct xlb_flow *f = l7_flow(x, c);
    assert_non_null(f);
    assert_int_equal(f->kind, XLB_FLOW_KIND_L7_CLOSED);
    assert_int_equal(load->endpoints[L7_SLOT4].failed, 1);
    assert_int_equal(load->clusters[CLUSTER4].finished, 1);

    /* Backend data sent before the RST reached it. */
    struct h2_bytes b = {.len = 0};
    h2_backend_settings(&b);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, b.b, b.len);
    expires(x, c);
    assert_int_equal(load->endpoints[L7_SLOT4].failed, 1);
    assert_int_equal(load->clusters[CLUSTER4].finished, 1);
    finish(&s);
}

/* xlb rejects the request (GOAWAY and FIN): the client's FIN is acknowledged and the entry is
 * back; the same FIN again is acknowledged again, by the flow alone. */
static void a_rejected_connection_frees_the_entry_at_the_clients_fin(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_peer peer;
    l7_conn_init(&c, false);
    h2_peer_init(&peer);
    struct h2_bytes hello = {.len = 0}, block = {.len = 0}, request = {.len = 0};
    h2_client_hello(&hello);
    h2_request_block(&peer, &block, "/other/M", NULL);
    h2_settings_ack(&request);
    h2_headers(&request, 1, true, &block);
    h2_peer_fini(&peer);
    l7_syn(x, &c);
    l7_hello(x, &c, hello.b, hello.len);
    struct l7_seg seg = l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq, c.x_seq,
                                       request.b, request.len);
    assert_int_equal(l7_send(x, &seg), 1);
    c.c_seq += request.len;
    struct l7_out o;
    l7_read(x, 0, &o);
    c.x_seq += o.len + 1; /* the answer and the FIN */
    l7_clear(x);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_REJECTED), 1);
    assert_int_equal(pool_free(x), POOL - 1);

    for (int round = 0; round < 2; round++) {
        l7_advance_ms(x, 300);
        uint32_t tsval = c.c_tsval;
        struct l7_seg fin =
            l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, c.c_seq, c.x_seq, NULL, 0);
        assert_int_equal(l7_send(x, &fin), 1);
        struct l7_seg want =
            l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG, c.x_seq, c.c_seq + 1, 0, NULL, 0);
        opts_ts(&want, l7_now_ms(x), tsval);
        l7_expect(x, 0, &want);
        l7_clear(x);
        assert_int_equal(pool_free(x), POOL);
        assert_int_equal(l7_flow(x, &c)->kind, XLB_FLOW_KIND_L7_CLOSED);
    }
    /* Its last ACK is taken in silence. */
    struct l7_seg ack = l7_from_client(&c, RTE_TCP_ACK_FLAG, c.c_seq + 1, c.x_seq, NULL, 0);
    assert_int_equal(l7_send(x, &ack), 0);
    assert_int_equal(fixture_total_drops(x->n->f), 0);
    expires(x, &c);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_REJECTED), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fins_free_the_entry_and_the_flow_translates_the_rest,
                                        l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(a_pool_of_one_serves_connections_one_after_another,
                                        l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(a_reset_frees_the_entry, l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(the_ninth_connection_is_refused_and_counted_once, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(the_binding_entry_is_back_once_the_replay_is_acknowledged,
                                        l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(a_rejected_connection_frees_the_entry_at_the_clients_fin,
                                        l7_setup, l7_teardown),
    };
    return cmocka_run_group_tests_name("l7_close", tests, NULL, NULL);
}
