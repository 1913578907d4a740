/*
 * The TCP relay: L4 VIPs with "l4_mode": "terminate". xlb's own TCP (dataplane/tcp/)
 * terminates the client's connection and opens another from a SNAT address to the backend the
 * LB core picks; the bytes each side delivers in order are written to the other, zero-copy
 * (the received mbufs become the other side's send queue). Each side recovers its own losses
 * at the speed of its own path, and a half-close or a reset passes through. docs/tcp.md,
 * "The relay", has the behaviour.
 *
 * An engine under the flow layer (dataplane/flow/flow.h), which hands it the segments of a
 * terminate VIP that have no flow and both directions of flows of kind XLB_FLOW_KIND_TCP_RELAY.
 */
#ifndef XLB_RELAY_H
#define XLB_RELAY_H

#include "flow/flow.h"

struct xlb_relay_worker;
struct xlb_tcp_endpoint;

/* Create a worker's relay on the main lcore: a TCP endpoint of `connections` control blocks
 * (two per relayed connection) on the worker's mbuf pool, whose queues may hold at most
 * pool_share of its mbufs (a slow reader cannot take the pool the ports need). NULL on
 * failure (logged). */
struct xlb_relay_worker *xlb_relay_worker_create(unsigned worker_id, uint32_t connections,
                                                 struct rte_mempool *pool, uint32_t pool_share,
                                                 int socket);
void xlb_relay_worker_free(struct xlb_relay_worker *w);
/* The worker's TCP endpoint: its counters and connections (xlb_tcp_counters, xlb_tcp_list). */
struct xlb_tcp_endpoint *xlb_relay_endpoint(struct xlb_relay_worker *w);
/* Relayed connections open now, and the most there can be. */
void xlb_relay_use(const struct xlb_relay_worker *w, uint32_t *in_use, uint32_t *capacity);

/* A client segment to a terminate VIP with no flow: a SYN is answered with a SYN cookie, the
 * ACK returning one (or a later segment of the client's first flight, xlb_accept_cookie_valid)
 * opens both connections; anything else XLB_DROP_TCP_NO_FLOW (a RST). */
xlb_verdict xlb_relay_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                              const struct xlb_flow_key *key, const struct xlb_vip_view *vip);

/* A segment of a relayed connection, from its client or from its backend. */
xlb_verdict xlb_relay_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                  struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                  struct xlb_flow *f);
xlb_verdict xlb_relay_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                   struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                   struct xlb_flow *f);

/* An ICMP error about a segment of a relayed connection, which xlb's own TCP sent to the
 * backend (to_backend) or to the client: a path MTU (0: another error, ignored as RFC 5461's
 * soft errors are) lowers that side's MSS when seq is one it has in flight. */
void xlb_relay_icmp_error(struct xlb_burst_ctx *ctx, struct xlb_flow *f, bool to_backend,
                          uint32_t mtu, uint32_t seq);

/* The endpoint's timers (retransmissions, delayed ACKs, TIME-WAIT); once per poll loop,
 * bounded. */
void xlb_relay_poll(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap);

/* The flow is being removed (expired, flushed, evicted): both connections are reset. */
void xlb_relay_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f);

#endif
