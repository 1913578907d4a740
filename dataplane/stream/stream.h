/*
 * The L7 stream mode: VIPs with a target and "l7_mode": "stream" (docs/l7.md, Two L7 modes).
 * xlb's own TCP (dataplane/tcp/) terminates the client's connection and an nghttp2 server
 * session its HTTP/2; every request stream is picked on its own by the LB core (lib/lb/).
 *
 * The request goes to the picked endpoint over this worker's subchannel to it (an HTTP/2
 * client connection from a SNAT port); a request that cannot be forwarded gets xlb's own
 * trailers-only reply (grpc-status 14 UNAVAILABLE with the reason in grpc-message) on its
 * stream, and the connection stays open for the next ones. While xlbd stops (ctx->draining),
 * clients are told GOAWAY and their RPCs in flight finish (stream_drain.c).
 *
 * An engine under the flow layer (dataplane/flow/flow.h), which hands it the segments of a
 * stream VIP that have no flow and those of flows of kind XLB_FLOW_KIND_STREAM_CLIENT.
 */
#ifndef XLB_STREAM_H
#define XLB_STREAM_H

#include "flow/flow.h"

struct xlb_stream_worker;
struct xlb_tcp_endpoint;

/* The limits of a worker's stream engine (xlb.stream_* keys, docs/configuration.md). A field
 * left 0, other than connections and retry_buffers, takes its default. */
struct xlb_stream_limits {
    uint32_t connections;            /* client connections (TCP control blocks) */
    uint32_t max_concurrent_streams; /* SETTINGS_MAX_CONCURRENT_STREAMS towards clients */
    uint32_t window_bytes;           /* the HTTP/2 windows advertised to clients, per stream */
    uint32_t rpcs_per_connection;    /* the worker's RPC pool: connections times this */
    uint32_t waiting_rpcs;           /* RPCs waiting for a READY subchannel at once */
    uint32_t retry_buffers;          /* RPCs kept for a transparent retry at once (0: none) */
    uint32_t retry_buffer_bytes;     /* request DATA each keeps; longer is not retried */
    uint32_t subchannels_per_endpoint;
    /* The heap the worker's HTTP/2 sessions share (0: connections x XLB_STREAM_HEAP_PER_CONN,
     * at most XLB_STREAM_HEAP_DEFAULT_MAX); each live session commits XLB_STREAM_QUOTA_FLOOR
     * of 7/8 of it, so it bounds the connections with a session at once. */
    uint32_t heap_bytes;
    /* The heap OpenSSL allocates from on the worker (docs/tls.md, "Worker memory"; 0:
     * xlb_tls_heap_bytes(connections, 0)). */
    uint32_t tls_heap_bytes;
};
#define XLB_STREAM_HEAP_PER_CONN                    (64u * 1024u)
#define XLB_STREAM_HEAP_DEFAULT_MAX                 (32u * 1024u * 1024u)
#define XLB_STREAM_QUOTA_FLOOR                      (32u * 1024u)
#define XLB_STREAM_DEFAULT_MAX_CONCURRENT_STREAMS   100u
#define XLB_STREAM_DEFAULT_WINDOW_BYTES             65535u
#define XLB_STREAM_DEFAULT_RPCS_PER_CONNECTION      4u
#define XLB_STREAM_DEFAULT_WAITING_RPCS             32u
#define XLB_STREAM_DEFAULT_RETRY_BUFFERS            64u
#define XLB_STREAM_DEFAULT_RETRY_BUFFER_BYTES       16384u
#define XLB_STREAM_DEFAULT_SUBCHANNELS_PER_ENDPOINT 8u
/* Fill the fields left 0 (but connections and retry_buffers) with their defaults. */
void xlb_stream_limits_complete(struct xlb_stream_limits *limits);
/* The heap when heap_bytes is 0: XLB_STREAM_HEAP_PER_CONN a connection, at most
 * XLB_STREAM_HEAP_DEFAULT_MAX (xlbd never sizes it below this). */
uint32_t xlb_stream_heap_floor(uint32_t connections);
/* Client connections that can have an HTTP/2 session at once: the pool, or fewer when the
 * heap cannot commit every session's floor. */
uint32_t xlb_stream_sessions_max(const struct xlb_stream_limits *limits);

/* Create a worker's engine on the main lcore: a TCP endpoint of limits->connections control
 * blocks on the worker's mbuf pool (its queues holding at most pool_share mbufs) and the heap
 * its HTTP/2 sessions allocate from. NULL on failure (logged). */
struct xlb_stream_worker *xlb_stream_worker_create(unsigned worker_id,
                                                   const struct xlb_stream_limits *limits,
                                                   struct rte_mempool *pool, uint32_t pool_share,
                                                   int socket);
void xlb_stream_worker_free(struct xlb_stream_worker *w);
/* The EAL memory one worker's engine takes at start with these limits (xlbd --check). */
uint64_t xlb_stream_worker_bytes(const struct xlb_stream_limits *limits);
struct xlb_tcp_endpoint *xlb_stream_endpoint(struct xlb_stream_worker *w);
/* Client connections open now, and the most there can be. */
void xlb_stream_use(const struct xlb_stream_worker *w, uint32_t *in_use, uint32_t *capacity);
/* Client connections whose HTTP/2 session is live, and RPCs in flight. */
void xlb_stream_live(const struct xlb_stream_worker *w, uint32_t *sessions, uint32_t *rpcs);
/* Heap bytes one client connection's HTTP/2 session holds once its SETTINGS are exchanged
 * (measured on the first accepted connection of the worker; 0 before). */
uint32_t xlb_stream_session_bytes(const struct xlb_stream_worker *w);
/* Heap bytes all sessions of the worker hold now, and the size of one RPC's own state (its
 * pool entry; its streams' state is in the sessions' heap). */
uint32_t xlb_stream_heap_in_use(const struct xlb_stream_worker *w);
/* What the live sessions' quotas hold of it (their floors at least): new sessions need room. */
uint32_t xlb_stream_heap_committed(const struct xlb_stream_worker *w);
uint32_t xlb_stream_rpc_size(void);

/* A client segment (tcp_len bytes, header included) to a stream VIP with no flow: a SYN is
 * answered with a SYN cookie, the ACK returning one (or a later segment of the client's first
 * flight, xlb_accept_cookie_valid) opens the client connection; anything else
 * XLB_DROP_TCP_NO_FLOW (a RST). */
xlb_verdict xlb_stream_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                               struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                               const struct xlb_flow_key *key, const struct xlb_vip_view *vip);
/* A segment of a client connection. */
xlb_verdict xlb_stream_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                   struct xlb_frame *frame, struct xlb_flow *f);
/* A segment of a subchannel, from its backend. */
xlb_verdict xlb_stream_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                    struct xlb_frame *frame, struct xlb_flow *f);
/* An ICMP error (fragmentation needed, packet too big) about a segment of a stream flow,
 * whose quoted sequence number is seq: the connection learns the path's MTU (0: none given). */
void xlb_stream_icmp_error(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_flow *f, uint32_t mtu, uint32_t seq);
/* A subchannel's flow is being removed: its connection is reset, its RPCs fail. */
void xlb_stream_sub_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f);
/* Send what the sessions queued during the burst, a segment for many RPCs' frames: at the end
 * of every burst (xlb_burst_process) and poll. */
void xlb_stream_flush(struct xlb_burst_ctx *ctx);
/* Timers (retransmissions, delayed ACKs, TIME-WAIT); once per poll loop, bounded. */
void xlb_stream_poll(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap);
/* The flow is being removed (expired, flushed, evicted): its connection is reset. */
void xlb_stream_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f);

#endif
