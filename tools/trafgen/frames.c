#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "trafgen.h"

const char *const tg_kind_names[TG_KIND_COUNT] = {
    [TG_KIND_ARP_REQUEST] = "arp_request",
    [TG_KIND_ARP_REPLY] = "arp_reply",
    [TG_KIND_ICMP_ECHO_REPLY] = "icmp_echo_reply",
    [TG_KIND_ICMP_OTHER] = "icmp_other",
    [TG_KIND_TCP_SYN_ACK] = "tcp_syn_ack",
    [TG_KIND_TCP_RST] = "tcp_rst",
    [TG_KIND_TCP_SYN] = "tcp_syn",
    [TG_KIND_TCP_OTHER] = "tcp_other",
    [TG_KIND_UDP] = "udp",
    [TG_KIND_IPV4_OTHER] = "ipv4_other",
    [TG_KIND_IPV6] = "ipv6",
    [TG_KIND_OTHER] = "other",
};

#define ETH_LEN ((uint32_t)sizeof(struct rte_ether_hdr))
#define IP_LEN  ((uint32_t)sizeof(struct rte_ipv4_hdr))
#define TCP_LEN ((uint32_t)sizeof(struct rte_tcp_hdr))
#define ARP_LEN ((uint32_t)sizeof(struct rte_arp_hdr))

static void ipv4_header(struct rte_ipv4_hdr *ip, uint32_t src, uint32_t dst, uint8_t proto,
                        uint16_t total)
{
    memset(ip, 0, sizeof(*ip));
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->total_length = rte_cpu_to_be_16(total);
    ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 64;
    ip->next_proto_id = proto;
    ip->src_addr = rte_cpu_to_be_32(src);
    ip->dst_addr = rte_cpu_to_be_32(dst);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
}

uint32_t tg_build_tcp(uint8_t *buf, uint32_t cap, const struct tg_tcp_spec *s)
{
    uint32_t l3 = IP_LEN + TCP_LEN + s->payload;
    uint32_t len = RTE_MAX(ETH_LEN + l3, (uint32_t)TG_MIN_FRAME);
    if (len > cap)
        return 0;
    memset(buf, 0, len);
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
    eth->src_addr = s->src_mac;
    eth->dst_addr = s->dst_mac;
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
    ipv4_header(ip, s->src_ip, s->dst_ip, IPPROTO_TCP, (uint16_t)l3);
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);
    tcp->src_port = rte_cpu_to_be_16(s->src_port);
    tcp->dst_port = rte_cpu_to_be_16(s->dst_port);
    tcp->sent_seq = rte_cpu_to_be_32(s->seq);
    tcp->recv_ack = rte_cpu_to_be_32(s->ack);
    tcp->data_off = (TCP_LEN / 4) << 4;
    tcp->tcp_flags = s->flags;
    tcp->rx_win = rte_cpu_to_be_16(65535);
    tcp->cksum = rte_ipv4_udptcp_cksum(ip, tcp);
    return len;
}

uint32_t tg_build_arp_request(uint8_t *buf, const struct rte_ether_addr *sha, uint32_t sip,
                              uint32_t tip)
{
    memset(buf, 0, TG_MIN_FRAME);
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
    memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
    eth->src_addr = *sha;
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
    struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
    arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
    arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    arp->arp_hlen = RTE_ETHER_ADDR_LEN;
    arp->arp_plen = 4;
    arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
    arp->arp_data.arp_sha = *sha;
    arp->arp_data.arp_sip = rte_cpu_to_be_32(sip);
    arp->arp_data.arp_tip = rte_cpu_to_be_32(tip);
    return TG_MIN_FRAME;
}

static enum tg_kind classify_arp(const struct rte_arp_hdr *arp)
{
    if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
        arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || arp->arp_hlen != 6 ||
        arp->arp_plen != 4)
        return TG_KIND_OTHER;
    if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST))
        return TG_KIND_ARP_REQUEST;
    if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY))
        return TG_KIND_ARP_REPLY;
    return TG_KIND_OTHER;
}

static enum tg_kind classify_ipv4(const uint8_t *l3, uint32_t avail)
{
    const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)l3;
    if (avail < IP_LEN || (ip->version_ihl >> 4) != 4)
        return TG_KIND_IPV4_OTHER;
    uint32_t hlen = rte_ipv4_hdr_len(ip);
    if (hlen < IP_LEN || hlen > avail)
        return TG_KIND_IPV4_OTHER;
    const uint8_t *l4 = l3 + hlen;
    uint32_t l4_avail = avail - hlen;
    switch (ip->next_proto_id) {
    case IPPROTO_ICMP:
        if (l4_avail >= sizeof(struct rte_icmp_hdr) &&
            ((const struct rte_icmp_hdr *)l4)->icmp_type == RTE_IP_ICMP_ECHO_REPLY)
            return TG_KIND_ICMP_ECHO_REPLY;
        return TG_KIND_ICMP_OTHER;
    case IPPROTO_TCP: {
        if (l4_avail < TCP_LEN)
            return TG_KIND_TCP_OTHER;
        uint8_t flags = ((const struct rte_tcp_hdr *)l4)->tcp_flags;
        if (flags & RTE_TCP_RST_FLAG)
            return TG_KIND_TCP_RST;
        if ((flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) ==
            (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG))
            return TG_KIND_TCP_SYN_ACK;
        if (flags & RTE_TCP_SYN_FLAG)
            return TG_KIND_TCP_SYN;
        return TG_KIND_TCP_OTHER;
    }
    case IPPROTO_UDP:
        return TG_KIND_UDP;
    default:
        return TG_KIND_IPV4_OTHER;
    }
}

