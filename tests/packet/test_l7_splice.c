/*
 * Packet fixtures for spliced L7 connections (dataplane/l7/l7_splice.c, l7_inspect.c,
 * l7_streams.c; docs/l7.md "A connection's life" 4 and "After binding"): every segment passes
 * rewritten in place, its numbers translated between the client's connection (xlb's sequence
 * space: its 9 SETTINGS bytes first, its timestamps) and the backend's (the replay lacks the
 * 9-byte SETTINGS ACK); and each RPC's outcome is counted for its endpoint and locality.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "l7_fixture.h"
#include "xlb_const.h"

#define LOCALITY4 1 /* the IPv4 cluster's locality load slot (l7_fixture.c) */

struct spliced {
    struct l7_conn c;
    struct h2_peer client, backend;
};

static void establish(struct l7_fixture *x, struct spliced *s)
{
    l7_conn_init(&s->c, false);
    h2_peer_init(&s->client);
    h2_peer_init(&s->backend);
    l7_establish(x, &s->c, &s->client, "/svc/M", NULL);
}

static void finish(struct spliced *s)
{
    h2_peer_fini(&s->client);
    h2_peer_fini(&s->backend);
}

/* The backend's first data (its SETTINGS, the response HEADERS, a DATA frame) reaches the
 * client with seq = the backend's seq mapped past xlb's 9 SETTINGS bytes, ACK plus the 9 bytes
 * of SETTINGS ACK cut from the replay, TSval shifted past xlb's clock, the window rescaled from
 * the backend's scale 6 to xlb's 7, addresses VIP -> client, payload untouched. */
static void backend_data_reaches_the_client_in_xlbs_numbers(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    assert_int_equal(c->x_seq, c->cookie + 1 + 9);
    assert_int_equal(c->stripped, 9);

    struct h2_bytes block = {.len = 0}, data = {.len = 0};
    h2_response_block(&s.backend, &block);
    h2_backend_settings(&data);
    h2_headers(&data, 1, false, &block);
    h2_message(&data, 1, false, 40);
    l7_advance_ms(x, 20);
    c->b_tsval += 20;
    /* Checked by hand once: seq cookie + 10, ACK the client's next seq, TSval + ts_add. */
    struct l7_seg in = l7_from_backend(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->b_seq,
                                       c->c_seq - 9, data.b, data.len);
    in.window = 2000;
    assert_int_equal(l7_send(x, &in), 1);
    struct l7_seg want = l7_spliced_to_client(c, in);
    want.seq = c->cookie + 1 + 9;
    want.ack = c->c_seq;
    want.window = 1000; /* 2000 << 6 >> 7 */
    opts_ts(&want, c->b_tsval + c->ts_add, c->b_tsecr);
    l7_expect(x, 0, &want);
    l7_clear(x);
    /* The backend's timestamps are ahead of every TSval xlb gave the client. */
    assert_true((int32_t)(c->b_tsval + c->ts_add - c->x_tsval) > 0);
    c->b_seq += data.len;
    c->x_seq += data.len;

    /* The next segment follows on (l7_pass_to_client: the same mapping). */
    struct h2_bytes more = {.len = 0};
    h2_message(&more, 1, false, 100);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, more.b, more.len);
    assert_int_equal(fixture_total_drops(x->n->f), 0);
    finish(&s);
}

/* A client ACK goes to the backend with its ACK mapped back into the backend's numbers, TSecr
 * shifted back, SACK edges translated; an old ACK that predates xlb's SETTINGS acknowledges
 * nothing of the backend's. */
static void client_ack_and_sack_map_back(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    uint32_t b0 = c->b_seq, x0 = c->x_seq;
    struct h2_bytes block = {.len = 0}, a = {.len = 0}, b = {.len = 0};
    h2_response_block(&s.backend, &block);
    h2_backend_settings(&a);
    h2_headers(&a, 1, false, &block);
    h2_message(&b, 1, false, 64);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, a.b, a.len);
    c->b_tsval += 7;
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b.b, b.len);

    /* A lost, B received: ACK the start of A, SACK B. */
    uint32_t tsval = c->c_tsval;
    struct l7_seg in = l7_from_client(c, RTE_TCP_ACK_FLAG, c->c_seq, x0, NULL, 0);
    uint32_t left = x0 + a.len, right = x0 + a.len + b.len;
    opts_ts_sack(&in, tsval, c->x_tsval, 1, &left, &right);
    assert_int_equal(l7_send(x, &in), 1);
    struct l7_seg want = l7_spliced_to_backend(c, in);
    want.seq = c->c_seq - 9;
    want.ack = b0;
    uint32_t b_left = b0 + a.len, b_right = b0 + a.len + b.len;
    opts_ts_sack(&want, tsval, c->b_tsval, 1, &b_left, &b_right);
    l7_expect(x, 0, &want);
    l7_clear(x);

    /* Everything received. */
    l7_pass_to_backend(x, c, RTE_TCP_ACK_FLAG, NULL, 0);

    /* A stale ACK of the cookie only (before xlb's SETTINGS): no backend byte acknowledged. */
    tsval = c->c_tsval;
    in = l7_from_client(c, RTE_TCP_ACK_FLAG, c->c_seq, c->cookie + 1, NULL, 0);
    assert_int_equal(l7_send(x, &in), 1);
    want = l7_spliced_to_backend(c, in);
    want.seq = c->c_seq - 9;
    want.ack = b0;
    opts_ts(&want, tsval, c->b_tsval);
    l7_expect(x, 0, &want);
    finish(&s);
}

