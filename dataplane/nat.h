/*
 * Full NAT of TCP flows for L4 VIPs: a client's SYN to a VIP picks a backend with the LB core
 * (lib/lb), and every packet of the flow goes out as SNAT address:port -> backend; the
 * backend's replies to that SNAT address:port come back rewritten as VIP -> client. Backends
 * need no change: they see xlb's SNAT address as their peer.
 */
#ifndef XLB_NAT_H
#define XLB_NAT_H

#include <sys/socket.h>

#include <rte_ip.h>
#include <rte_tcp.h>

#include "xlb_flow_table.h"
#include "packet_parse.h"

/* Idle timeouts per TCP state, in seconds. */
#define XLB_NAT_SYN_TIMEOUT_S         10
#define XLB_NAT_ESTABLISHED_TIMEOUT_S 300
#define XLB_NAT_CLOSING_TIMEOUT_S     30
#define XLB_NAT_CLOSED_TIMEOUT_S      2
#define XLB_NAT_RESET_TIMEOUT_S       10
/* Flow entries examined to find one to evict when the table is full. */
#define XLB_NAT_EVICT_BUDGET 64
/* Flow entries examined for expiry per poll loop: bounded work. */
#define XLB_NAT_EXPIRE_BUDGET 32

/* A TCP segment addressed to an owned address, as the IP layer hands it over. */
struct xlb_tcp_packet {
    uint8_t family;
    uint16_t port_index;
    void *ip; /* struct rte_ipv4_hdr or rte_ipv6_hdr */
    struct rte_tcp_hdr *tcp;
    const struct xlb_addr_entry *owned; /* the destination address's entry */
};

/* Where a segment's source and destination addresses are in its IP header; their length. */
static inline size_t xlb_nat_addresses(uint8_t family, void *ip, const uint8_t **src,
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

/* A held segment (struct xlb_nat_pending) as the NAT's handlers take it. */
static inline struct xlb_tcp_packet xlb_nat_packet_of(const struct xlb_nat_pending *d)
{
    return (struct xlb_tcp_packet){d->family, d->port_index, d->ip, d->tcp, d->owned};
}

/* The flow key a segment arrives with: (source, destination) as on the wire. */
void xlb_nat_key_of(const struct xlb_tcp_packet *p, struct xlb_flow_key *key);

/*
 * Hold a segment to a VIP or back to a SNAT address until the end of its burst
 * (XLB_VERDICT_PENDING), or handle it at once when the burst's batch is full.
 */
xlb_verdict xlb_nat_defer(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len);

/*
 * Handle the held segments in arrival order, their flows looked up together first;
 * verdicts[i] is what became of ctx->pending[i]. Empties the batch. Returns how many
 * verdicts are other than XLB_VERDICT_SENT (the segment rewritten and queued).
 */
uint16_t xlb_nat_run_pending(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                             xlb_verdict *verdicts);

/*
 * The bulk of a worker's traffic, forwarded without the general handlers below: a data or ACK
 * segment (no SYN, FIN or RST) of an established L4 flow. It is judged by the flow's windows,
 * gets the flow's timeout renewed to `expires_s` (xlb_flow_deadline for an established flow,
 * the same for the whole burst), and is rewritten and queued as those handlers would; *verdict
 * says which (sent, or dropped out of window). False, with nothing done, for any other segment
 * or flow (f may be NULL): the general handlers take it.
 */
bool xlb_nat_forward_established(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 const struct xlb_nat_pending *d, struct xlb_flow *f,
                                 enum xlb_flow_side from, uint32_t expires_s, xlb_verdict *verdict);

/* client -> VIP on flow f (the key's flow, or NULL): forward on it if the segment fits the
 * flow's windows, pick a backend for a SYN, or answer a segment of no known connection with a
 * RST. tcp_len: the segment's length. */
xlb_verdict xlb_nat_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                                const struct xlb_flow_key *key, struct xlb_flow *f);

/* backend -> SNAT address on flow f (or NULL: perhaps another worker's): rewrite back to the
 * client if the segment fits the flow's windows. tcp_len: the segment's length. */
xlb_verdict xlb_nat_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                 uint32_t tcp_len, const struct xlb_flow_key *key,
                                 struct xlb_flow *f);

/* Free up to XLB_NAT_EXPIRE_BUDGET idle flows; called once per poll loop. */
void xlb_nat_expire(struct xlb_burst_ctx *ctx);

/* Entries a pending flush examines per poll loop. */
#define XLB_NAT_FLUSH_BUDGET 1024

/* Work on a pending flush (xlbctl flows flush): end the flows to its backend, a slice per
 * loop, until the whole table has been seen. */
void xlb_nat_flush_step(struct xlb_burst_ctx *ctx);

/* ---- what the L7 mode (dataplane/l7/) shares with the NAT ---- */

/* Send a segment back where it came from: addresses swapped, TTL 64, lengths for a TCP segment
 * of tcp_len bytes (header and options already written), checksums computed. The L3 length. */
uint32_t xlb_nat_turn_around(struct xlb_tcp_packet *p, uint32_t tcp_len);

/* The VIP a client key is addressed to, or NULL. */
const struct xlb_vip_view *xlb_nat_vip_of(const struct xlb_snapshot *snap,
                                          const struct xlb_flow_key *key);
/* The MAC and port for dst: the neighbour itself when on-link, else the port's gateway. */
bool xlb_nat_next_hop(const struct xlb_snapshot *snap, const struct xlb_addr *dst,
                      struct rte_ether_addr *mac, uint16_t *port_index);
/* The largest MSS a SYN between these two ports may offer (xlb.tcp_mss_clamp and the ports'
 * MTUs, docs/forwarding.md); 0 when neither clamps. */
uint16_t xlb_nat_mss_max(const struct xlb_snapshot *snap, uint8_t family, uint16_t port_a,
                         uint16_t port_b);
/* A connection's request hash for ring hash (A42). */
uint64_t xlb_nat_connection_hash(const struct xlb_flow_key *key);
/* One call result for an endpoint: a connect outcome. */
void xlb_nat_count_endpoint(struct xlb_burst_ctx *ctx, uint32_t slot, bool ok);
/* A pick's request start that will have no flow: end it for circuit breaking. */
void xlb_nat_request_ended(struct xlb_burst_ctx *ctx, uint32_t cluster_slot);
/* Remove a flow with its accounting (and its L7 connection). */
void xlb_nat_remove_flow(struct xlb_burst_ctx *ctx, struct xlb_flow *f);

#endif
