/*
 * The HTTP/2 frame scanner on real bytes from nghttp2's client and server sessions: callbacks,
 * offsets, header blocks (decoded back to what was sent), Set-Cookie insertion at append_at
 * read by a real client, every error, and split feeding equal to whole feeding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_test.h"
#include "xlb_h2_build.h"
#include "xlb_hpack.h"
#include "xlb_const.h"

#define BLOCK_CAP (64 * 1024)

static uint8_t block_buf[BLOCK_CAP];
static struct h2t_log log_a;

static const nghttp2_nv request_nv[] = {
    H2T_NV(":method", "POST"),
    H2T_NV(":scheme", "http"),
    H2T_NV(":path", "/pkg.Svc/Method"),
    H2T_NV(":authority", "svc.example:8080"),
    H2T_NV("content-type", "application/grpc"),
    H2T_NV("te", "trailers"),
    H2T_NV("cookie", "xlb-session=abc"),
};
#define N_REQUEST_NV (sizeof(request_nv) / sizeof(request_nv[0]))

static uint32_t be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* The offset of the n-th frame (0-based) of a frame sequence starting at `start`. */
static size_t frame_at(const struct h2t_bytes *b, size_t start, int n)
{
    size_t off = start;
    for (int i = 0; i < n; i++)
        off += 9 + be24(b->data + off);
    return off;
}

static void assert_has(const struct h2t_log *log, const char *line)
{
    if (strstr(log->text, line) == NULL)
        fail_msg("missing \"%s\" in:\n%s", line, log->text);
}

/* Decode a block with a fresh decoder and check it carries the request's fields (and an
 * x-big field of big_len bytes when big_len is not 0). */
static void assert_request_block_big(const uint8_t *block, uint32_t len, uint32_t big_len)
{
    static uint8_t mem[256 * 1024];
    static char storage[64 * 1024];
    struct xlb_h2_arena arena;
    struct xlb_hpack_decoder d;
    struct xlb_h2_headers h;
    xlb_h2_arena_init(&arena, mem, sizeof(mem));
    assert_int_equal(xlb_hpack_decoder_init(&d, &arena), 0);
    assert_int_equal(xlb_hpack_decode(&d, block, len, &h, storage, sizeof(storage)), 0);
    assert_string_equal(h.request.path, "/pkg.Svc/Method");
    assert_string_equal(h.request.authority, "svc.example:8080");
    assert_string_equal(h.method, "POST");
    assert_int_equal(h.request.n_fields, big_len ? 4 : 3);
    assert_string_equal(h.fields[2].name, "cookie");
    assert_string_equal(h.fields[2].value, "xlb-session=abc");
    if (big_len) {
        assert_string_equal(h.fields[3].name, "x-big");
        assert_int_equal(h.fields[3].value_len, big_len);
    }
    assert_false(h.truncated);
    xlb_hpack_decoder_fini(&d);
    assert_int_equal(xlb_h2_arena_in_use(&arena), 0);
}

static void assert_request_block(const uint8_t *block, uint32_t len)
{
    assert_request_block_big(block, len, 0);
}

static void client_stream(struct h2t_bytes *out, size_t pad, bool priority)
{
    nghttp2_session *c = h2t_client_new(pad);
    h2t_request(c, request_nv, N_REQUEST_NV, priority);
    h2t_drain(c, out);
    nghttp2_session_del(c);
}

static void test_client_request(void **state)
{
    struct h2t_bytes b = {0};
    client_stream(&b, 0, false);
    h2t_log_reset(&log_a);
    assert_int_equal(h2t_scan_split(b.data, b.len, true, NULL, 0, block_buf, BLOCK_CAP, &log_a), 0);
    /* preface, SETTINGS (2 entries), WINDOW_UPDATE, HEADERS */
    assert_has(&log_a, "start type=4 flags=00 stream=0 len=12 off=24\n");
    assert_has(&log_a, "end type=4 off=24 payload=yes:000400100000000200000000\n");
    assert_has(&log_a, "start type=8 flags=00 stream=0 len=4 off=45\n");
    assert_has(&log_a, "end type=8 off=45 payload=yes:00100000\n");
    size_t hdr = frame_at(&b, 24, 2);
    assert_int_equal(hdr, 58);
    assert_int_equal(b.data[hdr + 4], XLB_H2_FLAG_END_HEADERS | XLB_H2_FLAG_END_STREAM);
    assert_int_equal(log_a.n_blocks, 1);
    assert_int_equal(log_a.block_stream[0], 1);
    assert_true(log_a.block_end_stream[0]);
    assert_int_equal(log_a.append_at[0], b.len);
    assert_int_equal(log_a.last_frame[0].offset, hdr);
    assert_int_equal(log_a.last_frame[0].length, b.len - hdr - 9);
    assert_memory_equal(log_a.blocks[0], b.data + hdr + 9, log_a.block_len[0]);
    assert_request_block(log_a.blocks[0], log_a.block_len[0]);
    /* block before the HEADERS frame's end */
    const char *blk = strstr(log_a.text, "block stream=1");
    const char *end = strstr(log_a.text, "end type=1 ");
    assert_true(blk != NULL && end != NULL && blk < end);
    h2t_free(&b);
}

