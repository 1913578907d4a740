#include "neighbour_discovery.h"

#include <string.h>

#include <rte_byteorder.h>

#include "neighbour_report.h"

#define XLB_ND_HOP_LIMIT         255 /* RFC 4861: anything else did not come from on-link */
#define XLB_ND_OPT_SOURCE_LLADDR 1
#define XLB_ND_OPT_TARGET_LLADDR 2
#define XLB_NA_FLAG_SOLICITED    0x40000000u
#define XLB_NA_FLAG_OVERRIDE     0x20000000u

/* NS and NA share this layout (RFC 4861 4.3, 4.4). */
struct xlb_nd_msg {
    uint8_t type;
    uint8_t code;
    rte_be16_t cksum;
    rte_be32_t flags; /* reserved in NS */
    uint8_t target[16];
} __rte_packed __rte_aligned(2);

struct xlb_nd_lladdr_opt {
    uint8_t type;
    uint8_t len; /* in units of 8 bytes */
    struct rte_ether_addr mac;
} __rte_packed __rte_aligned(2); /* options start 2-byte aligned in any frame xlb handles */

static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 0x01};

static bool is_unspecified(const uint8_t addr[16])
{
    static const uint8_t zero[16];
    return memcmp(addr, zero, 16) == 0;
}

/* ff02::1:ffXX:XXXX for the low 24 bits of target (RFC 4291 2.7.1). */
static void solicited_node_group(const uint8_t target[16], uint8_t group[16])
{
    static const uint8_t prefix[13] = {0xff, 0x02, [11] = 0x01, [12] = 0xff};
    memcpy(group, prefix, sizeof(prefix));
    memcpy(group + 13, target + 13, 3);
}

/* The link-layer address option of the given type, or NULL; -1 if the options are malformed. */
static int find_lladdr(const uint8_t *options, uint32_t len, uint8_t want,
                       const struct rte_ether_addr **mac)
{
    *mac = NULL;
    while (len >= 2) {
        uint32_t opt_len = (uint32_t)options[1] * 8;
        if (opt_len == 0 || opt_len > len)
            return -1;
        if (options[0] == want && opt_len >= sizeof(struct xlb_nd_lladdr_opt) && *mac == NULL)
            *mac = &((const struct xlb_nd_lladdr_opt *)options)->mac;
        options += opt_len;
        len -= opt_len;
    }
    return len == 0 ? 0 : -1;
}

/* Rewrite the solicitation into the advertisement that answers it. */
static xlb_verdict advertise(struct xlb_burst_ctx *ctx, const struct xlb_port_view *port,
                             struct xlb_frame *frame, struct rte_ipv6_hdr *ip,
                             const struct rte_ether_addr *solicitor_mac)
{
    bool dad = is_unspecified(ip->src_addr);
    struct rte_ether_addr eth_dst;
    if (dad) {
        /* Duplicate address detection: answer all nodes (RFC 4861 7.2.4). */
        rte_ether_addr_copy(&(struct rte_ether_addr){{0x33, 0x33, 0, 0, 0, 1}}, &eth_dst);
    } else {
        rte_ether_addr_copy(solicitor_mac ? solicitor_mac : &frame->eth->src_addr, &eth_dst);
    }
    const uint32_t icmp_len = sizeof(struct xlb_nd_msg) + sizeof(struct xlb_nd_lladdr_opt);
    if (!xlb_frame_set_l3_len(frame, sizeof(*ip) + icmp_len))
        return XLB_DROP_NO_MBUF;

    struct xlb_nd_msg *na = (struct xlb_nd_msg *)(ip + 1);
    memcpy(ip->dst_addr, dad ? all_nodes : ip->src_addr, 16);
    memcpy(ip->src_addr, na->target, 16);
    ip->payload_len = rte_cpu_to_be_16((uint16_t)icmp_len);
    ip->hop_limits = XLB_ND_HOP_LIMIT;

    na->type = XLB_ICMP6_NEIGHBOUR_ADVERT;
    na->code = 0;
    na->flags = rte_cpu_to_be_32(XLB_NA_FLAG_OVERRIDE | (dad ? 0 : XLB_NA_FLAG_SOLICITED));
    struct xlb_nd_lladdr_opt *opt = (struct xlb_nd_lladdr_opt *)(na + 1);
    opt->type = XLB_ND_OPT_TARGET_LLADDR;
    opt->len = 1;
    rte_ether_addr_copy(&port->mac, &opt->mac);
    na->cksum = 0;
    na->cksum = rte_ipv6_udptcp_cksum(ip, na);

    rte_ether_addr_copy(&eth_dst, &frame->eth->dst_addr);
    rte_ether_addr_copy(&port->mac, &frame->eth->src_addr);
    ctx->stats->events[XLB_EVENT_ND_ADVERTISEMENTS]++;
    return XLB_VERDICT_TX;
}

