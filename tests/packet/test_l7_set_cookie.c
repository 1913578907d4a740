/*
 * Packet fixtures for Set-Cookie insertion (dataplane/l7/l7_insert.c; docs/l7.md "Set-Cookie"):
 * the route has an A55 session cookie (name L7_COOKIE_NAME, path "/", ttl 3600 s), so the
 * response to a request whose cookie does not name the picked endpoint gets a set-cookie field
 * appended to its header block: the HEADERS frame and the segment grow by the field's length,
 * later backend bytes reach the client that much further on, a retransmission gets exactly the
 * same bytes again, and client ACKs and SACK edges map back into the backend's numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "l7_fixture.h"

/* base64 of "198.18.0.21:50051;backends4": the endpoint and the route's cluster (A60). */
#define OUR_VALUE  "MTk4LjE4LjAuMjE6NTAwNTE7YmFja2VuZHM0"
#define SET_COOKIE L7_COOKIE_NAME "=" OUR_VALUE "; HttpOnly; Path=/; Max-Age=3600"

struct spliced {
    struct l7_conn c;
    struct h2_peer client, backend;
    nghttp2_hd_inflater *client_view;  /* the client's decoder of response blocks */
    nghttp2_hd_inflater *backend_view; /* the same blocks as the backend wrote them */
};

static void establish(struct l7_fixture *x, struct spliced *s, const char *cookie)
{
    l7_conn_init(&s->c, false);
    h2_peer_init(&s->client);
    h2_peer_init(&s->backend);
    assert_int_equal(nghttp2_hd_inflate_new(&s->client_view), 0);
    assert_int_equal(nghttp2_hd_inflate_new(&s->backend_view), 0);
    l7_establish(x, &s->c, &s->client, "/svc/M", cookie);
}

static void finish(struct spliced *s)
{
    h2_peer_fini(&s->client);
    h2_peer_fini(&s->backend);
    nghttp2_hd_inflate_del(s->client_view);
    nghttp2_hd_inflate_del(s->backend_view);
}

/* The response to stream `stream` (HEADERS, and a DATA frame of `body` message bytes; the
 * backend's SETTINGS first when `settings`) goes to the client with the set-cookie field
 * inserted at the end of its header block: the frame grew by k bytes, the block decodes (as
 * the client's decoder sees it) to the backend's fields plus set-cookie, the field is a
 * literal without indexing (both decoders' tables stay alike). Returns k. */
static uint32_t response_gets_the_cookie(struct l7_fixture *x, struct spliced *s, uint32_t stream,
                                         bool settings, uint32_t body, struct l7_seg *sent,
                                         struct h2_bytes *in_bytes, struct h2_bytes *frame)
{
    struct l7_conn *c = &s->c;
    struct h2_bytes block = {.len = 0}, *in = in_bytes;
    in->len = 0;
    if (settings)
        h2_backend_settings(in);
    h2_response_block(&s->backend, &block);
    uint32_t frame_at = h2_headers(in, stream, false, &block);
    uint32_t at = in->len;
    h2_message(in, stream, false, body);
    *sent = l7_from_backend(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->b_seq,
                            c->c_seq - c->stripped, in->b, in->len);
    uint64_t inserted = l7_event(x, XLB_EVENT_L7_SET_COOKIES);
    assert_int_equal(l7_send(x, sent), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIES), inserted + 1);
    struct l7_out o;
    l7_read(x, 0, &o);
    assert_true(o.len > in->len && o.len < in->len + 200);
    uint32_t k = o.len - in->len;
    const uint8_t *field = o.payload + at;
    assert_int_equal(field[0] & 0xf0, 0x00); /* literal without indexing */
    struct h2_bytes want = {.len = 0};
    l7_with_field(&want, in, frame_at, at, field, k);
    l7_expect_to_client(x, c, 0, sent, c->x_seq, sent->flags, want.b, want.len);

    struct h2_frame_header h = h2_frame_at(o.payload + frame_at);
    assert_int_equal(h.length, block.len + k);
    struct h2_fields seen, wrote, alone;
    h2_decode(s->client_view, o.payload + frame_at + 9, h.length, &seen);
    h2_decode(s->backend_view, block.b, block.len, &wrote);
    assert_int_equal(seen.n, wrote.n + 1);
    for (unsigned i = 0; i < wrote.n; i++) {
        assert_string_equal(seen.f[i].name, wrote.f[i].name);
        assert_string_equal(seen.f[i].value, wrote.f[i].value);
    }
    assert_string_equal(seen.f[wrote.n].name, "set-cookie");
    assert_string_equal(seen.f[wrote.n].value, SET_COOKIE);
    assert_int_equal(nghttp2_hd_inflate_get_num_table_entries(s->client_view),
                     nghttp2_hd_inflate_get_num_table_entries(s->backend_view));
    nghttp2_hd_inflater *fresh;
    assert_int_equal(nghttp2_hd_inflate_new(&fresh), 0);
    h2_decode(fresh, field, k, &alone); /* the k bytes are exactly the field */
    assert_int_equal(alone.n, 1);
    assert_string_equal(alone.f[0].value, SET_COOKIE);
    nghttp2_hd_inflate_del(fresh);
    if (frame != NULL) {
        frame->len = 0;
        h2_append(frame, o.frame, (uint32_t)o.frame_len);
    }
    l7_clear(x);
    c->b_seq += in->len;
    c->x_seq += in->len + k;
    c->x_tsval = c->b_tsval + c->ts_add;
    return k;
}

