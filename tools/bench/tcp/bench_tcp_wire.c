#include "bench_tcp_wire.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_tcp.h>

#include "bench_clock.h"

#define POOL_SIZE  65535u
#define POOL_CACHE 256u /* the lcore cache a worker's pool has */
#define PORT_BASE  10000u

struct wire W;

void die(const char *what)
{
    fprintf(stderr, "bench_tcp: %s\n", what);
    exit(1);
}

void eal_init(uint32_t memory_mib)
{
    static char arg0[] = "bench_tcp", shconf[] = "--no-shconf", huge[] = "--no-huge",
                pci[] = "--no-pci", lcores[] = "-l", lcore[] = "0", log[] = "--log-level=warning",
                telemetry[] = "--no-telemetry", mem[] = "-m";
    char mib[16], prefix[64];
    snprintf(mib, sizeof(mib), "%u", memory_mib);
    /* A prefix of its own: the runtime directory removed below is then this run's alone. */
    snprintf(prefix, sizeof(prefix), "--file-prefix=xlb-bench-tcp-%d", (int)getpid());
    char *args[] = {arg0, shconf, huge, pci, lcores, lcore, log, telemetry, mem, mib, prefix, NULL};
    if (rte_eal_init((int)(sizeof(args) / sizeof(args[0])) - 1, args) < 0)
        die("rte_eal_init failed");
    /* With --no-shconf and --no-telemetry DPDK writes nothing there, but still makes it. */
    rmdir(rte_eal_get_runtime_dir());
}

uint64_t heap_bytes(void)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < rte_socket_count(); i++) {
        struct rte_malloc_socket_stats st;
        if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
            total += st.heap_allocsz_bytes;
    }
    return total;
}

/* ---- the two applications' events ---- */

static void active_connected(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    (void)user;
}

static void passive_connected(struct xlb_tcp_conn *c, void *user)
{
    ((struct bconn *)user)->passive = c;
}

/* Reading happens after each burst (wire_deliver), as a worker's application reads. */
static void readable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    (void)user;
}

static void writable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    (void)user;
}

static void active_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    (void)c;
    if (why != XLB_TCP_CLOSE_NORMAL && why != XLB_TCP_CLOSE_ABORTED)
        die("an active connection closed abnormally");
    /* On entering TIME-WAIT the block stays the endpoint's: a late segment still reaches it
     * until wire_drain. */
    ((struct bconn *)user)->active_closed = true;
}

static void passive_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    (void)c;
    if (why != XLB_TCP_CLOSE_NORMAL && why != XLB_TCP_CLOSE_ABORTED)
        die("a passive connection closed abnormally");
    struct bconn *b = user;
    b->passive = NULL;
    b->passive_closed = true;
}

static const struct xlb_tcp_callbacks active_cb = {active_connected, readable, writable,
                                                   active_closed};
static const struct xlb_tcp_callbacks passive_cb = {passive_connected, readable, writable,
                                                    passive_closed};

/* ---- set-up ---- */

