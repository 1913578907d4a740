#include <rte_ip.h>

#include "icmp_echo.h"
#include "icmp_error.h"
#include "ip_input.h"
#include "tcp_input.h"

xlb_verdict xlb_ipv4_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           uint16_t port_index, struct xlb_frame *frame)
{
    if (frame->l3_avail < sizeof(struct rte_ipv4_hdr))
        return XLB_DROP_IPV4_MALFORMED;
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)frame->l3;
    uint32_t hlen = rte_ipv4_hdr_len(ip);
    uint32_t total = rte_be_to_cpu_16(ip->total_length);
    if ((ip->version_ihl >> 4) != 4 || hlen < sizeof(*ip) || hlen > frame->l3_avail ||
        total < hlen || total > frame->l3_avail)
        return XLB_DROP_IPV4_MALFORMED;
    if (!xlb_ipv4_checksum_ok(frame->m, ip, hlen))
        return XLB_DROP_IPV4_BAD_CHECKSUM;
    if (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
        return XLB_DROP_IPV4_FRAGMENT;

    const struct xlb_addr_entry *owned =
        xlb_owned_cache_on_port_v4(&ctx->owned, snap, ip->dst_addr, port_index);
    if (owned == NULL)
        return XLB_DROP_NOT_OUR_ADDRESS;
    /* Ethernet pads short frames: from here on the frame ends where the datagram does. */
    xlb_frame_set_l3_len(frame, total);

    uint8_t *l4 = (uint8_t *)ip + hlen;
    switch (ip->next_proto_id) {
    case IPPROTO_ICMP:
        if (total - hlen >= 8 && xlb_icmp4_is_error(l4[0])) {
            if (rte_raw_cksum(l4, total - hlen) != 0xffff)
                return XLB_DROP_ICMP_BAD_CHECKSUM;
            return xlb_icmp_error_input(ctx, snap, frame, AF_INET, ip, total - hlen, owned->role);
        }
        return xlb_icmp4_input(ctx, &snap->ports[port_index], frame, ip, total - hlen);
    case IPPROTO_TCP: {
        struct xlb_tcp_packet p = {AF_INET, port_index, ip, (struct rte_tcp_hdr *)l4, owned};
        return xlb_tcp_input(ctx, snap, frame, &p, total - hlen);
    }
    default:
        return XLB_DROP_PROTOCOL_UNSUPPORTED;
    }
}
