/*
 * Packet fixtures for xlb's connection to the backend (dataplane/l7/l7_connect.c; docs/l7.md
 * "A connection's life" 3 and "When xlb answers itself"): the SYN is retransmitted after
 * 250 ms, doubling, four times, then the request fails UNAVAILABLE "the backend did not
 * answer"; a RST to the SYN fails it "the backend refused the connection"; a replay longer
 * than the client's MSS goes in MSS-sized segments and is retransmitted from what the backend
 * acknowledged until all of it is. An endpoint with several addresses (A61): a refused or
 * silent (250 ms) address gives way to the next. Retransmissions come from xlb_l7_poll, as each
 * worker loop calls it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "l7/l7.h"
#include "l7_fixture.h"

static unsigned poll_after(struct l7_fixture *x, uint32_t ms)
{
    l7_advance_ms(x, ms);
    unsigned before = x->n->f->ctx.tx[0].n;
    xlb_l7_poll(&x->n->f->ctx, x->n->f->snap);
    return x->n->f->ctx.tx[0].n - before;
}

/* Preface, SETTINGS, SETTINGS ACK, HEADERS: the backend SYN is out (l7_request checks it). */
static void bound(struct l7_fixture *x, struct l7_conn *c, struct h2_bytes *replay)
{
    struct h2_peer peer;
    h2_peer_init(&peer);
    struct h2_bytes block = {.len = 0}, request = {.len = 0};
    replay->len = 0;
    h2_client_hello(replay);
    h2_request_block(&peer, &block, "/svc/M", NULL);
    h2_settings_ack(&request);
    h2_headers(&request, 1, false, &block);
    h2_peer_fini(&peer);
    l7_syn(x, c);
    l7_hello(x, c, replay->b, replay->len);
    l7_request(x, c, request.b, request.len, 9);
    h2_append(replay, request.b + 9, request.len - 9);
}

/* tx frame 0 must be the trailers-only UNAVAILABLE with `reason`, GOAWAY and FIN. */
static void expect_unavailable(struct l7_fixture *x, struct l7_conn *c, const char *reason)
{
    struct l7_out o;
    l7_read(x, 0, &o);
    assert_true(o.len > 9 + 17);
    struct h2_frame_header h = h2_frame_at(o.payload);
    assert_int_equal(h.type, H2_HEADERS);
    assert_int_equal(h.stream, 1);
    assert_int_equal(9 + h.length + 17, o.len);
    nghttp2_hd_inflater *inflater;
    assert_int_equal(nghttp2_hd_inflate_new(&inflater), 0);
    struct h2_fields fields;
    h2_decode(inflater, o.payload + 9, h.length, &fields);
    nghttp2_hd_inflate_del(inflater);
    assert_string_equal(h2_field(&fields, ":status"), "200");
    assert_string_equal(h2_field(&fields, "grpc-status"), "14");
    assert_string_equal(h2_field(&fields, "grpc-message"), reason);
    struct l7_seg want =
        l7_by_xlb_to_client(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG, c->x_seq,
                            c->c_seq, l7_receive_window(c), o.payload, o.len);
    opts_ts(&want, l7_now_ms(x), c->b_tsecr);
    l7_expect(x, 0, &want);
}

/* No SYN-ACK: the SYN again after 250, 500, 1000 and 2000 ms, the very same segment; after
 * 4000 ms more the client gets UNAVAILABLE "xlb: the backend did not answer". */
static void backend_syn_is_retransmitted_then_given_up(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_bytes replay;
    l7_conn_init(&c, false);
    bound(x, &c, &replay);
    struct l7_seg syn = l7_by_xlb_to_backend(&c, RTE_TCP_SYN_FLAG, c.c_isn, 0, 65535, NULL, 0);
    opts_syn(&syn, L7_CLIENT_MSS, true, true, c.b_tsecr, 0, L7_CLIENT_WS);
    uint32_t wait = 250;
    for (int i = 0; i < 4; i++, wait *= 2) {
        assert_int_equal(poll_after(x, wait - 1), 0);
        assert_int_equal(poll_after(x, 1), 1);
        l7_expect(x, 0, &syn);
        l7_clear(x);
    }
    assert_int_equal(poll_after(x, wait - 1), 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_REJECTED), 0);
    assert_int_equal(poll_after(x, 1), 1);
    expect_unavailable(x, &c, "xlb: the backend did not answer");
    assert_int_equal(l7_event(x, XLB_EVENT_L7_REJECTED), 1);
    l7_clear(x);
    assert_int_equal(poll_after(x, 60000), 0);
}

