#include "tcp_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "packet_fixture.h"

static void on_connected(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    ((struct tf *)user)->connected++;
}
static void on_readable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    ((struct tf *)user)->readable++;
}
static void on_writable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    ((struct tf *)user)->writable++;
}
static void on_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    (void)c;
    ((struct tf *)user)->closed++;
    ((struct tf *)user)->close_reason = why;
}
const struct xlb_tcp_callbacks tf_callbacks = {on_connected, on_readable, on_writable, on_closed};

struct tf *tf_create(int family, const struct xlb_tcp_config *cfg)
{
    static unsigned serial;
    char name[64];
    fixture_eal_init();
    struct tf *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    snprintf(name, sizeof(name), "tf_pool_%u", serial++);
    f->pool = rte_pktmbuf_pool_create(name, 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    assert_non_null(f->pool);
    if (cfg)
        f->cfg = *cfg;
    else
        xlb_tcp_config_default(&f->cfg);
    f->now = 1000000;
    f->ep = xlb_tcp_endpoint_create(&f->cfg, f->pool, f->now);
    assert_non_null(f->ep);
    xlb_tcp_tx_set(f->ep, f->tx, TF_TX_MAX, &f->n_tx);
    uint8_t seed[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    xlb_syn_cookie_keys_init(&f->keys, seed);
    f->peer.family = (uint8_t)family;
    if (family == AF_INET) {
        inet_pton(AF_INET, "198.18.0.2", f->peer.local);
        inet_pton(AF_INET, "198.18.0.100", f->peer.remote);
    } else {
        inet_pton(AF_INET6, "2001:2::2", f->peer.local);
        inet_pton(AF_INET6, "2001:2::100", f->peer.remote);
    }
    f->peer.local_port = htons(40000);
    f->peer.remote_port = htons(443);
    return f;
}

void tf_clear_tx(struct tf *f)
{
    for (unsigned i = 0; i < f->n_tx; i++)
        rte_pktmbuf_free(f->tx[i]);
    f->n_tx = 0;
}

uint32_t tf_mbufs_in_use(const struct tf *f)
{
    return rte_mempool_in_use_count(f->pool);
}

void tf_destroy(struct tf *f)
{
    tf_clear_tx(f);
    xlb_tcp_endpoint_free(f->ep);
    assert_int_equal(rte_mempool_in_use_count(f->pool), 0);
    rte_mempool_free(f->pool);
    free(f);
}

uint8_t tf_pattern(uint32_t i)
{
    return (uint8_t)(i * 7u + 3u);
}

struct rte_mbuf *tf_payload(struct tf *f, uint32_t start, uint32_t len)
{
    /* A chain of mbufs of at most 1,000 bytes each, as an application builds one. */
    return tf_payload_pieces(f, start, len, 1000);
}

struct rte_mbuf *tf_payload_pieces(struct tf *f, uint32_t start, uint32_t len, uint32_t size)
{
    struct rte_mbuf *head = NULL;
    for (uint32_t off = 0; off < len || !head; off += size) {
        uint32_t piece = len - off < size ? len - off : size;
        struct rte_mbuf *m = rte_pktmbuf_alloc(f->pool);
        assert_non_null(m);
        uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)piece);
        assert_non_null(p);
        for (uint32_t i = 0; i < piece; i++)
            p[i] = tf_pattern(start + off + i);
        if (head)
            assert_int_equal(rte_pktmbuf_chain(head, m), 0);
        else
            head = m;
    }
    return head;
}

