/*
 * Packet fixtures for receiving and binding (dataplane/l7/l7_receive.c, l7_connect.c,
 * l7_reject.c; docs/l7.md "A connection's life" 2 and 3, "When xlb answers itself"): xlb
 * holds the client's bytes until the first request is complete and its SETTINGS acknowledged,
 * answers PINGs itself, then picks, connects to the backend with the client's ISN and options
 * and replays what the client sent less the frames that were meant for xlb. A request no route
 * matches gets a trailers-only UNAVAILABLE, GOAWAY and FIN. Frames are checked byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "l7_fixture.h"

static const uint8_t opaque[8] = {'x', 'l', 'b', 'p', 'i', 'n', 'g', '!'};

/* The client's SETTINGS ACK and HEADERS POST /svc/M in one segment: xlb acknowledges them,
 * sends the backend a SYN from the SNAT address with the client's ISN and options; the
 * backend's SYN-ACK gets the replay: preface + SETTINGS + HEADERS (not the SETTINGS ACK), seq
 * from the client's ISN + 1, ack = backend ISN + 1 (l7_establish checks every frame). */
static void first_request_binds_connects_and_replays(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_peer peer;
    l7_conn_init(&c, false);
    h2_peer_init(&peer);
    l7_establish(x, &c, &peer, "/svc/M", NULL);
    h2_peer_fini(&peer);

    struct xlb_flow *f = l7_flow(x, &c);
    assert_non_null(f);
    assert_int_equal(x->n->flows->n_used, 1);
    assert_int_equal(f->endpoint_slot, L7_SLOT4);
    assert_int_equal(f->cluster_slot, CLUSTER4);
    assert_int_equal(f->snat_port, c.snat_port);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BOUND), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SPLICED), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_STREAMS), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_REJECTED), 0);
    /* The pick counted the request in flight on the cluster. */
    assert_int_equal(x->n->load->clusters[CLUSTER4].started, 1);
    assert_int_equal(x->n->load->clusters[CLUSTER4].finished, 0);
    assert_int_equal(fixture_total_drops(x->n->f), 0);

    /* The backend's segments find the connection through the SNAT port. */
    struct h2_bytes settings = {.len = 0};
    h2_backend_settings(&settings);
    l7_pass_to_client(x, &c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, settings.b, settings.len);
}

/* HEADERS before the client acknowledged xlb's SETTINGS: xlb only ACKs; the SETTINGS ACK that
 * follows binds. The replay leaves out the SETTINGS ACK that came after the HEADERS. */
static void request_waits_for_the_settings_ack(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_peer peer;
    l7_conn_init(&c, false);
    h2_peer_init(&peer);
    struct h2_bytes hello = {.len = 0}, block = {.len = 0}, headers = {.len = 0}, ack = {.len = 0};
    h2_client_hello(&hello);
    h2_request_block(&peer, &block, "/svc/M", NULL);
    h2_headers(&headers, 1, true, &block);
    h2_settings_ack(&ack);
    l7_syn(x, &c);
    l7_hello(x, &c, hello.b, hello.len);

    uint32_t tsval = c.c_tsval;
    struct l7_seg seg = l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq, c.x_seq,
                                       headers.b, headers.len);
    assert_int_equal(l7_send(x, &seg), 1);
    c.c_seq += headers.len;
    struct l7_seg want =
        l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG, c.x_seq, c.c_seq, l7_receive_window(&c), NULL, 0);
    opts_ts(&want, l7_now_ms(x), tsval);
    l7_expect(x, 0, &want);
    l7_clear(x);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BOUND), 0);

    l7_request(x, &c, ack.b, ack.len, 9);
    h2_append(&hello, headers.b, headers.len);
    l7_backend_accepts(x, &c, hello.b, hello.len);
    h2_peer_fini(&peer);
}

/* A PING before binding: xlb answers PING ACK (17 bytes, the same opaque data) itself, and the
 * PING is not replayed; xlb's sequence space holds its SETTINGS and the PING ACK, so the
 * backend's first byte reaches the client after both. */
static void ping_before_binding_is_answered_not_replayed(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_peer peer;
    l7_conn_init(&c, false);
    h2_peer_init(&peer);
    struct h2_bytes hello = {.len = 0}, ping = {.len = 0}, block = {.len = 0}, request = {.len = 0};
    h2_client_hello(&hello);
    h2_ping(&ping, opaque);
    h2_request_block(&peer, &block, "/svc/M", NULL);
    h2_settings_ack(&request);
    h2_headers(&request, 1, false, &block);
    l7_syn(x, &c);
    l7_hello(x, &c, hello.b, hello.len);

    uint32_t tsval = c.c_tsval;
    struct l7_seg seg =
        l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq, c.x_seq, ping.b, ping.len);
    assert_int_equal(l7_send(x, &seg), 1);
    c.c_seq += ping.len;
    uint8_t pong[17] = {0, 0, 8, 6, 1, 0, 0, 0, 0};
    memcpy(pong + 9, opaque, 8);
    struct l7_seg want = l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.x_seq,
                                             c.c_seq, l7_receive_window(&c), pong, 17);
    opts_ts(&want, l7_now_ms(x), tsval);
    l7_expect(x, 0, &want);
    l7_clear(x);
    c.x_seq += 17;
    c.x_tsval = l7_now_ms(x);

    l7_request(x, &c, request.b, request.len, 17 + 9);
    h2_append(&hello, request.b + 9, request.len - 9);
    l7_backend_accepts(x, &c, hello.b, hello.len);
    h2_peer_fini(&peer);

    struct h2_bytes settings = {.len = 0};
    h2_backend_settings(&settings);
    l7_pass_to_client(x, &c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, settings.b, settings.len);
}

