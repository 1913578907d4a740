#include "icmp_echo.h"

#include <string.h>

#include <rte_icmp.h>

#define XLB_REPLY_TTL 64

/* ICMPv6 types (RFC 4443). */
#define XLB_ICMP6_ECHO_REPLY 129

xlb_verdict xlb_icmp4_input(struct xlb_burst_ctx *ctx, const struct xlb_port_view *port,
                            struct xlb_frame *frame, struct rte_ipv4_hdr *ip, uint32_t icmp_len)
{
    if (icmp_len < sizeof(struct rte_icmp_hdr))
        return XLB_DROP_ICMP_MALFORMED;
    struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)((uint8_t *)ip + rte_ipv4_hdr_len(ip));
    if (rte_raw_cksum(icmp, icmp_len) != 0xffff)
        return XLB_DROP_ICMP_BAD_CHECKSUM;
    if (icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code != 0)
        return XLB_DROP_ICMP_UNHANDLED;

    icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
    icmp->icmp_cksum = 0;
    icmp->icmp_cksum = (uint16_t)~rte_raw_cksum(icmp, icmp_len);

    uint32_t requester = ip->src_addr;
    ip->src_addr = ip->dst_addr;
    ip->dst_addr = requester;
    ip->time_to_live = XLB_REPLY_TTL;
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    xlb_frame_reply_ethernet(frame, &port->mac);
    ctx->stats->events[XLB_EVENT_ECHO_REPLIES]++;
    return XLB_VERDICT_TX;
}

xlb_verdict xlb_icmp6_echo_reply(struct xlb_burst_ctx *ctx, const struct xlb_port_view *port,
                                 struct xlb_frame *frame, struct rte_ipv6_hdr *ip)
{
    struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip + 1);
    uint8_t requester[16];
    memcpy(requester, ip->src_addr, 16);
    memcpy(ip->src_addr, ip->dst_addr, 16);
    memcpy(ip->dst_addr, requester, 16);
    ip->hop_limits = XLB_REPLY_TTL;

    icmp->icmp_type = XLB_ICMP6_ECHO_REPLY;
    icmp->icmp_cksum = 0;
    icmp->icmp_cksum = rte_ipv6_udptcp_cksum(ip, icmp);
    xlb_frame_reply_ethernet(frame, &port->mac);
    ctx->stats->events[XLB_EVENT_ECHO_REPLIES]++;
    return XLB_VERDICT_TX;
}
