/*
 * The stream engine's own state, shared by its files only: a client connection is xlb's TCP
 * connection plus an nghttp2 server session whose memory comes from the worker's heap through
 * the connection's quota; connections live in a per-worker pool allocated at start.
 */
#ifndef XLB_STREAM_CONN_H
#define XLB_STREAM_CONN_H

#include <rte_ether.h>

#include <nghttp2/nghttp2.h>

#include "stream.h"
#include "xlb_h2_quota.h"
#include "xlb_tcp.h"

#define XLB_STREAM_NONE             UINT32_MAX
#define XLB_STREAM_TX_CAP           512 /* output packets collected per endpoint call */
#define XLB_STREAM_TIMERS_PER_SLICE 64
#define XLB_STREAM_POLL_SLICES      4
/* A session's heap: its floor is what one needs to exchange SETTINGS and a few requests (the
 * output buffer nghttp2 keeps is 16 KiB), its limit what a busy one may take. */
#define XLB_STREAM_QUOTA_FLOOR (48u * 1024u)
#define XLB_STREAM_QUOTA_LIMIT (512u * 1024u)
/* Request header fields kept for the pick (as the splice mode's decoder keeps). */
#define XLB_STREAM_MAX_FIELDS   64
#define XLB_STREAM_HEADER_BYTES 8192
/* Pieces of received bytes fed to the session per event: bounded work per segment. */
#define XLB_STREAM_RECV_PIECES 64
/* Send-queue room asked for before taking a chunk from the session: its largest (a DATA frame
 * of 16 KiB with padding, or a header block of 16 KiB in frames). */
#define XLB_STREAM_CHUNK_ROOM (16384u + 9u + 256u + 1024u)
/* Output chunks taken from the session per pump. */
#define XLB_STREAM_SEND_CHUNKS 64

/* Where a connection's packets leave: the first member of a client connection and of a
 * subchannel, so that output tagged with either (xlb_tcp_user_of) is routed alike. */
struct xlb_stream_link {
    struct xlb_tcp_tuple tuple;
    struct rte_ether_addr mac;   /* the peer's next hop */
    struct rte_ether_addr local; /* our port's */
    uint16_t port_index;
    bool flat; /* the port sends no chains: segments are linearized first */
    bool in_use;
};

/* One client connection. */
struct xlb_stream_conn {
    struct xlb_stream_link link;
    struct xlb_tcp_conn *tcp; /* NULL once closed; kept through TIME-WAIT (done set) */
    nghttp2_session *h2;      /* NULL once freed */
    struct xlb_h2_quota quota;
    struct xlb_stream_worker *w;
    struct xlb_flow_key key; /* the client's, for the VIP and the connection hash */
    bool done;               /* on_closed delivered */
    bool shut;               /* our FIN is queued */
    bool pumping, again;
    uint32_t flow;      /* the flow's index in the worker's table, or XLB_STREAM_NONE */
    uint32_t next_free; /* free-list link */
    /* One chunk of the session's output, copied, that the TCP send queue refused (rare: a
     * chunk is taken only with room for the largest). */
    struct rte_mbuf *pending;
};

/* The request headers of the stream being decoded (one at a time per worker: HEADERS and
 * CONTINUATION frames are not interleaved). */
struct xlb_stream_headers {
    int32_t stream_id;
    bool overflow; /* more fields or bytes than kept: the request is refused */
    uint32_t n_fields, used;
    struct {
        const char *name, *value;
        uint32_t name_len, value_len;
    } fields[XLB_STREAM_MAX_FIELDS];
    char bytes[XLB_STREAM_HEADER_BYTES];
};

struct xlb_stream_worker {
    struct xlb_tcp_endpoint *ep;
    struct xlb_stream_conn *conns;
    uint32_t n_conns, free_head, in_use;
    struct xlb_stream_limits limits;
    struct xlb_h2_pool heap;
    void *heap_block;
    nghttp2_session_callbacks *callbacks; /* every session's, made at start */
    nghttp2_option *options;
    uint32_t session_bytes; /* measured on the first session (xlb_stream_session_bytes) */
    struct xlb_stream_headers headers;
    /* The call in progress (as the relay's): context, snapshot, the connection it is about,
     * where a cookie SYN-ACK goes. */
    struct xlb_burst_ctx *ctx;
    const struct xlb_snapshot *snap;
    struct xlb_stream_link *current;
    struct rte_ether_addr reply_mac;
    uint16_t reply_port;
    uint16_t n_tx;
    struct rte_mbuf *tx[XLB_STREAM_TX_CAP];
};

/* stream_worker.c */
void xlb_stream_enter(struct xlb_stream_worker *w, struct xlb_burst_ctx *ctx,
                      const struct xlb_snapshot *snap, struct xlb_stream_link *current);
void xlb_stream_route_output(struct xlb_stream_worker *w);
uint64_t xlb_stream_now_ms(const struct xlb_burst_ctx *ctx);
struct xlb_stream_conn *xlb_stream_conn_alloc(struct xlb_stream_worker *w);
void xlb_stream_conn_free(struct xlb_stream_worker *w, struct xlb_stream_conn *c);

/* stream_session.c: the HTTP/2 server session over the TCP connection. */
extern const struct xlb_tcp_callbacks xlb_stream_client_callbacks;
/* Make the session (SETTINGS queued); false when the heap cannot take one more. */
bool xlb_stream_session_open(struct xlb_stream_conn *c);
/* Feed what the client sent and write what the session has to send, as far as room allows. */
void xlb_stream_pump(struct xlb_stream_conn *c);
/* Reset the client (the flow is going away). */
void xlb_stream_abort(struct xlb_stream_conn *c);

/* stream_rpc.c: the session's callbacks that see requests. */
void xlb_stream_rpc_callbacks(nghttp2_session_callbacks *cb);

#endif
