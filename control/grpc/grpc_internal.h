/* Private to control/grpc: the channel and stream records shared by its files. */
#ifndef XLB_GRPC_INTERNAL_H
#define XLB_GRPC_INTERNAL_H

#include <netdb.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>

#include "grpc_channel.h"
#include "grpc_frame.h"
#include "grpc_keepalive.h"

enum channel_state {
    CH_RESOLVING,
    CH_CONNECTING,
    CH_TLS_HANDSHAKE,
    CH_HTTP2, /* session running; ready once the server's SETTINGS arrived */
    CH_CLOSED,
};

/* Queued bytes of one stream's outgoing gRPC messages. */
struct out_queue {
    uint8_t *data;
    size_t len, sent;
};

struct xlb_grpc_stream {
    struct xlb_grpc_channel *ch;
    int32_t id;
    bool cancelled;
    bool broken; /* the DATA could not be deframed: status and message say why */
    struct xlb_grpc_stream_callbacks cb;
    void *arg;
    struct xlb_grpc_reader reader;
    struct out_queue out;
    int status; /* grpc-status from trailers, -1 until seen */
    char *message;
    int http_status;
    struct xlb_grpc_stream *next;
};

struct xlb_grpc_channel {
    struct xlb_loop *loop;
    struct xlb_grpc_target target;
    char *ca_file, *cert_file, *key_file; /* owned copies of the target's paths */
    struct xlb_grpc_channel_callbacks cb;
    void *arg;
    enum channel_state state;
    bool ready, closed_reported;

    struct gaicb resolve;
    struct gaicb *resolve_list[1];
    struct addrinfo resolve_hints;
    char port_text[8];
    struct addrinfo *addrs, *next_addr;
    uint64_t resolve_deadline_ms;
    uint64_t timer; /* one-shot: resolve poll, connect timeout, keepalive */

    int fd;
    SSL_CTX *ssl_ctx;
    SSL *ssl;
    nghttp2_session *session;
    uint8_t *out;
    size_t out_len, out_sent;
    struct xlb_grpc_keepalive keepalive;
    struct xlb_grpc_stream *streams;
    char authority[XLB_GRPC_HOST_MAX + 16];
};

/* grpc_tls.c */
SSL_CTX *xlb_grpc_tls_context(const struct xlb_grpc_channel *ch, char *error, size_t len);
void xlb_grpc_tls_error(char *error, size_t len, const char *what);

/* grpc_stream.c: the nghttp2 session and its callbacks */
int xlb_grpc_session_start(struct xlb_grpc_channel *ch);
void xlb_grpc_streams_fail(struct xlb_grpc_channel *ch, const char *reason);
void xlb_grpc_streams_free(struct xlb_grpc_channel *ch);

/* grpc_channel.c */
void xlb_grpc_channel_flush(struct xlb_grpc_channel *ch);
void xlb_grpc_channel_fail(struct xlb_grpc_channel *ch, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void xlb_grpc_channel_became_ready(struct xlb_grpc_channel *ch);

#endif
