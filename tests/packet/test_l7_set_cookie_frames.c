/*
 * Packet fixtures for where the Set-Cookie field goes in the backend's frames
 * (dataplane/l7/l7_insert.c, l7_inspect.c; docs/l7.md "Set-Cookie"): at the end of the header
 * block, in the frame that ends it and before its padding (a PADDED HEADERS, a CONTINUATION),
 * in a trailers-only response, once per response when a segment holds two; and not at all
 * (counted as missed) when the frame header that must grow went by in an earlier segment.
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

#define SET_COOKIE                                                                                 \
    L7_COOKIE_NAME "=MTk4LjE4LjAuMjE6NTAwNTE7YmFja2VuZHM0; HttpOnly; Path=/; Max-Age=3600"
#define H2_PADDED       0x8
#define H2_CONTINUATION 0x9

struct spliced {
    struct l7_conn c;
    struct h2_peer client, backend;
    nghttp2_hd_inflater *client_view;
};

static void establish(struct l7_fixture *x, struct spliced *s)
{
    l7_conn_init(&s->c, false);
    h2_peer_init(&s->client);
    h2_peer_init(&s->backend);
    assert_int_equal(nghttp2_hd_inflate_new(&s->client_view), 0);
    l7_establish(x, &s->c, &s->client, "/svc/M", NULL);
}

static void finish(struct spliced *s)
{
    h2_peer_fini(&s->client);
    h2_peer_fini(&s->backend);
    nghttp2_hd_inflate_del(s->client_view);
}

/* The k bytes at `field` are exactly one set-cookie field, a literal without indexing. */
static void is_the_field(const uint8_t *field, uint32_t k)
{
    assert_int_equal(field[0] & 0xf0, 0x00);
    nghttp2_hd_inflater *fresh;
    assert_int_equal(nghttp2_hd_inflate_new(&fresh), 0);
    struct h2_fields alone;
    h2_decode(fresh, field, k, &alone);
    assert_int_equal(alone.n, 1);
    assert_string_equal(alone.f[0].name, "set-cookie");
    assert_string_equal(alone.f[0].value, SET_COOKIE);
    assert_int_equal(nghttp2_hd_inflate_get_num_table_entries(fresh), 61);
    nghttp2_hd_inflate_del(fresh);
}

/* Send the backend's `in` (in order, everything acknowledged); one frame must come out. */
static struct l7_seg from_backend(struct l7_fixture *x, struct l7_conn *c,
                                  const struct h2_bytes *in, struct l7_out *o)
{
    struct l7_seg seg = l7_from_backend(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->b_seq,
                                        c->c_seq - c->stripped, in->b, in->len);
    assert_int_equal(l7_send(x, &seg), 1);
    l7_read(x, 0, o);
    return seg;
}

/* HEADERS with PADDED: the field goes after the block, before the padding; the pad length
 * stays, the frame grows by the field. */
static void padded_headers_get_the_field_before_the_padding(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    struct h2_bytes in = {.len = 0}, block = {.len = 0}, payload = {.len = 0};
    h2_backend_settings(&in);
    h2_response_block(&s.backend, &block);
    const uint8_t pad_length = 6, zeros[6] = {0};
    h2_append(&payload, &pad_length, 1);
    h2_append(&payload, block.b, block.len);
    h2_append(&payload, zeros, 6);
    uint32_t frame_at =
        h2_frame(&in, H2_HEADERS, H2_END_HEADERS | H2_PADDED, 1, payload.b, payload.len);
    uint32_t at = frame_at + 9 + 1 + block.len;
    h2_message(&in, 1, false, 10);
    struct l7_out o;
    struct l7_seg seg = from_backend(x, c, &in, &o);
    uint32_t k = o.len - in.len;
    is_the_field(o.payload + at, k);
    struct h2_bytes want;
    l7_with_field(&want, &in, frame_at, at, o.payload + at, k);
    l7_expect_to_client(x, c, 0, &seg, c->x_seq, seg.flags, want.b, want.len);
    /* As the client reads it: the pad length, the block with the field, six zeros. */
    struct h2_frame_header h = h2_frame_at(o.payload + frame_at);
    assert_int_equal(h.length, payload.len + k);
    assert_int_equal(o.payload[frame_at + 9], pad_length);
    struct h2_fields seen;
    h2_decode(s.client_view, o.payload + frame_at + 10, h.length - 1 - pad_length, &seen);
    assert_string_equal(h2_field(&seen, "set-cookie"), SET_COOKIE);
    assert_string_equal(h2_field(&seen, ":status"), "200");
    assert_memory_equal(o.payload + frame_at + 9 + h.length - 6, zeros, 6);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIES), 1);
    finish(&s);
}

/* A block in HEADERS and CONTINUATION: the CONTINUATION (END_HEADERS) grows, HEADERS not.
 * The segment ends with the block, so the field ends it too; the next segment starts after
 * it. */
