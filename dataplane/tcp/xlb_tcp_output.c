/*
 * Building and sending segments: IPv4 or IPv6 header, TCP header with the options in force
 * (timestamps, SACK blocks), payload copied from the send queue into the header mbuf (or
 * attached as indirect mbufs when it does not fit), checksums (TCP, IPv4 header) in software or
 * left to the port, and the send loop that fills the peer's window.
 */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_memcpy.h>
#include <rte_tcp.h>

#include "xlb_tcp_conn.h"
#include "xlb_tcp_options.h"
#include "xlb_tcp_seq.h"
#include "xlb_tcp_tlp.h"

bool xlb_tcp_tx(struct xlb_tcp_endpoint *ep, struct rte_mbuf *m)
{
    if (!ep->tx || *ep->tx_n >= ep->tx_cap) {
        ep->ctr.tx_full++;
        rte_pktmbuf_free(m);
        return false;
    }
    ep->tx[(*ep->tx_n)++] = m;
    ep->ctr.segs_out++;
    return true;
}

uint32_t xlb_tcp_rcv_window(const struct xlb_tcp_endpoint *ep, const struct xlb_tcp_conn *c)
{
    uint32_t held = c->rcvq.bytes + c->ooo_bytes;
    uint32_t space = held < ep->cfg.rcv_buf ? ep->cfg.rcv_buf - held : 0;
    uint32_t max = 65535u << c->rcv_wscale;
    if (space > max)
        space = max;
    /* Receiver SWS avoidance (RFC 9293 section 3.8.6.2.2): move the right edge only by at least
     * min(half the buffer, one MSS); never move it left (RFC 7323 section 2.4). */
    uint32_t edge = c->rcv_nxt + space;
    uint32_t step = RTE_MIN(ep->cfg.rcv_buf / 2, (uint32_t)c->mss);
    if (xlb_seq_gt(edge, c->rcv_adv) && edge - c->rcv_adv >= step)
        return space;
    return xlb_seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
}

/* The window field for a non-SYN segment: rounded down to the scale, but up when rounding down
 * would move the edge we advertised left (RFC 7323 section 2.4). */
static uint16_t window_field(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    uint32_t win = xlb_tcp_rcv_window(ep, c);
    uint32_t field = win >> c->rcv_wscale;
    if (xlb_seq_lt(c->rcv_nxt + (field << c->rcv_wscale), c->rcv_adv))
        field++;
    if (field > 65535)
        field = 65535;
    uint32_t edge = c->rcv_nxt + (field << c->rcv_wscale);
    if (xlb_seq_gt(edge, c->rcv_adv))
        c->rcv_adv = edge;
    if (field == 0)
        ep->ctr.zero_windows_sent++;
    return (uint16_t)field;
}

uint32_t xlb_tcp_ts_now(const struct xlb_tcp_endpoint *ep)
{
    return (uint32_t)ep->now_ms;
}

/* The options of a non-SYN segment: timestamps, then SACK blocks (NOP NOP SACK). */
static uint32_t data_options(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint8_t *o)
{
    uint32_t n = 0;
    if (c->flags & XLB_TCPF_TS) {
        n += xlb_tcp_options_write_ts(o, xlb_tcp_ts_now(ep), c->ts_recent);
        c->ts_last_ack_sent = c->rcv_nxt;
    }
    bool dsack = c->dsack_left != c->dsack_right;
    if ((c->flags & XLB_TCPF_SACK) && (c->n_ooo || dsack)) {
        uint32_t l[XLB_TCP_SACK_SEND + 1], r[XLB_TCP_SACK_SEND + 1];
        uint8_t blocks = 0;
        /* D-SACK (RFC 2883): the duplicate first, once, then the usual blocks. */
        if (dsack) {
            l[0] = c->dsack_left;
            r[0] = c->dsack_right;
            c->dsack_left = c->dsack_right = 0;
            blocks = 1;
        }
        blocks = (uint8_t)(blocks + xlb_tcp_reass_sack(c, l + blocks, r + blocks));
        if (blocks > XLB_TCP_SACK_SEND)
            blocks = XLB_TCP_SACK_SEND; /* with timestamps, 3 fit in 40 bytes */
        if (blocks) {
            o[n++] = XLB_TCPOPT_NOP;
            o[n++] = XLB_TCPOPT_NOP;
            o[n++] = XLB_TCPOPT_SACK;
            o[n++] = (uint8_t)(XLB_TCPOLEN_SACK_BASE + XLB_TCPOLEN_SACK_BLOCK * blocks);
            for (unsigned i = 0; i < blocks; i++) {
                uint32_t le = rte_cpu_to_be_32(l[i]), re = rte_cpu_to_be_32(r[i]);
                memcpy(o + n, &le, 4);
                memcpy(o + n + 4, &re, 4);
                n += 8;
            }
        }
    }
    return n;
}