/* A RST answering the SYN: UNAVAILABLE "xlb: the backend refused the connection" at once, and
 * no more SYNs. */
static void backend_rst_to_the_syn_is_a_refusal(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_bytes replay;
    l7_conn_init(&c, false);
    bound(x, &c, &replay);
    struct l7_seg rst =
        l7_from_backend(&c, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, 0, c.c_isn + 1, NULL, 0);
    rst.opts_len = 0;
    rst.window = 0;
    assert_int_equal(l7_send(x, &rst), 1);
    expect_unavailable(x, &c, "xlb: the backend refused the connection");
    l7_clear(x);
    assert_int_equal(poll_after(x, 10000), 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SPLICED), 0);
}

/* A61: the endpoint's first address refuses the SYN: the same SYN goes to its next address at
 * once, which answers; the connection is spliced there, and a late SYN-ACK from the first
 * address is dropped. */
static void refused_address_goes_on_to_the_next(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_bytes replay;
    l7_conn_init(&c, false);
    c.backend = L7_BACKEND4_DEAD;
    bound(x, &c, &replay);
    struct l7_seg rst =
        l7_from_backend(&c, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, 0, c.c_isn + 1, NULL, 0);
    rst.opts_len = 0;
    rst.window = 0;
    assert_int_equal(l7_send(x, &rst), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_NEXT_ADDRESS), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_REJECTED), 0);
    c.backend = NULL; /* L7_BACKEND4 from now on */
    struct l7_seg syn = l7_by_xlb_to_backend(&c, RTE_TCP_SYN_FLAG, c.c_isn, 0, 65535, NULL, 0);
    opts_syn(&syn, L7_CLIENT_MSS, true, true, c.b_tsecr, 0, L7_CLIENT_WS);
    l7_expect(x, 0, &syn);
    l7_clear(x);
    /* The first address answers after all, too late: nothing goes out, nothing is spliced. */
    struct l7_conn late = c;
    late.backend = L7_BACKEND4_DEAD;
    struct l7_seg syn_ack =
        l7_from_backend(&late, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, 77, c.c_isn + 1, NULL, 0);
    assert_int_equal(l7_send(x, &syn_ack), 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SPLICED), 0);
    l7_backend_accepts(x, &c, replay.b, replay.len);
}

/* A61/A62: the endpoint's first address stays silent: when the SYN's first retransmission is
 * due (250 ms) it goes to the next address instead, which then gets the retransmissions. */
static void silent_address_goes_on_to_the_next_after_250_ms(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_bytes replay;
    l7_conn_init(&c, false);
    c.backend = L7_BACKEND4_DEAD;
    bound(x, &c, &replay);
    assert_int_equal(poll_after(x, 249), 0);
    assert_int_equal(poll_after(x, 1), 1);
    c.backend = NULL;
    struct l7_seg syn = l7_by_xlb_to_backend(&c, RTE_TCP_SYN_FLAG, c.c_isn, 0, 65535, NULL, 0);
    opts_syn(&syn, L7_CLIENT_MSS, true, true, c.b_tsecr, 0, L7_CLIENT_WS);
    l7_expect(x, 0, &syn);
    l7_clear(x);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_NEXT_ADDRESS), 1);
    /* The last address: retransmitted to it, as a single address would be. */
    assert_int_equal(poll_after(x, 249), 0);
    assert_int_equal(poll_after(x, 1), 1);
    l7_expect(x, 0, &syn);
    l7_clear(x);
    l7_backend_accepts(x, &c, replay.b, replay.len);
}

/*
 * A client that sent a message of 2,600 bytes with its request, before it acknowledged xlb's
 * SETTINGS: the replay (2,700 bytes) goes in two segments, one MSS and the rest (PSH on the
 * last). The backend acknowledges the first only: after 250 ms the rest is sent again, and
 * once all of it is acknowledged nothing more.
 */
#define BACKEND_MSS 1400 /* below the client's L7_CLIENT_MSS */

