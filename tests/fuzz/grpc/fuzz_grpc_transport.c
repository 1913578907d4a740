/*
 * Fuzz target for the xDS transport's HTTP/2 side (control/grpc/grpc_stream.c): what a server
 * sends on a channel with one call open -- its headers, the gRPC messages in its DATA, its
 * trailers (grpc-status, grpc-message), RST_STREAM, GOAWAY, PING, SETTINGS, WINDOW_UPDATE --
 * goes through nghttp2's client session and xlb's callbacks as the channel's read path feeds
 * them (the same steps as grpc_channel.c's reader: mem_recv, fail on error, flush). The input
 * is taken in chunks of a length the input chooses. What must hold: a call ends once at most,
 * with a message when it is not OK; no crash, no leak (the channel is destroyed each run).
 *
 * XLB_FUZZ_WRITE_SEEDS=DIR writes seed server byte streams (headers, a message, trailers with
 * OK and with UNAVAILABLE) into DIR and exits.
 */
#define _GNU_SOURCE /* struct gaicb, in grpc_internal.h */
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "grpc_internal.h"
#include "xlb_const.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

#define ADS_PATH "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"

static struct xlb_loop *loop;
static unsigned closes, messages;

static void on_ready(struct xlb_grpc_channel *ch, void *arg)
{
    (void)ch;
    (void)arg;
}
static void on_closed(struct xlb_grpc_channel *ch, const char *reason, void *arg)
{
    (void)ch;
    (void)arg;
    CHECK(reason != NULL);
}
static void on_message(struct xlb_grpc_stream *s, const uint8_t *msg, size_t len, void *arg)
{
    (void)s;
    (void)arg;
    CHECK(len == 0 || msg != NULL);
    messages++;
}
static void on_close(struct xlb_grpc_stream *s, int status, const char *message, void *arg)
{
    (void)s;
    (void)arg;
    CHECK(status == XLB_GRPC_OK || message != NULL);
    closes++;
}

/* The server's side of what the channel wrote: read and dropped, so the socket never fills. */
static void drain(int fd)
{
    char buf[4096];
    while (read(fd, buf, sizeof(buf)) > 0)
        ;
}

/* What grpc_channel.c does with bytes read from the socket. */
static void receive(struct xlb_grpc_channel *ch, const uint8_t *data, size_t len)
{
    if (ch->state != CH_HTTP2)
        return;
    ssize_t used = nghttp2_session_mem_recv(ch->session, data, len);
    if (used < 0) {
        xlb_grpc_channel_fail(ch, "HTTP/2: %s", nghttp2_strerror((int)used));
        return;
    }
    xlb_grpc_channel_flush(ch);
    if (ch->state == CH_HTTP2 && !nghttp2_session_want_read(ch->session) &&
        !nghttp2_session_want_write(ch->session))
        xlb_grpc_channel_fail(ch, "HTTP/2 session ended (GOAWAY)");
}

/* A channel in the state a connected one has: session started, the server's SETTINGS taken. */
static struct xlb_grpc_channel *connected_channel(int fd)
{
    static const struct xlb_grpc_channel_callbacks cb = {on_ready, on_closed};
    struct xlb_grpc_channel *ch = calloc(1, sizeof(*ch));
    CHECK(ch != NULL);
    ch->loop = loop;
    ch->fd = fd;
    ch->state = CH_HTTP2;
    ch->cb = cb;
    strcpy(ch->target.host, "xds.test");
    ch->target.port = 18000;
    strcpy(ch->authority, "xds.test:18000");
    CHECK(xlb_grpc_session_start(ch) == 0);
    static const uint8_t settings[9] = {0, 0, 0, NGHTTP2_SETTINGS, 0, 0, 0, 0, 0};
    receive(ch, settings, sizeof(settings));
    return ch;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
    struct xlb_grpc_channel *ch = connected_channel(sv[0]);
    static const struct xlb_grpc_stream_callbacks scb = {on_message, on_close};
    closes = messages = 0;
    struct xlb_grpc_stream *s = xlb_grpc_stream_open(ch, ADS_PATH, &scb, NULL);
    CHECK(s != NULL);
    CHECK(xlb_grpc_stream_send(s, "\x0a\x00", 2) == 0);
    drain(sv[1]);
    for (unsigned chunks = 0; size > 0 && chunks < 64; chunks++) {
        size_t len = 1 + data[0] % 128;
        data++;
        size--;
        if (len > size)
            len = size;
        receive(ch, data, len);
        drain(sv[1]);
        data += len;
        size -= len;
    }
    CHECK(closes <= 1);
    xlb_grpc_channel_destroy(ch);
    close(sv[1]);
    return 0;
}

