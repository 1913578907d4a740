#include "l7_h2.h"
#include "xlb_const.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

void h2_append(struct h2_bytes *out, const void *data, uint32_t len)
{
    assert_true(out->len + len <= sizeof(out->b));
    if (len > 0)
        memcpy(out->b + out->len, data, len);
    out->len += len;
}

uint32_t h2_frame(struct h2_bytes *out, uint8_t type, uint8_t flags, uint32_t stream,
                  const void *payload, uint32_t len)
{
    uint32_t at = out->len;
    const uint8_t head[9] = {(uint8_t)(len >> 16),
                             (uint8_t)(len >> 8),
                             (uint8_t)len,
                             type,
                             flags,
                             (uint8_t)(stream >> 24),
                             (uint8_t)(stream >> 16),
                             (uint8_t)(stream >> 8),
                             (uint8_t)stream};
    h2_append(out, head, 9);
    h2_append(out, payload, len);
    return at;
}

void h2_client_hello(struct h2_bytes *out)
{
    static const uint8_t settings[] = {0, 3, 0, 0, 0, 100, 0, 4, 0, 0x10, 0, 0};
    h2_append(out, H2_PREFACE, H2_PREFACE_LEN);
    h2_frame(out, H2_SETTINGS, 0, 0, settings, sizeof(settings));
}

void h2_backend_settings(struct h2_bytes *out)
{
    static const uint8_t settings[] = {0, 3, 0, 0, 0, 100};
    h2_frame(out, H2_SETTINGS, 0, 0, settings, sizeof(settings));
}

void h2_settings_ack(struct h2_bytes *out)
{
    h2_frame(out, H2_SETTINGS, H2_ACK, 0, NULL, 0);
}

void h2_ping(struct h2_bytes *out, const uint8_t opaque[8])
{
    h2_frame(out, H2_PING, 0, 0, opaque, 8);
}

void h2_peer_init(struct h2_peer *p)
{
    assert_int_equal(nghttp2_hd_deflate_new(&p->deflater, 4096), 0);
}

void h2_peer_fini(struct h2_peer *p)
{
    nghttp2_hd_deflate_del(p->deflater);
}

static nghttp2_nv nv(const char *name, const char *value)
{
    return (nghttp2_nv){XLB_UNCONST(name), XLB_UNCONST(value), strlen(name), strlen(value),
                        NGHTTP2_NV_FLAG_NONE};
}

static void deflate(struct h2_peer *p, struct h2_bytes *out, const nghttp2_nv *nva, size_t n)
{
    ssize_t len = nghttp2_hd_deflate_hd(p->deflater, out->b, sizeof(out->b), nva, n);
    assert_true(len > 0);
    out->len = (uint32_t)len;
}

void h2_request_block(struct h2_peer *p, struct h2_bytes *out, const char *path, const char *cookie)
{
    nghttp2_nv nva[8];
    size_t n = 0;
    nva[n++] = nv(":method", "POST");
    nva[n++] = nv(":scheme", "http");
    nva[n++] = nv(":path", path);
    nva[n++] = nv(":authority", "l7.test:9001");
    nva[n++] = nv("te", "trailers");
    nva[n++] = nv("content-type", "application/grpc");
    nva[n++] = nv("user-agent", "grpc-python/1.51.1");
    if (cookie != NULL)
        nva[n++] = nv("cookie", cookie);
    deflate(p, out, nva, n);
}

void h2_response_block(struct h2_peer *p, struct h2_bytes *out)
{
    const nghttp2_nv nva[] = {nv(":status", "200"), nv("content-type", "application/grpc")};
    deflate(p, out, nva, 2);
}

void h2_trailers_block(struct h2_peer *p, struct h2_bytes *out, const char *status)
{
    const nghttp2_nv nva[] = {nv("grpc-status", status)};
    deflate(p, out, nva, 1);
}

uint32_t h2_headers(struct h2_bytes *out, uint32_t stream, bool end_stream,
                    const struct h2_bytes *block)
{
    return h2_frame(out, H2_HEADERS, H2_END_HEADERS | (end_stream ? H2_END_STREAM : 0), stream,
                    block->b, block->len);
}

uint32_t h2_message(struct h2_bytes *out, uint32_t stream, bool end_stream, uint32_t n)
{
    uint8_t m[2048];
    assert_true(n <= sizeof(m) - 5);
    m[0] = 0;
    m[1] = (uint8_t)(n >> 24);
    m[2] = (uint8_t)(n >> 16);
    m[3] = (uint8_t)(n >> 8);
    m[4] = (uint8_t)n;
    memset(m + 5, 'x', n);
    return h2_frame(out, H2_DATA, end_stream ? H2_END_STREAM : 0, stream, m, 5 + n);
}

void h2_decode(nghttp2_hd_inflater *inflater, const uint8_t *block, uint32_t len,
               struct h2_fields *out)
{
    out->n = 0;
    const uint8_t *in = block;
    size_t left = len;
    for (;;) {
        nghttp2_nv field;
        int flags = 0;
        ssize_t used = nghttp2_hd_inflate_hd2(inflater, &field, &flags, in, left, 1);
        assert_true(used >= 0);
        in += used;
        left -= (size_t)used;
        if (flags & NGHTTP2_HD_INFLATE_EMIT) {
            assert_true(out->n < sizeof(out->f) / sizeof(out->f[0]));
            struct h2_field *f = &out->f[out->n++];
            assert_true(field.namelen < sizeof(f->name) && field.valuelen < sizeof(f->value));
            memcpy(f->name, field.name, field.namelen);
            f->name[field.namelen] = '\0';
            memcpy(f->value, field.value, field.valuelen);
            f->value[field.valuelen] = '\0';
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inflater);
            break;
        }
        if (used == 0 && left == 0)
            fail_msg("header block ends inside a field");
    }
    assert_int_equal(left, 0);
}

const char *h2_field(const struct h2_fields *fields, const char *name)
{
    const char *value = NULL;
    for (unsigned i = 0; i < fields->n; i++)
        if (strcmp(fields->f[i].name, name) == 0)
            value = fields->f[i].value;
    return value;
}

struct h2_frame_header h2_frame_at(const uint8_t *p)
{
    return (struct h2_frame_header){
        .length = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2],
        .type = p[3],
        .flags = p[4],
        .stream = ((uint32_t)p[5] << 24 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 8 | p[8]) &
                  0x7fffffffu,
    };
}
