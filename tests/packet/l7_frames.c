/*
 * The L7 packet tests' segments (l7_fixture.h "segments"): TCP options written as Linux writes
 * them, frames built from a struct l7_seg with every length and checksum right, and what xlb
 * sent read back and compared byte for byte.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "l7_fixture.h"
/* ---- options, written as Linux writes them ---- */

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void opts_syn(struct l7_seg *s, uint16_t mss, bool sack, bool ts, uint32_t tsval, uint32_t tsecr,
              int wscale)
{
    uint8_t *o = s->opts;
    unsigned n = 0;
    o[n++] = 2;
    o[n++] = 4;
    o[n++] = (uint8_t)(mss >> 8);
    o[n++] = (uint8_t)mss;
    if (ts) {
        o[n++] = sack ? 4 : 1;
        o[n++] = sack ? 2 : 1;
        o[n++] = 8;
        o[n++] = 10;
        put32(o + n, tsval);
        put32(o + n + 4, tsecr);
        n += 8;
    } else if (sack) {
        o[n++] = 1;
        o[n++] = 1;
        o[n++] = 4;
        o[n++] = 2;
    }
    if (wscale >= 0) {
        o[n++] = 1;
        o[n++] = 3;
        o[n++] = 3;
        o[n++] = (uint8_t)wscale;
    }
    s->opts_len = (uint8_t)n;
}

void opts_ts(struct l7_seg *s, uint32_t tsval, uint32_t tsecr)
{
    const uint8_t head[4] = {1, 1, 8, 10};
    memcpy(s->opts, head, 4);
    put32(s->opts + 4, tsval);
    put32(s->opts + 8, tsecr);
    s->opts_len = 12;
}

void opts_ts_sack(struct l7_seg *s, uint32_t tsval, uint32_t tsecr, unsigned n,
                  const uint32_t *left, const uint32_t *right)
{
    assert_true(n >= 1 && n <= 3);
    opts_ts(s, tsval, tsecr);
    uint8_t *o = s->opts + 12;
    o[0] = 1;
    o[1] = 1;
    o[2] = 5;
    o[3] = (uint8_t)(2 + 8 * n);
    for (unsigned i = 0; i < n; i++) {
        put32(o + 4 + 8 * i, left[i]);
        put32(o + 8 + 8 * i, right[i]);
    }
    s->opts_len = (uint8_t)(12 + 4 + 8 * n);
}

/* ---- frames ---- */

static bool v6_of(const char *addr)
{
    return strchr(addr, ':') != NULL;
}

size_t l7_frame(uint8_t *buf, const struct l7_seg *s)
{
    bool v6 = v6_of(s->src);
    assert_true(s->opts_len % 4 == 0);
    size_t l3 = v6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
    size_t tcp_len = sizeof(struct rte_tcp_hdr) + s->opts_len + s->len;
    size_t total = sizeof(struct rte_ether_hdr) + l3 + tcp_len;
    assert_true(total <= L7_FRAME_MAX);
    memset(buf, 0, total);
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
    eth->dst_addr = *s->eth_dst;
    eth->src_addr = *s->eth_src;
    eth->ether_type = htons(v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
    void *ip = eth + 1;
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)((uint8_t *)ip + l3);
    tcp->src_port = htons(s->sport);
    tcp->dst_port = htons(s->dport);
    tcp->sent_seq = htonl(s->seq);
    tcp->recv_ack = htonl(s->ack);
    tcp->data_off = (uint8_t)(((sizeof(*tcp) + s->opts_len) / 4) << 4);
    tcp->tcp_flags = s->flags;
    tcp->rx_win = htons(s->window);
    memcpy(tcp + 1, s->opts, s->opts_len);
    if (s->len > 0)
        memcpy((uint8_t *)(tcp + 1) + s->opts_len, s->payload, s->len);
    if (v6) {
        struct rte_ipv6_hdr *h = ip;
        h->vtc_flow = htonl(6u << 28);
        h->payload_len = htons((uint16_t)tcp_len);
        h->proto = IPPROTO_TCP;
        h->hop_limits = s->ttl;
        assert_int_equal(inet_pton(AF_INET6, s->src, h->src_addr), 1);
        assert_int_equal(inet_pton(AF_INET6, s->dst, h->dst_addr), 1);
        tcp->cksum = rte_ipv6_udptcp_cksum(h, tcp);
    } else {
        struct rte_ipv4_hdr *h = ip;
        h->version_ihl = 0x45;
        h->total_length = htons((uint16_t)(l3 + tcp_len));
        h->packet_id = htons(s->ip_id);
        h->fragment_offset = htons(RTE_IPV4_HDR_DF_FLAG);
        h->time_to_live = s->ttl;
        h->next_proto_id = IPPROTO_TCP;
        assert_int_equal(inet_pton(AF_INET, s->src, &h->src_addr), 1);
        assert_int_equal(inet_pton(AF_INET, s->dst, &h->dst_addr), 1);
        h->hdr_checksum = rte_ipv4_cksum(h);
        tcp->cksum = rte_ipv4_udptcp_cksum(h, tcp);
    }
    return total;
}