/* Client data after the binding: seq less the 9 bytes cut; its bytes are untouched. A
 * retransmission of bytes xlb replayed is not passed on again. */
static void client_data_goes_with_seq_less_the_bytes_cut(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    struct h2_bytes message = {.len = 0};
    h2_message(&message, 1, true, 200);
    uint32_t replayed = c->c_seq - (c->c_isn + 1) - 9;
    /* Checked by hand: the backend's next byte is the client's ISN + 1 + the replay. */
    uint32_t tsval = c->c_tsval;
    struct l7_seg in = l7_from_client(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->c_seq, c->x_seq,
                                      message.b, message.len);
    assert_int_equal(l7_send(x, &in), 1);
    struct l7_seg want = l7_spliced_to_backend(c, in);
    want.seq = c->c_isn + 1 + replayed;
    want.ack = c->b_seq;
    /* The client echoes xlb's own TSval: it maps below the backend's first one. */
    assert_int_equal(c->x_tsval - c->ts_add, L7_BACKEND_TS - 1);
    opts_ts(&want, tsval, c->x_tsval - c->ts_add);
    l7_expect(x, 0, &want);
    l7_clear(x);
    c->c_seq += message.len;

    /* The preface again (a retransmission from before the binding). */
    struct h2_bytes hello = {.len = 0};
    h2_client_hello(&hello);
    in = l7_from_client(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->c_isn + 1, c->x_seq, hello.b,
                        hello.len);
    assert_int_equal(l7_send(x, &in), 0);
    assert_int_equal(l7_drop(x, XLB_DROP_L7_REPLAYED), 1);
    finish(&s);
}

/* The backend's ACK and SACK edges (client data) move up by the 9 bytes cut. */
static void backend_ack_and_sack_move_by_the_bytes_cut(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    struct h2_bytes m1 = {.len = 0}, m2 = {.len = 0};
    h2_message(&m1, 1, false, 30);
    h2_message(&m2, 1, false, 50);
    uint32_t c1 = c->c_seq;
    l7_pass_to_backend(x, c, RTE_TCP_ACK_FLAG, m1.b, m1.len);
    l7_pass_to_backend(x, c, RTE_TCP_ACK_FLAG, m2.b, m2.len);
    /* The backend got m2 but not m1: ACK m1's start, SACK m2 (its numbers). */
    uint32_t ack = c1 - 9, left = c1 + m1.len - 9, right = c->c_seq - 9;
    struct l7_seg in = l7_from_backend(c, RTE_TCP_ACK_FLAG, c->b_seq, ack, NULL, 0);
    opts_ts_sack(&in, c->b_tsval, c->b_tsecr, 1, &left, &right);
    assert_int_equal(l7_send(x, &in), 1);
    struct l7_seg want = l7_spliced_to_client(c, in);
    want.seq = c->x_seq;
    want.ack = c1;
    want.window = 500;
    uint32_t c_left = c1 + m1.len, c_right = c->c_seq;
    opts_ts_sack(&want, c->b_tsval + c->ts_add, c->b_tsecr, 1, &c_left, &c_right);
    l7_expect(x, 0, &want);
    finish(&s);
}

/* A backend segment beyond a gap is dropped (xlb reads each direction in order); the missing
 * one, then the retransmitted one, pass. */
