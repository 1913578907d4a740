/*
 * What xlb writes itself: control frames byte for byte, HPACK fields that change no dynamic
 * table (checked by their first bytes and by decoding with fresh and with in-step inflaters),
 * and a trailers-only gRPC response read by a real nghttp2 client session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_test.h"
#include "xlb_h2_build.h"
#include "xlb_hpack.h"

static _Alignas(16) uint8_t enc_mem[XLB_HPACK_ENCODER_ARENA];
static struct xlb_h2_arena enc_arena;
static struct xlb_hpack_encoder enc;
static uint32_t enc_baseline;

static int setup(void **state)
{
    xlb_h2_arena_init(&enc_arena, enc_mem, sizeof(enc_mem));
    assert_int_equal(xlb_hpack_encoder_init(&enc, &enc_arena), 0);
    enc_baseline = xlb_h2_arena_in_use(&enc_arena);
    return 0;
}

static int teardown(void **state)
{
    xlb_hpack_encoder_fini(&enc);
    assert_int_equal(xlb_h2_arena_in_use(&enc_arena), 0);
    return 0;
}

static void test_control_frames(void **state)
{
    uint8_t out[17];
    assert_int_equal(xlb_h2_settings_frame(out), 9);
    assert_memory_equal(out, "\0\0\0\x04\0\0\0\0\0", 9);
    assert_int_equal(xlb_h2_ping_ack(out, (const uint8_t *)"abcdefgh"), 17);
    assert_memory_equal(out, "\0\0\x08\x06\x01\0\0\0\0abcdefgh", 17);
    assert_int_equal(xlb_h2_goaway(out, 0x80000007u, 2), 17);
    assert_memory_equal(out, "\0\0\x08\x07\0\0\0\0\0\0\0\0\x07\0\0\0\x02", 17);
    /* a real client takes them: SETTINGS, PING ack, GOAWAY */
    nghttp2_session *c = h2t_client_new(0);
    struct h2t_bytes sent = {0};
    h2t_drain(c, &sent);
    xlb_h2_settings_frame(out);
    h2t_recv(c, out, 9);
    xlb_h2_goaway(out, 0, 0);
    h2t_recv(c, out, 17);
    nghttp2_session_del(c);
    h2t_free(&sent);
}

/* Decode with a fresh nghttp2 inflater: one field, as given. */
static void assert_inflates_to(const uint8_t *in, size_t len, const char *name, const char *value)
{
    nghttp2_hd_inflater *inf;
    assert_int_equal(nghttp2_hd_inflate_new(&inf), 0);
    nghttp2_nv nv;
    int flags = 0, fields = 0;
    while (len > 0 || !(flags & NGHTTP2_HD_INFLATE_FINAL)) {
        ssize_t n = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, len, 1);
        assert_true(n >= 0);
        in += n;
        len -= (size_t)n;
        if (flags & NGHTTP2_HD_INFLATE_EMIT) {
            fields++;
            assert_int_equal(nv.namelen, strlen(name));
            assert_memory_equal(nv.name, name, nv.namelen);
            assert_int_equal(nv.valuelen, strlen(value));
            assert_memory_equal(nv.value, value, nv.valuelen);
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL)
            break;
    }
    assert_int_equal(fields, 1);
    nghttp2_hd_inflate_del(inf);
}

static void test_encode_field(void **state)
{
    const char *v = "xlb=MTAuMC4wLjE6ODA=; HttpOnly; Path=/";
    uint8_t out[256], again[256];
    uint32_t n = xlb_hpack_encode_field(&enc, out, sizeof(out), "set-cookie", v, strlen(v));
    assert_true(n > 2);
    /* 0000xxxx: literal without indexing; name = static index 55 (15 + 40); no size update */
    assert_int_equal(out[0], 0x0f);
    assert_int_equal(out[1], 55 - 15);
    assert_inflates_to(out, n, "set-cookie", v);
    /* no state: the same bytes every time */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(
            xlb_hpack_encode_field(&enc, again, sizeof(again), "set-cookie", v, strlen(v)), n);
        assert_memory_equal(again, out, n);
    }
    /* a new name: 0x00 then the literal name */
    n = xlb_hpack_encode_field(&enc, out, sizeof(out), "x-lb", "a", 1);
    assert_int_equal(out[0], 0x00);
    assert_inflates_to(out, n, "x-lb", "a");
    /* too small a buffer: 0, and the encoder still works */
    assert_int_equal(xlb_hpack_encode_field(&enc, out, 10, "set-cookie", v, strlen(v)), 0);
    n = xlb_hpack_encode_field(&enc, out, sizeof(out), "set-cookie", v, strlen(v));
    assert_true(n > 0);
    assert_int_equal(out[0], 0x0f);
    /* nothing is kept per field */
    assert_int_equal(xlb_h2_arena_in_use(&enc_arena), enc_baseline);
}