/* The first response gets "xlb-session=<base64>; HttpOnly; Path=/; Max-Age=3600"; the next
 * backend segment reaches the client shifted by the field's length. */
static void response_headers_get_the_set_cookie(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s, NULL);
    struct l7_seg sent;
    struct h2_bytes in;
    uint32_t x0 = s.c.x_seq, b0 = s.c.b_seq;
    uint32_t k = response_gets_the_cookie(x, &s, 1, true, 40, &sent, &in, NULL);
    assert_int_equal(s.c.x_seq, x0 + in.len + k);
    struct h2_bytes more = {.len = 0}, block = {.len = 0};
    h2_message(&more, 1, false, 16);
    h2_trailers_block(&s.backend, &block, "0");
    h2_headers(&more, 1, true, &block);
    /* Checked by hand: the backend's seq b0 + |in| reaches the client at x0 + |in| + k. */
    struct l7_seg next = l7_from_backend(&s.c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b0 + in.len,
                                         s.c.c_seq - 9, more.b, more.len);
    assert_int_equal(l7_send(x, &next), 1);
    l7_expect_to_client(x, &s.c, 0, &next, x0 + in.len + k, next.flags, more.b, more.len);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIES), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIE_MISSED), 0);
    assert_int_equal(x->n->load->endpoints[L7_SLOT4].succeeded, 1);
    finish(&s);
}

/* A retransmission of the response segment gets exactly the same bytes, the field included;
 * so does one after the next segment went by. The insertion is counted once. */
static void retransmitted_response_gets_the_same_bytes(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s, NULL);
    struct l7_seg sent;
    struct h2_bytes in;
    struct h2_bytes first;
    response_gets_the_cookie(x, &s, 1, true, 40, &sent, &in, &first);
    size_t len;
    assert_int_equal(l7_send(x, &sent), 1);
    const uint8_t *again = fixture_tx(x->n->f, 0, &len);
    assert_int_equal(len, first.len);
    assert_memory_equal(again, first.b, len);
    l7_clear(x);
    struct h2_bytes more = {.len = 0};
    h2_message(&more, 1, false, 16);
    l7_pass_to_client(x, &s.c, RTE_TCP_ACK_FLAG, more.b, more.len);
    assert_int_equal(l7_send(x, &sent), 1);
    again = fixture_tx(x->n->f, 0, &len);
    assert_int_equal(len, first.len);
    assert_memory_equal(again, first.b, len);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIES), 1);
    finish(&s);
}

/* Client ACKs map back across the insertion: one inside the field means "up to it", one past
 * the segment the backend's end of it, SACK edges past the field lose its length; once the
 * client acknowledged past it, later backend segments still come shifted. */