struct rte_mbuf *tf_build(struct tf *f, const struct tf_out *o)
{
    uint8_t opts[40];
    uint32_t ol = 0;
    if (o->syn_opts) {
        struct xlb_tcp_opts so = {.mss = f->peer_mss ? f->peer_mss : 1460,
                                  .has_wscale = true,
                                  .wscale = 7,
                                  .sack_ok = true,
                                  .has_ts = o->ts,
                                  .tsval = o->tsval,
                                  .tsecr = o->tsecr};
        ol = xlb_tcp_options_write_syn(opts, &so);
    } else if (o->ts) {
        ol = xlb_tcp_options_write_ts(opts, o->tsval, o->tsecr);
    }
    if (o->n_sack) {
        opts[ol++] = 1;
        opts[ol++] = 1;
        opts[ol++] = 5;
        opts[ol++] = (uint8_t)(2 + 8 * o->n_sack);
        for (unsigned i = 0; i < o->n_sack; i++) {
            uint32_t l = htonl(o->sack_l[i]), r = htonl(o->sack_r[i]);
            memcpy(opts + ol, &l, 4);
            memcpy(opts + ol + 4, &r, 4);
            ol += 8;
        }
    }
    bool v4 = f->peer.family == AF_INET;
    uint32_t ip_len = v4 ? 20 : 40, tcp_len = 20 + ol;
    struct rte_mbuf *m = rte_pktmbuf_alloc(f->pool);
    assert_non_null(m);
    uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(ip_len + tcp_len + o->len));
    assert_non_null(p);
    memset(p, 0, ip_len + tcp_len);
    struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(p + ip_len);
    th->src_port = f->peer.local_port;
    th->dst_port = f->peer.remote_port;
    th->sent_seq = htonl(o->seq);
    th->recv_ack = htonl(o->ack);
    th->data_off = (uint8_t)((tcp_len / 4) << 4);
    th->tcp_flags = o->flags;
    th->rx_win = htons(o->win);
    memcpy(th + 1, opts, ol);
    if (o->len)
        memcpy(p + ip_len + tcp_len, o->data, o->len);
    if (v4) {
        struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;
        ip->version_ihl = 0x45;
        ip->total_length = htons((uint16_t)(ip_len + tcp_len + o->len));
        ip->time_to_live = 64;
        ip->next_proto_id = IPPROTO_TCP;
        memcpy(&ip->src_addr, f->peer.local, 4);
        memcpy(&ip->dst_addr, f->peer.remote, 4);
        ip->hdr_checksum = rte_ipv4_cksum(ip);
        th->cksum = rte_ipv4_udptcp_cksum(ip, th);
    } else {
        struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)p;
        ip->vtc_flow = htonl(6u << 28);
        ip->payload_len = htons((uint16_t)(tcp_len + o->len));
        ip->proto = IPPROTO_TCP;
        ip->hop_limits = 64;
        memcpy(ip->src_addr, f->peer.local, 16);
        memcpy(ip->dst_addr, f->peer.remote, 16);
        th->cksum = rte_ipv6_udptcp_cksum(ip, th);
    }
    return m;
}

int tf_send(struct tf *f, struct xlb_tcp_conn *c, const struct tf_out *o)
{
    return xlb_tcp_receive(f->ep, c, tf_build(f, o), f->now);
}