/* A backend's block (its encoder indexing as it likes) with xlb's field appended: a decoder in
 * step with the backend (nghttp2's, as the client has, and xlb's own) reads the combined block
 * and the backend's next block, which indexes what the first one added. */
static void test_append_keeps_tables_in_step(void **state)
{
    static _Alignas(16) uint8_t dec_mem[XLB_HPACK_ARENA_SIZE(16384)];
    static char storage[4096];
    struct xlb_h2_arena dec_arena;
    struct xlb_hpack_decoder dec;
    struct xlb_h2_headers h;
    xlb_h2_arena_init(&dec_arena, dec_mem, sizeof(dec_mem));
    assert_int_equal(xlb_hpack_decoder_init(&dec, &dec_arena), 0);
    nghttp2_hd_deflater *backend;
    assert_int_equal(nghttp2_hd_deflate_new(&backend, 4096), 0);
    nghttp2_nv res[] = {H2T_NV(":status", "200"), H2T_NV("content-type", "application/grpc"),
                        H2T_NV("x-backend", "b1")};
    uint8_t block[512];
    ssize_t n = nghttp2_hd_deflate_hd(backend, block, sizeof(block), res, 3);
    assert_true(n > 0);
    n += xlb_hpack_encode_field(&enc, block + n, sizeof(block) - (size_t)n, "set-cookie",
                                "k=v; HttpOnly", 13);
    assert_int_equal(xlb_hpack_decode(&dec, block, (uint32_t)n, &h, storage, sizeof(storage)), 0);
    assert_int_equal(h.request.n_fields, 3);
    assert_string_equal(h.fields[2].name, "set-cookie");
    assert_string_equal(h.fields[2].value, "k=v; HttpOnly");
    for (int round = 0; round < 3; round++) {
        n = nghttp2_hd_deflate_hd(backend, block, sizeof(block), res, 3);
        assert_true(n > 0 && n <= 4); /* all indexed now */
        assert_int_equal(xlb_hpack_decode(&dec, block, (uint32_t)n, &h, storage, sizeof(storage)),
                         0);
        assert_string_equal(h.status, "200");
        assert_int_equal(h.request.n_fields, 2);
        assert_string_equal(h.fields[1].value, "b1");
    }
    nghttp2_hd_deflate_del(backend);
    xlb_hpack_decoder_fini(&dec);
    assert_int_equal(xlb_h2_arena_in_use(&dec_arena), 0);
}

static void test_percent_encode(void **state)
{
    char out[64];
    uint32_t n = xlb_grpc_percent_encode(out, sizeof(out), "ok: 100% \x01 \xe2\x98\x83~");
    assert_int_equal(n, strlen("ok: 100%25 %01 %E2%98%83~"));
    assert_memory_equal(out, "ok: 100%25 %01 %E2%98%83~", n);
    /* cut before an escape that would not fit */
    assert_int_equal(xlb_grpc_percent_encode(out, 4, "ab%cd"), 2);
    assert_int_equal(xlb_grpc_percent_encode(out, 5, "ab%cd"), 5);
    assert_int_equal(xlb_grpc_percent_encode(out, 5, "abcdefg"), 5);
    assert_int_equal(xlb_grpc_percent_encode(out, 0, "a"), 0);
}

/* A real client reads the trailers-only response. */
struct seen {
    char fields[8][2][128];
    int n;
    bool ended;
};

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
    struct seen *seen = user;
    if (seen->n < 8) {
        snprintf(seen->fields[seen->n][0], 128, "%.*s", (int)namelen, name);
        snprintf(seen->fields[seen->n][1], 128, "%.*s", (int)valuelen, value);
        seen->n++;
    }
    return 0;
}

static int on_close(nghttp2_session *s, int32_t stream_id, uint32_t error_code, void *user)
{
    ((struct seen *)user)->ended = stream_id == 1 && error_code == 0;
    return 0;
}