static void client_acks_map_back_across_the_insertion(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s, NULL);
    struct l7_conn *c = &s.c;
    uint32_t x0 = c->x_seq, b0 = c->b_seq;
    struct l7_seg sent;
    struct h2_bytes in;
    uint32_t k = response_gets_the_cookie(x, &s, 1, true, 40, &sent, &in, NULL);
    uint32_t field_at = in.len - (9 + 5 + 40); /* before the DATA frame */
    struct h2_bytes more = {.len = 0};
    h2_message(&more, 1, false, 16);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, more.b, more.len);

    /* The response received but for its first byte: ACK x0, SACK the rest and `more`. */
    uint32_t tsval = c->c_tsval;
    struct l7_seg ack = l7_from_client(c, RTE_TCP_ACK_FLAG, c->c_seq, x0, NULL, 0);
    uint32_t left[2] = {x0 + 1, x0 + in.len + k}, right[2] = {x0 + in.len + k, c->x_seq};
    opts_ts_sack(&ack, tsval, c->x_tsval, 2, left, right);
    assert_int_equal(l7_send(x, &ack), 1);
    struct l7_seg want = l7_spliced_to_backend(c, ack);
    want.seq = c->c_seq - 9;
    want.ack = b0;
    uint32_t b_left[2] = {b0 + 1, b0 + in.len}, b_right[2] = {b0 + in.len, c->b_seq};
    opts_ts_sack(&want, tsval, c->b_tsval, 2, b_left, b_right);
    l7_expect(x, 0, &want);
    l7_clear(x);

    /* Cumulative ACKs, each further on. */
    struct {
        uint32_t client, backend;
    } acks[] = {
        {x0 + field_at, b0 + field_at},         /* up to the field */
        {x0 + field_at + 1, b0 + field_at},     /* inside it */
        {x0 + field_at + k - 1, b0 + field_at}, /* its last byte missing */
        {x0 + field_at + k, b0 + field_at},     /* all of it */
        {x0 + in.len + k, b0 + in.len},         /* the whole response segment */
    };
    for (unsigned i = 0; i < sizeof(acks) / sizeof(acks[0]); i++) {
        tsval = c->c_tsval;
        ack = l7_from_client(c, RTE_TCP_ACK_FLAG, c->c_seq, acks[i].client, NULL, 0);
        assert_int_equal(l7_send(x, &ack), 1);
        want = l7_spliced_to_backend(c, ack);
        want.seq = c->c_seq - 9;
        want.ack = acks[i].backend;
        opts_ts(&want, tsval, c->b_tsval);
        l7_expect(x, 0, &want);
        l7_clear(x);
    }
    /* Everything acknowledged (the insertion is forgotten); the shift stays. */
    l7_pass_to_backend(x, c, RTE_TCP_ACK_FLAG, NULL, 0);
    more.len = 0;
    h2_message(&more, 1, false, 24);
    uint32_t expected = c->x_seq;
    assert_int_equal(expected, x0 + k + (c->b_seq - b0));
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, more.b, more.len);
    finish(&s);
}

/* A request whose cookie names the picked endpoint and cluster keeps its session: the
 * response passes untouched. */
static void cookie_naming_the_endpoint_gets_no_set_cookie(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s, L7_COOKIE_NAME "=" OUR_VALUE);
    assert_int_equal(x->n->load->endpoints[L7_SLOT4].session_picks, 1);
    struct h2_bytes in = {.len = 0}, block = {.len = 0};
    h2_backend_settings(&in);
    h2_response_block(&s.backend, &block);
    h2_headers(&in, 1, false, &block);
    l7_pass_to_client(x, &s.c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, in.b, in.len);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIES), 0);
    finish(&s);
}

/* A cookie naming another endpoint (A55: unknown address) or another cluster (A60) does not
 * hold: the response gets the cookie of the endpoint picked. */
static void cookie_naming_another_endpoint_gets_a_set_cookie(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    /* base64 of "198.18.0.99:50051;backends4" */
    establish(x, &s, "a=b; " L7_COOKIE_NAME "=MTk4LjE4LjAuOTk6NTAwNTE7YmFja2VuZHM0");
    struct l7_seg sent;
    struct h2_bytes in;
    response_gets_the_cookie(x, &s, 1, true, 8, &sent, &in, NULL);
    finish(&s);
}

/* A later stream whose request has no cookie gets one in its response too; the first
 * stream, whose cookie named this endpoint, did not. */
static void later_stream_without_cookie_gets_a_set_cookie(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s, L7_COOKIE_NAME "=" OUR_VALUE);
    struct h2_bytes in = {.len = 0}, block = {.len = 0};
    h2_backend_settings(&in);
    h2_response_block(&s.backend, &block);
    h2_headers(&in, 1, false, &block);
    l7_pass_to_client(x, &s.c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, in.b, in.len);
    h2_decode(s.backend_view, block.b, block.len, &(struct h2_fields){0});
    h2_decode(s.client_view, block.b, block.len, &(struct h2_fields){0});

    struct h2_bytes request = {.len = 0};
    h2_request_block(&s.client, &block, "/svc/M", NULL);
    h2_headers(&request, 3, false, &block);
    h2_message(&request, 3, true, 8);
    l7_pass_to_backend(x, &s.c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, request.b, request.len);
    struct l7_seg sent;
    response_gets_the_cookie(x, &s, 3, false, 8, &sent, &in, NULL);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_COOKIE_OTHER_ENDPOINT), 0);
    finish(&s);
}

/*
 * The client acknowledged up to (or into) the inserted field, so its ACK maps to the backend's
 * insertion point (docs/l7.md: "an ACK inside an inserted field means up to it") and the
 * backend retransmits from exactly there: the retransmission must start with the whole field
 * at the field's client-side position, or the field's bytes the client lacks would never be
 * sent again and the connection would stall.
 */
