/*
 * The flow layer: between the parsed TCP segment and the engines that own flows. It holds a
 * burst's segments to VIPs and SNAT addresses, looks their flows up together
 * (dataplane/flow/flow_batch.c), hands each to the engine of its flow's kind (the L4 NAT,
 * dataplane/nat/; the L7 splice, dataplane/l7/), or, for a segment with no flow, to the engine
 * of its VIP's kind, and disposes of what the engine says. It also holds what every engine
 * shares: a flow's life in the table (release, expiry, flush, the LB core's accounting) and
 * the egress helpers (next hop, turn-around, MSS limit, RST replies).
 *
 * Engines include this header, never each other's.
 */
#ifndef XLB_FLOW_H
#define XLB_FLOW_H

#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>
#include <rte_tcp.h>

#include "burst.h"
#include "packet_parse.h"
#include "xlb_flow_table.h"
#include "xlb_lb.h"

/* Idle timeouts per TCP state, in seconds (struct xlb_flow's state, whatever its kind). */
#define XLB_FLOW_SYN_TIMEOUT_S         10
#define XLB_FLOW_ESTABLISHED_TIMEOUT_S 300
#define XLB_FLOW_CLOSING_TIMEOUT_S     30
#define XLB_FLOW_CLOSED_TIMEOUT_S      2
#define XLB_FLOW_RESET_TIMEOUT_S       10
/* Flow entries examined for expiry per poll loop: bounded work. */
#define XLB_FLOW_EXPIRE_BUDGET 32
/* Entries a pending flush examines per poll loop. */
#define XLB_FLOW_FLUSH_BUDGET 1024

/* A TCP segment addressed to an owned address, as the IP layer hands it over. */
struct xlb_tcp_packet {
    uint8_t family;
    uint16_t port_index;
    void *ip; /* struct rte_ipv4_hdr or rte_ipv6_hdr */
    struct rte_tcp_hdr *tcp;
    const struct xlb_addr_entry *owned; /* the destination address's entry */
};

/* Where a segment's source and destination addresses are in its IP header; their length. */
static inline size_t xlb_flow_addresses(uint8_t family, void *ip, const uint8_t **src,
                                        const uint8_t **dst)
{
    if (family == AF_INET) {
        struct rte_ipv4_hdr *ip4 = ip;
        *src = (const uint8_t *)&ip4->src_addr;
        *dst = (const uint8_t *)&ip4->dst_addr;
        return 4;
    }
    struct rte_ipv6_hdr *ip6 = ip;
    *src = ip6->src_addr;
    *dst = ip6->dst_addr;
    return 16;
}

/* A held segment (struct xlb_held_segment) as the engines' handlers take it. */
static inline struct xlb_tcp_packet xlb_flow_packet_of(const struct xlb_held_segment *d)
{
    return (struct xlb_tcp_packet){d->family, d->port_index, d->ip, d->tcp, d->owned};
}

/* The flow key a segment arrives with: (source, destination) as on the wire. */
void xlb_flow_key_of(const struct xlb_tcp_packet *p, struct xlb_flow_key *key);

/* ---- flow_batch.c: the burst-wide lookup and the dispatch ---- */

/*
 * Hold a segment to a VIP or back to a SNAT address until the end of its burst
 * (XLB_VERDICT_PENDING), or handle it at once when the burst's batch is full.
 */
xlb_verdict xlb_flow_hold(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len);

/*
 * Handle the held segments in arrival order, their flows looked up together first, each by
 * the engine of its flow's kind, and dispose of each (queued, consumed or dropped with its
 * reason). Empties the batch.
 */
void xlb_flow_run_held(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap);

/* ---- flow_life.c: a flow's life in the table, whatever its kind ---- */

/* Remove a flow with its accounting (and its engine's state: an L7 connection). */
void xlb_flow_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f);
/* A flow the table evicted to make room (a copy of its entry): its engine's state and
 * accounting end. */
void xlb_flow_evicted(struct xlb_burst_ctx *ctx, struct xlb_flow *evicted);
/* Free up to XLB_FLOW_EXPIRE_BUDGET idle flows; called once per poll loop. The snapshot is for
 * the timers that send (the SYN proxy's backend SYN). */
void xlb_flow_expire(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap);
/* Work on a pending flush (xlbctl flows flush): end the flows to its backend, a slice per
 * loop, until the whole table has been seen. */
void xlb_flow_flush_step(struct xlb_burst_ctx *ctx);