static void test_padded_priority(void **state)
{
    struct h2t_bytes b = {0};
    client_stream(&b, 17, true);
    size_t hdr = frame_at(&b, 24, 2);
    uint8_t flags = b.data[hdr + 4];
    assert_true(flags & XLB_H2_FLAG_PADDED);
    assert_true(flags & XLB_H2_FLAG_PRIORITY);
    uint8_t pad = b.data[hdr + 9];
    assert_true(pad > 0);
    h2t_log_reset(&log_a);
    assert_int_equal(h2t_scan_split(b.data, b.len, true, NULL, 0, block_buf, BLOCK_CAP, &log_a), 0);
    assert_int_equal(log_a.n_blocks, 1);
    assert_int_equal(log_a.append_at[0], b.len - pad);
    size_t frag = hdr + 9 + 1 + 5;
    assert_int_equal(log_a.block_len[0], b.len - pad - frag);
    assert_memory_equal(log_a.blocks[0], b.data + frag, log_a.block_len[0]);
    assert_request_block(log_a.blocks[0], log_a.block_len[0]);
    h2t_free(&b);
}

/* A header bigger than a frame: nghttp2 itself sends HEADERS + CONTINUATION. */
static void test_continuation_from_nghttp2(void **state)
{
    static char big[40000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)('!' + (i * 7919) % 90);
    nghttp2_nv nva[N_REQUEST_NV + 1];
    memcpy(nva, request_nv, sizeof(request_nv));
    nva[N_REQUEST_NV] = (nghttp2_nv){XLB_UNCONST("x-big"), XLB_UNCONST(big), 5, sizeof(big), 0};
    nghttp2_session *c = h2t_client_new(0);
    h2t_request(c, nva, N_REQUEST_NV + 1, false);
    struct h2t_bytes b = {0};
    h2t_drain(c, &b);
    nghttp2_session_del(c);
    h2t_log_reset(&log_a);
    assert_int_equal(h2t_scan_split(b.data, b.len, true, NULL, 0, block_buf, BLOCK_CAP, &log_a), 0);
    assert_has(&log_a, "start type=9 ");
    assert_int_equal(log_a.n_blocks, 1);
    assert_int_equal(log_a.last_frame[0].type, XLB_H2_CONTINUATION);
    assert_int_equal(log_a.append_at[0], b.len);
    assert_true(log_a.block_end_stream[0]); /* from the HEADERS frame */
    assert_request_block_big(log_a.blocks[0], log_a.block_len[0], sizeof(big));
    h2t_free(&b);
}

/* HEADERS split by hand into HEADERS + CONTINUATION + CONTINUATION. */
static void hand_split(const struct h2t_bytes *in, struct h2t_bytes *out, size_t *hdr_out)
{
    size_t hdr = frame_at(in, 24, 2);
    uint32_t len = be24(in->data + hdr);
    const uint8_t *frag = in->data + hdr + 9;
    /* cppcheck-suppress duplicateAssignExpression ; two equal thirds, on purpose */
    uint32_t a = len / 3, b2 = len / 3;
    h2t_append(out, in->data, hdr);
    h2t_frame(out, a, XLB_H2_HEADERS, XLB_H2_FLAG_END_STREAM, 1);
    h2t_append(out, frag, a);
    h2t_frame(out, b2, XLB_H2_CONTINUATION, 0, 1);
    h2t_append(out, frag + a, b2);
    h2t_frame(out, len - a - b2, XLB_H2_CONTINUATION, XLB_H2_FLAG_END_HEADERS, 1);
    h2t_append(out, frag + a + b2, len - a - b2);
    *hdr_out = hdr;
}

static void test_continuation_by_hand(void **state)
{
    struct h2t_bytes in = {0}, b = {0};
    client_stream(&in, 0, false);
    size_t hdr;
    hand_split(&in, &b, &hdr);
    h2t_log_reset(&log_a);
    assert_int_equal(h2t_scan_split(b.data, b.len, true, NULL, 0, block_buf, BLOCK_CAP, &log_a), 0);
    assert_int_equal(log_a.n_blocks, 1);
    assert_true(log_a.block_end_stream[0]);
    assert_int_equal(log_a.block_len[0], be24(in.data + hdr));
    assert_memory_equal(log_a.blocks[0], in.data + hdr + 9, log_a.block_len[0]);
    assert_int_equal(log_a.append_at[0], b.len);
    assert_int_equal(log_a.last_frame[0].offset, frame_at(&b, 24, 4));
    assert_int_equal(log_a.last_frame[0].type, XLB_H2_CONTINUATION);
    assert_request_block(log_a.blocks[0], log_a.block_len[0]);
    h2t_free(&in);
    h2t_free(&b);
}

/* Insertion: append a set-cookie at append_at, patch the frame length, and a real client reads
 * it; with the server padding its frames, so the field goes before the padding. */