void tf_tx(const struct tf *f, unsigned i, struct tf_seg *out)
{
    assert_true(i < f->n_tx);
    struct rte_mbuf *m = f->tx[i];
    uint8_t buf[9000];
    assert_true(m->pkt_len <= sizeof(buf));
    const uint8_t *p = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
    assert_non_null(p);
    bool v4 = (p[0] >> 4) == 4;
    uint32_t ip_len = v4 ? 20 : 40;
    static uint8_t nic[9000];
    if (m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM) {
        /* The IPv4 header's checksum left to the port (tx_ip_cksum_offload): 0, as DPDK
         * asks; filled in here as the NIC would. */
        assert_true(v4);
        assert_true(m->ol_flags & RTE_MBUF_F_TX_IPV4);
        assert_int_equal(m->l3_len, ip_len);
        memcpy(nic, p, m->pkt_len);
        p = nic;
        struct rte_ipv4_hdr *nip = (struct rte_ipv4_hdr *)nic;
        assert_int_equal(nip->hdr_checksum, 0);
        nip->hdr_checksum = rte_ipv4_cksum(nip);
    }
    if (m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM) {
        /* Left to the port (tx_cksum_offload): the field holds the pseudo-header's sum, as
         * DPDK asks, and the NIC sums the rest; done here as the NIC would. */
        if (p != nic)
            memcpy(nic, p, m->pkt_len);
        p = nic;
        struct rte_tcp_hdr *nt = (struct rte_tcp_hdr *)(nic + ip_len);
        assert_int_equal(m->l3_len, ip_len);
        assert_int_equal(m->l4_len, (nt->data_off >> 4) * 4);
        assert_true(m->ol_flags & (v4 ? RTE_MBUF_F_TX_IPV4 : RTE_MBUF_F_TX_IPV6));
        uint16_t phdr = v4 ? rte_ipv4_phdr_cksum((const struct rte_ipv4_hdr *)nic, 0)
                           : rte_ipv6_phdr_cksum((const struct rte_ipv6_hdr *)nic, 0);
        assert_int_equal(nt->cksum, phdr);
        nt->cksum = 0;
        nt->cksum = v4 ? rte_ipv4_udptcp_cksum((const struct rte_ipv4_hdr *)nic, nt)
                       : rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)nic, nt);
    }
    /* The checksums the endpoint wrote must hold. */
    if (v4) {
        const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)p;
        assert_int_equal(rte_ipv4_cksum(ip), 0); /* a valid header sums to zero */
        assert_int_equal(rte_be_to_cpu_16(ip->total_length), m->pkt_len);
        assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, p + ip_len), 0);
        assert_memory_equal(&ip->src_addr, f->peer.remote, 4);
        assert_memory_equal(&ip->dst_addr, f->peer.local, 4);
    } else {
        const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)p;
        assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, p + ip_len), 0);
        assert_memory_equal(ip->src_addr, f->peer.remote, 16);
    }
    const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(p + ip_len);
    assert_int_equal(th->src_port, f->peer.remote_port);
    assert_int_equal(th->dst_port, f->peer.local_port);
    uint32_t tcp_len = (uint32_t)(th->data_off >> 4) * 4;
    memset(out, 0, offsetof(struct tf_seg, data));
    out->seq = rte_be_to_cpu_32(th->sent_seq);
    out->ack = rte_be_to_cpu_32(th->recv_ack);
    out->flags = th->tcp_flags;
    out->win = rte_be_to_cpu_16(th->rx_win);
    assert_int_equal(xlb_tcp_options_parse((const uint8_t *)(th + 1), tcp_len - 20, &out->opts), 0);
    out->len = m->pkt_len - ip_len - tcp_len;
    assert_true(out->len <= sizeof(out->data));
    memcpy(out->data, p + ip_len + tcp_len, out->len);
}

void tf_advance(struct tf *f, uint64_t ms)
{
    /* One poll per millisecond, as a worker polls: bounded by ms. */
    for (uint64_t i = 0; i < ms; i++) {
        f->now++;
        xlb_tcp_poll(f->ep, f->now, 64);
    }
}

