/*
 * Fuzz target for the TCP endpoint: the input is a program of operations on one actively
 * opened connection -- peer segments whose sequence and acknowledgment numbers are offsets from
 * what the endpoint expects (so that most land near the windows, in and out), with any flags,
 * window, timestamps, SACK blocks and payload; clock steps that fire timers; application
 * writes, reads, shutdowns and aborts. After each operation the sequence-space and budget
 * invariants must hold; after the input every control block and mbuf must be back.
 *
 * Operation byte (low 3 bits): 0-3 a segment (10 more bytes: seq offset, ack offset, flags,
 * window, payload length, options selector), 4 clock step (1 byte: ms * 16), 5 write (1 byte:
 * length * 64; with bit 3, bytes by xlb_tcp_write_copy instead of an mbuf), 6 read (consume
 * half), 7 shutdown or, with bit 3, abort and reconnect. With bit 5 the wire keeps what was
 * sent (as a NIC's ring slow to give it back) until an operation without it or half of the tx
 * array, so that segments sent in place are still held when retransmissions and ACKs come.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "fuzz_eal.h"
#include "xlb_tcp.h"
#include "xlb_tcp_conn.h"
#include "xlb_tcp_options.h"
#include "xlb_tcp_seq.h"

#define POOL_SIZE 1023
#define TX_MAX    256

static struct rte_mempool *pool;
static struct rte_mbuf *tx[TX_MAX];
static uint16_t n_tx;
static struct xlb_tcp_conn *conn;

static void on_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    (void)user;
    (void)why;
    if (c == conn)
        conn = NULL;
}
static const struct xlb_tcp_callbacks cbs = {.on_closed = on_closed};

static void drain_tx(void)
{
    for (uint16_t i = 0; i < n_tx; i++)
        rte_pktmbuf_free(tx[i]);
    n_tx = 0;
}

static const struct xlb_tcp_tuple tuple = {
    .family = AF_INET,
    .local = {198, 18, 0, 10},
    .remote = {198, 18, 0, 2},
    .local_port = 0x5000,
    .remote_port = 0x6000,
};

static struct rte_mbuf *segment(uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win,
                                const uint8_t *opts, uint32_t opt_len, uint32_t len)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
    if (!m)
        return NULL;
    uint32_t tcp_len = 20 + opt_len;
    uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(20 + tcp_len + len));
    if (!p) {
        rte_pktmbuf_free(m);
        return NULL;
    }
    memset(p, 0, 20 + tcp_len + len);
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;
    struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(p + 20);
    ip->version_ihl = 0x45;
    ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + tcp_len + len));
    ip->next_proto_id = IPPROTO_TCP;
    memcpy(&ip->src_addr, tuple.remote, 4);
    memcpy(&ip->dst_addr, tuple.local, 4);
    th->src_port = tuple.remote_port;
    th->dst_port = tuple.local_port;
    th->sent_seq = rte_cpu_to_be_32(seq);
    th->recv_ack = rte_cpu_to_be_32(ack);
    th->data_off = (uint8_t)((tcp_len / 4) << 4);
    th->tcp_flags = flags;
    th->rx_win = rte_cpu_to_be_16(win);
    memcpy(th + 1, opts, opt_len);
    th->cksum = rte_ipv4_udptcp_cksum(ip, th);
    return m;
}

static void check(const struct xlb_tcp_endpoint *ep)
{
    if (ep->in_use > ep->cfg.max_connections || ep->ooo_bytes > ep->cfg.ooo_max_bytes_worker)
        abort();
    uint32_t ooo = 0;
    for (uint32_t i = 0; i < ep->cfg.max_connections; i++) {
        const struct xlb_tcp_conn *c = &ep->conns[i];
        if (c->state == XLB_TCP_CLOSED)
            continue;
        if (xlb_seq_gt(c->snd_una, c->snd_nxt) || xlb_seq_gt(c->snd_nxt, c->snd_max))
            abort();
        if (c->n_ooo > XLB_TCP_OOO_SLOTS || c->ooo_bytes > ep->cfg.ooo_max_bytes)
            abort();
        if (c->rcvq.segs > ep->cfg.rcv_max_segs)
            abort();
        uint32_t held = 0;
        for (unsigned k = 0; k < c->n_ooo; k++) {
            held += c->ooo[k].len;
            /* Sorted, apart and beyond what was delivered. */
            if (k && xlb_seq_lt(c->ooo[k].seq, c->ooo[k - 1].seq + c->ooo[k - 1].len))
                abort();
            if (c->ooo[k].m->data_len != c->ooo[k].len)
                abort();
        }
        if (held != c->ooo_bytes)
            abort();
        ooo += held;
    }
    if (ooo != ep->ooo_bytes)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        fuzz_eal_init("fuzz_tcp");
        pool = rte_pktmbuf_pool_create("fuzz_tcp", POOL_SIZE, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                       SOCKET_ID_ANY);
        if (!pool)
            abort();
        ready = true;
    }
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = 2;
    cfg.rcv_buf = 16384;
    cfg.snd_buf = 16384;
    cfg.ooo_max_bytes = 8192;
    cfg.rcv_max_segs = 64;
    cfg.keepalive_idle_ms = 2000;
    cfg.keepalive_intvl_ms = 500;
    uint64_t now = 100000;
    struct xlb_tcp_endpoint *ep = xlb_tcp_endpoint_create(&cfg, pool, now);
    if (!ep)
        abort();
    xlb_tcp_tx_set(ep, tx, TX_MAX, &n_tx);
    uint32_t peer_isn = 0xfffffff0u, tsval = 1;
    conn = xlb_tcp_connect(ep, &tuple, 0xffffff00u, now, &cbs, NULL);
    size_t at = 0;
    /* Bounded by the input: every operation consumes at least one byte. */
    while (at < size) {
        uint8_t op = data[at++];
        if (!conn) {
            conn = xlb_tcp_connect(ep, &tuple, (uint32_t)op << 24, now, &cbs, NULL);
            drain_tx();
            continue;
        }
        switch (op & 7) {
        case 0:
        case 1:
        case 2:
        case 3: {
            uint8_t b[10] = {0};
            size_t n = size - at < sizeof(b) ? size - at : sizeof(b);
            memcpy(b, data + at, n);
            at += n;
            uint32_t base_seq = conn->state == XLB_TCP_SYN_SENT ? peer_isn : conn->rcv_nxt;
            uint32_t seq = base_seq + (uint32_t)(int16_t)(b[0] << 8 | b[1]);
            uint32_t ack = conn->snd_una + (uint32_t)(int16_t)(b[2] << 8 | b[3]);
            uint8_t flags = b[4] & 0x3f;
            uint16_t win = (uint16_t)(b[5] << 8 | b[6]);
            uint32_t len = (uint32_t)b[7] * 8;
            uint8_t opts[40];
            uint32_t ol = 0;
            if (flags & RTE_TCP_SYN_FLAG) {
                struct xlb_tcp_opts so = {.mss = (uint16_t)(b[8] * 8),
                                          .has_wscale = b[9] & 1,
                                          .wscale = b[9] >> 4,
                                          .sack_ok = b[9] & 2,
                                          .has_ts = b[9] & 4,
                                          .tsval = tsval};
                ol = xlb_tcp_options_write_syn(opts, &so);
            } else if (b[9] & 4) {
                /* Timestamps mostly going forward, sometimes back (PAWS). */
                tsval += (b[9] & 8) ? (uint32_t)-100 : b[8];
                ol = xlb_tcp_options_write_ts(opts, tsval, 0);
            }
            if (b[9] & 0x80) {
                opts[ol++] = 1;
                opts[ol++] = 1;
                opts[ol++] = 5;
                opts[ol++] = 10;
                uint32_t l = rte_cpu_to_be_32(ack + b[8]), r = rte_cpu_to_be_32(ack + b[8] * 9u);
                memcpy(opts + ol, &l, 4);
                memcpy(opts + ol + 4, &r, 4);
                ol += 8;
            }
            struct rte_mbuf *m = segment(seq, ack, flags, win, opts, ol, len);
            if (m)
                xlb_tcp_receive(ep, conn, m, now);
            break;
        }
        case 4:
            now += (uint64_t)(at < size ? data[at++] : 1) * 16;
            xlb_tcp_poll(ep, now, 64);
            break;
        case 5: {
            uint32_t len = (uint32_t)(at < size ? data[at++] : 1) * 64 % 2000 + 1;
            if (op & 8) {
                static const uint8_t bytes[2000];
                if (xlb_tcp_write_copy(ep, conn, bytes, len) == 0)
                    xlb_tcp_flush(ep, conn);
                break;
            }
            struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
            if (m && rte_pktmbuf_append(m, (uint16_t)len)) {
                if (xlb_tcp_write(ep, conn, m) != 0)
                    rte_pktmbuf_free(m);
                else
                    xlb_tcp_flush(ep, conn);
            } else if (m) {
                rte_pktmbuf_free(m);
            }
            break;
        }
        case 6: {
            const uint8_t *d;
            uint32_t len;
            bool eof;
            uint32_t total = xlb_tcp_peek(conn, &d, &len, &eof);
            xlb_tcp_consume(ep, conn, total / 2 + (total & 1));
            break;
        }
        case 7:
            if (op & 8)
                xlb_tcp_abort(ep, conn);
            else
                xlb_tcp_shutdown(ep, conn);
            break;
        }
        check(ep);
        if (!(op & 0x20) || n_tx > TX_MAX / 2)
            drain_tx();
    }
    if (conn)
        xlb_tcp_abort(ep, conn);
    drain_tx();
    xlb_tcp_endpoint_free(ep);
    if (rte_mempool_in_use_count(pool) != 0)
        abort();
    return 0;
}
