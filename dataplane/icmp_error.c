#include "icmp_error.h"

#include <string.h>
#include <sys/socket.h>

#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "checksum.h"
#include "nat/nat_window.h"
#include "relay/relay.h"
#include "stream/stream.h"
#include "xlb_flow_table.h"

#define ICMP_HEADER 8 /* type, code, checksum, and 4 bytes of rest-of-header */
#define QUOTED_L4   8 /* an ICMP error quotes at least the first 8 bytes of the segment */

/* The quoted segment's addresses and ports, wherever the family puts them. */
struct quote {
    uint8_t family;
    void *ip;
    uint8_t *src, *dst;
    size_t addr_len;
    uint8_t *l4;
    uint32_t l4_len; /* bytes of the quoted segment present */
};

static bool read_quote(uint8_t family, uint8_t *inner, uint32_t len, struct quote *q)
{
    q->family = family;
    q->ip = inner;
    if (family == AF_INET) {
        struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)inner;
        if (len < sizeof(*ip))
            return false;
        uint32_t hlen = rte_ipv4_hdr_len(ip);
        if (hlen < sizeof(*ip) || len < hlen + QUOTED_L4 || ip->next_proto_id != IPPROTO_TCP)
            return false;
        q->src = (uint8_t *)&ip->src_addr;
        q->dst = (uint8_t *)&ip->dst_addr;
        q->addr_len = 4;
        q->l4 = inner + hlen;
        q->l4_len = len - hlen;
    } else {
        struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)inner;
        if (len < sizeof(*ip) + QUOTED_L4 || ip->proto != IPPROTO_TCP)
            return false;
        q->src = ip->src_addr;
        q->dst = ip->dst_addr;
        q->addr_len = 16;
        q->l4 = inner + sizeof(*ip);
        q->l4_len = len - (uint32_t)sizeof(*ip);
    }
    return true;
}

/* The flow a quoted segment belongs to: the quote is a segment xlb sent, so its reverse is the
 * key xlb knows the other direction by. */
static struct xlb_flow *flow_of(const struct xlb_flow_table *t, const struct quote *q)
{
    struct xlb_flow_key key;
    memset(&key, 0, sizeof(key));
    key.family = q->family;
    key.proto = IPPROTO_TCP;
    memcpy(&key.src_port, q->l4 + 2, 2); /* the quote's destination port */
    memcpy(&key.dst_port, q->l4, 2);     /* the quote's source port */
    memcpy(key.src, q->dst, q->addr_len);
    memcpy(key.dst, q->src, q->addr_len);
    return xlb_flow_lookup(t, &key);
}

/*
 * Whether the quote's sequence number is one the flow's sender may still have unacknowledged
 * (RFC 5927, 4.1): an off-path attacker who guesses the addresses and ports must also hit the
 * window to have an error translated. An L4 flow keeps what each side sent; an L7 flow keeps
 * its sequence state in its connection, not checked here (docs/forwarding.md).
 */
static bool quote_in_window(const struct xlb_flow *f, const struct quote *q, uint8_t role)
{
    if (f->kind != XLB_FLOW_KIND_NAT)
        return true;
    uint32_t seq;
    memcpy(&seq, q->l4 + 4, 4);
    /* At the SNAT address: about a client segment xlb sent on; at the VIP, a backend's. */
    enum xlb_flow_side from = role == XLB_ROLE_SNAT ? XLB_FLOW_FROM_CLIENT : XLB_FLOW_FROM_BACKEND;
    return xlb_window_sent_unacked(&f->window, rte_be_to_cpu_32(seq), from);
}

/* The next hop's MTU a "fragmentation needed" / "packet too big" names, or 0 for another error. */
static uint32_t path_mtu(uint8_t family, const uint8_t *icmp)
{
    if (family == AF_INET)
        return icmp[0] == 3 && icmp[1] == 4 ? (uint32_t)icmp[6] << 8 | icmp[7] : 0;
    return icmp[0] == 2 ? (uint32_t)icmp[4] << 24 | (uint32_t)icmp[5] << 16 |
                              (uint32_t)icmp[6] << 8 | icmp[7]
                        : 0;
}

/* Rewrite the quoted segment; its TCP checksum is patched only when the quote holds it. */
static void rewrite_quote(struct quote *q, const uint8_t *src, uint16_t sport, const uint8_t *dst,
                          uint16_t dport)
{
    if (q->l4_len >= 18) {
        uint16_t csum;
        memcpy(&csum, q->l4 + 16, 2);
        xlb_csum_replace(&csum, q->src, src, q->addr_len);
        xlb_csum_replace(&csum, q->dst, dst, q->addr_len);
        xlb_csum_replace(&csum, q->l4, &sport, 2);
        xlb_csum_replace(&csum, q->l4 + 2, &dport, 2);
        memcpy(q->l4 + 16, &csum, 2);
    }
    memcpy(q->src, src, q->addr_len);
    memcpy(q->dst, dst, q->addr_len);
    memcpy(q->l4, &sport, 2);
    memcpy(q->l4 + 2, &dport, 2);
    if (q->family == AF_INET) {
        struct rte_ipv4_hdr *ip = q->ip;
        ip->hdr_checksum = 0;
        ip->hdr_checksum = rte_ipv4_cksum(ip);
    }
}