struct xlb_tcp_conn *tf_passive(struct tf *f, uint32_t irs, bool ts, uint32_t *iss)
{
    size_t before = f->n_tx;
    struct rte_mbuf *syn = tf_build(f, &(struct tf_out){.seq = irs,
                                                        .flags = RTE_TCP_SYN_FLAG,
                                                        .win = 65535,
                                                        .syn_opts = true,
                                                        .ts = ts,
                                                        .tsval = 1000});
    assert_int_equal(xlb_tcp_answer_syn(f->ep, syn, &f->keys, f->now), 0);
    assert_int_equal(f->n_tx, before + 1);
    struct tf_seg sa;
    tf_tx(f, (unsigned)before, &sa);
    assert_int_equal(sa.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
    assert_int_equal(sa.ack, irs + 1);
    tf_clear_tx(f);
    *iss = sa.seq;
    struct rte_mbuf *final_ack = tf_build(f, &(struct tf_out){.seq = irs + 1,
                                                              .ack = sa.seq + 1,
                                                              .flags = RTE_TCP_ACK_FLAG,
                                                              .win = 1024, /* << 7: 128 KiB */
                                                              .ts = ts,
                                                              .tsval = 1001,
                                                              .tsecr = sa.opts.tsval});
    struct xlb_tcp_conn *c = xlb_tcp_accept(f->ep, final_ack, &f->keys, f->now, &tf_callbacks, f);
    assert_non_null(c);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    return c;
}

bool tf_read_pattern(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t *received,
                     uint32_t *mismatches)
{
    const uint8_t *d;
    uint32_t len;
    bool eof = false;
    /* Each turn consumes one piece of the receive queue. */
    while (xlb_tcp_peek(c, &d, &len, &eof) && len) {
        for (uint32_t i = 0; i < len; i++)
            *mismatches += d[i] != tf_pattern(*received + i);
        *received += len;
        xlb_tcp_consume(ep, c, len);
    }
    return eof;
}

uint32_t tf_read_all(struct tf *f, struct xlb_tcp_conn *c, uint8_t *buf, uint32_t cap)
{
    uint32_t got = 0;
    const uint8_t *d;
    uint32_t len;
    bool eof;
    /* Bounded: each turn consumes at least one byte, or stops. */
    while (xlb_tcp_peek(c, &d, &len, &eof) && len && got + len <= cap) {
        memcpy(buf + got, d, len);
        got += len;
        xlb_tcp_consume(f->ep, c, len);
    }
    return got;
}

/* tf_pattern_bytes' buffer: one pattern at a time. */
static uint8_t pattern_buf[65536];

const uint8_t *tf_pattern_bytes(uint32_t start, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        pattern_buf[i] = tf_pattern(start + i);
    return pattern_buf;
}

/* A peer data segment with timestamps: bytes [off, off+len) of the pattern at irs + 1 + off. */
int tf_peer_data(struct tf *f, struct xlb_tcp_conn *c, uint32_t irs, uint32_t iss, uint32_t off,
                 uint32_t len, uint8_t extra, uint32_t tsval)
{
    return tf_send(f, c,
                   &(struct tf_out){.seq = irs + 1 + off,
                                    .ack = iss + 1,
                                    .flags = (uint8_t)(ACK | extra),
                                    .win = 1024,
                                    .ts = true,
                                    .tsval = tsval,
                                    .data = tf_pattern_bytes(off, len),
                                    .len = len});
}

void tf_check_read(struct tf *f, struct xlb_tcp_conn *c, uint32_t off, uint32_t len)
{
    static uint8_t got[1 << 20];
    assert_int_equal(tf_read_all(f, c, got, sizeof(got)), len);
    for (uint32_t i = 0; i < len; i++)
        if (got[i] != tf_pattern(off + i))
            fail_msg("byte %u differs", off + i);
}

/* Active open: the SYN and its options, the SYN-ACK, our ACK (tcp_fixture.h). */
struct xlb_tcp_conn *tf_active(struct tf *f, uint32_t iss, uint32_t peer_isn)
{
    struct xlb_tcp_tuple t = {.family = f->peer.family,
                              .local_port = f->peer.remote_port,
                              .remote_port = f->peer.local_port};
    memcpy(t.local, f->peer.remote, 16);
    memcpy(t.remote, f->peer.local, 16);
    struct xlb_tcp_conn *c = xlb_tcp_connect(f->ep, &t, iss, f->now, &tf_callbacks, f);
    assert_non_null(c);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.flags, SYN);
    assert_int_equal(s.seq, iss);
    assert_int_equal(s.opts.mss, f->peer.family == AF_INET ? f->cfg.mss_limit4 : f->cfg.mss_limit6);
    assert_true(s.opts.has_wscale && s.opts.sack_ok && s.opts.has_ts);
    tf_clear_tx(f);
    assert_int_equal(tf_send(f, c,
                             &(struct tf_out){.seq = peer_isn,
                                              .ack = iss + 1,
                                              .flags = SYN | ACK,
                                              .win = 65535,
                                              .syn_opts = true,
                                              .ts = true,
                                              .tsval = 500,
                                              .tsecr = s.opts.tsval}),
                     0);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    assert_int_equal(f->connected, 1);
    assert_int_equal(f->n_tx, 1);
    tf_tx(f, 0, &s);
    assert_int_equal(s.flags, ACK);
    assert_int_equal(s.seq, iss + 1);
    assert_int_equal(s.ack, peer_isn + 1);
    tf_clear_tx(f);
    return c;
}