/* ---- seeds ---- */

static size_t frame(uint8_t *out, uint8_t type, uint8_t flags, int32_t id, const uint8_t *payload,
                    size_t len)
{
    out[0] = (uint8_t)(len >> 16);
    out[1] = (uint8_t)(len >> 8);
    out[2] = (uint8_t)len;
    out[3] = type;
    out[4] = flags;
    out[5] = (uint8_t)(id >> 24);
    out[6] = (uint8_t)(id >> 16);
    out[7] = (uint8_t)(id >> 8);
    out[8] = (uint8_t)id;
    memcpy(out + 9, payload, len);
    return 9 + len;
}

#define NV(n, v)                                                                                   \
    {                                                                                              \
        (uint8_t *)XLB_UNCONST(n), (uint8_t *)XLB_UNCONST(v), sizeof(n) - 1, sizeof(v) - 1, 0      \
    }

static size_t headers(nghttp2_hd_deflater *d, uint8_t *out, const nghttp2_nv *nv, size_t n,
                      uint8_t flags)
{
    uint8_t block[512];
    ssize_t len = nghttp2_hd_deflate_hd(d, block, sizeof(block), nv, n);
    CHECK(len > 0);
    return frame(out, NGHTTP2_HEADERS, flags | NGHTTP2_FLAG_END_HEADERS, 1, block, (size_t)len);
}

/* One seed: a chunk-length byte before every 128 bytes, as the target reads them. */
static void write_seed(const char *dir, const char *name, const uint8_t *bytes, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *out = fopen(path, "wb");
    CHECK(out != NULL);
    for (size_t at = 0; at < len; at += 128) {
        size_t n = len - at < 128 ? len - at : 128;
        fputc((int)(n - 1), out);
        fwrite(bytes + at, 1, n, out);
    }
    fclose(out);
}

static void write_seeds(const char *dir)
{
    nghttp2_hd_deflater *d;
    CHECK(nghttp2_hd_deflate_new(&d, 4096) == 0);
    const nghttp2_nv response[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
    const nghttp2_nv ok[] = {NV("grpc-status", "0")};
    const nghttp2_nv unavailable[] = {NV("grpc-status", "14"), NV("grpc-message", "going away")};
    static const uint8_t message[] = {0, 0, 0, 0, 4, 0x12, 0x02, 'v', '1'};
    uint8_t buf[2048];
    size_t n = headers(d, buf, response, 2, 0);
    n += frame(buf + n, NGHTTP2_DATA, 0, 1, message, sizeof(message));
    size_t with_message = n;
    n += headers(d, buf + n, ok, 1, NGHTTP2_FLAG_END_STREAM);
    write_seed(dir, "message_then_ok", buf, n);
    nghttp2_hd_deflate_del(d);
    CHECK(nghttp2_hd_deflate_new(&d, 4096) == 0);
    n = headers(d, buf, response, 2, 0);
    n += frame(buf + n, NGHTTP2_DATA, 0, 1, message, sizeof(message));
    n += headers(d, buf + n, unavailable, 2, NGHTTP2_FLAG_END_STREAM);
    write_seed(dir, "message_then_unavailable", buf, n);
    write_seed(dir, "message_then_cut", buf, with_message - 3);
    nghttp2_hd_deflate_del(d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("XLB_FUZZ_WRITE_SEEDS");
    if (dir != NULL) {
        write_seeds(dir);
        exit(0);
    }
    loop = xlb_loop_create();
    CHECK(loop != NULL);
    return 0;
}