static void retransmission_from_the_insertion_point_carries_the_field(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s, NULL);
    struct l7_conn *c = &s.c;
    uint32_t x0 = c->x_seq, b0 = c->b_seq;
    struct l7_seg sent;
    struct h2_bytes in, first;
    uint32_t k = response_gets_the_cookie(x, &s, 1, true, 40, &sent, &in, &first);
    uint32_t field_at = in.len - (9 + 5 + 40);
    /* The client got the segment up to the middle of the field. */
    uint32_t tsval = c->c_tsval;
    struct l7_seg ack =
        l7_from_client(c, RTE_TCP_ACK_FLAG, c->c_seq, x0 + field_at + k / 2, NULL, 0);
    assert_int_equal(l7_send(x, &ack), 1);
    struct l7_seg want = l7_spliced_to_backend(c, ack);
    want.seq = c->c_seq - 9;
    want.ack = b0 + field_at;
    opts_ts(&want, tsval, c->b_tsval);
    l7_expect(x, 0, &want);
    l7_clear(x);
    /* The backend retransmits what it has not had acknowledged: the DATA frame. The client
     * must get the field (all of it, from its first byte) before it. */
    struct l7_seg again = l7_from_backend(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b0 + field_at,
                                          c->c_seq - 9, in.b + field_at, in.len - field_at);
    assert_int_equal(l7_send(x, &again), 1);
    struct l7_out o;
    l7_read(x, 0, &o);
    const uint8_t *field = first.b + (o.payload - o.frame) + field_at; /* same headers' length */
    struct h2_bytes bytes = {.len = 0};
    h2_append(&bytes, field, k);
    h2_append(&bytes, in.b + field_at, in.len - field_at);
    l7_expect_to_client(x, c, 0, &again, x0 + field_at, again.flags, bytes.b, bytes.len);
    finish(&s);
}

/*
 * A response segment that the insertion pushes over what the client takes (its MSS less the
 * segment's options) is cut in two, and both parts go from the port's MAC to the client's MAC
 * (the second part is copied from the first after its Ethernet header is rewritten).
 */
static void response_over_the_mss_is_cut_in_two(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s, NULL);
    struct l7_conn *c = &s.c;
    struct h2_bytes in = {.len = 0}, block = {.len = 0};
    h2_backend_settings(&in);
    h2_response_block(&s.backend, &block);
    uint32_t frame_at = h2_headers(&in, 1, false, &block);
    uint32_t at = in.len;
    /* A full segment for the client: its MSS less the timestamp option's 12 bytes. */
    const uint32_t full = L7_CLIENT_MSS - 12;
    h2_message(&in, 1, false, full - in.len - 9 - 5);
    assert_int_equal(in.len, full);
    struct l7_seg sent = l7_from_backend(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->b_seq,
                                         c->c_seq - 9, in.b, in.len);
    assert_int_equal(l7_send(x, &sent), 2);
    struct l7_out o0, o1;
    l7_read(x, 0, &o0);
    l7_read(x, 1, &o1);
    assert_int_equal(o0.len, full);
    uint32_t k = o1.len;
    struct h2_bytes want = {.len = 0};
    l7_with_field(&want, &in, frame_at, at, o0.payload + at, k);
    /* The first part: one MSS, PSH removed; the second: the rest, PSH kept. */
    l7_expect_to_client(x, c, 0, &sent, c->x_seq, RTE_TCP_ACK_FLAG, want.b, full);
    l7_expect_to_client(x, c, 1, &sent, c->x_seq + full, sent.flags, want.b + full, k);
    finish(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(response_headers_get_the_set_cookie, l7_setup_cookie,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(retransmitted_response_gets_the_same_bytes, l7_setup_cookie,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(client_acks_map_back_across_the_insertion, l7_setup_cookie,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(cookie_naming_the_endpoint_gets_no_set_cookie,
                                        l7_setup_cookie, l7_teardown),
        cmocka_unit_test_setup_teardown(cookie_naming_another_endpoint_gets_a_set_cookie,
                                        l7_setup_cookie, l7_teardown),
        cmocka_unit_test_setup_teardown(later_stream_without_cookie_gets_a_set_cookie,
                                        l7_setup_cookie, l7_teardown),
        cmocka_unit_test_setup_teardown(retransmission_from_the_insertion_point_carries_the_field,
                                        l7_setup_cookie, l7_teardown),
        cmocka_unit_test_setup_teardown(response_over_the_mss_is_cut_in_two, l7_setup_cookie,
                                        l7_teardown),
    };
    return cmocka_run_group_tests_name("l7_set_cookie", tests, NULL, NULL);
}
