/* Parsing a received segment: IP and TCP headers, lengths, checksum and options, every
 * failure counted by reason. Bounded: a few header reads and at most one checksum pass. */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "xlb_tcp_conn.h"

static int bad(uint64_t *counter)
{
    (*counter)++;
    return -1;
}

/* The NIC's verdict on the TCP checksum where it gave one (GOOD, or NONE: the data checked but
 * the field not filled), a pass over the segment in software otherwise (UNKNOWN). */
static bool checksum_ok(const struct rte_mbuf *m, const uint8_t *p, const struct rte_tcp_hdr *th,
                        int family)
{
    uint64_t flags = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
    if (flags == RTE_MBUF_F_RX_L4_CKSUM_GOOD || flags == RTE_MBUF_F_RX_L4_CKSUM_NONE)
        return true;
    if (flags == RTE_MBUF_F_RX_L4_CKSUM_BAD)
        return false;
    int sum = family == AF_INET ? rte_ipv4_udptcp_cksum_verify((const struct rte_ipv4_hdr *)p, th)
                                : rte_ipv6_udptcp_cksum_verify((const struct rte_ipv6_hdr *)p, th);
    return sum == 0;
}

int xlb_tcp_seg_parse(struct xlb_tcp_endpoint *ep, struct rte_mbuf **mp, struct xlb_tcp_seg *s)
{
    if ((*mp)->nb_segs > 1 && rte_pktmbuf_linearize(*mp) != 0)
        return bad(&ep->ctr.bad_linearize);
    struct rte_mbuf *m = *mp;
    const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
    uint32_t avail = m->data_len;
    uint32_t ip_len, total;
    memset(s, 0, sizeof(*s));
    if (avail < sizeof(struct rte_ipv4_hdr))
        return bad(&ep->ctr.bad_header);
    if ((p[0] >> 4) == 4) {
        const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)p;
        ip_len = (uint32_t)(ip->version_ihl & 0xf) * 4;
        total = rte_be_to_cpu_16(ip->total_length);
        if (ip_len < 20 || ip->next_proto_id != IPPROTO_TCP || total < ip_len || total > avail ||
            (rte_be_to_cpu_16(ip->fragment_offset) & (RTE_IPV4_HDR_MF_FLAG | 0x1fff)))
            return bad(&ep->ctr.bad_header);
        s->tuple.family = AF_INET;
        memcpy(s->tuple.remote, &ip->src_addr, 4);
        memcpy(s->tuple.local, &ip->dst_addr, 4);
    } else if ((p[0] >> 4) == 6 && avail >= sizeof(struct rte_ipv6_hdr)) {
        const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)p;
        ip_len = sizeof(*ip);
        total = ip_len + rte_be_to_cpu_16(ip->payload_len);
        if (ip->proto != IPPROTO_TCP || total > avail) /* extension headers: the flow layer's */
            return bad(&ep->ctr.bad_header);
        s->tuple.family = AF_INET6;
        memcpy(s->tuple.remote, ip->src_addr, 16);
        memcpy(s->tuple.local, ip->dst_addr, 16);
    } else {
        return bad(&ep->ctr.bad_header);
    }
    if (total < ip_len + sizeof(struct rte_tcp_hdr))
        return bad(&ep->ctr.bad_header);
    /* Ethernet padding past the IP length is not ours. */
    if (total < avail)
        rte_pktmbuf_trim(m, (uint16_t)(avail - total));
    const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(p + ip_len);
    uint32_t tcp_len = (uint32_t)(th->data_off >> 4) * 4;
    if (tcp_len < sizeof(*th) || ip_len + tcp_len > total)
        return bad(&ep->ctr.bad_header);
    if (!checksum_ok(m, p, th, s->tuple.family))
        return bad(&ep->ctr.bad_checksum);
    if (xlb_tcp_options_parse((const uint8_t *)(th + 1), tcp_len - sizeof(*th), &s->opts) != 0)
        return bad(&ep->ctr.bad_options);
    s->tuple.remote_port = th->src_port;
    s->tuple.local_port = th->dst_port;
    s->seq = rte_be_to_cpu_32(th->sent_seq);
    s->ack = rte_be_to_cpu_32(th->recv_ack);
    s->flags = th->tcp_flags & 0x3f;
    s->win = rte_be_to_cpu_16(th->rx_win);
    s->hdr_len = ip_len + tcp_len;
    s->len = total - s->hdr_len;
    ep->ctr.segs_in++;
    return 0;
}

uint32_t xlb_tcp_sack_opt_len(const struct xlb_tcp_conn *c)
{
    bool dsack = c->dsack_left != c->dsack_right;
    if (!(c->flags & XLB_TCPF_SACK) || (!c->n_ooo && !dsack))
        return 0;
    uint32_t l[XLB_TCP_SACK_SEND], r[XLB_TCP_SACK_SEND];
    uint32_t n = xlb_tcp_reass_sack(c, l, r) + (dsack ? 1u : 0u);
    if (n > XLB_TCP_SACK_SEND)
        n = XLB_TCP_SACK_SEND;
    return n ? 4u + 8u * n : 0;
}
