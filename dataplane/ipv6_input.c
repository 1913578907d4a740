#include <rte_icmp.h>
#include <rte_ip.h>

#include "icmp_echo.h"
#include "icmp_error.h"
#include "ip_input.h"
#include "neighbour_discovery.h"
#include "tcp_input.h"

#define XLB_ICMP6_ECHO_REQUEST 128
#define XLB_ICMP6_MIN_HEADER   4 /* type, code, checksum */

static bool is_extension_header(uint8_t next)
{
    switch (next) {
    case IPPROTO_HOPOPTS:
    case IPPROTO_ROUTING:
    case IPPROTO_FRAGMENT:
    case IPPROTO_DSTOPTS:
    case IPPROTO_AH:
    case IPPROTO_ESP:
    case 135: /* mobility */
        return true;
    default:
        return false;
    }
}

static xlb_verdict icmp6_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                               uint16_t port_index, struct xlb_frame *frame,
                               struct rte_ipv6_hdr *ip, uint32_t icmp_len)
{
    if (icmp_len < XLB_ICMP6_MIN_HEADER)
        return XLB_DROP_ICMP_MALFORMED;
    if (rte_ipv6_udptcp_cksum_verify(ip, ip + 1) != 0)
        return XLB_DROP_ICMP_BAD_CHECKSUM;
    uint8_t type = *(const uint8_t *)(ip + 1);
    if (type == XLB_ICMP6_NEIGHBOUR_SOLICIT || type == XLB_ICMP6_NEIGHBOUR_ADVERT)
        return xlb_nd_input(ctx, snap, port_index, frame, ip, icmp_len);

    struct xlb_addr dst;
    xlb_addr_from_ipv6(ip->dst_addr, &dst);
    const struct xlb_addr_entry *owned = xlb_snapshot_owned_on_port(snap, &dst, port_index);
    if (owned == NULL)
        return XLB_DROP_NOT_OUR_ADDRESS;
    if (xlb_icmp6_is_error(type))
        return xlb_icmp_error_input(ctx, snap, frame, AF_INET6, ip, icmp_len, owned->role);
    if (type != XLB_ICMP6_ECHO_REQUEST)
        return XLB_DROP_ICMP_UNHANDLED;
    if (icmp_len < sizeof(struct rte_icmp_hdr) || ((const uint8_t *)(ip + 1))[1] != 0)
        return XLB_DROP_ICMP_MALFORMED;
    return xlb_icmp6_echo_reply(ctx, &snap->ports[port_index], frame, ip);
}

xlb_verdict xlb_ipv6_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           uint16_t port_index, struct xlb_frame *frame)
{
    if (frame->l3_avail < sizeof(struct rte_ipv6_hdr))
        return XLB_DROP_IPV6_MALFORMED;
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)frame->l3;
    uint32_t payload = rte_be_to_cpu_16(ip->payload_len);
    if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6 || payload + sizeof(*ip) > frame->l3_avail)
        return XLB_DROP_IPV6_MALFORMED;
    /* Ethernet pads short frames: from here on the frame ends where the datagram does. */
    xlb_frame_set_l3_len(frame, payload + (uint32_t)sizeof(*ip));

    if (ip->proto == IPPROTO_ICMPV6)
        return icmp6_input(ctx, snap, port_index, frame, ip, payload);
    if (is_extension_header(ip->proto))
        return XLB_DROP_IPV6_EXT_HEADER;

    struct xlb_addr dst;
    xlb_addr_from_ipv6(ip->dst_addr, &dst);
    const struct xlb_addr_entry *owned =
        xlb_owned_cache_on_port(&ctx->owned, snap, &dst, port_index);
    if (owned == NULL)
        return XLB_DROP_NOT_OUR_ADDRESS;
    if (ip->proto == IPPROTO_TCP) {
        struct xlb_tcp_packet p = {AF_INET6, port_index, ip, (struct rte_tcp_hdr *)(ip + 1), owned};
        return xlb_tcp_input(ctx, snap, frame, &p, payload);
    }
    return XLB_DROP_PROTOCOL_UNSUPPORTED;
}