unsigned l7_send(struct l7_fixture *x, const struct l7_seg *s)
{
    uint8_t buf[L7_FRAME_MAX];
    size_t len = l7_frame(buf, s);
    return fixture_send(x->n->f, buf, len);
}

void l7_clear(struct l7_fixture *x)
{
    fixture_clear_tx(x->n->f);
}

static void parse_options(const uint8_t *o, unsigned len, struct l7_out *out)
{
    for (unsigned i = 0; i < len;) {
        uint8_t kind = o[i];
        if (kind == 0)
            break;
        if (kind == 1) {
            i++;
            continue;
        }
        assert_true(i + 1 < len && o[i + 1] >= 2 && i + o[i + 1] <= len);
        const uint8_t *v = o + i + 2;
        switch (kind) {
        case 2:
            out->mss = (uint16_t)(v[0] << 8 | v[1]);
            break;
        case 3:
            out->has_ws = true;
            out->ws = v[0];
            break;
        case 4:
            out->sack_ok = true;
            break;
        case 5:
            out->n_sack = (o[i + 1] - 2u) / 8;
            for (unsigned k = 0; k < out->n_sack && k < 4; k++) {
                out->sack_left[k] = get32(v + 8 * k);
                out->sack_right[k] = get32(v + 8 * k + 4);
            }
            break;
        case 8:
            out->has_ts = true;
            out->tsval = get32(v);
            out->tsecr = get32(v + 4);
            break;
        default:
            break;
        }
        i += o[i + 1];
    }
}

void l7_read(struct l7_fixture *x, unsigned i, struct l7_out *out)
{
    memset(out, 0, sizeof(*out));
    size_t len;
    const uint8_t *frame = fixture_tx(x->n->f, i, &len);
    out->frame = frame;
    out->frame_len = len;
    const struct rte_ether_hdr *eth = (const void *)frame;
    const struct rte_tcp_hdr *tcp;
    uint32_t l4_len;
    if (eth->ether_type == htons(RTE_ETHER_TYPE_IPV6)) {
        const struct rte_ipv6_hdr *ip = (const void *)(eth + 1);
        out->v6 = true;
        tcp = (const void *)(ip + 1);
        l4_len = ntohs(ip->payload_len);
        assert_true(sizeof(*eth) + sizeof(*ip) + l4_len <= len);
        assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, tcp), 0);
    } else {
        assert_int_equal(ntohs(eth->ether_type), RTE_ETHER_TYPE_IPV4);
        const struct rte_ipv4_hdr *ip = (const void *)(eth + 1);
        assert_int_equal(rte_ipv4_cksum(ip), 0); /* ~0xffff: the header sums to all ones */
        tcp = (const void *)((const uint8_t *)ip + rte_ipv4_hdr_len(ip));
        l4_len = ntohs(ip->total_length) - rte_ipv4_hdr_len(ip);
        assert_true(sizeof(*eth) + ntohs(ip->total_length) <= len);
        assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, tcp), 0);
    }
    unsigned hlen = (unsigned)(tcp->data_off >> 4) * 4;
    out->flags = tcp->tcp_flags;
    out->window = ntohs(tcp->rx_win);
    out->sport = ntohs(tcp->src_port);
    out->dport = ntohs(tcp->dst_port);
    out->seq = ntohl(tcp->sent_seq);
    out->ack = ntohl(tcp->recv_ack);
    parse_options((const uint8_t *)(tcp + 1), hlen - (unsigned)sizeof(*tcp), out);
    out->payload = (const uint8_t *)tcp + hlen;
    out->len = l4_len - hlen;
}

void l7_expect(struct l7_fixture *x, unsigned i, const struct l7_seg *want)
{
    struct l7_out o;
    l7_read(x, i, &o); /* checksums */
    uint8_t buf[L7_FRAME_MAX];
    size_t len = l7_frame(buf, want);
    if (o.frame_len != len || memcmp(o.frame, buf, len) != 0) {
        print_message("tx frame %u: %zu bytes, expected %zu\n", i, o.frame_len, len);
        for (size_t k = 0; k < len && k < o.frame_len; k++)
            if (o.frame[k] != buf[k])
                print_message("  byte %zu: got %02x want %02x\n", k, o.frame[k], buf[k]);
        print_message("  got seq %08x ack %08x flags %02x win %u len %u tsval %08x tsecr %08x\n",
                      o.seq, o.ack, o.flags, o.window, o.len, o.tsval, o.tsecr);
        print_message(" want seq %08x ack %08x flags %02x win %u len %u\n", want->seq, want->ack,
                      want->flags, want->window, want->len);
        fail_msg("tx frame %u differs from the expected one", i);
    }
}