static void read_as_client(const uint8_t *frame, uint32_t len, struct seen *seen)
{
    nghttp2_session_callbacks *cb;
    nghttp2_session *c;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    assert_int_equal(nghttp2_session_client_new(&c, cb, seen), 0);
    nghttp2_session_callbacks_del(cb);
    nghttp2_nv req[] = {H2T_NV(":method", "POST"), H2T_NV(":scheme", "http"),
                        H2T_NV(":path", "/a.B/C"), H2T_NV(":authority", "x")};
    h2t_request(c, req, 4, false);
    struct h2t_bytes sent = {0};
    h2t_drain(c, &sent);
    uint8_t settings[9];
    xlb_h2_settings_frame(settings);
    h2t_recv(c, settings, sizeof(settings));
    h2t_recv(c, frame, len);
    nghttp2_session_del(c);
    h2t_free(&sent);
}

static void assert_seen(const struct seen *seen, int i, const char *name, const char *value)
{
    assert_true(i < seen->n);
    assert_string_equal(seen->fields[i][0], name);
    assert_string_equal(seen->fields[i][1], value);
}

static void test_trailers_only(void **state)
{
    uint8_t out[512];
    uint32_t n = xlb_h2_trailers_only(&enc, out, sizeof(out), 1, 14, "no healthy upstream: 100%",
                                      "xlb=MTAuMC4wLjE6ODA=; HttpOnly");
    assert_true(n > 9);
    assert_int_equal(out[3], XLB_H2_HEADERS);
    assert_int_equal(out[4], XLB_H2_FLAG_END_HEADERS | XLB_H2_FLAG_END_STREAM);
    assert_int_equal(((uint32_t)out[0] << 16 | out[1] << 8 | out[2]) + 9, n);
    struct seen seen = {0};
    read_as_client(out, n, &seen);
    assert_int_equal(seen.n, 5);
    assert_seen(&seen, 0, ":status", "200");
    assert_seen(&seen, 1, "content-type", "application/grpc");
    assert_seen(&seen, 2, "grpc-status", "14");
    assert_seen(&seen, 3, "grpc-message", "no healthy upstream: 100%25");
    assert_seen(&seen, 4, "set-cookie", "xlb=MTAuMC4wLjE6ODA=; HttpOnly");
    assert_true(seen.ended);
    /* without message and cookie; a big status number */
    n = xlb_h2_trailers_only(&enc, out, sizeof(out), 1, 4294967295u, NULL, NULL);
    memset(&seen, 0, sizeof(seen));
    read_as_client(out, n, &seen);
    assert_int_equal(seen.n, 3);
    assert_seen(&seen, 2, "grpc-status", "4294967295");
    /* too small */
    assert_int_equal(xlb_h2_trailers_only(&enc, out, 20, 1, 14, "m", NULL), 0);
    assert_int_equal(xlb_h2_trailers_only(&enc, out, 5, 1, 14, NULL, NULL), 0);
    assert_int_equal(xlb_h2_arena_in_use(&enc_arena), enc_baseline);
}

/* What the encoder takes from its arena: init's share, and nothing left behind per call. */
static void test_encoder_memory(void **state)
{
    print_message("hpack encoder: %u bytes in use after init, %u at most\n", enc_baseline,
                  xlb_h2_arena_high_water(&enc_arena));
    assert_true(xlb_h2_arena_high_water(&enc_arena) <= XLB_HPACK_ENCODER_ARENA);
    static _Alignas(16) uint8_t small[1024];
    struct xlb_h2_arena a;
    struct xlb_hpack_encoder e;
    xlb_h2_arena_init(&a, small, sizeof(small));
    assert_int_equal(xlb_hpack_encoder_init(&e, &a), -ENOMEM);
    assert_null(e.deflater);
    assert_int_equal(xlb_h2_arena_in_use(&a), 0);
    uint8_t out[64];
    assert_int_equal(xlb_hpack_encode_field(&e, out, sizeof(out), "a", "b", 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_frames),
        cmocka_unit_test_setup_teardown(test_encode_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_keeps_tables_in_step, setup, teardown),
        cmocka_unit_test(test_percent_encode),
        cmocka_unit_test_setup_teardown(test_trailers_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_encoder_memory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