struct seen {
    char cookie[256];
    char status[8];
    int n;
};

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
    struct seen *seen = user;
    seen->n++;
    if (namelen == 10 && memcmp(name, "set-cookie", 10) == 0)
        snprintf(seen->cookie, sizeof(seen->cookie), "%.*s", (int)valuelen, value);
    if (namelen == 7 && memcmp(name, ":status", 7) == 0)
        snprintf(seen->status, sizeof(seen->status), "%.*s", (int)valuelen, value);
    return 0;
}

/* The server's bytes answering the client's request: SETTINGS, SETTINGS ack, HEADERS. */
static struct h2t_bytes response_bytes(nghttp2_session *client)
{
    struct h2t_bytes c2s = {0}, s2c = {0};
    h2t_request(client, request_nv, N_REQUEST_NV, false);
    h2t_drain(client, &c2s);
    nghttp2_session *server = h2t_server_new();
    h2t_recv(server, c2s.data, c2s.len);
    nghttp2_nv res[] = {H2T_NV(":status", "200"), H2T_NV("content-type", "application/grpc"),
                        H2T_NV("grpc-status", "0")};
    assert_int_equal(nghttp2_submit_response(server, 1, res, 3, NULL), 0);
    h2t_drain(server, &s2c);
    nghttp2_session_del(server);
    h2t_free(&c2s);
    return s2c;
}

static void insert_cookie(struct h2t_bytes *s2c, const struct h2t_log *log, struct h2t_bytes *out)
{
    static uint8_t mem[8192];
    struct xlb_h2_arena arena;
    struct xlb_hpack_encoder e;
    xlb_h2_arena_init(&arena, mem, sizeof(mem));
    assert_int_equal(xlb_hpack_encoder_init(&e, &arena), 0);
    uint8_t field[128];
    const char *v = "xlb-session=MS4yLjMuNDo4MA==; HttpOnly";
    uint32_t n = xlb_hpack_encode_field(&e, field, sizeof(field), "set-cookie", v, strlen(v));
    assert_true(n > 0);
    assert_int_equal(field[0] & 0xf0, 0x00); /* literal without indexing */
    size_t at = log->append_at[0], hdr = log->last_frame[0].offset;
    h2t_append(out, s2c->data, at);
    h2t_append(out, field, n);
    h2t_append(out, s2c->data + at, s2c->len - at);
    uint32_t len = log->last_frame[0].length + n;
    out->data[hdr] = (uint8_t)(len >> 16);
    out->data[hdr + 1] = (uint8_t)(len >> 8);
    out->data[hdr + 2] = (uint8_t)len;
    xlb_hpack_encoder_fini(&e);
    assert_int_equal(xlb_h2_arena_in_use(&arena), 0);
}

static void check_insertion(bool padded)
{
    nghttp2_session_callbacks *cb;
    nghttp2_session *client;
    struct seen seen = {0};
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    assert_int_equal(nghttp2_session_client_new(&client, cb, &seen), 0);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(client, NGHTTP2_FLAG_NONE, NULL, 0), 0);
    struct h2t_bytes s2c = response_bytes(client), out = {0};
    if (padded) { /* re-frame the response HEADERS with 9 bytes of padding */
        size_t hdr = frame_at(&s2c, 0, 2);
        uint32_t len = be24(s2c.data + hdr);
        struct h2t_bytes p = {0};
        h2t_append(&p, s2c.data, hdr);
        h2t_frame(&p, len + 10, XLB_H2_HEADERS, s2c.data[hdr + 4] | XLB_H2_FLAG_PADDED, 1);
        uint8_t nine = 9, zeros[9] = {0};
        h2t_append(&p, &nine, 1);
        h2t_append(&p, s2c.data + hdr + 9, len);
        h2t_append(&p, zeros, 9);
        h2t_free(&s2c);
        s2c = p;
    }
    h2t_log_reset(&log_a);
    assert_int_equal(
        h2t_scan_split(s2c.data, s2c.len, false, NULL, 0, block_buf, BLOCK_CAP, &log_a), 0);
    assert_int_equal(log_a.n_blocks, 1);
    assert_int_equal(log_a.append_at[0], s2c.len - (padded ? 9 : 0));
    insert_cookie(&s2c, &log_a, &out);
    h2t_recv(client, out.data, out.len);
    assert_string_equal(seen.status, "200");
    assert_string_equal(seen.cookie, "xlb-session=MS4yLjMuNDo4MA==; HttpOnly");
    assert_int_equal(seen.n, 4);
    nghttp2_session_del(client);
    h2t_free(&s2c);
    h2t_free(&out);
}

static void test_insert_set_cookie(void **state)
{
    check_insertion(false);
}

static void test_insert_set_cookie_padded(void **state)
{
    check_insertion(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_request),
        cmocka_unit_test(test_padded_priority),
        cmocka_unit_test(test_continuation_from_nghttp2),
        cmocka_unit_test(test_continuation_by_hand),
        cmocka_unit_test(test_insert_set_cookie),
        cmocka_unit_test(test_insert_set_cookie_padded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