static void backend_segment_after_a_gap_is_dropped(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    struct h2_bytes settings = {.len = 0}, block = {.len = 0}, headers = {.len = 0};
    h2_backend_settings(&settings);
    h2_response_block(&s.backend, &block);
    h2_headers(&headers, 1, false, &block);
    struct l7_seg ahead = l7_from_backend(c, RTE_TCP_ACK_FLAG, c->b_seq + settings.len,
                                          c->c_seq - 9, headers.b, headers.len);
    assert_int_equal(l7_send(x, &ahead), 0);
    assert_int_equal(l7_drop(x, XLB_DROP_L7_OUT_OF_ORDER), 1);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, settings.b, settings.len);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, headers.b, headers.len);
    finish(&s);
}

/* Per-RPC outcomes: grpc-status 0 succeeds, 14 fails, a stream reset fails; each counted once
 * for the endpoint (outlier detection) and its locality (load reports), and every stream ends
 * its request in flight on the cluster (circuit breaking). */
static void each_rpc_is_counted_by_its_grpc_status(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    struct xlb_worker_load *load = x->n->load;
    assert_int_equal(load->clusters[CLUSTER4].started, 1);
    assert_int_equal(load->localities[LOCALITY4].issued, 1);

    /* Stream 1: a response, then trailers with grpc-status 0. */
    struct h2_bytes b = {.len = 0}, block = {.len = 0};
    h2_backend_settings(&b);
    h2_response_block(&s.backend, &block);
    h2_headers(&b, 1, false, &block);
    h2_message(&b, 1, false, 8);
    h2_trailers_block(&s.backend, &block, "0");
    h2_headers(&b, 1, true, &block);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b.b, b.len);
    assert_int_equal(load->endpoints[L7_SLOT4].succeeded, 1);
    assert_int_equal(load->endpoints[L7_SLOT4].failed, 0);
    assert_int_equal(load->localities[LOCALITY4].succeeded, 1);
    assert_int_equal(load->clusters[CLUSTER4].finished, 1);

    /* Stream 3: a unary call answered trailers-only with grpc-status 14. */
    struct h2_bytes r = {.len = 0};
    h2_request_block(&s.client, &block, "/svc/M", NULL);
    h2_headers(&r, 3, false, &block);
    h2_message(&r, 3, true, 8);
    l7_pass_to_backend(x, c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, r.b, r.len);
    assert_int_equal(load->clusters[CLUSTER4].started, 2);
    assert_int_equal(load->localities[LOCALITY4].issued, 2);
    assert_int_equal(load->endpoints[L7_SLOT4].in_flight, 1); /* least request sees it */
    b.len = 0;
    struct h2_peer *p = &s.backend;
    {
        nghttp2_nv nva[] = {
            {XLB_UNCONST(":status"), XLB_UNCONST("200"), 7, 3, NGHTTP2_NV_FLAG_NONE},
            {XLB_UNCONST("grpc-status"), XLB_UNCONST("14"), 11, 2, NGHTTP2_NV_FLAG_NONE},
        };
        ssize_t n = nghttp2_hd_deflate_hd(p->deflater, block.b, sizeof(block.b), nva, 2);
        assert_true(n > 0);
        block.len = (uint32_t)n;
    }
    h2_headers(&b, 3, true, &block);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b.b, b.len);
    assert_int_equal(load->endpoints[L7_SLOT4].failed, 1);
    assert_int_equal(load->localities[LOCALITY4].failed, 1);
    assert_int_equal(load->clusters[CLUSTER4].finished, 2);

    /* Stream 5: the client resets it before any answer. */
    r.len = 0;
    h2_request_block(&s.client, &block, "/svc/M", NULL);
    h2_headers(&r, 5, false, &block);
    const uint8_t cancel[4] = {0, 0, 0, 8};
    h2_frame(&r, H2_RST_STREAM, 0, 5, cancel, 4);
    l7_pass_to_backend(x, c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, r.b, r.len);
    assert_int_equal(load->endpoints[L7_SLOT4].succeeded, 1);
    assert_int_equal(load->endpoints[L7_SLOT4].failed, 2);
    assert_int_equal(load->clusters[CLUSTER4].started, 3);
    assert_int_equal(load->clusters[CLUSTER4].finished, 3);
    assert_int_equal(load->endpoints[L7_SLOT4].in_flight, 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_STREAMS), 3);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_INSPECT_ERRORS), 0);
    finish(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(backend_data_reaches_the_client_in_xlbs_numbers, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(client_ack_and_sack_map_back, l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(client_data_goes_with_seq_less_the_bytes_cut, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(backend_ack_and_sack_move_by_the_bytes_cut, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(backend_segment_after_a_gap_is_dropped, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(each_rpc_is_counted_by_its_grpc_status, l7_setup,
                                        l7_teardown),
    };
    return cmocka_run_group_tests_name("l7_splice", tests, NULL, NULL);
}