static void continuation_gets_the_field(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    struct h2_bytes in = {.len = 0}, block = {.len = 0};
    h2_backend_settings(&in);
    h2_response_block(&s.backend, &block);
    uint32_t half = block.len / 2;
    h2_frame(&in, H2_HEADERS, 0, 1, block.b, half);
    uint32_t frame_at =
        h2_frame(&in, H2_CONTINUATION, H2_END_HEADERS, 1, block.b + half, block.len - half);
    uint32_t at = in.len;
    struct l7_out o;
    struct l7_seg seg = from_backend(x, c, &in, &o);
    uint32_t k = o.len - in.len;
    is_the_field(o.payload + at, k);
    struct h2_bytes want;
    l7_with_field(&want, &in, frame_at, at, o.payload + at, k);
    l7_expect_to_client(x, c, 0, &seg, c->x_seq, seg.flags, want.b, want.len);
    l7_clear(x);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIES), 1);
    c->b_seq += in.len;
    c->x_seq += in.len + k;
    c->x_tsval = c->b_tsval + c->ts_add;
    struct h2_bytes more = {.len = 0};
    h2_message(&more, 1, false, 10);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, more.b, more.len);
    finish(&s);
}

/* A trailers-only response (HEADERS with END_STREAM and grpc-status) gets the field too. */
static void trailers_only_response_gets_the_field(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    struct h2_bytes in = {.len = 0}, block = {.len = 0};
    h2_backend_settings(&in);
    const nghttp2_nv nva[] = {
        {XLB_UNCONST(":status"), XLB_UNCONST("200"), 7, 3, NGHTTP2_NV_FLAG_NONE},
        {XLB_UNCONST("grpc-status"), XLB_UNCONST("5"), 11, 1, NGHTTP2_NV_FLAG_NONE},
    };
    ssize_t n = nghttp2_hd_deflate_hd(s.backend.deflater, block.b, sizeof(block.b), nva, 2);
    assert_true(n > 0);
    block.len = (uint32_t)n;
    uint32_t frame_at = h2_headers(&in, 1, true, &block);
    uint32_t at = in.len;
    struct l7_out o;
    struct l7_seg seg = from_backend(x, c, &in, &o);
    uint32_t k = o.len - in.len;
    is_the_field(o.payload + at, k);
    struct h2_bytes want;
    l7_with_field(&want, &in, frame_at, at, o.payload + at, k);
    l7_expect_to_client(x, c, 0, &seg, c->x_seq, seg.flags, want.b, want.len);
    assert_int_equal(x->n->load->endpoints[L7_SLOT4].failed, 1); /* grpc-status 5 */
    finish(&s);
}

/* Responses to streams 1 and 3 in one segment: each block gets the field; the next segment
 * reaches the client shifted by both. */
static void two_responses_in_one_segment_get_a_field_each(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    struct h2_bytes request = {.len = 0}, block = {.len = 0};
    h2_request_block(&s.client, &block, "/svc/M", NULL);
    h2_headers(&request, 3, false, &block);
    h2_message(&request, 3, true, 8);
    l7_pass_to_backend(x, c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, request.b, request.len);

    struct h2_bytes in = {.len = 0};
    h2_backend_settings(&in);
    h2_response_block(&s.backend, &block);
    uint32_t frame1 = h2_headers(&in, 1, false, &block);
    uint32_t at1 = in.len;
    h2_response_block(&s.backend, &block);
    uint32_t frame3 = h2_headers(&in, 3, false, &block);
    uint32_t at3 = in.len;
    h2_message(&in, 3, false, 8);
    struct l7_out o;
    struct l7_seg seg = from_backend(x, c, &in, &o);
    assert_int_equal((o.len - in.len) % 2, 0);
    uint32_t k = (o.len - in.len) / 2;
    is_the_field(o.payload + at1, k);
    is_the_field(o.payload + at3 + k, k);
    struct h2_bytes once, twice;
    l7_with_field(&once, &in, frame3, at3, o.payload + at1, k);
    l7_with_field(&twice, &once, frame1, at1, o.payload + at1, k);
    l7_expect_to_client(x, c, 0, &seg, c->x_seq, seg.flags, twice.b, twice.len);
    l7_clear(x);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIES), 2);
    c->b_seq += in.len;
    c->x_seq += in.len + 2 * k;
    c->x_tsval = c->b_tsval + c->ts_add;
    struct h2_bytes more = {.len = 0};
    h2_message(&more, 1, false, 8);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, more.b, more.len);
    finish(&s);
}

/* The response HEADERS frame's header went in the segment before the end of its block: the
 * frame cannot grow any more, so both segments pass as they are and the miss is counted. */
static void headers_split_across_segments_miss_the_field(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced s;
    establish(x, &s);
    struct l7_conn *c = &s.c;
    struct h2_bytes in = {.len = 0}, block = {.len = 0};
    h2_backend_settings(&in);
    h2_response_block(&s.backend, &block);
    h2_headers(&in, 1, false, &block);
    h2_message(&in, 1, false, 10);
    uint32_t cut = in.len - (9 + 5 + 10) - 3; /* three bytes of the block in the second */
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG, in.b, cut);
    l7_pass_to_client(x, c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, in.b + cut, in.len - cut);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIES), 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SET_COOKIE_MISSED), 1);
    finish(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(padded_headers_get_the_field_before_the_padding,
                                        l7_setup_cookie, l7_teardown),
        cmocka_unit_test_setup_teardown(continuation_gets_the_field, l7_setup_cookie, l7_teardown),
        cmocka_unit_test_setup_teardown(trailers_only_response_gets_the_field, l7_setup_cookie,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(two_responses_in_one_segment_get_a_field_each,
                                        l7_setup_cookie, l7_teardown),
        cmocka_unit_test_setup_teardown(headers_split_across_segments_miss_the_field,
                                        l7_setup_cookie, l7_teardown),
    };
    return cmocka_run_group_tests_name("l7_set_cookie_frames", tests, NULL, NULL);
}