/* The room a packet of ours leaves before its IP header for the link's (Ethernet, a VLAN tag),
 * which the layer that sends it prepends. */
#define LINK_ROOM 32u

static uint32_t ip_header_len(const struct xlb_tcp_tuple *t)
{
    return t->family == AF_INET ? sizeof(struct rte_ipv4_hdr) : sizeof(struct rte_ipv6_hdr);
}

/* The TCP header at p (the IP header in front is finish's); m's lengths say where it lies. */
static void tcp_header(struct rte_mbuf *m, uint8_t *p, const struct xlb_tcp_tuple *t, uint32_t seq,
                       uint32_t ack, uint8_t flags, uint16_t win, const uint8_t *opts,
                       uint32_t opt_len)
{
    uint32_t ip_len = ip_header_len(t);
    uint32_t tcp_len = sizeof(struct rte_tcp_hdr) + opt_len;
    m->l3_len = (uint16_t)ip_len;
    m->l4_len = (uint16_t)tcp_len;
    m->hash.usr = 0; /* no connection's: xlb_tcp_tag_of */
    struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(p + ip_len);
    th->src_port = t->local_port;
    th->dst_port = t->remote_port;
    th->sent_seq = rte_cpu_to_be_32(seq);
    th->recv_ack = rte_cpu_to_be_32(ack);
    th->data_off = (uint8_t)((tcp_len / 4) << 4);
    th->tcp_flags = flags;
    th->rx_win = rte_cpu_to_be_16(win);
    th->cksum = 0;
    th->tcp_urp = 0;
    if (opt_len)
        memcpy(th + 1, opts, opt_len);
}

/* A packet with c's headers and no payload yet; NULL (counted) when the pool is empty. */
static struct rte_mbuf *build_headers(struct xlb_tcp_endpoint *ep, const struct xlb_tcp_tuple *t,
                                      uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win,
                                      const uint8_t *opts, uint32_t opt_len)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(ep->pool);
    if (!m) {
        ep->ctr.no_mbuf++;
        return NULL;
    }
    uint32_t hdr_len = ip_header_len(t) + sizeof(struct rte_tcp_hdr) + opt_len;
    uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)hdr_len);
    if (!p) {
        ep->ctr.no_mbuf++;
        rte_pktmbuf_free(m);
        return NULL;
    }
    tcp_header(m, p, t, seq, ack, flags, win, opts, opt_len);
    return m;
}

/*
 * The TCP checksum of a chained packet from the pseudo-header's sum. Not DPDK 22.11's
 * rte_ipv4_udptcp_cksum_mbuf: its rte_raw_cksum_mbuf byte-swaps a segment's sum unfolded when the
 * segment starts at an odd offset, so any chain with an odd-length piece came out wrong (found by
 * test_tcp_bulk: every such segment was dropped by the receiver as a bad checksum).
 */
static uint16_t tcp_checksum(const struct rte_mbuf *m, uint32_t l4_off, uint32_t phdr_sum)
{
    uint32_t sum = phdr_sum;
    uint32_t done = 0;
    uint32_t off = l4_off;
    for (const struct rte_mbuf *seg = m; seg; seg = seg->next) {
        if (off >= seg->data_len) {
            off -= seg->data_len;
            continue;
        }
        uint32_t len = seg->data_len - off;
        uint32_t part = __rte_raw_cksum(rte_pktmbuf_mtod_offset(seg, const void *, off), len, 0);
        uint16_t folded = __rte_raw_cksum_reduce(part);
        if (done & 1)
            folded = rte_bswap16(folded); /* this piece's bytes sit at odd positions */
        sum += folded;
        done += len;
        off = 0;
    }
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    uint16_t cksum = (uint16_t)~sum;
    return cksum;
}

