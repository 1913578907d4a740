/*
 * What every engine's segments leave by: the next hop toward an address, a segment turned
 * around to its sender, the MSS the path through xlb's ports carries, and the RST that answers
 * a segment of no known connection.
 */
#include "flow.h"

#include <string.h>
#include <sys/socket.h>

#include "tcp_syn_options.h"

const struct xlb_host_port *xlb_egress_endpoint_address(const struct xlb_snapshot *snap,
                                                        const struct xlb_lb_cluster *c, uint32_t i,
                                                        uint8_t family, struct rte_ether_addr *mac,
                                                        uint16_t *port_index, xlb_verdict *drop)
{
    *drop = XLB_DROP_BACKEND_FAMILY;
    for (uint32_t k = 0; k < xlb_lb_endpoint_n_addresses(&c->endpoints[i]); k++) {
        const struct xlb_host_port *a = xlb_lb_endpoint_address(c, i, k);
        if (a->addr.family != family)
            continue;
        if (xlb_egress_next_hop(snap, &a->addr, mac, port_index))
            return a;
        *drop = XLB_DROP_NEXT_HOP_UNRESOLVED;
    }
    return NULL;
}

/* The MAC and port for dst: the neighbour itself when on-link, else the port's gateway. */
bool xlb_egress_next_hop(const struct xlb_snapshot *snap, const struct xlb_addr *dst,
                         struct rte_ether_addr *mac, uint16_t *port_index)
{
    for (uint16_t p = 0; p < snap->n_ports; p++) {
        const struct xlb_port_view *port = &snap->ports[p];
        const struct xlb_addr *hop = NULL;
        if (xlb_port_prefix_for(port, dst) != NULL)
            hop = dst;
        for (uint8_t g = 0; hop == NULL && g < port->n_gateways; g++)
            if (port->gateways[g].family == dst->family)
                hop = &port->gateways[g];
        if (hop == NULL)
            continue;
        const struct xlb_addr_entry *e = xlb_snapshot_lookup(snap, hop);
        if (e == NULL || e->role != XLB_ROLE_NEIGHBOUR || !e->resolved)
            return false;
        *mac = e->mac;
        *port_index = e->port_index;
        return true;
    }
    return false;
}

/*
 * A SYN or SYN-ACK may offer an MSS larger than a port on the flow's path carries (its peer
 * has a larger MTU than xlb's ports, or xlb.tcp_mss_clamp is lower): lowered to what both the
 * port it came in by and the one it leaves by carry, so that neither end sends segments xlb
 * would have to drop.
 */
void xlb_egress_clamp_mss(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_tcp_packet *p, uint16_t out_port_index)
{
    uint16_t max = xlb_egress_mss_max(snap, p->family, p->port_index, out_port_index);
    if (max != 0 && xlb_syn_clamp_mss(p->tcp, max))
        ctx->stats->events[XLB_EVENT_TCP_MSS_CLAMPED]++;
}

/*
 * A segment of no known connection gets a RST (RFC 9293 3.10.7.1), so the client gives up at
 * once instead of retransmitting into silence: the flow expired, or it was made on another xlb
 * host (a full NAT cannot carry a connection across hosts: the backend knows its peer as that
 * host's SNAT address and port). Rewritten in place: addresses and ports swapped, payload and
 * options dropped, checksums computed afresh.
 */
xlb_verdict xlb_egress_reset_reply(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                   struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                   uint32_t tcp_len)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    uint8_t flags = tcp->tcp_flags;
    if (flags & RTE_TCP_RST_FLAG)
        return XLB_DROP_TCP_NO_FLOW; /* never answer a reset */
    uint32_t payload = xlb_tcp_payload_len(tcp, tcp_len);
    uint32_t seq_len = payload + !!(flags & RTE_TCP_SYN_FLAG) + !!(flags & RTE_TCP_FIN_FLAG);
    uint32_t seq = 0, ack = 0;
    uint8_t out_flags = RTE_TCP_RST_FLAG;
    if (flags & RTE_TCP_ACK_FLAG) {
        seq = tcp->recv_ack;
    } else {
        ack = rte_cpu_to_be_32(rte_be_to_cpu_32(tcp->sent_seq) + seq_len);
        out_flags |= RTE_TCP_ACK_FLAG;
    }
    uint16_t sport = tcp->src_port;
    tcp->src_port = tcp->dst_port;
    tcp->dst_port = sport;
    tcp->sent_seq = seq;
    tcp->recv_ack = ack;
    tcp->data_off = 5 << 4;
    tcp->tcp_flags = out_flags;
    tcp->rx_win = 0;
    tcp->tcp_urp = 0;
    xlb_frame_set_l3_len(frame, xlb_egress_turn_around(p, (uint32_t)sizeof(*tcp)));
    xlb_frame_reply_ethernet(frame, &snap->ports[p->port_index].mac);
    ctx->stats->events[XLB_EVENT_TCP_RESETS_SENT]++;
    return XLB_VERDICT_TX;
}

uint32_t xlb_egress_turn_around(struct xlb_tcp_packet *p, uint32_t tcp_len)
{
    if (p->family == AF_INET) {
        struct rte_ipv4_hdr *ip = p->ip;
        rte_be32_t a = ip->src_addr;
        ip->src_addr = ip->dst_addr;
        ip->dst_addr = a;
    } else {
        struct rte_ipv6_hdr *ip = p->ip;
        uint8_t a[16];
        memcpy(a, ip->src_addr, 16);
        memcpy(ip->src_addr, ip->dst_addr, 16);
        memcpy(ip->dst_addr, a, 16);
    }
    return xlb_egress_set_tcp_len(p, tcp_len);
}

uint32_t xlb_egress_set_tcp_len(struct xlb_tcp_packet *p, uint32_t tcp_len)
{
    uint32_t l3_len;
    p->tcp->cksum = 0;
    if (p->family == AF_INET) {
        struct rte_ipv4_hdr *ip = p->ip;
        l3_len = rte_ipv4_hdr_len(ip) + tcp_len;
        ip->total_length = rte_cpu_to_be_16((uint16_t)l3_len);
        ip->time_to_live = 64;
        ip->hdr_checksum = 0;
        ip->hdr_checksum = rte_ipv4_cksum(ip);
        p->tcp->cksum = rte_ipv4_udptcp_cksum(ip, p->tcp);
    } else {
        struct rte_ipv6_hdr *ip = p->ip;
        ip->payload_len = rte_cpu_to_be_16((uint16_t)tcp_len);
        ip->hop_limits = 64;
        l3_len = (uint32_t)sizeof(*ip) + tcp_len;
        p->tcp->cksum = rte_ipv6_udptcp_cksum(ip, p->tcp);
    }
    return l3_len;
}

uint16_t xlb_egress_mss_max(const struct xlb_snapshot *snap, uint8_t family, uint16_t port_a,
                            uint16_t port_b)
{
    const struct xlb_port_view *x = &snap->ports[port_a], *y = &snap->ports[port_b];
    bool ipv6 = family == AF_INET6;
    uint16_t a = ipv6 ? x->mss_max_ipv6 : x->mss_max_ipv4;
    uint16_t b = ipv6 ? y->mss_max_ipv6 : y->mss_max_ipv4;
    return a == 0 ? b : b == 0 || a < b ? a : b; /* 0: no clamping on that port */
}