/* New outer addresses, then the ICMP checksum over the whole message. */
static void rewrite_outer(uint8_t family, void *ip, uint8_t *icmp, uint32_t icmp_len,
                          const uint8_t *src, const uint8_t *dst)
{
    uint16_t zero = 0;
    memcpy(icmp + 2, &zero, 2);
    if (family == AF_INET) {
        struct rte_ipv4_hdr *ip4 = ip;
        memcpy(&ip4->src_addr, src, 4);
        memcpy(&ip4->dst_addr, dst, 4);
        ip4->hdr_checksum = 0;
        ip4->hdr_checksum = rte_ipv4_cksum(ip4);
        uint16_t csum = (uint16_t)~rte_raw_cksum(icmp, icmp_len);
        memcpy(icmp + 2, &csum, 2);
    } else {
        struct rte_ipv6_hdr *ip6 = ip;
        memcpy(ip6->src_addr, src, 16);
        memcpy(ip6->dst_addr, dst, 16);
        uint16_t csum = rte_ipv6_udptcp_cksum(ip6, icmp);
        memcpy(icmp + 2, &csum, 2);
    }
}

xlb_verdict xlb_icmp_error_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 struct xlb_frame *frame, uint8_t family, void *ip,
                                 uint32_t icmp_len, uint8_t role)
{
    if (ctx->flows == NULL || (role != XLB_ROLE_SNAT && role != XLB_ROLE_VIP))
        return XLB_DROP_ICMP_UNHANDLED;
    uint8_t *icmp = family == AF_INET ? (uint8_t *)ip + rte_ipv4_hdr_len(ip)
                                      : (uint8_t *)ip + sizeof(struct rte_ipv6_hdr);
    struct quote q;
    if (icmp_len < ICMP_HEADER ||
        !read_quote(family, icmp + ICMP_HEADER, icmp_len - ICMP_HEADER, &q))
        return XLB_DROP_ICMP_MALFORMED;
    struct xlb_flow *f = flow_of(ctx->flows, &q);
    if (f == NULL)
        return XLB_DROP_TCP_NO_FLOW;
    if (f->kind == XLB_FLOW_KIND_TCP_RELAY) {
        /* About a segment xlb's own TCP sent: it learns the path's MTU, nothing is passed on. */
        uint32_t seq;
        memcpy(&seq, q.l4 + 4, 4);
        xlb_relay_icmp_error(ctx, f, role == XLB_ROLE_SNAT, path_mtu(family, icmp),
                             rte_be_to_cpu_32(seq));
        return XLB_VERDICT_CONSUMED;
    }
    if (f->kind == XLB_FLOW_KIND_STREAM_CLIENT || f->kind == XLB_FLOW_KIND_STREAM_SUB) {
        /* About a segment of xlb's own TCP (to a client or on a subchannel): likewise. */
        uint32_t seq;
        memcpy(&seq, q.l4 + 4, 4);
        xlb_stream_icmp_error(ctx, snap, f, path_mtu(family, icmp), rte_be_to_cpu_32(seq));
        return XLB_VERDICT_CONSUMED;
    }
    if (!quote_in_window(f, &q, role))
        return XLB_DROP_ICMP_SEQ_OUT_OF_WINDOW;
    uint8_t snat[16] = {0};
    memcpy(snat, ctx->flows->snat[f->snat_index].bytes, q.addr_len);
    uint16_t snat_port = rte_cpu_to_be_16(f->snat_port);
    uint16_t out_port;
    const struct rte_ether_addr *next_hop;
    if (role == XLB_ROLE_SNAT) {
        /* About SNAT -> backend: the client sent that segment to the VIP. */
        struct xlb_flow_key client;
        xlb_flow_client_key(ctx->flows, f, &client);
        rewrite_quote(&q, client.src, client.src_port, client.dst, client.dst_port);
        rewrite_outer(family, ip, icmp, icmp_len, client.dst, client.src);
        out_port = f->client_port_index;
        next_hop = &f->client_mac;
    } else {
        /* About VIP -> client: the backend sent that segment to the SNAT address. */
        rewrite_quote(&q, f->backend, f->backend_port, snat, snat_port);
        rewrite_outer(family, ip, icmp, icmp_len, snat, f->backend);
        out_port = f->backend_port_index;
        next_hop = &f->backend_mac;
    }
    frame->eth->src_addr = snap->ports[out_port].mac;
    frame->eth->dst_addr = *next_hop;
    xlb_tx_enqueue(ctx, out_port, frame->m);
    ctx->stats->events[XLB_EVENT_ICMP_ERRORS_TRANSLATED]++;
    return XLB_VERDICT_SENT;
}