/*
 * The TCP checksum field: the whole sum in software, or, when the port computes it
 * (tx_cksum_offload), the pseudo-header's sum with the mbuf flags asking the NIC for the rest
 * (DPDK's convention for RTE_MBUF_F_TX_TCP_CKSUM), so the payload is not read here at all.
 */
static void tcp_cksum_out(const struct xlb_tcp_endpoint *ep, struct rte_mbuf *m,
                          struct rte_tcp_hdr *th, uint32_t phdr_sum)
{
    if (ep->cfg.tx_cksum_offload) {
        m->l4_len = (uint16_t)((th->data_off >> 4) * 4);
        th->cksum = (uint16_t)phdr_sum;
        return;
    }
    th->cksum = tcp_checksum(m, m->l3_len, phdr_sum);
}

/*
 * The IPv4 sums from the values, not from the header just written: summing those bytes back
 * (rte_ipv4_cksum, rte_ipv4_phdr_cksum's copy on the stack) loads 16 bytes over narrower
 * stores still in flight, a failed store forward that perf showed as most of finish's cycles
 * (docs/performance.md, bench_tcp). Words are summed as they lie in memory (network order),
 * which a ones' complement sum allows; the results equal DPDK's (test_tcp_send checks them).
 */
static inline uint32_t sum_words(uint32_t w)
{
    return (w & 0xffff) + (w >> 16);
}

static inline uint16_t fold(uint32_t sum)
{
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

/* Fill an IPv4 header of total_len bytes for t; returns the pseudo-header's sum (folded, not
 * complemented: as rte_ipv4_phdr_cksum). The header's checksum is left 0 with ip_offload. */
static uint16_t ipv4_header(struct rte_ipv4_hdr *ip, const struct xlb_tcp_tuple *t,
                            uint16_t total_len, bool ip_offload)
{
    uint32_t src, dst;
    memcpy(&src, t->local, 4);
    memcpy(&dst, t->remote, 4);
    uint32_t addrs = sum_words(src) + sum_words(dst);
    uint16_t len_be = rte_cpu_to_be_16(total_len);
    uint16_t vhl = rte_cpu_to_be_16((uint16_t)(RTE_IPV4_VHL_DEF << 8));
    uint16_t frag = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
    uint16_t ttl_proto = rte_cpu_to_be_16((uint16_t)(64 << 8 | IPPROTO_TCP));
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->type_of_service = 0;
    ip->total_length = len_be;
    ip->packet_id = 0;
    ip->fragment_offset = frag;
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_TCP;
    ip->src_addr = src;
    ip->dst_addr = dst;
    ip->hdr_checksum = ip_offload ? 0 : (uint16_t)~fold(addrs + vhl + len_be + frag + ttl_proto);
    uint16_t l4_len = (uint16_t)(total_len - sizeof(*ip));
    return fold(addrs + rte_cpu_to_be_16(IPPROTO_TCP) + rte_cpu_to_be_16(l4_len));
}

/* IP header (lengths from the finished packet) and checksums. */
static void finish(const struct xlb_tcp_endpoint *ep, const struct xlb_tcp_tuple *t,
                   struct rte_mbuf *m)
{
    uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
    struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(p + m->l3_len);
    if (t->family == AF_INET) {
        /* Left to the port, the header's checksum field stays 0, as DPDK asks. */
        uint16_t phdr = ipv4_header((struct rte_ipv4_hdr *)p, t, (uint16_t)m->pkt_len,
                                    ep->cfg.tx_ip_cksum_offload);
        if (ep->cfg.tx_ip_cksum_offload)
            m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
        if (ep->cfg.tx_cksum_offload)
            m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM;
        tcp_cksum_out(ep, m, th, phdr);
    } else {
        struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)p;
        ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
        ip->payload_len = rte_cpu_to_be_16((uint16_t)(m->pkt_len - sizeof(*ip)));
        ip->proto = IPPROTO_TCP;
        ip->hop_limits = 64;
        memcpy(ip->src_addr, t->local, 16);
        memcpy(ip->dst_addr, t->remote, 16);
        if (ep->cfg.tx_cksum_offload)
            m->ol_flags |= RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_TCP_CKSUM;
        tcp_cksum_out(ep, m, th, rte_ipv6_phdr_cksum(ip, 0));
    }
}

