/*
 * A listening stream socket served from the event loop: accepts clients up to a limit,
 * buffers their input up to a limit, hands it to a framing callback, and writes replies
 * without blocking. The control socket (JSON lines) and the metrics listener (HTTP) are both
 * built on it.
 */
#ifndef XLB_STREAM_SERVER_H
#define XLB_STREAM_SERVER_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "event_loop.h"

struct xlb_stream_server;
struct xlb_stream_client;

struct xlb_stream_handlers {
    /* The buffered, unconsumed input (NUL-terminated for convenience); returns how many bytes
     * it consumed. Called again after each read until it consumes nothing. */
    size_t (*on_input)(struct xlb_stream_client *client, char *data, size_t len, void *arg);
    /* The input limit was reached without a complete request: answer and close. */
    void (*on_overflow)(struct xlb_stream_client *client, void *arg);
    /* The client is being closed (optional): forget it, it is freed on return. */
    void (*on_close)(struct xlb_stream_client *client, void *arg);
    size_t max_input;       /* bytes buffered per client */
    unsigned max_clients;   /* served at once; see adopt in stream_server.c when all are taken */
    const char *busy_reply; /* may be NULL */
    /* Output queued per client beyond which it is closed at once (0: no cap): a client that
     * sends requests without reading the replies cannot make the daemon hold them all. */
    size_t max_output;
    /* A client with no byte read or written for this long is closed (0: never), whether it
     * sends nothing or leaves its replies unread. A held client (reply later) is exempt. */
    uint64_t idle_timeout_ms;
};

/* Clients closed by the server's limits, since it opened. */
struct xlb_stream_server_stats {
    uint64_t closed_idle;     /* idle_timeout_ms passed without a byte either way */
    uint64_t closed_output;   /* max_output reached: the client does not read */
    uint64_t evicted;         /* the oldest idle client, closed to make room for a new one */
    uint64_t refused;         /* no slot (every client busy) or no memory: busy_reply */
    uint64_t closed_overflow; /* max_input reached without a complete request */
};

/* The counters above, for metrics and tests. */
const struct xlb_stream_server_stats *
xlb_stream_server_stats(const struct xlb_stream_server *server);
/* Change the idle timeout of a server and its clients (after a reload, say). */
void xlb_stream_server_set_idle_timeout(struct xlb_stream_server *server, uint64_t idle_ms);

/* Serve a listening socket (the server closes it). NULL when out of memory. */
struct xlb_stream_server *xlb_stream_server_open(struct xlb_loop *loop, int listen_fd,
                                                 const struct xlb_stream_handlers *handlers,
                                                 void *arg);
/* Close every client and the listening socket. */
void xlb_stream_server_close(struct xlb_stream_server *server);

/* Queue output; returns -1 (and closes the client once flushed) when out of memory. */
int xlb_stream_client_send(struct xlb_stream_client *client, const char *data, size_t len);
/* Close once every queued byte is written. */
void xlb_stream_client_close_after_send(struct xlb_stream_client *client);
size_t xlb_stream_client_queued(const struct xlb_stream_client *client);

/*
 * The peer's credentials, taken when it connected (SO_PEERCRED, SO_PEERGROUPS): false for a
 * socket that has none (TCP). groups holds up to XLB_PEER_GROUPS supplementary groups.
 */
#define XLB_PEER_GROUPS 64
struct xlb_peer_cred {
    uid_t uid;
    gid_t gid;
    unsigned n_groups;
    gid_t groups[XLB_PEER_GROUPS];
};
bool xlb_stream_client_peer(const struct xlb_stream_client *client, struct xlb_peer_cred *out);

/*
 * Hold a client whose last request is answered later: its further input stays buffered,
 * unread by on_input, and its end of input (a half-close) waits, until resume. Resuming hands
 * the buffered input to on_input again and writes what is queued (the client may be closed by
 * then: do not use it after resume).
 */
void xlb_stream_client_hold(struct xlb_stream_client *client);
void xlb_stream_client_resume(struct xlb_stream_client *client);

#endif
