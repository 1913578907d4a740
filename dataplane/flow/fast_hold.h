/*
 * The common case of a forwarding worker, checked in one go: an untagged IPv4 TCP frame to the
 * port's MAC, with a plain 20-byte IP header whose checksum holds (the NIC's verdict, or
 * computed where the port gives none), not a fragment, to a VIP or SNAT address the
 * owned-address cache holds; or an IPv6 one whose fixed header is followed by TCP itself. Such
 * a segment goes straight to the flow layer's batch (dataplane/flow/flow_batch.c), as the full
 * path would send it after parse_ethernet, ipv4_input or ipv6_input, and tcp_input. That chain of
 * calls, with its frame and packet structs, cost ~17 cycles a packet more (docs/performance.md).
 *
 * Every check here is one the full path makes, for the same outcome; a frame that fails any of
 * them (a tag, IP options or IPv6 extension headers, a bad checksum, an address not in the
 * cache, a length that does not add up) is left to the full path, which makes the same checks and
 * more and says why it drops. So the fast path changes no verdict, only the cost of the ones it
 * takes.
 */
#ifndef XLB_FLOW_FAST_HOLD_H
#define XLB_FLOW_FAST_HOLD_H

#include <stdbool.h>
#include <sys/socket.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "burst.h"
#include "ip_input.h"
#include "owned_cache.h"
#include "packet_parse.h"

#define XLB_FAST_L2   ((uint32_t)sizeof(struct rte_ether_hdr))
#define XLB_FAST_L3   ((uint32_t)sizeof(struct rte_ipv4_hdr))
#define XLB_FAST_L3V6 ((uint32_t)sizeof(struct rte_ipv6_hdr))
#define XLB_FAST_L4   ((uint32_t)sizeof(struct rte_tcp_hdr))

/* The frame's headers as the full path would accept them, up to the owned-address lookup. */
static inline bool xlb_fast_plain_ipv4_tcp(const struct rte_mbuf *m,
                                           const struct rte_ether_addr *port_mac)
{
    const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
    const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
    return m->nb_segs == 1 && m->data_len >= XLB_FAST_L2 + XLB_FAST_L3 + XLB_FAST_L4 &&
           eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4) && ip->version_ihl == 0x45 &&
           ip->next_proto_id == IPPROTO_TCP &&
           !(ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) &&
           rte_is_same_ether_addr(&eth->dst_addr, port_mac) &&
           xlb_ipv4_checksum_ok(m, ip, XLB_FAST_L3);
}

/* The same for IPv6: TCP straight after the fixed header (no extension headers). */
static inline bool xlb_fast_plain_ipv6_tcp(const struct rte_mbuf *m,
                                           const struct rte_ether_addr *port_mac)
{
    const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
    const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(eth + 1);
    return m->nb_segs == 1 && m->data_len >= XLB_FAST_L2 + XLB_FAST_L3V6 + XLB_FAST_L4 &&
           eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6) &&
           (ip->vtc_flow & RTE_BE32(0xf0000000)) == RTE_BE32(0x60000000) &&
           ip->proto == IPPROTO_TCP && rte_is_same_ether_addr(&eth->dst_addr, port_mac);
}

/*
 * Hold a segment whose IP header (l3_header bytes) checked out, if its lengths add up as the
 * full path requires (the datagram `total` bytes within the frame, a TCP header of 20 bytes or
 * more within the segment) and it goes to a VIP or SNAT address. Inlined with a constant
 * family, so that each family's path is straight code.
 */
static inline __attribute__((always_inline)) bool
xlb_fast_hold_segment(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                      struct rte_mbuf *m, uint16_t port_index, uint8_t family, void *ip,
                      uint32_t l3_header, uint32_t total)
{
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)((uint8_t *)ip + l3_header);
    uint32_t tcp_header = xlb_tcp_header_len(tcp);
    if (total > m->data_len - XLB_FAST_L2 || total < l3_header + XLB_FAST_L4 ||
        tcp_header < XLB_FAST_L4 || tcp_header > total - l3_header)
        return false;
    const uint8_t *dst = family == AF_INET
                             ? (const uint8_t *)&((const struct rte_ipv4_hdr *)ip)->dst_addr
                             : ((const struct rte_ipv6_hdr *)ip)->dst_addr;
    const struct xlb_addr_entry *owned =
        xlb_owned_cache_on_port_header(&ctx->owned, snap, family, dst, port_index);
    if (owned == NULL || (owned->role != XLB_ROLE_VIP && owned->role != XLB_ROLE_SNAT))
        return false;
    /* Ethernet pads short frames: from here on the frame ends where the datagram does. */
    m->data_len = (uint16_t)(XLB_FAST_L2 + total);
    m->pkt_len = XLB_FAST_L2 + total;
    ctx->pending[ctx->n_pending++] = (struct xlb_held_segment){
        .m = m,
        .ip = ip,
        .tcp = tcp,
        .owned = owned,
        .tcp_len = total - l3_header,
        .l3_len = total,
        .l2_len = (uint16_t)XLB_FAST_L2,
        .port_index = port_index,
        .family = family,
    };
    return true;
}

/* The IPv6 half of xlb_flow_fast_hold, out of the IPv4 path's way. */
static __attribute__((noinline)) bool xlb_flow_fast_hold_ipv6(struct xlb_burst_ctx *ctx,
                                                              const struct xlb_snapshot *snap,
                                                              uint16_t port_index,
                                                              struct rte_mbuf *m)
{
    if (!xlb_fast_plain_ipv6_tcp(m, &snap->ports[port_index].mac))
        return false;
    struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, XLB_FAST_L2);
    return xlb_fast_hold_segment(ctx, snap, m, port_index, AF_INET6, ip, XLB_FAST_L3V6,
                                 XLB_FAST_L3V6 + rte_be_to_cpu_16(ip->payload_len));
}

/*
 * Hold m for the flow layer if it is the common case; false leaves it, untouched, to the full path.
 * For a forwarding context (flows and LB state set) whose owned-address cache follows snap:
 * the burst function sees to both once per burst. It runs the batch when it is full.
 */
static inline bool xlb_flow_fast_hold(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                      uint16_t port_index, struct rte_mbuf *m)
{
    if (ctx->n_pending == XLB_RX_BURST)
        return false;
    /* The EtherType first, so that an IPv6 frame skips the IPv4 checks (a buffer always has
     * room for an Ethernet header; the IPv6 half checks the frame's length before using it). */
    if (rte_pktmbuf_mtod(m, const struct rte_ether_hdr *)->ether_type ==
        RTE_BE16(RTE_ETHER_TYPE_IPV6))
        return xlb_flow_fast_hold_ipv6(ctx, snap, port_index, m);
    if (!xlb_fast_plain_ipv4_tcp(m, &snap->ports[port_index].mac))
        return false;
    struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, XLB_FAST_L2);
    return xlb_fast_hold_segment(ctx, snap, m, port_index, AF_INET, ip, XLB_FAST_L3,
                                 rte_be_to_cpu_16(ip->total_length));
}

#endif