/*
 * One piece of payload behind the headers: copied into the header mbuf (copy), or attached as
 * an indirect mbuf of q's bytes from at. last: the chain's last mbuf, moved on an attach.
 */
static bool add_piece(struct xlb_tcp_endpoint *ep, struct rte_mbuf *hdr, struct rte_mbuf **last,
                      struct rte_mbuf *q, uint32_t at, uint32_t piece, bool copy)
{
    const struct xlb_tcp_sndq_link *l = xlb_tcp_sndq_link(q);
    if (copy) {
        /* The header mbuf has no chain yet: the bytes go right behind the headers. */
        char *dst = rte_pktmbuf_append(hdr, (uint16_t)piece);
        rte_memcpy(dst, xlb_tcp_sndq_payload(q) + at, piece);
        return true;
    }
    struct rte_mbuf *mi = rte_pktmbuf_alloc(ep->pool);
    if (!mi) {
        ep->ctr.no_mbuf++;
        return false;
    }
    rte_pktmbuf_attach(mi, q);
    mi->data_off = (uint16_t)(l->off + at);
    mi->data_len = (uint16_t)piece;
    mi->pkt_len = piece;
    (*last)->next = mi;
    *last = mi;
    hdr->nb_segs++;
    hdr->pkt_len += piece;
    return true;
}

/*
 * len bytes of the send queue behind the headers, from byte at of its mbuf q (where
 * xlb_tcp_sndq_seek found the segment's first byte: from the queue's cursor, so that a full
 * send queue is not walked from its head for every segment). When they fit in the header
 * mbuf's room (a full MSS does in a 2 KiB mbuf) they are copied there: one mbuf a segment
 * instead of one per piece, and no atomic reference count taken on the queued mbufs (attach)
 * and given back (free); copying 1,448 bytes costs less (docs/performance.md, bench_tcp).
 * Larger segments (jumbo MSS) attach the queue's mbufs as indirect ones.
 */
static bool add_payload(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, struct rte_mbuf *hdr,
                        struct rte_mbuf *q, uint32_t at, uint32_t len)
{
    struct xlb_tcp_sndq *sq = &c->sndq;
    struct rte_mbuf *last = hdr;
    bool copy = len <= rte_pktmbuf_tailroom(hdr);
    /* Bounded by the queue's mbufs. */
    while (q && len) {
        uint32_t qlen = xlb_tcp_sndq_link(q)->len;
        uint32_t piece = RTE_MIN(len, qlen - at);
        if (!add_piece(ep, hdr, &last, q, at, piece, copy))
            return false;
        len -= piece;
        if (!len)
            break;
        sq->cursor_pos += qlen;
        q = sq->cursor = xlb_tcp_sndq_link(q)->next;
        at = 0;
    }
    return len == 0;
}

/*
 * A segment of len bytes from byte at of the queued mbuf q, sent in place: when it starts that
 * mbuf's payload, nothing else holds the mbuf (the wire has given back its last send), and its
 * headroom takes our headers and the link's, the headers are written there and the mbuf itself
 * is the packet, the queue keeping a reference. No header mbuf and no copy: the copy was most
 * of a bulk segment's cost (docs/performance.md, bench_tcp). Anything else is copied (NULL).
 */
