/*
 * The common case of a forwarding worker, checked in one go: an untagged IPv4 TCP frame to the
 * port's MAC, with a plain 20-byte IP header whose checksum holds (the NIC's verdict, or
 * computed where the port gives none), not a fragment, to a VIP or SNAT address the
 * owned-address cache holds. Such a segment goes straight to the NAT's batch
 * (dataplane/nat_batch.c), as the full path would send it after parse_ethernet, ipv4_input
 * and tcp_input. That chain of calls, with its frame and packet structs, cost ~17 cycles a
 * packet more (docs/performance.md).
 *
 * Every check here is one the full path makes, for the same outcome; a frame that fails any of
 * them (a tag, IP options, a bad checksum, an address not in the cache, a length that does not
 * add up) is left to the full path, which makes the same checks and more and says why
 * it drops. So the fast path changes no verdict, only the cost of the ones it takes.
 */
#ifndef XLB_NAT_FAST_PATH_H
#define XLB_NAT_FAST_PATH_H

#include <stdbool.h>
#include <sys/socket.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "burst.h"
#include "ip_input.h"
#include "owned_cache.h"

#define XLB_FAST_L2 ((uint32_t)sizeof(struct rte_ether_hdr))
#define XLB_FAST_L3 ((uint32_t)sizeof(struct rte_ipv4_hdr))
#define XLB_FAST_L4 ((uint32_t)sizeof(struct rte_tcp_hdr))

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

/*
 * Hold m for the NAT if it is the common case; false leaves it, untouched, to the full path.
 * For a forwarding context (flows and LB state set) whose owned-address cache follows snap:
 * the burst function sees to both once per burst. It runs the batch when it is full.
 */
static inline bool xlb_nat_fast_hold(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                     uint16_t port_index, struct rte_mbuf *m)
{
    if (ctx->n_pending == XLB_RX_BURST || !xlb_fast_plain_ipv4_tcp(m, &snap->ports[port_index].mac))
        return false;
    struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, XLB_FAST_L2);
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);
    uint32_t total = rte_be_to_cpu_16(ip->total_length);
    uint32_t tcp_header = (uint32_t)(tcp->data_off >> 4) * 4;
    if (total > m->data_len - XLB_FAST_L2 || total < XLB_FAST_L3 + XLB_FAST_L4 ||
        tcp_header < XLB_FAST_L4 || tcp_header > total - XLB_FAST_L3)
        return false;
    const struct xlb_addr_entry *owned =
        xlb_owned_cache_on_port_v4_followed(&ctx->owned, snap, ip->dst_addr, port_index);
    if (owned == NULL || (owned->role != XLB_ROLE_VIP && owned->role != XLB_ROLE_SNAT))
        return false;
    /* Ethernet pads short frames: from here on the frame ends where the datagram does. */
    m->data_len = (uint16_t)(XLB_FAST_L2 + total);
    m->pkt_len = XLB_FAST_L2 + total;
    ctx->pending[ctx->n_pending++] = (struct xlb_nat_pending){
        .m = m,
        .ip = ip,
        .tcp = tcp,
        .owned = owned,
        .tcp_len = total - XLB_FAST_L3,
        .l3_len = total,
        .l2_len = (uint16_t)XLB_FAST_L2,
        .port_index = port_index,
        .family = AF_INET,
    };
    return true;
}

#endif