/* SETTINGS ACK, PING and HEADERS in one segment: the request is complete, but xlb's PING ACK
 * is not acknowledged yet, so xlb answers it and waits; the client's bare ACK of it binds. */
static void ping_in_the_request_segment_binds_once_answered(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_peer peer;
    l7_conn_init(&c, false);
    h2_peer_init(&peer);
    struct h2_bytes hello = {.len = 0}, block = {.len = 0}, request = {.len = 0};
    h2_client_hello(&hello);
    h2_request_block(&peer, &block, "/svc/M", NULL);
    h2_settings_ack(&request);
    h2_ping(&request, opaque);
    uint32_t headers_at = h2_headers(&request, 1, false, &block);
    l7_syn(x, &c);
    l7_hello(x, &c, hello.b, hello.len);

    uint32_t tsval = c.c_tsval;
    struct l7_seg seg = l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq, c.x_seq,
                                       request.b, request.len);
    assert_int_equal(l7_send(x, &seg), 1);
    c.c_seq += request.len;
    uint8_t pong[17] = {0, 0, 8, 6, 1, 0, 0, 0, 0};
    memcpy(pong + 9, opaque, 8);
    struct l7_seg want = l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.x_seq,
                                             c.c_seq, l7_receive_window(&c), pong, 17);
    opts_ts(&want, l7_now_ms(x), tsval);
    l7_expect(x, 0, &want);
    l7_clear(x);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BOUND), 0);
    c.x_seq += 17;
    c.x_tsval = l7_now_ms(x);

    l7_request(x, &c, NULL, 0, 9 + 17);
    h2_append(&hello, request.b + headers_at, request.len - headers_at);
    l7_backend_accepts(x, &c, hello.b, hello.len);
    h2_peer_fini(&peer);
}

/* Client segments while xlb connects to the backend are acknowledged and kept: the replay
 * carries them after the first request (the client need not retransmit). */
static void client_segments_while_connecting_join_the_replay(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_peer peer;
    l7_conn_init(&c, false);
    h2_peer_init(&peer);
    struct h2_bytes hello = {.len = 0}, block = {.len = 0}, request = {.len = 0},
                    message = {.len = 0};
    h2_client_hello(&hello);
    h2_request_block(&peer, &block, "/svc/M", NULL);
    h2_settings_ack(&request);
    h2_headers(&request, 1, false, &block);
    h2_message(&message, 1, true, 16);
    l7_syn(x, &c);
    l7_hello(x, &c, hello.b, hello.len);
    l7_request(x, &c, request.b, request.len, 9);
    uint32_t tsval = c.c_tsval;
    struct l7_seg seg = l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq, c.x_seq,
                                       message.b, message.len);
    assert_int_equal(l7_send(x, &seg), 1);
    c.c_seq += message.len;
    struct l7_seg want = l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG, c.x_seq, c.c_seq,
                                             l7_window_after_cut(&c, 9), NULL, 0);
    opts_ts(&want, l7_now_ms(x), tsval);
    l7_expect(x, 0, &want);
    l7_clear(x);
    h2_append(&hello, request.b + 9, request.len - 9);
    h2_append(&hello, message.b, message.len);
    c.b_tsecr = tsval; /* the replay carries the client's latest TSval */
    l7_backend_accepts(x, &c, hello.b, hello.len);
    h2_peer_fini(&peer);
}

/* No route matches /other/M: a trailers-only HEADERS (:status 200, grpc-status 14,
 * grpc-message "xlb: no route matched the request", no dynamic table entry) and GOAWAY (last
 * stream 1, NO_ERROR), with FIN; no SYN to any backend. The client's FIN is acknowledged. */