static struct rte_mbuf *in_place(struct rte_mbuf *q, uint32_t at, uint32_t len, uint32_t hdr_len)
{
    if (at != 0 || !RTE_MBUF_DIRECT(q) || rte_mbuf_refcnt_read(q) != 1)
        return NULL;
    const struct xlb_tcp_sndq_link *l = xlb_tcp_sndq_link(q);
    if (len > l->len || l->off < hdr_len + LINK_ROOM)
        return NULL;
    /* The headers (a multiple of 4 bytes) and the link's (struct rte_ether_hdr, 2-byte aligned)
     * must start at an even address: not so behind a payload that starts at an odd one, as a
     * received segment's does when the relay read part of it before. */
    if (((uintptr_t)xlb_tcp_sndq_payload(q) & 1) != 0)
        return NULL;
    rte_mbuf_refcnt_update(q, 1); /* 1 -> 2 is a plain store: the queue's and the packet's */
    q->data_off = (uint16_t)(l->off - hdr_len);
    q->data_len = (uint16_t)(hdr_len + len);
    q->pkt_len = hdr_len + len;
    q->nb_segs = 1;
    q->next = NULL;
    q->ol_flags = 0; /* a received mbuf's RX flags; finish sets the TX ones */
    q->tx_offload = 0;
    q->packet_type = 0;
    q->vlan_tci = 0;
    return q;
}

/* Which connection a packet is for, for the caller that routes the output (xlb_tcp_user_of). */
static void stamp(const struct xlb_tcp_endpoint *ep, const struct xlb_tcp_conn *c,
                  struct rte_mbuf *m)
{
    m->hash.usr = (uint32_t)(c - ep->conns) + 1;
}

/* What every segment we send does to the receive side: the ACK it carries is owed no more. */
static void ack_sent(struct xlb_tcp_conn *c)
{
    c->flags &= (uint16_t)~XLB_TCPF_ACK_NOW;
    c->delack_at = 0;
    c->unacked_segs = 0;
}

bool xlb_tcp_send_segment(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t seq,
                          uint32_t len, uint8_t flags)
{
    uint8_t opts[XLB_TCP_OPTS_MAX_LEN];
    uint32_t opt_len = data_options(ep, c, opts);
    uint16_t win = window_field(ep, c);
    flags |= RTE_TCP_ACK_FLAG;
    uint32_t hdr_len = ip_header_len(&c->tuple) + sizeof(struct rte_tcp_hdr) + opt_len;
    uint32_t at = 0;
    struct rte_mbuf *q = NULL, *m = NULL;
    if (len) {
        q = xlb_tcp_sndq_seek(&c->sndq, seq - c->snd_una + c->snd_head_off, &at);
        if (!q)
            return false; /* the caller asked for bytes the queue does not hold */
        m = in_place(q, at, len, hdr_len);
    }
    if (m) {
        tcp_header(m, rte_pktmbuf_mtod(m, uint8_t *), &c->tuple, seq, c->rcv_nxt, flags, win, opts,
                   opt_len);
        ep->ctr.segs_in_place++;
    } else {
        m = build_headers(ep, &c->tuple, seq, c->rcv_nxt, flags, win, opts, opt_len);
        if (!m)
            return false;
        if (len && !add_payload(ep, c, m, q, at, len)) {
            rte_pktmbuf_free(m);
            return false;
        }
    }
    stamp(ep, c, m);
    finish(ep, &c->tuple, m);
    if (!xlb_tcp_tx(ep, m))
        return false;
    ep->ctr.bytes_out += len;
    if (xlb_seq_lt(seq, c->snd_max) && (len || (flags & RTE_TCP_FIN_FLAG))) {
        ep->ctr.retransmits++;
        c->retransmits++;
    }
    ack_sent(c);
    return true;
}

void xlb_tcp_send_ack(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    if (xlb_tcp_send_segment(ep, c, c->snd_nxt, 0, 0))
        ep->ctr.acks_sent++;
}

void xlb_tcp_send_syn(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, bool with_ack)
{
    struct xlb_tcp_opts o = {
        .mss = c->mss,
        .has_wscale = (c->flags & XLB_TCPF_WSCALE) || !with_ack,
        .wscale = c->rcv_wscale,
        .sack_ok = with_ack ? (c->flags & XLB_TCPF_SACK) != 0 : ep->cfg.sack,
        .has_ts = with_ack ? (c->flags & XLB_TCPF_TS) != 0 : ep->cfg.timestamps,
        .tsval = xlb_tcp_ts_now(ep),
        .tsecr = c->ts_recent,
    };
    uint8_t opts[XLB_TCP_OPTS_MAX_LEN];
    uint32_t opt_len = xlb_tcp_options_write_syn(opts, &o);
    uint32_t win = RTE_MIN(ep->cfg.rcv_buf, 65535u); /* a SYN's window is never scaled */
    uint8_t flags = RTE_TCP_SYN_FLAG | (with_ack ? RTE_TCP_ACK_FLAG : 0);
    struct rte_mbuf *m = build_headers(ep, &c->tuple, c->iss, with_ack ? c->rcv_nxt : 0, flags,
                                       (uint16_t)win, opts, opt_len);
    if (!m)
        return;
    c->rcv_adv = c->rcv_nxt + win;
    stamp(ep, c, m);
    finish(ep, &c->tuple, m);
    xlb_tcp_tx(ep, m);
    ack_sent(c);
}

