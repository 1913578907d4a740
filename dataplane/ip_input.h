/* IPv4 and IPv6 input: header validation, then dispatch by protocol. */
#ifndef XLB_IP_INPUT_H
#define XLB_IP_INPUT_H

#include <stdbool.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "checksum.h"
#include "packet_parse.h"

/* Whether an IPv4 header of hlen bytes checks out: the NIC's verdict where it gave one,
 * computed otherwise. Shared by ipv4_input.c and the NAT's fast path. */
static inline bool xlb_ipv4_checksum_ok(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
                                        uint32_t hlen)
{
    uint64_t flags = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
    if (flags == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
        return true;
    if (flags == RTE_MBUF_F_RX_IP_CKSUM_BAD)
        return false;
    if (hlen == sizeof(*ip)) { /* no options: five 32-bit words, summed as their halves */
        uint32_t w[5];
        memcpy(w, ip, sizeof(w));
        return xlb_csum_fold((uint64_t)w[0] + w[1] + w[2] + w[3] + w[4]) == 0xffff;
    }
    return rte_raw_cksum(ip, hlen) == 0xffff;
}

xlb_verdict xlb_ipv4_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           uint16_t port_index, struct xlb_frame *frame);
xlb_verdict xlb_ipv6_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           uint16_t port_index, struct xlb_frame *frame);

#endif
