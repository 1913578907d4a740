/*
 * A gRPC client channel on the control plane's event loop: one HTTP/2 connection (nghttp2)
 * over a kernel TCP socket, cleartext or TLS (OpenSSL, ALPN h2), opened without blocking the
 * loop (names resolved with getaddrinfo_a), kept alive with HTTP/2 PINGs (grpc_keepalive.h). It
 * carries
 * bidirectional streaming calls such as ADS and LRS.
 *
 * Callbacks run from the event loop. A callback may open streams and send messages, but must
 * not destroy the channel: schedule that (e.g. with a 0 ms timeout). Reconnecting is the
 * owner's business; a channel connects once.
 */
#ifndef XLB_GRPC_CHANNEL_H
#define XLB_GRPC_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event_loop.h"

#define XLB_GRPC_HOST_MAX        255
#define XLB_GRPC_CONNECT_TIMEOUT 20000 /* ms: gRPC's minimum connect timeout */

/* gRPC status codes xlb produces or looks at. */
enum xlb_grpc_status {
    XLB_GRPC_OK = 0,
    XLB_GRPC_CANCELLED = 1,
    XLB_GRPC_UNKNOWN = 2,
    XLB_GRPC_INTERNAL = 13,
    XLB_GRPC_UNAVAILABLE = 14,
};

struct xlb_grpc_target {
    char host[XLB_GRPC_HOST_MAX + 1]; /* a name or an address literal (no brackets) */
    uint16_t port;
    bool tls;
    const char *ca_file;   /* tls: verify the server against these CAs (NULL: system CAs) */
    const char *cert_file; /* tls: client certificate for mTLS, with key_file */
    const char *key_file;
    size_t max_message; /* 0: XLB_GRPC_DEFAULT_MAX_MSG */
};

/* "host:port", "[v6]:port" or "dns:///host:port"; 0, or -1 with a reason in error. */
int xlb_grpc_target_parse(const char *uri, struct xlb_grpc_target *out, char *error,
                          size_t error_len);

struct xlb_grpc_channel;
struct xlb_grpc_stream;

struct xlb_grpc_channel_callbacks {
    /* Connected and HTTP/2 settings exchanged: streams may be opened. */
    void (*on_ready)(struct xlb_grpc_channel *ch, void *arg);
    /* Failed to connect, or the connection ended (reason says why). Open streams have already
     * received on_close. The channel is dead; destroy it outside the callback. */
    void (*on_closed)(struct xlb_grpc_channel *ch, const char *reason, void *arg);
};

struct xlb_grpc_stream_callbacks {
    void (*on_message)(struct xlb_grpc_stream *s, const uint8_t *msg, size_t len, void *arg);
    /* The call ended with this status; the stream is freed after the callback. */
    void (*on_close)(struct xlb_grpc_stream *s, int status, const char *message, void *arg);
};

struct xlb_grpc_channel *xlb_grpc_channel_connect(struct xlb_loop *loop,
                                                  const struct xlb_grpc_target *target,
                                                  const struct xlb_grpc_channel_callbacks *cb,
                                                  void *arg);
/* Close the connection (without callbacks) and free everything, streams included. */
void xlb_grpc_channel_destroy(struct xlb_grpc_channel *ch);
bool xlb_grpc_channel_ready(const struct xlb_grpc_channel *ch);

/* Start a call to path ("/package.Service/Method"); NULL when the channel is not ready. */
struct xlb_grpc_stream *xlb_grpc_stream_open(struct xlb_grpc_channel *ch, const char *path,
                                             const struct xlb_grpc_stream_callbacks *cb, void *arg);
/* Queue one message; 0, or -1 when the stream or channel is gone or memory ran out. */
int xlb_grpc_stream_send(struct xlb_grpc_stream *s, const void *msg, size_t len);
/* End the call from our side with RST_STREAM(CANCEL); no further callbacks for it. */
void xlb_grpc_stream_cancel(struct xlb_grpc_stream *s);

#endif