void xlb_tcp_send_raw(struct xlb_tcp_endpoint *ep, const struct xlb_tcp_tuple *t, uint32_t seq,
                      uint32_t ack, uint8_t flags, uint16_t win, const uint8_t *opts,
                      uint32_t opt_len)
{
    struct rte_mbuf *m = build_headers(ep, t, seq, ack, flags, win, opts, opt_len);
    if (!m)
        return;
    finish(ep, t, m);
    xlb_tcp_tx(ep, m);
}

void xlb_tcp_send_rst(struct xlb_tcp_endpoint *ep, const struct xlb_tcp_conn *c, uint32_t seq,
                      uint32_t ack, bool with_ack)
{
    uint8_t flags = RTE_TCP_RST_FLAG | (with_ack ? RTE_TCP_ACK_FLAG : 0);
    struct rte_mbuf *m = build_headers(ep, &c->tuple, seq, with_ack ? ack : 0, flags, 0, NULL, 0);
    if (!m)
        return;
    stamp(ep, c, m);
    finish(ep, &c->tuple, m);
    xlb_tcp_tx(ep, m);
}

void xlb_tcp_challenge_ack(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    uint32_t second = (uint32_t)(ep->now_ms / 1000);
    if (second != ep->challenge_window_s) {
        ep->challenge_window_s = second;
        ep->challenge_count = 0;
    }
    if (ep->challenge_count >= ep->cfg.challenge_acks_per_s) {
        ep->ctr.challenge_acks_suppressed++;
        return;
    }
    ep->challenge_count++;
    ep->ctr.challenge_acks++;
    xlb_tcp_send_ack(ep, c);
}

void xlb_tcp_sender_start(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    /* RFC 6582's "recover" starts at the ISS: the first loss may start a recovery. */
    xlb_tcp_recovery_init(&c->rec, (enum xlb_tcp_cc_kind)c->cc_kind,
                          (c->flags & XLB_TCPF_SACK) != 0, c->mss, c->iss);
}

uint32_t xlb_tcp_rto_ms(const struct xlb_tcp_conn *c)
{
    return (xlb_tcp_rtt_timeout_us(&c->rtt) + 999) / 1000;
}

/* [seq, seq + len) again: the data the send queue still holds there, and the FIN if the
 * range covers it. */
static bool send_range(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t seq,
                       uint32_t len)
{
    uint32_t data_end = c->snd_una + c->sndq.bytes;
    uint32_t data = xlb_seq_lt(seq, data_end) ? RTE_MIN(len, data_end - seq) : 0;
    uint8_t flags = 0;
    if (data && seq + data == data_end)
        flags |= RTE_TCP_PSH_FLAG;
    if ((c->flags & XLB_TCPF_FIN_SENT) && xlb_seq_le(seq, c->fin_seq) &&
        xlb_seq_gt(seq + len, c->fin_seq))
        flags |= RTE_TCP_FIN_FLAG;
    if (!data && !(flags & RTE_TCP_FIN_FLAG))
        return false;
    return xlb_tcp_send_segment(ep, c, seq, data, flags);
}

void xlb_tcp_retransmit_first(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    uint32_t len = RTE_MIN((uint32_t)c->mss, c->snd_max - c->snd_una);
    if (len && send_range(ep, c, c->snd_una, len))
        xlb_tcp_recovery_sent(&c->rec, c->snd_una, len, true);
}