static void long_replay_goes_in_mss_segments_until_acknowledged(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_peer peer;
    l7_conn_init(&c, false);
    h2_peer_init(&peer);
    struct h2_bytes hello = {.len = 0}, more = {.len = 0}, block = {.len = 0}, ack = {.len = 0};
    h2_client_hello(&hello);
    h2_request_block(&peer, &block, "/svc/M", NULL);
    h2_headers(&hello, 1, false, &block);
    h2_message(&hello, 1, false, 1200);
    h2_message(&more, 1, true, 1300);
    h2_settings_ack(&ack);
    h2_peer_fini(&peer);
    l7_syn(x, &c);
    l7_hello(x, &c, hello.b, hello.len);
    uint32_t tsval = c.c_tsval;
    struct l7_seg seg =
        l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq, c.x_seq, more.b, more.len);
    assert_int_equal(l7_send(x, &seg), 1);
    c.c_seq += more.len;
    struct l7_seg want =
        l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG, c.x_seq, c.c_seq, l7_receive_window(&c), NULL, 0);
    opts_ts(&want, l7_now_ms(x), tsval);
    l7_expect(x, 0, &want);
    l7_clear(x);
    l7_request(x, &c, ack.b, ack.len, 9);

    struct h2_bytes replay = hello;
    h2_append(&replay, more.b, more.len);
    /* The backend takes less than the client offered: its MSS governs, less the 12 bytes of
     * the timestamp option every replayed segment carries. */
    const uint32_t seg_len = BACKEND_MSS - 12;
    assert_true(replay.len > seg_len && replay.len <= 2 * seg_len);
    struct l7_seg syn_ack =
        l7_from_backend(&c, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, c.b_seq, c.c_isn + 1, NULL, 0);
    opts_syn(&syn_ack, BACKEND_MSS, true, true, c.b_tsval, c.b_tsecr, L7_BACKEND_WS);
    assert_int_equal(l7_send(x, &syn_ack), 2);
    c.b_seq++;
    c.ts_add = l7_now_ms(x) + 1 - c.b_tsval;
    struct l7_seg first =
        l7_by_xlb_to_backend(&c, RTE_TCP_ACK_FLAG, c.c_isn + 1, c.b_seq, 502, replay.b, seg_len);
    opts_ts(&first, c.b_tsecr, c.b_tsval);
    struct l7_seg rest =
        l7_by_xlb_to_backend(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_isn + 1 + seg_len,
                             c.b_seq, 502, replay.b + seg_len, replay.len - seg_len);
    opts_ts(&rest, c.b_tsecr, c.b_tsval);
    l7_expect(x, 0, &first);
    l7_expect(x, 1, &rest);
    l7_clear(x);

    /* The backend has the first segment only; its ACK goes on to the client. */
    struct l7_seg part =
        l7_from_backend(&c, RTE_TCP_ACK_FLAG, c.b_seq, c.c_isn + 1 + seg_len, NULL, 0);
    assert_int_equal(l7_send(x, &part), 1);
    l7_clear(x);
    assert_int_equal(poll_after(x, 249), 0);
    assert_int_equal(poll_after(x, 1), 1);
    l7_expect(x, 0, &rest);
    l7_clear(x);
    /* All acknowledged: nothing is sent again. */
    struct l7_seg all =
        l7_from_backend(&c, RTE_TCP_ACK_FLAG, c.b_seq, c.c_isn + 1 + replay.len, NULL, 0);
    assert_int_equal(l7_send(x, &all), 1);
    l7_clear(x);
    assert_int_equal(poll_after(x, 60000), 0);
    assert_int_equal(fixture_total_drops(x->n->f), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(backend_syn_is_retransmitted_then_given_up, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(backend_rst_to_the_syn_is_a_refusal, l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(refused_address_goes_on_to_the_next, l7_setup_addresses,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(silent_address_goes_on_to_the_next_after_250_ms,
                                        l7_setup_addresses, l7_teardown),
        cmocka_unit_test_setup_teardown(long_replay_goes_in_mss_segments_until_acknowledged,
                                        l7_setup, l7_teardown),
    };
    return cmocka_run_group_tests_name("l7_connect", tests, NULL, NULL);
}
