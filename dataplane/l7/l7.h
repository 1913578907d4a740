/*
 * L7 mode: VIPs with an xDS `target` take cleartext HTTP/2 (prior knowledge). A connection is
 * bound to a backend by its first request (route, session cookie, LB core) and then spliced;
 * see dataplane/l7/l7_conn.h for its phases and docs/l7.md for the behaviour.
 *
 * An engine under the flow layer (dataplane/flow/flow.h), which hands it every segment of an L7
 * VIP that has no flow, and every segment, either direction, of a flow of kind
 * XLB_FLOW_KIND_L7_SPLICE or XLB_FLOW_KIND_L7_CLOSED (a connection whose exchange is over, its
 * pool entry given back: dataplane/l7/l7_closed.c).
 */
#ifndef XLB_L7_H
#define XLB_L7_H

#include "flow/flow.h"

/* Connections each worker can hold (its mempool), unless the configuration says otherwise. */
#define XLB_L7_DEFAULT_CONNECTIONS 1024u
/* Idle timeout of a connection waiting for its first request. */
#define XLB_L7_RECEIVING_TIMEOUT_S 10

struct xlb_l7_worker;

/* Create a worker's L7 state on the main lcore: a pool of `connections` entries. NULL on
 * failure (logged). */
struct xlb_l7_worker *xlb_l7_worker_create(unsigned worker_id, uint32_t connections, int socket);
void xlb_l7_worker_free(struct xlb_l7_worker *w);
/* Bytes one pooled connection takes, its shares of the binding pool and of the HPACK heap
 * included (docs/l7.md, "Capacity and memory"): what pool sizing divides by. */
size_t xlb_l7_connection_bytes(void);
/* Bytes of a connection entry alone (what a bound connection holds), and of a binding entry
 * (what a connection holds besides until the backend acknowledged its replay). */
size_t xlb_l7_bound_bytes(void);
size_t xlb_l7_binding_bytes(void);
/* The pool's entries taken and its size. */
void xlb_l7_pool_use(const struct xlb_l7_worker *w, uint32_t *in_use, uint32_t *capacity);
/* The same for the binding pool. */
void xlb_l7_binding_use(const struct xlb_l7_worker *w, uint32_t *in_use, uint32_t *capacity);
/* The HPACK heap both decoders of every connection allocate from: bytes in use, the most ever
 * in use, and its size. */
void xlb_l7_hpack_heap_use(const struct xlb_l7_worker *w, uint32_t *in_use, uint32_t *high_water,
                           uint32_t *capacity);

/* A segment to an L7 VIP with no flow: a SYN gets a SYN cookie, the ACK that returns one
 * becomes a connection, anything else a RST. */
xlb_verdict xlb_l7_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                           const struct xlb_flow_key *key, const struct xlb_vip_view *vip);

/* A segment of an L7 connection from the client, or from its backend. */
xlb_verdict xlb_l7_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                               struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                               struct xlb_flow *f);
xlb_verdict xlb_l7_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                                struct xlb_flow *f);

/* A segment of a flow of kind XLB_FLOW_KIND_L7_CLOSED: a spliced connection's last segments
 * (retransmitted FINs, last ACKs, a RST) pass translated; a client's FIN to a connection xlb
 * ended is acknowledged again; nothing else is sent. */
xlb_verdict xlb_l7_closed_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                      struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                      uint32_t tcp_len, struct xlb_flow *f);
xlb_verdict xlb_l7_closed_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                       struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                       struct xlb_flow *f);

/* Retransmissions due and secret rotation; once per poll loop, bounded. */
void xlb_l7_poll(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap);

/* The flow is being removed (expired, flushed, evicted, closed): free its connection. */
void xlb_l7_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f);

#endif