static void no_route_gets_unavailable_goaway_and_fin(void **state)
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

    uint32_t tsval = c.c_tsval;
    struct l7_seg seg = l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq, c.x_seq,
                                       request.b, request.len);
    assert_int_equal(l7_send(x, &seg), 1);
    c.c_seq += request.len;
    struct l7_out o;
    l7_read(x, 0, &o);
    assert_true(o.len > 9 + 17);
    struct h2_frame_header h = h2_frame_at(o.payload);
    assert_int_equal(h.type, H2_HEADERS);
    assert_int_equal(h.flags, H2_END_HEADERS | H2_END_STREAM);
    assert_int_equal(h.stream, 1);
    assert_int_equal(9 + h.length + 17, o.len);
    nghttp2_hd_inflater *inflater;
    assert_int_equal(nghttp2_hd_inflate_new(&inflater), 0);
    struct h2_fields fields;
    h2_decode(inflater, o.payload + 9, h.length, &fields);
    assert_int_equal(nghttp2_hd_inflate_get_num_table_entries(inflater), 61);
    nghttp2_hd_inflate_del(inflater);
    assert_true(fields.n == 4);
    assert_string_equal(fields.f[0].name, ":status");
    assert_string_equal(fields.f[0].value, "200");
    assert_string_equal(h2_field(&fields, "content-type"), "application/grpc");
    assert_string_equal(h2_field(&fields, "grpc-status"), "14");
    assert_string_equal(h2_field(&fields, "grpc-message"), "xlb: no route matched the request");
    static const uint8_t goaway[17] = {0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
    assert_memory_equal(o.payload + 9 + h.length, goaway, 17);
    /* The whole frame, byte for byte (the block as decoded above). */
    struct l7_seg want =
        l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG, c.x_seq,
                            c.c_seq, l7_receive_window(&c), o.payload, o.len);
    opts_ts(&want, l7_now_ms(x), tsval);
    l7_expect(x, 0, &want);
    uint32_t sent = o.len;
    l7_clear(x);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_REJECTED), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BOUND), 0);
    assert_int_equal(x->n->load->clusters[CLUSTER4].started, 0);
    struct xlb_flow *f = l7_flow(x, &c);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_CLOSING);
    c.x_seq += sent + 1; /* and the FIN */
    c.x_tsval = l7_now_ms(x);

    /* The client closes too: its FIN is acknowledged (the TSecr: see the next test). */
    struct l7_seg fin =
        l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, c.c_seq, c.x_seq, NULL, 0);
    assert_int_equal(l7_send(x, &fin), 1);
    l7_read(x, 0, &o);
    assert_true(o.tsecr >= L7_CLIENT_TS && o.tsecr < c.c_tsval);
    want = l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG, c.x_seq, c.c_seq + 1, 0, NULL, 0);
    opts_ts(&want, l7_now_ms(x), o.tsecr);
    l7_expect(x, 0, &want);
}

/*
 * Once xlb has rejected the request, the client's FIN is acknowledged with the FIN's own TSval
 * echoed (RFC 7323 4.3: TS.Recent takes the TSval of a segment at Last.ACK.sent), not the
 * request segment's, which would skew the client's RTT sample.
 */
static void fin_after_rejection_is_acknowledged_with_its_tsval(void **state)
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
    c.x_seq += o.len + 1;
    c.x_tsval = l7_now_ms(x);
    l7_clear(x);
    l7_advance_ms(x, 50);
    uint32_t tsval = c.c_tsval;
    struct l7_seg fin =
        l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, c.c_seq, c.x_seq, NULL, 0);
    assert_int_equal(l7_send(x, &fin), 1);
    struct l7_seg want =
        l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG, c.x_seq, c.c_seq + 1, 0, NULL, 0);
    opts_ts(&want, l7_now_ms(x), tsval);
    l7_expect(x, 0, &want);
}

/* The whole way over IPv6: SYN cookie, SETTINGS, binding, replay, one segment each way. */
static void ipv6_connection_binds_and_splices(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    struct h2_peer peer;
    l7_conn_init(&c, true);
    h2_peer_init(&peer);
    l7_establish(x, &c, &peer, "/svc/M", NULL);
    h2_peer_fini(&peer);
    struct xlb_flow *f = l7_flow(x, &c);
    assert_non_null(f);
    assert_int_equal(f->endpoint_slot, L7_SLOT6);
    struct h2_bytes settings = {.len = 0}, message = {.len = 0};
    h2_backend_settings(&settings);
    l7_pass_to_client(x, &c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, settings.b, settings.len);
    h2_message(&message, 1, true, 32);
    l7_pass_to_backend(x, &c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, message.b, message.len);
    assert_int_equal(fixture_total_drops(x->n->f), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(first_request_binds_connects_and_replays, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(request_waits_for_the_settings_ack, l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(ping_before_binding_is_answered_not_replayed, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(ping_in_the_request_segment_binds_once_answered, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(client_segments_while_connecting_join_the_replay, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(no_route_gets_unavailable_goaway_and_fin, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(fin_after_rejection_is_acknowledged_with_its_tsval,
                                        l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(ipv6_connection_binds_and_splices, l7_setup, l7_teardown),
    };
    return cmocka_run_group_tests_name("l7_bind", tests, NULL, NULL);
}
