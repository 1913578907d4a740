/*
 * Frames and HPACK bytes xlb writes itself (see xlb_h2_build.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "xlb_const.h"
#include "xlb_h2_build.h"
#include "xlb_h2_scan.h"

#define GOAWAY_LEN 8
#define PING_LEN   8

static void frame_header(uint8_t *out, uint32_t length, uint8_t type, uint8_t flags,
                         uint32_t stream_id)
{
    out[0] = (uint8_t)(length >> 16);
    out[1] = (uint8_t)(length >> 8);
    out[2] = (uint8_t)length;
    out[3] = type;
    out[4] = flags;
    stream_id &= 0x7fffffffu;
    out[5] = (uint8_t)(stream_id >> 24);
    out[6] = (uint8_t)(stream_id >> 16);
    out[7] = (uint8_t)(stream_id >> 8);
    out[8] = (uint8_t)stream_id;
}

static void put32(uint8_t *out, uint32_t v)
{
    out[0] = (uint8_t)(v >> 24);
    out[1] = (uint8_t)(v >> 16);
    out[2] = (uint8_t)(v >> 8);
    out[3] = (uint8_t)v;
}

uint32_t xlb_h2_settings_frame(uint8_t out[9])
{
    frame_header(out, 0, XLB_H2_SETTINGS, 0, 0);
    return XLB_H2_FRAME_HEADER_LEN;
}

uint32_t xlb_h2_ping_ack(uint8_t out[17], const uint8_t opaque[8])
{
    frame_header(out, PING_LEN, XLB_H2_PING, XLB_H2_FLAG_END_STREAM, 0);
    memcpy(out + XLB_H2_FRAME_HEADER_LEN, opaque, PING_LEN);
    return XLB_H2_FRAME_HEADER_LEN + PING_LEN;
}

uint32_t xlb_h2_goaway(uint8_t out[17], uint32_t last_stream_id, uint32_t error_code)
{
    frame_header(out, GOAWAY_LEN, XLB_H2_GOAWAY, 0, 0);
    put32(out + XLB_H2_FRAME_HEADER_LEN, last_stream_id & 0x7fffffffu);
    put32(out + XLB_H2_FRAME_HEADER_LEN + 4, error_code);
    return XLB_H2_FRAME_HEADER_LEN + GOAWAY_LEN;
}

int xlb_hpack_encoder_init(struct xlb_hpack_encoder *e, struct xlb_h2_arena *arena)
{
    if (nghttp2_hd_deflate_new2(&e->deflater, 0, &arena->mem) != 0) {
        e->deflater = NULL;
        return -ENOMEM;
    }
    /* A deflater whose budget is under 4096 owes the peer a "table size 0" update at the
     * start of its next block; pay it here, into scratch, where nobody reads it. */
    uint8_t scratch[16];
    if (nghttp2_hd_deflate_hd(e->deflater, scratch, sizeof(scratch), NULL, 0) < 0) {
        xlb_hpack_encoder_fini(e);
        return -ENOMEM;
    }
    return 0;
}

void xlb_hpack_encoder_fini(struct xlb_hpack_encoder *e)
{
    if (e->deflater != NULL)
        nghttp2_hd_deflate_del(e->deflater);
    e->deflater = NULL;
}

static nghttp2_nv nv_of(const char *name, const char *value, size_t value_len)
{
    /* nghttp2_nv's name and value are not const; deflating only reads them. */
    return (nghttp2_nv){XLB_UNCONST(name), XLB_UNCONST(value), strlen(name), value_len,
                        NGHTTP2_NV_FLAG_NONE};
}

/* Deflate nva into out, but only when nghttp2's bound says it fits: a deflater that runs out
 * of room is broken for good, and this one serves a whole lcore. */
static uint32_t deflate(struct xlb_hpack_encoder *e, uint8_t *out, uint32_t cap,
                        const nghttp2_nv *nva, size_t n)
{
    if (e->deflater == NULL || nghttp2_hd_deflate_bound(e->deflater, nva, n) > cap)
        return 0;
    ssize_t len = nghttp2_hd_deflate_hd(e->deflater, out, cap, nva, n);
    return len < 0 ? 0 : (uint32_t)len;
}

uint32_t xlb_hpack_encode_field(struct xlb_hpack_encoder *e, uint8_t *out, uint32_t cap,
                                const char *name, const char *value, uint32_t value_len)
{
    nghttp2_nv nv = nv_of(name, value, value_len);
    return deflate(e, out, cap, &nv, 1);
}

uint32_t xlb_grpc_percent_encode(char *out, uint32_t cap, const char *message)
{
    static const char hex[] = "0123456789ABCDEF";
    uint32_t n = 0;
    for (const uint8_t *p = (const uint8_t *)message; *p != '\0'; p++) {
        bool plain = *p >= 0x20 && *p <= 0x7e && *p != '%';
        if (n + (plain ? 1 : 3) > cap)
            break;
        if (plain) {
            out[n++] = (char)*p;
            continue;
        }
        out[n++] = '%';
        out[n++] = hex[*p >> 4];
        out[n++] = hex[*p & 0xf];
    }
    return n;
}

/* Decimal text of v; returns its length (at most 10). */
static uint32_t decimal(char out[10], unsigned v)
{
    char rev[10];
    uint32_t n = 0;
    do {
        rev[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 && n < sizeof(rev));
    for (uint32_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    return n;
}

uint32_t xlb_h2_trailers_only(struct xlb_hpack_encoder *e, uint8_t *out, uint32_t cap,
                              uint32_t stream_id, unsigned grpc_status, const char *message,
                              const char *set_cookie)
{
    char status[10], encoded[XLB_H2_GRPC_MESSAGE_MAX];
    nghttp2_nv nva[5];
    size_t n = 0;
    nva[n++] = nv_of(":status", "200", 3);
    nva[n++] = nv_of("content-type", "application/grpc", 16);
    nva[n++] = nv_of("grpc-status", status, decimal(status, grpc_status));
    if (message != NULL)
        nva[n++] = nv_of("grpc-message", encoded,
                         xlb_grpc_percent_encode(encoded, sizeof(encoded), message));
    if (set_cookie != NULL)
        nva[n++] = nv_of("set-cookie", set_cookie, strlen(set_cookie));
    if (cap < XLB_H2_FRAME_HEADER_LEN)
        return 0;
    uint32_t block =
        deflate(e, out + XLB_H2_FRAME_HEADER_LEN, cap - XLB_H2_FRAME_HEADER_LEN, nva, n);
    if (block == 0 || block > XLB_H2_BUILD_MAX_BLOCK)
        return 0;
    frame_header(out, block, XLB_H2_HEADERS, XLB_H2_FLAG_END_HEADERS | XLB_H2_FLAG_END_STREAM,
                 stream_id);
    return XLB_H2_FRAME_HEADER_LEN + block;
}
