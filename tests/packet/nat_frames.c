#include "nat_frames.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

size_t frame_build(uint8_t *buf, const struct spec *s, struct layout *lo)
{
    memcpy(buf, s->eth_dst.addr_bytes, 6);
    memcpy(buf + 6, s->eth_src.addr_bytes, 6);
    size_t off = 12;
    for (unsigned v = 0; v < s->vlans; v++) {
        put16(buf + off, v == 0 && s->vlans == 2 ? RTE_ETHER_TYPE_QINQ : RTE_ETHER_TYPE_VLAN);
        put16(buf + off + 2, (uint16_t)(100 + v));
        off += 4;
    }
    put16(buf + off, s->family == AF_INET ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
    off += 2;
    lo->family = s->family;
    lo->l3 = off;
    size_t l4_hlen = s->proto == IPPROTO_TCP ? sizeof(struct rte_tcp_hdr) + s->tcp_opt : 8;
    size_t l4_len = l4_hlen + s->payload;
    void *ip = buf + off;
    if (s->family == AF_INET) {
        struct rte_ipv4_hdr *h = ip;
        size_t hlen = sizeof(*h) + s->ip_opt;
        memset(h, 0, sizeof(*h));
        memset(buf + off + sizeof(*h), 1, s->ip_opt); /* NOPs */
        h->version_ihl = (uint8_t)(0x40 | hlen / 4);
        h->total_length = htons((uint16_t)(hlen + l4_len));
        h->packet_id = htons((uint16_t)s->seq);
        h->fragment_offset = htons(s->fragment ? RTE_IPV4_HDR_MF_FLAG | 10 : RTE_IPV4_HDR_DF_FLAG);
        h->time_to_live = 64;
        h->next_proto_id = s->proto;
        memcpy(&h->src_addr, s->src, 4);
        memcpy(&h->dst_addr, s->dst, 4);
        h->hdr_checksum = rte_ipv4_cksum(h);
        off += hlen;
    } else {
        struct rte_ipv6_hdr *h = ip;
        size_t ext = s->fragment ? 8 : 0;
        memset(h, 0, sizeof(*h));
        h->vtc_flow = htonl(6u << 28 | (s->seq & 0xfffff));
        h->payload_len = htons((uint16_t)(ext + l4_len));
        h->proto = s->fragment ? IPPROTO_HOPOPTS : s->proto;
        h->hop_limits = 64;
        memcpy(h->src_addr, s->src, 16);
        memcpy(h->dst_addr, s->dst, 16);
        off += sizeof(*h);
        if (ext) {
            const uint8_t hbh[8] = {s->proto, 0, 1, 4, 0, 0, 0, 0}; /* PadN */
            memcpy(buf + off, hbh, 8);
            off += 8;
        }
    }
    lo->l4 = off;
    uint8_t *l4 = buf + off;
    if (s->proto == IPPROTO_TCP) {
        struct rte_tcp_hdr *t = (struct rte_tcp_hdr *)l4;
        memset(t, 0, sizeof(*t));
        t->src_port = htons(s->sport);
        t->dst_port = htons(s->dport);
        t->sent_seq = htonl(s->seq);
        t->recv_ack = htonl(s->ack);
        t->data_off = (uint8_t)((l4_hlen / 4) << 4);
        t->tcp_flags = s->flags;
        t->rx_win = htons(29200);
        uint8_t *opt = l4 + sizeof(*t);
        memset(opt, 1, s->tcp_opt); /* NOPs after an MSS */
        if (s->tcp_opt >= 4) {
            const uint8_t mss[4] = {2, 4, 0x05, 0xb4};
            memcpy(opt, mss, 4);
        }
    } else {
        put16(l4, s->sport);
        put16(l4 + 2, s->dport);
        put16(l4 + 4, (uint16_t)l4_len);
        put16(l4 + 6, 0);
    }
    for (size_t i = 0; i < s->payload; i++)
        l4[l4_hlen + i] = (uint8_t)(i * 31 + s->seq);
    uint16_t csum = s->family == AF_INET ? rte_ipv4_udptcp_cksum(ip, l4)
                                         : rte_ipv6_udptcp_cksum(ip, l4); /* wrong after ext */
    memcpy(l4 + (s->proto == IPPROTO_TCP ? 16 : 6), &csum, 2);
    lo->len = off + l4_len;
    return lo->len;
}

size_t frame_mutate(struct robust *r, uint8_t *buf, size_t len, const struct layout *lo)
{
    unsigned n = 1 + below(r, 3);
    bool fix_ip = chance(r, 50), fix_tcp = chance(r, 30);
    bool v4 = lo->family == AF_INET;
    uint8_t *ip = buf + lo->l3, *l4 = buf + lo->l4;
    for (unsigned i = 0; i < n && len > 0; i++) {
        switch (below(r, 16)) {
        case 0: /* anywhere */
            buf[below(r, (unsigned)len)] ^= (uint8_t)(1 + below(r, 255));
            break;
        case 1: /* in the headers */
            buf[below(r, (unsigned)RTE_MIN(len, lo->l4 + 24))] ^= (uint8_t)(1 + below(r, 255));
            break;
        case 2: /* truncated, at every length in turn */
            len = r->truncate_at++ % (len + 1);
            break;
        case 3: { /* trailing bytes the IP length does not cover */
            size_t extra = RTE_MIN((size_t)1 + below(r, 64), HOSTILE_MAX_FRAME - len);
            for (size_t j = 0; j < extra; j++)
                buf[len + j] = (uint8_t)rnd(r);
            len += extra;
            break;
        }
        case 4: /* data offset */
            if (lo->l4 + 12 < len)
                l4[12] = (uint8_t)rnd(r);
            break;
        case 5: { /* IP length */
            size_t at = v4 ? 2 : 4;
            if (lo->l3 + at + 2 > len)
                break;
            uint16_t real = get16(ip + at);
            static const int deltas[] = {-1, 1, -20, 20, 100, -4, 4};
            uint16_t v;
            switch (below(r, 4)) {
            case 0:
                v = (uint16_t)(real + deltas[below(r, 7)]);
                break;
            case 1:
                v = (uint16_t)below(r, 64);
                break;
            case 2:
                v = 0xffff;
                break;
            default:
                v = (uint16_t)rnd(r);
            }
            put16(ip + at, v);
            break;
        }
        case 6: /* header length or version */
            if (lo->l3 < len)
                ip[0] = v4 ? (uint8_t)(0x40 | below(r, 16)) : (uint8_t)((below(r, 16) << 4) | 6);
            break;
        case 7: /* IPv4 header checksum */
            if (v4 && lo->l3 + 12 <= len) {
                ip[10] ^= (uint8_t)(1 + below(r, 255));
                fix_ip = false;
            }
            break;
        case 8: /* TCP checksum */
            if (lo->l4 + 18 <= len) {
                l4[16 + below(r, 2)] ^= (uint8_t)(1 + below(r, 255));
                fix_tcp = false;
            }
            break;
        case 9: /* fragment or extension header */
            if (v4 && lo->l3 + 8 <= len)
                put16(ip + 6, (uint16_t)rnd(r));
            else if (!v4 && lo->l3 + 7 <= len)
                ip[6] = (uint8_t)(chance(r, 50) ? 44 : rnd(r));
            break;
        case 10: { /* destination MAC */
            static const uint8_t macs[3][6] = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
                                               {0x33, 0x33, 0xff, 0x00, 0x01, 0x00},
                                               {0x02, 0x00, 0x00, 0x00, 0x00, 0x99}};
            if (len >= 6)
                memcpy(buf, macs[below(r, 3)], 6);
            break;
        }
        case 11: { /* ether type, outer or inner */
            static const uint16_t types[] = {RTE_ETHER_TYPE_IPV4, RTE_ETHER_TYPE_IPV6,
                                             RTE_ETHER_TYPE_VLAN, RTE_ETHER_TYPE_QINQ,
                                             RTE_ETHER_TYPE_ARP,  0x1234};
            size_t at = chance(r, 50) ? 12 : lo->l3 - 2;
            if (at + 2 <= len)
                put16(buf + at, types[below(r, 6)]);
            break;
        }
        case 12: /* TCP flags */
            if (lo->l4 + 14 <= len)
                l4[13] = (uint8_t)rnd(r);
            break;
        case 13: /* ports */
            if (lo->l4 + 4 <= len)
                l4[below(r, 4)] = (uint8_t)rnd(r);
            break;
        case 14: { /* addresses */
            size_t at = lo->l3 + (v4 ? 12 : 8) + below(r, v4 ? 8 : 32);
            if (at < len)
                buf[at] ^= (uint8_t)(1 << below(r, 8));
            break;
        }
        case 15: /* protocol */
            if (v4 && lo->l3 + 10 <= len)
                ip[9] = (uint8_t)(chance(r, 50) ? IPPROTO_UDP : rnd(r));
            else if (!v4 && lo->l3 + 7 <= len)
                ip[6] = (uint8_t)(chance(r, 50) ? IPPROTO_ICMPV6 : rnd(r));
            break;
        }
    }
    /* Half the time the IPv4 header checksum is made right again, so the damage goes deeper. */
    if (v4 && fix_ip && lo->l3 + 20 <= len) {
        struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;
        if (lo->l3 + rte_ipv4_hdr_len(h) <= len) {
            h->hdr_checksum = 0;
            h->hdr_checksum = rte_ipv4_cksum(h);
        }
    }
    (void)fix_tcp; /* xlb forwards TCP checksums as they are: nothing to fix for it */
    return len;
}