enum tg_kind tg_classify(const uint8_t *frame, uint32_t len, uint32_t *l3_offset)
{
    if (len < ETH_LEN)
        return TG_KIND_OTHER;
    const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)frame;
    uint16_t type = rte_be_to_cpu_16(eth->ether_type);
    uint32_t offset = ETH_LEN;
    for (int tags = 0; tags < 2 && (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ);
         tags++) {
        if (len < offset + sizeof(struct rte_vlan_hdr))
            return TG_KIND_OTHER;
        const struct rte_vlan_hdr *vlan = (const struct rte_vlan_hdr *)(frame + offset);
        type = rte_be_to_cpu_16(vlan->eth_proto);
        offset += sizeof(*vlan);
    }
    *l3_offset = offset;
    switch (type) {
    case RTE_ETHER_TYPE_ARP:
        return len >= offset + ARP_LEN ? classify_arp((const struct rte_arp_hdr *)(frame + offset))
                                       : TG_KIND_OTHER;
    case RTE_ETHER_TYPE_IPV4:
        return classify_ipv4(frame + offset, len - offset);
    case RTE_ETHER_TYPE_IPV6:
        return TG_KIND_IPV6;
    default:
        return TG_KIND_OTHER;
    }
}

uint32_t tg_arp_target(const uint8_t *frame, uint32_t l3_offset)
{
    const struct rte_arp_hdr *arp = (const struct rte_arp_hdr *)(frame + l3_offset);
    return rte_be_to_cpu_32(arp->arp_data.arp_tip);
}

uint32_t tg_ipv4_dst(const uint8_t *frame, uint32_t l3_offset)
{
    const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(frame + l3_offset);
    return rte_be_to_cpu_32(ip->dst_addr);
}

uint32_t tg_arp_reply_in_place(uint8_t *frame, uint32_t l3_offset, const struct rte_ether_addr *mac)
{
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
    struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(frame + l3_offset);
    struct rte_arp_ipv4 *d = &arp->arp_data;
    uint32_t asked = d->arp_tip;
    arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
    d->arp_tha = d->arp_sha;
    d->arp_tip = d->arp_sip;
    d->arp_sha = *mac;
    d->arp_sip = asked;
    eth->dst_addr = d->arp_tha;
    eth->src_addr = *mac;
    return RTE_MAX(l3_offset + ARP_LEN, (uint32_t)TG_MIN_FRAME);
}

uint32_t tg_syn_ack_in_place(uint8_t *frame, uint32_t l3_offset, const struct rte_ether_addr *mac,
                             uint32_t isn)
{
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + l3_offset);
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)((uint8_t *)ip + rte_ipv4_hdr_len(ip));
    uint32_t ack = rte_be_to_cpu_32(tcp->sent_seq) + 1;
    uint32_t src = rte_be_to_cpu_32(ip->src_addr), dst = rte_be_to_cpu_32(ip->dst_addr);
    uint16_t sport = rte_be_to_cpu_16(tcp->src_port), dport = rte_be_to_cpu_16(tcp->dst_port);

    eth->dst_addr = eth->src_addr;
    eth->src_addr = *mac;
    /* A fresh 20-byte IPv4 header and a 20-byte TCP header right after it. */
    ipv4_header(ip, dst, src, IPPROTO_TCP, (uint16_t)(IP_LEN + TCP_LEN));
    tcp = (struct rte_tcp_hdr *)(ip + 1);
    memset(tcp, 0, TCP_LEN);
    tcp->src_port = rte_cpu_to_be_16(dport);
    tcp->dst_port = rte_cpu_to_be_16(sport);
    tcp->sent_seq = rte_cpu_to_be_32(isn);
    tcp->recv_ack = rte_cpu_to_be_32(ack);
    tcp->data_off = (TCP_LEN / 4) << 4;
    tcp->tcp_flags = RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG;
    tcp->rx_win = rte_cpu_to_be_16(65535);
    tcp->cksum = rte_ipv4_udptcp_cksum(ip, tcp);
    uint32_t len = l3_offset + IP_LEN + TCP_LEN;
    if (len < TG_MIN_FRAME) {
        memset(frame + len, 0, TG_MIN_FRAME - len);
        len = TG_MIN_FRAME;
    }
    return len;
}

bool tg_arp_reply_for(const uint8_t *frame, uint32_t len, uint32_t ip, struct rte_ether_addr *mac)
{
    uint32_t l3;
    if (tg_classify(frame, len, &l3) != TG_KIND_ARP_REPLY)
        return false;
    const struct rte_arp_hdr *arp = (const struct rte_arp_hdr *)(frame + l3);
    if (rte_be_to_cpu_32(arp->arp_data.arp_sip) != ip)
        return false;
    *mac = arp->arp_data.arp_sha;
    return true;
}