void wire_create(const struct xlb_tcp_config *cfg)
{
    if (cfg->max_connections > WIRE_MAX_CONN)
        die("more connections than the bench drives");
    W.pool = rte_pktmbuf_pool_create("bench_tcp_pool", POOL_SIZE, POOL_CACHE, 0,
                                     RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
    if (W.pool == NULL)
        die("cannot create the mbuf pool");
    W.now_ms = 1000000;
    W.active.ep = xlb_tcp_endpoint_create(cfg, W.pool, W.now_ms);
    W.passive.ep = xlb_tcp_endpoint_create(cfg, W.pool, W.now_ms);
    if (W.active.ep == NULL || W.passive.ep == NULL)
        die("cannot create the endpoints");
    W.passive.passive = true;
    xlb_tcp_tx_set(W.active.ep, W.active.tx, WIRE_TX_MAX, &W.active.n_tx);
    xlb_tcp_tx_set(W.passive.ep, W.passive.tx, WIRE_TX_MAX, &W.passive.n_tx);
    uint8_t seed[16] = {0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    xlb_syn_cookie_keys_init(&W.keys, seed);
    W.n_conns = cfg->max_connections;
    for (uint32_t i = 0; i < W.n_conns; i++)
        W.conns[i] = (struct bconn){.active_port = (uint16_t)(PORT_BASE + i)};
}

void wire_free(void)
{
    wire_drop(&W.active);
    wire_drop(&W.passive);
    xlb_tcp_endpoint_free(W.active.ep);
    xlb_tcp_endpoint_free(W.passive.ep);
    rte_mempool_free(W.pool);
}

void wire_tuple(uint32_t i, struct xlb_tcp_tuple *t)
{
    memset(t, 0, sizeof(*t));
    t->family = AF_INET;
    inet_pton(AF_INET, "198.18.0.2", t->local);
    inet_pton(AF_INET, "198.18.0.100", t->remote);
    t->local_port = htons(W.conns[i].active_port);
    t->remote_port = htons(443);
}

void wire_connect(uint32_t i, uint32_t iss)
{
    struct xlb_tcp_tuple t;
    wire_tuple(i, &t);
    struct bconn *b = &W.conns[i];
    b->active_closed = b->passive_closed = false;
    uint64_t t0 = ticks();
    b->active = xlb_tcp_connect(W.active.ep, &t, iss, W.now_ms, &active_cb, b);
    W.active.cycles += ticks() - t0;
    if (b->active == NULL)
        die("connect refused: the active pool is full");
}

/* ---- carrying segments ---- */

struct landing {
    struct rte_mbuf *m;
    struct bconn *conn;
    uint8_t flags;
};

/* The NIC's part: the frame copied into one mbuf of the pool, the sent packet freed. With
 * nic_offload the TCP checksum is left as sent (the pseudo-header's sum), and the IPv4
 * header's (0): a NIC would fill them in and the peer's NIC check them, neither of which costs
 * the worker. */
static struct rte_mbuf *rx_copy(struct rte_mbuf *sent)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(W.pool);
    if (m == NULL)
        die("mbuf pool empty");
    uint32_t len = sent->pkt_len;
    char *dst = rte_pktmbuf_append(m, (uint16_t)len);
    if (dst == NULL)
        die("a segment larger than an mbuf");
    const void *src = rte_pktmbuf_read(sent, 0, len, dst);
    if (src != dst)
        memcpy(dst, src, len);
    m->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD |
                  (W.nic_offload ? RTE_MBUF_F_RX_L4_CKSUM_GOOD : RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN);
    rte_pktmbuf_free(sent);
    return m;
}

/* Which connection a segment belongs to, by the active side's port (the flow table's job in a
 * worker). */
static void classify(struct landing *l, bool to_passive, struct wire_counts *wc)
{
    const uint8_t *p = rte_pktmbuf_mtod(l->m, const uint8_t *);
    uint32_t ip_len = (p[0] >> 4) == 4 ? (uint32_t)(p[0] & 0xf) * 4 : 40;
    const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(p + ip_len);
    uint16_t port = ntohs(to_passive ? th->src_port : th->dst_port);
    if (port < PORT_BASE || port - PORT_BASE >= W.n_conns)
        die("a segment for no connection of the bench");
    l->conn = &W.conns[port - PORT_BASE];
    l->flags = th->tcp_flags;
    uint32_t payload = l->m->pkt_len - ip_len - (uint32_t)(th->data_off >> 4) * 4;
    if (payload) {
        wc->data_segs++;
        wc->data_bytes += payload;
    } else if (l->flags == RTE_TCP_ACK_FLAG) {
        wc->pure_acks++;
    } else {
        wc->other++;
    }
}

/* The receiving side's endpoint takes one segment. */
static void land(struct side *to, const struct landing *l)
{
    struct bconn *b = l->conn;
    if (to->passive && b->passive == NULL && !b->passive_closed) {
        if (l->flags & RTE_TCP_SYN_FLAG)
            xlb_tcp_answer_syn(to->ep, l->m, &W.keys, W.now_ms);
        else if (xlb_tcp_accept(to->ep, l->m, &W.keys, W.now_ms, &passive_cb, b) == NULL)
            die("the cookie ACK was refused");
        return;
    }
    struct xlb_tcp_conn *c = to->passive ? b->passive : b->active;
    if (c == NULL) {
        rte_pktmbuf_free(l->m);
        W.lost++;
        return;
    }
    xlb_tcp_receive(to->ep, c, l->m, W.now_ms);
}

uint64_t wire_read(struct bconn *b)
{
    uint64_t got = 0;
    const uint8_t *d;
    uint32_t len;
    bool eof;
    /* Bounded by the receive queue's mbufs: each turn consumes one piece. */
    while (b->passive && xlb_tcp_peek(b->passive, &d, &len, &eof) && len) {
        got += len;
        xlb_tcp_consume(W.passive.ep, b->passive, len);
    }
    return got;
}

uint32_t wire_deliver(struct side *from, bool read)
{
    static struct rte_mbuf *sent[WIRE_TX_MAX];
    struct side *to = from == &W.active ? &W.passive : &W.active;
    struct wire_counts *wc = to->passive ? &W.to_passive : &W.to_active;
    uint16_t n = from->n_tx;
    memcpy(sent, from->tx, n * sizeof(sent[0]));
    from->n_tx = 0;
    for (uint16_t first = 0; first < n; first += WIRE_BURST) {
        struct landing burst[WIRE_BURST];
        uint16_t k = (uint16_t)RTE_MIN((uint32_t)(n - first), WIRE_BURST);
        for (uint16_t i = 0; i < k; i++) {
            burst[i].m = rx_copy(sent[first + i]);
            classify(&burst[i], to->passive, wc);
        }
        uint64_t t0 = ticks();
        for (uint16_t i = 0; i < k; i++)
            land(to, &burst[i]);
        /* The application reads each connection of the burst once (the same connection's
         * later landings find nothing left). */
        for (uint16_t i = 0; read && to->passive && i < k; i++)
            if (i == 0 || burst[i].conn != burst[i - 1].conn)
                wire_read(burst[i].conn);
        to->cycles += ticks() - t0;
    }
    return n;
}

void wire_drop(struct side *from)
{
    for (uint16_t i = 0; i < from->n_tx; i++)
        rte_pktmbuf_free(from->tx[i]);
    from->n_tx = 0;
}

void wire_tick(uint64_t ms)
{
    W.now_ms += ms;
    struct side *sides[] = {&W.active, &W.passive};
    for (int s = 0; s < 2; s++) {
        uint64_t t0 = ticks();
        xlb_tcp_poll(sides[s]->ep, W.now_ms, 64);
        sides[s]->cycles += ticks() - t0;
    }
}

void wire_drain(void)
{
    W.now_ms += 60000; /* past TIME-WAIT and the delayed-ACK timer */
    /* Bounded: each poll fires up to a pool's worth of timers. */
    for (int i = 0; i < 64; i++) {
        if (xlb_tcp_conns_in_use(W.active.ep) == 0 && xlb_tcp_conns_in_use(W.passive.ep) == 0)
            break;
        xlb_tcp_poll(W.active.ep, W.now_ms, WIRE_MAX_CONN);
        xlb_tcp_poll(W.passive.ep, W.now_ms, WIRE_MAX_CONN);
        W.now_ms++;
    }
    wire_drop(&W.active);
    wire_drop(&W.passive);
    if (xlb_tcp_conns_in_use(W.active.ep) != 0 || xlb_tcp_conns_in_use(W.passive.ep) != 0)
        die("connections left after TIME-WAIT");
    for (uint32_t i = 0; i < W.n_conns; i++)
        W.conns[i].active = W.conns[i].passive = NULL;
}