static bool can_send_data(const struct xlb_tcp_conn *c)
{
    switch (c->state) {
    case XLB_TCP_ESTABLISHED:
    case XLB_TCP_CLOSE_WAIT:
    case XLB_TCP_FIN_WAIT_1:
    case XLB_TCP_CLOSING:
    case XLB_TCP_LAST_ACK:
        return true;
    default:
        return false;
    }
}

/* Sent new bytes at snd_max (and the FIN after them when due). */
static bool send_new(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t len)
{
    uint32_t unsent = c->sndq.bytes - (c->snd_max - c->snd_una);
    uint8_t flags = 0;
    if (len == unsent) {
        flags |= len ? RTE_TCP_PSH_FLAG : 0;
        if (c->flags & XLB_TCPF_FIN_QUEUED)
            flags |= RTE_TCP_FIN_FLAG;
    }
    uint32_t seq = c->snd_max;
    if (!xlb_tcp_send_segment(ep, c, seq, len, flags))
        return false;
    if (!c->rtt_timing && len && !(c->flags & XLB_TCPF_TS)) {
        c->rtt_timing = true; /* Karn: time only new data */
        c->rtt_seq = seq;
        c->rtt_sent_ms = ep->now_ms;
    }
    c->snd_max += len;
    c->last_tx_ms = ep->now_ms;
    if (flags & RTE_TCP_FIN_FLAG) {
        c->fin_seq = c->snd_max;
        c->flags |= XLB_TCPF_FIN_SENT;
        c->snd_max++;
    }
    c->snd_nxt = c->snd_max;
    xlb_tcp_recovery_sent(&c->rec, seq, c->snd_max - seq, false);
    return true;
}

/* What the recovery module needs to pick a segment: unsent bytes, windows, and the MSS our
 * SACK blocks leave for data. */
static struct xlb_tcp_send_view send_view(const struct xlb_tcp_conn *c, uint32_t unsent)
{
    uint32_t sack_room = xlb_tcp_sack_opt_len(c);
    return (struct xlb_tcp_send_view){
        .snd_una = c->snd_una,
        .snd_nxt = c->snd_max,
        .snd_wnd = c->snd_wnd,
        .unsent = unsent,
        .mss = c->mss > sack_room + 64 ? c->mss - sack_room : c->mss,
    };
}

void xlb_tcp_tlp_arm(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    uint32_t in_flight = c->snd_max - c->snd_una;
    uint32_t pto_us = can_send_data(c) ? xlb_tcp_tlp_timeout_us(&c->rec, c->rtt.srtt_us, in_flight,
                                                                xlb_tcp_rtt_timeout_us(&c->rtt))
                                       : 0;
    c->tlp_at = pto_us ? ep->now_ms + (pto_us + 999) / 1000 : 0;
}

void xlb_tcp_tlp_fire(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    c->tlp_at = 0;
    if (!can_send_data(c))
        return;
    bool fin_sent = c->flags & XLB_TCPF_FIN_SENT;
    uint32_t unsent = fin_sent ? 0 : c->sndq.bytes - (c->snd_max - c->snd_una);
    struct xlb_tcp_send_view view = send_view(c, unsent);
    struct xlb_tcp_send_choice probe = xlb_tcp_tlp_probe(&c->rec, &view);
    uint32_t seq = probe.seq;
    bool sent = false;
    if (probe.what == XLB_TCP_SEND_NEW) {
        sent = send_new(ep, c, RTE_MIN(probe.len, unsent)); /* cwnd is not asked */
    } else if (probe.what == XLB_TCP_SEND_RETRANSMIT) {
        /* The last segment again: up to snd_max, so a FIN sent goes with it. */
        uint32_t len = c->snd_max - probe.seq;
        sent = send_range(ep, c, probe.seq, len);
        if (sent)
            xlb_tcp_recovery_sent(&c->rec, probe.seq, len, true);
    }
    if (!sent)
        return;
    xlb_tcp_tlp_sent(&c->rec, seq, c->snd_max - seq, probe.what == XLB_TCP_SEND_RETRANSMIT,
                     &ep->ctr.recovery);
    c->rto_at = ep->now_ms + xlb_tcp_rto_ms(c); /* RFC 8985 section 7.3: the RTO, not a PTO */
    xlb_tcp_timers_update(ep, c);
}

