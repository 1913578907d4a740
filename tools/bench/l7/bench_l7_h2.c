/* bench_l7's HTTP/2 bytes (see bench_l7_h2.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "bench_fwd_setup.h"
#include "bench_l7_h2.h"
#include "xlb_const.h"

#define H2_DATA          0
#define H2_HEADERS       1
#define H2_SETTINGS      4
#define H2_WINDOW_UPDATE 8
#define H2_END_STREAM    0x1
#define H2_ACK           0x1
#define H2_END_HEADERS   0x4

struct bench_h2 h2;

static uint32_t frame(uint8_t *out, uint8_t type, uint8_t flags, uint32_t stream,
                      const void *payload, uint32_t len)
{
    out[0] = (uint8_t)(len >> 16);
    out[1] = (uint8_t)(len >> 8);
    out[2] = (uint8_t)len;
    out[3] = type;
    out[4] = flags;
    out[5] = (uint8_t)(stream >> 24);
    out[6] = (uint8_t)(stream >> 16);
    out[7] = (uint8_t)(stream >> 8);
    out[8] = (uint8_t)stream;
    if (len != 0)
        memcpy(out + 9, payload, len);
    return 9 + len;
}

static void append_frame(struct bytes *b, uint8_t type, uint8_t flags, uint32_t stream,
                         const void *payload, uint32_t len)
{
    if (b->len + 9 + len > sizeof(b->b))
        die("frame too long");
    b->len += frame(b->b + b->len, type, flags, stream, payload, len);
}

#define NV(n, v)                                                                                   \
    {                                                                                              \
        XLB_UNCONST(n), XLB_UNCONST(v), sizeof(n) - 1, sizeof(v) - 1, NGHTTP2_NV_FLAG_NONE         \
    }

static void deflate(nghttp2_hd_deflater *d, const nghttp2_nv *nv, size_t n, struct bytes *out)
{
    ssize_t len = nghttp2_hd_deflate_hd(d, out->b, sizeof(out->b), nv, n);
    if (len < 0)
        die("nghttp2_hd_deflate_hd");
    out->len = (uint32_t)len;
}

static bool same(const struct bytes *a, const struct bytes *b_)
{
    return a->len == b_->len && memcmp(a->b, b_->b, a->len) == 0;
}

void h2_make(void)
{
    /* What grpc-python sends for a unary call (h2load's own fields are similar). */
    static const nghttp2_nv request[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", "/xlb.test.Echo/Who"),
        NV(":authority", "198.18.0.100:443"),
        NV("te", "trailers"),
        NV("content-type", "application/grpc"),
        NV("user-agent", "grpc-python/1.51.1 grpc-c/29.0.0 (linux; chttp2)"),
        NV("grpc-accept-encoding", "identity, deflate, gzip"),
    };
    static const nghttp2_nv response[] = {
        NV(":status", "200"),
        NV("content-type", "application/grpc"),
        NV("grpc-accept-encoding", "identity, deflate, gzip"),
    };
    static const nghttp2_nv trailers[] = {NV("grpc-status", "0")};
    nghttp2_hd_deflater *client, *backend;
    if (nghttp2_hd_deflate_new(&client, 4096) != 0 || nghttp2_hd_deflate_new(&backend, 4096) != 0)
        die("nghttp2_hd_deflate_new");
    struct bytes check;
    deflate(client, request, 8, &h2.req_first);
    deflate(client, request, 8, &h2.req_next);
    deflate(client, request, 8, &check);
    if (!same(&check, &h2.req_next))
        die("the request's HPACK block does not settle");
    /* The backend answers stream 1 first (no trailers), then unary calls: the first call's
     * trailers add grpc-status to the table, which moves the indexes of what came before. */
    deflate(backend, response, 3, &h2.resp_first);
    deflate(backend, response, 3, &h2.resp_second);
    deflate(backend, trailers, 1, &h2.trailers_first);
    deflate(backend, response, 3, &h2.resp_next);
    deflate(backend, trailers, 1, &h2.trailers_next);
    deflate(backend, response, 3, &check);
    if (!same(&check, &h2.resp_next))
        die("the response's HPACK block does not settle");
    deflate(backend, trailers, 1, &check);
    if (!same(&check, &h2.trailers_next))
        die("the trailers' HPACK block does not settle");
    nghttp2_hd_deflate_del(client);
    nghttp2_hd_deflate_del(backend);

    memset(h2.message, 0, sizeof(h2.message));
    h2.message[4] = 16;
    memset(h2.message + 5, 'x', 16);

    /* The client's first segment: preface, SETTINGS (max concurrent streams, initial window),
     * WINDOW_UPDATE of the connection, the request on stream 1 and its first message; the
     * stream stays open (a streaming call) for the DATA workload. */
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    static const uint8_t settings[] = {0, 3, 0, 0, 0, 100, 0, 4, 0, 0x40, 0, 0};
    static const uint8_t increment[] = {0, 0x3f, 0, 1};
    memcpy(h2.hello.b, preface, 24);
    h2.hello.len = 24;
    append_frame(&h2.hello, H2_SETTINGS, 0, 0, settings, sizeof(settings));
    append_frame(&h2.hello, H2_WINDOW_UPDATE, 0, 0, increment, sizeof(increment));
    append_frame(&h2.hello, H2_HEADERS, H2_END_HEADERS, 1, h2.req_first.b, h2.req_first.len);
    append_frame(&h2.hello, H2_DATA, 0, 1, h2.message, sizeof(h2.message));

    append_frame(&h2.settings_ack, H2_SETTINGS, H2_ACK, 0, NULL, 0);

    static const uint8_t backend_settings[] = {0, 3, 0, 0, 0, 100};
    append_frame(&h2.backend_hello, H2_SETTINGS, 0, 0, backend_settings, sizeof(backend_settings));
    append_frame(&h2.backend_hello, H2_SETTINGS, H2_ACK, 0, NULL, 0);
    append_frame(&h2.backend_hello, H2_HEADERS, H2_END_HEADERS, 1, h2.resp_first.b,
                 h2.resp_first.len);

    uint8_t filler[DATA_PAYLOAD - 9];
    memset(filler, 'x', sizeof(filler));
    append_frame(&h2.data, H2_DATA, 0, 1, filler, sizeof(filler));
}

/* A unary call on `stream`: the client's request, or the backend's answer. */
uint32_t rpc_request(uint8_t *out, uint32_t stream)
{
    uint32_t n = frame(out, H2_HEADERS, H2_END_HEADERS, stream, h2.req_next.b, h2.req_next.len);
    return n + frame(out + n, H2_DATA, H2_END_STREAM, stream, h2.message, sizeof(h2.message));
}

uint32_t rpc_response(uint8_t *out, uint32_t stream, bool first_call)
{
    const struct bytes *h = first_call ? &h2.resp_second : &h2.resp_next;
    const struct bytes *t = first_call ? &h2.trailers_first : &h2.trailers_next;
    uint32_t n = frame(out, H2_HEADERS, H2_END_HEADERS, stream, h->b, h->len);
    n += frame(out + n, H2_DATA, 0, stream, h2.message, sizeof(h2.message));
    return n + frame(out + n, H2_HEADERS, H2_END_HEADERS | H2_END_STREAM, stream, t->b, t->len);
}
