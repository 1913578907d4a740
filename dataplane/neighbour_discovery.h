/* IPv6 neighbour discovery (RFC 4861): NS and NA in, NA replies and NS out. */
#ifndef XLB_NEIGHBOUR_DISCOVERY_H
#define XLB_NEIGHBOUR_DISCOVERY_H

#include <rte_ip.h>

#include "packet_parse.h"

#define XLB_ICMP6_NEIGHBOUR_SOLICIT 135
#define XLB_ICMP6_NEIGHBOUR_ADVERT  136

/* ip is validated and the ICMPv6 checksum verified; icmp_len bytes follow it. */
xlb_verdict xlb_nd_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                         uint16_t port_index, struct xlb_frame *frame, struct rte_ipv6_hdr *ip,
                         uint32_t icmp_len);

/* A solicitation for target from source to its solicited-node group; NULL if no mbuf. */
struct rte_mbuf *xlb_nd_build_solicit(struct rte_mempool *pool, const struct xlb_port_view *port,
                                      const struct xlb_addr *source, const struct xlb_addr *target);

#endif