#define OUTPUT_BOUND 1024 /* segments per call: the windows bound it sooner */

/*
 * New data the windows let out (room bytes, xlb_tcp_recovery_new_run) in segments of mss,
 * without asking the recovery module for each: its view and its choice go through the stack,
 * written and read back at once, loads perf showed stalling (docs/performance.md, bench_tcp:
 * about 20 cycles a segment). Stops at the end of the data, the room or the bound; false when
 * a segment could not be sent.
 */
static bool send_run(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t room,
                     uint32_t mss, unsigned *turn)
{
    for (; *turn + 1 < OUTPUT_BOUND && !(c->flags & XLB_TCPF_FIN_SENT); (*turn)++) {
        uint32_t unsent = c->sndq.bytes - (c->snd_max - c->snd_una);
        uint32_t len = RTE_MIN(unsent, mss);
        if (len == 0 || room < len)
            break;
        if (!send_new(ep, c, len))
            return false;
        room -= len;
    }
    return true;
}

void xlb_tcp_output(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    if (can_send_data(c)) {
        /* Idle for more than an RTO with nothing in flight: the ACK clock is gone, so restart
         * from the initial window rather than burst a stale cwnd (RFC 5681 section 4.1). */
        if (c->snd_una == c->snd_max && c->last_tx_ms &&
            ep->now_ms - c->last_tx_ms > xlb_tcp_rto_ms(c)) {
            xlb_tcp_cc_on_idle(&c->rec.cc);
            c->last_tx_ms = ep->now_ms;
        }
        /* The recovery module picks each segment: a hole to fill, or new data within the
         * congestion and peer windows (dataplane/tcp/sender/xlb_tcp_recovery.h). */
        uint32_t sent_up_to = c->snd_max;
        for (unsigned turn = 0; turn < OUTPUT_BOUND; turn++) {
            bool fin_sent = c->flags & XLB_TCPF_FIN_SENT;
            uint32_t unsent = fin_sent ? 0 : c->sndq.bytes - (c->snd_max - c->snd_una);
            struct xlb_tcp_send_view view = send_view(c, unsent);
            struct xlb_tcp_send_choice pick =
                xlb_tcp_recovery_next(&c->rec, &view, &ep->ctr.recovery);
            bool sent;
            if (pick.what == XLB_TCP_SEND_RETRANSMIT) {
                sent = send_range(ep, c, pick.seq, pick.len);
                if (sent)
                    xlb_tcp_recovery_sent(&c->rec, pick.seq, pick.len, true);
            } else if (pick.what == XLB_TCP_SEND_NEW) {
                /* SACK blocks in our segments (view.mss below c->mss) may end after the first:
                 * then each segment is asked for, its MSS recomputed. */
                uint32_t run = view.mss == c->mss ? xlb_tcp_recovery_new_run(&c->rec, &view) : 0;
                uint32_t len = RTE_MIN(pick.len, unsent);
                sent = send_new(ep, c, len);
                if (sent && run > len)
                    sent = send_run(ep, c, run - len, view.mss, &turn);
            } else if ((c->flags & XLB_TCPF_FIN_QUEUED) && !fin_sent && unsent == 0) {
                sent = send_new(ep, c, 0); /* the FIN alone: it takes no window */
            } else {
                break;
            }
            if (!sent)
                break;
            if (!c->rto_at)
                c->rto_at = ep->now_ms + xlb_tcp_rto_ms(c);
        }
        if (c->snd_max != sent_up_to)
            xlb_tcp_tlp_arm(ep, c); /* new data went: the probe's clock restarts */
        /* Data waits behind a zero window with nothing in flight: probe it. */
        uint32_t waiting =
            (c->flags & XLB_TCPF_FIN_SENT) ? 0 : c->sndq.bytes - (c->snd_max - c->snd_una);
        if (c->snd_wnd == 0 && waiting && c->snd_una == c->snd_max && !c->persist_at) {
            c->persist_ms = xlb_tcp_rto_ms(c);
            c->persist_at = ep->now_ms + c->persist_ms;
        }
    }
    if (c->flags & XLB_TCPF_ACK_NOW)
        xlb_tcp_send_ack(ep, c);
    xlb_tcp_timers_update(ep, c);
}