/* A request the LB core's pick started has finished (its flow ended, or it never got one):
 * the cluster's circuit breaking and load reports, and the endpoint's requests in flight
 * (least request), see it gone. Both count only when the cluster has a slot, as the pick. */
static inline void xlb_flow_request_finished(struct xlb_burst_ctx *ctx, uint32_t cluster_slot,
                                             uint32_t endpoint_slot)
{
    if (ctx->lb == NULL || ctx->lb->load == NULL || cluster_slot >= XLB_CLUSTER_SLOTS)
        return;
    ctx->lb->load->clusters[cluster_slot].finished++;
    if (endpoint_slot < XLB_ENDPOINT_SLOTS && ctx->lb->load->endpoints[endpoint_slot].in_flight)
        ctx->lb->load->endpoints[endpoint_slot].in_flight--;
}
/* A request that starts outside a pick (an L7 stream on a spliced connection) or that had
 * finished and goes on after all (an L4 connection whose RST was not taken). */
static inline void xlb_flow_request_started(struct xlb_burst_ctx *ctx, uint32_t cluster_slot,
                                            uint32_t endpoint_slot)
{
    if (ctx->lb == NULL || ctx->lb->load == NULL || cluster_slot >= XLB_CLUSTER_SLOTS)
        return;
    ctx->lb->load->clusters[cluster_slot].started++;
    if (endpoint_slot < XLB_ENDPOINT_SLOTS)
        ctx->lb->load->endpoints[endpoint_slot].in_flight++;
}
/* One call result for an endpoint (a connect outcome, an RPC's). */
void xlb_flow_count_endpoint(struct xlb_burst_ctx *ctx, uint32_t slot, bool ok);
/* The drop reason of a failed xlb_flow_create (its `why`). */
xlb_verdict xlb_flow_create_drop(enum xlb_flow_create_failure why);
/* A connection's request hash for ring hash (A42), keyed as the snapshot says (snap may be
 * NULL: unkeyed). */
uint64_t xlb_flow_connection_hash(const struct xlb_snapshot *snap, const struct xlb_flow_key *key);
/* The VIP a client key is addressed to, or NULL. */
const struct xlb_vip_view *xlb_flow_vip_of(const struct xlb_snapshot *snap,
                                           const struct xlb_flow_key *key);

/* ---- egress.c: what every engine's segments leave by ---- */

/* The MAC and port for dst: the neighbour itself when on-link, else the port's gateway. */
bool xlb_egress_next_hop(const struct xlb_snapshot *snap, const struct xlb_addr *dst,
                         struct rte_ether_addr *mac, uint16_t *port_index);
/* A61 for a per-connection forwarder (L4, relay): the address of endpoint i of c that a
 * connection of `family` goes to, the first of its addresses in order of that family with a
 * resolved next hop (*mac, *port_index). NULL when none: *drop says why (no address of the
 * family, or no next hop). */
const struct xlb_host_port *xlb_egress_endpoint_address(const struct xlb_snapshot *snap,
                                                        const struct xlb_lb_cluster *c, uint32_t i,
                                                        uint8_t family, struct rte_ether_addr *mac,
                                                        uint16_t *port_index, xlb_verdict *drop);
/* Send a segment back where it came from: addresses swapped, TTL 64, lengths for a TCP segment
 * of tcp_len bytes (header and options already written), checksums computed. The L3 length. */
uint32_t xlb_egress_turn_around(struct xlb_tcp_packet *p, uint32_t tcp_len);
/* The same without the swap: a segment xlb rewrote into another of tcp_len bytes, its lengths
 * set, TTL 64, checksums computed in full. The L3 length. */
uint32_t xlb_egress_set_tcp_len(struct xlb_tcp_packet *p, uint32_t tcp_len);
/* The largest MSS a SYN between these two ports may offer (xlb.tcp_mss_clamp and the ports'
 * MTUs, docs/forwarding.md); 0 when neither clamps. */
uint16_t xlb_egress_mss_max(const struct xlb_snapshot *snap, uint8_t family, uint16_t port_a,
                            uint16_t port_b);
/* Lower the MSS a SYN or SYN-ACK offers to what both ports on its path carry. */
void xlb_egress_clamp_mss(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_tcp_packet *p, uint16_t out_port_index);
/* Answer a segment of no known connection with a RST, rewritten in place (XLB_VERDICT_TX), or
 * drop it (XLB_DROP_TCP_NO_FLOW) when it is a RST itself. */
xlb_verdict xlb_egress_reset_reply(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                   struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                   uint32_t tcp_len);

#endif