static xlb_verdict solicit_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 uint16_t port_index, struct xlb_frame *frame,
                                 struct rte_ipv6_hdr *ip, const struct rte_ether_addr *slla)
{
    const struct xlb_nd_msg *ns = (const struct xlb_nd_msg *)(ip + 1);
    bool dad = is_unspecified(ip->src_addr);
    uint8_t group[16];
    solicited_node_group(ns->target, group);
    if (dad && (slla != NULL || memcmp(ip->dst_addr, group, 16) != 0))
        return XLB_DROP_ND_MALFORMED;

    bool wanted = false;
    if (!dad && slla != NULL) {
        struct xlb_addr sender;
        xlb_addr_from_ipv6(ip->src_addr, &sender);
        wanted = xlb_neighbour_report(ctx, snap, port_index, &sender, slla);
    }
    struct xlb_addr target, dst;
    xlb_addr_from_ipv6(ns->target, &target);
    xlb_addr_from_ipv6(ip->dst_addr, &dst);
    bool to_us = memcmp(ip->dst_addr, group, 16) == 0 ||
                 xlb_snapshot_owned_on_port(snap, &dst, port_index) != NULL;
    if (to_us && xlb_snapshot_owned_on_port(snap, &target, port_index) != NULL)
        return advertise(ctx, &snap->ports[port_index], frame, ip, slla);
    return wanted ? XLB_VERDICT_CONSUMED : XLB_DROP_NOT_OUR_ADDRESS;
}

static xlb_verdict advert_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                uint16_t port_index, struct xlb_frame *frame,
                                struct rte_ipv6_hdr *ip, const struct rte_ether_addr *tlla)
{
    const struct xlb_nd_msg *na = (const struct xlb_nd_msg *)(ip + 1);
    struct xlb_addr target;
    xlb_addr_from_ipv6(na->target, &target);
    const struct rte_ether_addr *mac = tlla ? tlla : &frame->eth->src_addr;
    if (xlb_neighbour_report(ctx, snap, port_index, &target, mac))
        return XLB_VERDICT_CONSUMED;
    return XLB_DROP_NOT_OUR_ADDRESS;
}

xlb_verdict xlb_nd_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                         uint16_t port_index, struct xlb_frame *frame, struct rte_ipv6_hdr *ip,
                         uint32_t icmp_len)
{
    if (icmp_len < sizeof(struct xlb_nd_msg) || ip->hop_limits != XLB_ND_HOP_LIMIT)
        return XLB_DROP_ND_MALFORMED;
    const struct xlb_nd_msg *msg = (const struct xlb_nd_msg *)(ip + 1);
    if (msg->code != 0 || msg->target[0] == 0xff)
        return XLB_DROP_ND_MALFORMED;

    bool solicit = msg->type == XLB_ICMP6_NEIGHBOUR_SOLICIT;
    const struct rte_ether_addr *lladdr;
    if (find_lladdr((const uint8_t *)(msg + 1), icmp_len - sizeof(*msg),
                    solicit ? XLB_ND_OPT_SOURCE_LLADDR : XLB_ND_OPT_TARGET_LLADDR, &lladdr) != 0)
        return XLB_DROP_ND_MALFORMED;
    if (solicit)
        return solicit_input(ctx, snap, port_index, frame, ip, lladdr);
    return advert_input(ctx, snap, port_index, frame, ip, lladdr);
}

struct rte_mbuf *xlb_nd_build_solicit(struct rte_mempool *pool, const struct xlb_port_view *port,
                                      const struct xlb_addr *source, const struct xlb_addr *target)
{
    const uint32_t icmp_len = sizeof(struct xlb_nd_msg) + sizeof(struct xlb_nd_lladdr_opt);
    const uint32_t len = sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv6_hdr) + icmp_len;
    struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
    if (m == NULL)
        return NULL;
    uint8_t *frame = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
    if (frame == NULL) {
        rte_pktmbuf_free(m);
        return NULL;
    }
    memset(frame, 0, len);

    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + 1);
    struct xlb_nd_msg *ns = (struct xlb_nd_msg *)(ip + 1);
    struct xlb_nd_lladdr_opt *opt = (struct xlb_nd_lladdr_opt *)(ns + 1);

    solicited_node_group(target->bytes, ip->dst_addr);
    /* The group's MAC is 33:33 followed by its low 32 bits (RFC 2464 7). */
    struct rte_ether_addr group_mac = {
        {0x33, 0x33, ip->dst_addr[12], ip->dst_addr[13], ip->dst_addr[14], ip->dst_addr[15]}};
    rte_ether_addr_copy(&group_mac, &eth->dst_addr);
    rte_ether_addr_copy(&port->mac, &eth->src_addr);
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);

    ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
    ip->payload_len = rte_cpu_to_be_16((uint16_t)icmp_len);
    ip->proto = IPPROTO_ICMPV6;
    ip->hop_limits = XLB_ND_HOP_LIMIT;
    memcpy(ip->src_addr, source->bytes, 16);

    ns->type = XLB_ICMP6_NEIGHBOUR_SOLICIT;
    memcpy(ns->target, target->bytes, 16);
    opt->type = XLB_ND_OPT_SOURCE_LLADDR;
    opt->len = 1;
    rte_ether_addr_copy(&port->mac, &opt->mac);
    ns->cksum = rte_ipv6_udptcp_cksum(ip, ns);
    return m;
}
