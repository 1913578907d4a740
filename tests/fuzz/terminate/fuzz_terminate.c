/*
 * Fuzz target for VIPs that terminate the client's TCP in xlb: arbitrary bytes from a client
 * and from a backend, both real TCP endpoints (dataplane/tcp/) on the packet tests' NAT fixture,
 * through the worker's burst function. The VIPs are either `terminate` VIPs (the TCP relay,
 * dataplane/relay/), which carry the bytes opaquely, or L7 stream-mode VIPs (issue 19,
 * dataplane/stream/), whose engine parses the client's bytes with its HTTP/2 server session
 * and, once a request is forwarded over a backend subchannel, the backend's with its client
 * session (the backend peer answers the subchannel's SYN as it answers the relay's).
 *
 * Unlike fuzz_l7, no segment is crafted: the peers' own TCP makes the handshakes (the client
 * connects to FIX_VIP4:VIP_PORT, the backend answers xlb's SYN from the SNAT address), so the
 * input spends itself on payload, half-closes, resets, read stalls and time.
 *
 * Input: one setup byte, then up to MAX_RECORDS records of 1 byte kind, 2 bytes big-endian
 * length and that many bytes.
 *   setup: bits 0-2 the percentage of frames the wire loses both ways (0..7, seeded by the
 *          input: an input replays exactly); bit 3 the input's end aborts the peers (RST)
 *          instead of closing them (FIN); bit 4 the VIPs are stream-mode VIPs, else terminate.
 *   kind % 7:
 *   0 the client writes the bytes       1 the backend writes the bytes
 *   2 the clock: d[0] milliseconds (kind 0x10: seconds), the wires and timers running
 *   3 the client half-closes            4 the backend half-closes
 *   5 the client stops reading / reads again (toggle): a slow reader, its window closing
 *   6 the backend stops reading / reads again
 * After each record the wires run until quiet (bounded). After the input both peers read
 * again and close (or reset), and the clock runs past every timeout: then no flow, no relay
 * connection and no connection of the relay's endpoint may be left; then the peers' own
 * connections are reset (one left half-open by a lost RST would end by its keepalive) and no
 * mbuf of either pool may be left.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define FUZZ_LSAN 1
#endif
#endif

#include "flow/flow.h"
#include "nat_segments.h"
#include "relay/relay.h"
#include "stream/stream.h"
#include "xlb_tcp.h"

#define MAX_RECORDS 32
#define PEER_TX     1024
#define MS          (TSC_HZ / 1000)
#define QUIET_STEPS 400u  /* simulated ms of wire after each record, at most */
#define END_SECONDS 1000u /* past every timeout: idle 300 s, TIME-WAIT, linger */

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "fuzz_terminate: " __VA_ARGS__);                                           \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

static const struct rte_ether_addr port_mac = FIX_PORT_MAC, peer_mac = FIX_PEER_MAC,
                                   backend_mac = NAT_BACKEND_MAC;

/* A peer: one endpoint, its one connection. */
struct peer {
    struct xlb_tcp_endpoint *ep;
    struct xlb_tcp_conn *c;
    struct rte_mbuf *tx[PEER_TX];
    uint16_t n_tx;
    bool stalled, closed;
    uint64_t received; /* bytes read, for the trace */
};

static struct {
    struct nat_fixture *n;
    struct rte_mbuf *sent[8192];
    uint32_t n_sent;
    struct rte_mempool *peer_pool;
    struct xlb_syn_cookie_keys backend_keys;
    struct peer client, backend;
    unsigned loss_pct;
    uint64_t rng;
    unsigned pool_baseline; /* the worker pool's mbufs in use with nothing open */
    bool trace;             /* FUZZ_TERMINATE_TRACE=1: what each input moved, on stderr */
} t;

static uint32_t next_random(void)
{
    t.rng = t.rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(t.rng >> 33);
}

static uint64_t now_ms(void)
{
    return t.n->f->ctx.now_tsc / MS;
}

/* ---- the peers' application: read everything unless stalled ---- */

static void read_all(struct peer *p)
{
    const uint8_t *d;
    uint32_t len;
    bool eof;
    /* Bounded by the receive queue's mbufs: each turn consumes one piece. */
    while (!p->stalled && p->c != NULL && xlb_tcp_peek(p->c, &d, &len, &eof) && len) {
        p->received += len;
        xlb_tcp_consume(p->ep, p->c, len);
    }
}

static void on_connected(struct xlb_tcp_conn *c, void *user)
{
    ((struct peer *)user)->c = c;
}
static void on_readable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    read_all(user);
}
static void on_writable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    (void)user;
}
static void on_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    (void)c;
    (void)why;
    struct peer *p = user;
    p->closed = true;
    p->c = NULL;
}
static const struct xlb_tcp_callbacks cbs = {on_connected, on_readable, on_writable, on_closed};

static bool writable(const struct peer *p)
{
    return p->c != NULL && (xlb_tcp_conn_state(p->c) == XLB_TCP_ESTABLISHED ||
                            xlb_tcp_conn_state(p->c) == XLB_TCP_CLOSE_WAIT);
}

/* The bytes as the peer's writes, as far as its send buffer takes them. */
static void peer_write(struct peer *p, const uint8_t *d, uint32_t len)
{
    if (!writable(p))
        return;
    for (uint32_t off = 0; off < len;) {
        uint32_t n = RTE_MIN(1000u, len - off);
        struct rte_mbuf *m = rte_pktmbuf_alloc(t.peer_pool);
        if (m == NULL)
            FAIL("the peers' pool is empty");
        memcpy(rte_pktmbuf_append(m, (uint16_t)n), d + off, n);
        if (xlb_tcp_write(p->ep, p->c, m) != 0) {
            rte_pktmbuf_free(m);
            break;
        }
        off += n;
    }
    xlb_tcp_flush(p->ep, p->c);
}

/* ---- the wires ---- */

static void relay_to_peers(void);

static void peer_to_relay(struct peer *p, const struct rte_ether_addr *src)
{
    uint8_t frame[2048];
    for (uint16_t i = 0; i < p->n_tx; i++) {
        struct rte_mbuf *m = p->tx[i];
        uint32_t len = rte_pktmbuf_pkt_len(m);
        if (len + sizeof(struct rte_ether_hdr) > sizeof(frame))
            FAIL("a peer's packet of %u bytes", len);
        struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
        eth->src_addr = *src;
        eth->dst_addr = port_mac;
        eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
        const void *ip = rte_pktmbuf_read(m, 0, len, frame + sizeof(*eth));
        if (ip != frame + sizeof(*eth))
            memcpy(frame + sizeof(*eth), ip, len);
        rte_pktmbuf_free(m);
        if (next_random() % 100 < t.loss_pct)
            continue;
        fixture_send(t.n->f, frame, sizeof(*eth) + len);
        relay_to_peers();
    }
    p->n_tx = 0;
}

/* The context's tx_flush, as the worker's: a full batch leaves at once (here, to the wire). */
static void take_batch(struct xlb_burst_ctx *ctx, uint16_t port_index)
{
    struct xlb_tx_batch *b = &ctx->tx[port_index];
    for (uint16_t i = 0; i < b->n; i++) {
        if (t.n_sent == RTE_DIM(t.sent))
            FAIL("xlb sent more than %zu frames at once", RTE_DIM(t.sent));
        t.sent[t.n_sent++] = b->pkts[i];
    }
    b->n = 0;
}

static struct rte_mbuf *ip_packet(struct rte_mbuf *frame)
{
    uint32_t len = rte_pktmbuf_pkt_len(frame) - (uint32_t)sizeof(struct rte_ether_hdr);
    struct rte_mbuf *m = rte_pktmbuf_alloc(t.peer_pool);
    if (m == NULL)
        FAIL("the peers' pool is empty");
    uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
    const void *src = rte_pktmbuf_read(frame, sizeof(struct rte_ether_hdr), len, d);
    if (src != d)
        memcpy(d, src, len);
    return m;
}

/* What xlb sent, to the peer it is addressed to; the backend answers a SYN with a cookie and
 * accepts the ACK. */
static void relay_to_peers(void)
{
    take_batch(&t.n->f->ctx, 0);
    uint32_t n = t.n_sent;
    t.n_sent = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct rte_mbuf *frame = t.sent[i];
        const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(frame, const struct rte_ether_hdr *);
        bool to_backend = rte_is_same_ether_addr(&eth->dst_addr, &backend_mac);
        if (!rte_is_same_ether_addr(&eth->src_addr, &port_mac) ||
            (!to_backend && !rte_is_same_ether_addr(&eth->dst_addr, &peer_mac)))
            FAIL("a frame from or to an unknown MAC");
        struct rte_mbuf *m = ip_packet(frame);
        rte_pktmbuf_free(frame);
        if (next_random() % 100 < t.loss_pct) {
            rte_pktmbuf_free(m);
            continue;
        }
        struct peer *p = to_backend ? &t.backend : &t.client;
        if (p->c != NULL) {
            xlb_tcp_receive(p->ep, p->c, m, now_ms());
            continue;
        }
        if (!to_backend || p->closed) {
            rte_pktmbuf_free(m);
            continue;
        }
        const struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, const struct rte_tcp_hdr *, 20);
        if (th->tcp_flags & RTE_TCP_SYN_FLAG)
            xlb_tcp_answer_syn(p->ep, m, &t.backend_keys, now_ms());
        else
            xlb_tcp_accept(p->ep, m, &t.backend_keys, now_ms(), &cbs, p);
    }
}

/* dt_ms of time: the wires both ways, the applications' reads, the timers. */
static void step(uint64_t dt_ms)
{
    struct fixture *f = t.n->f;
    peer_to_relay(&t.client, &peer_mac);
    peer_to_relay(&t.backend, &backend_mac);
    relay_to_peers();
    read_all(&t.client);
    read_all(&t.backend);
    f->ctx.now_tsc += dt_ms * MS;
    xlb_tcp_poll(t.client.ep, now_ms(), 256);
    xlb_tcp_poll(t.backend.ep, now_ms(), 256);
    xlb_relay_poll(&f->ctx, f->snap);
    xlb_stream_poll(&f->ctx, f->snap);
    xlb_flow_expire(&f->ctx, f->snap);
    relay_to_peers();
}

static bool quiet(void)
{
    return t.client.n_tx == 0 && t.backend.n_tx == 0 && t.n->f->ctx.tx[0].n == 0;
}

static void run(uint32_t steps)
{
    for (uint32_t i = 0; i < steps; i++) {
        step(1);
        if (quiet() && i >= 4)
            break;
    }
}

/* ---- set-up and the checks after each input ---- */

int LLVMFuzzerInitialize(int *argc, char ***argv); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("CMOCKA_TEST_ABORT", "1", 1);
    t.trace = getenv("FUZZ_TERMINATE_TRACE") != NULL;
    t.n = nat_fixture_two_clusters("fterm", 64, 0, 0);
    struct fixture *f = t.n->f;
    f->ctx.relay = xlb_relay_worker_create(0, 8, f->pool, f->pool->size / 4, SOCKET_ID_ANY);
    const struct xlb_stream_limits limits = {
        .connections = 8,
        .max_concurrent_streams = XLB_STREAM_DEFAULT_MAX_CONCURRENT_STREAMS,
        .window_bytes = XLB_STREAM_DEFAULT_WINDOW_BYTES,
    };
    /* The engine keeps its nghttp2 callbacks and options from the C heap in its worker state on
     * DPDK's heap, which LeakSanitizer does not scan: they would be reported at the first leak
     * check. They live as long as the process; nothing allocated later is exempted. */
#ifdef FUZZ_LSAN
    __lsan_disable();
#endif
    f->ctx.stream = xlb_stream_worker_create(0, &limits, f->pool, f->pool->size / 4, SOCKET_ID_ANY);
#ifdef FUZZ_LSAN
    __lsan_enable();
#endif
    if (f->ctx.relay == NULL || f->ctx.stream == NULL)
        FAIL("no relay or stream engine");
    f->ctx.tx_flush = take_batch;
    t.peer_pool = rte_pktmbuf_pool_create("fterm_peers", 16383, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                          SOCKET_ID_ANY);
    if (t.peer_pool == NULL)
        FAIL("no peer pool");
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = 4;
    struct peer *peers[] = {&t.client, &t.backend};
    for (int i = 0; i < 2; i++) {
        peers[i]->ep = xlb_tcp_endpoint_create(&cfg, t.peer_pool, now_ms());
        if (peers[i]->ep == NULL)
            FAIL("no peer endpoint");
        xlb_tcp_tx_set(peers[i]->ep, peers[i]->tx, PEER_TX, &peers[i]->n_tx);
    }
    static const uint8_t seed[16] = {'f', 'u', 'z', 'z', '-', 't', 'e', 'r', 'm'};
    xlb_syn_cookie_keys_init(&t.backend_keys, seed);
    t.pool_baseline = rte_mempool_in_use_count(f->pool);
    return 0;
}

static void client_connect(void)
{
    struct xlb_tcp_tuple tuple = {
        .family = AF_INET, .local_port = htons(40000), .remote_port = htons(VIP_PORT)};
    inet_pton(AF_INET, FIX_PEER4, tuple.local);
    inet_pton(AF_INET, FIX_VIP4, tuple.remote);
    t.client.c = xlb_tcp_connect(t.client.ep, &tuple, 0x7ffff000u, now_ms(), &cbs, &t.client);
    if (t.client.c == NULL)
        FAIL("the client could not connect (a connection left from the input before?)");
}

static void record(uint8_t kind, const uint8_t *d, uint32_t len)
{
    switch (kind % 7) {
    case 0:
        peer_write(&t.client, d, len);
        break;
    case 1:
        peer_write(&t.backend, d, len);
        break;
    case 2: {
        uint32_t n = len ? d[0] : 1;
        uint64_t unit = (kind & 0x10) ? 1000 : 1;
        for (uint32_t i = 0; i < n; i++)
            step(unit);
        break;
    }
    case 3:
    case 4: {
        struct peer *p = kind % 7 == 3 ? &t.client : &t.backend;
        if (writable(p))
            xlb_tcp_shutdown(p->ep, p->c);
        break;
    }
    default: {
        struct peer *p = kind % 7 == 5 ? &t.client : &t.backend;
        p->stalled = !p->stalled;
        break;
    }
    }
}

/* The peers' connections ended: closed with a FIN where they can write (unless the input
 * asked for resets), reset where they cannot (a handshake still under way). */
static void end_peers(bool abort_peers)
{
    struct peer *peers[] = {&t.client, &t.backend};
    for (int i = 0; i < 2; i++) {
        peers[i]->stalled = false;
        if (peers[i]->c == NULL)
            continue;
        if (abort_peers || !writable(peers[i]))
            xlb_tcp_abort(peers[i]->ep, peers[i]->c);
        else
            xlb_tcp_shutdown(peers[i]->ep, peers[i]->c);
    }
}

static bool xlb_idle(void)
{
    uint32_t relay_use, stream_use, capacity;
    xlb_relay_use(t.n->f->ctx.relay, &relay_use, &capacity);
    xlb_stream_use(t.n->f->ctx.stream, &stream_use, &capacity);
    return t.n->flows->n_used == 0 && relay_use == 0 && stream_use == 0 &&
           xlb_tcp_conns_in_use(xlb_relay_endpoint(t.n->f->ctx.relay)) == 0 &&
           xlb_tcp_conns_in_use(xlb_stream_endpoint(t.n->f->ctx.stream)) == 0 && quiet();
}

static void check_end(bool abort_peers)
{
    end_peers(abort_peers);
    run(QUIET_STEPS);
    for (uint32_t s = 0; s < END_SECONDS && !xlb_idle(); s++)
        step(1000);
    uint32_t in_use, capacity;
    xlb_relay_use(t.n->f->ctx.relay, &in_use, &capacity);
    if (t.n->flows->n_used != 0)
        FAIL("%u flows outlived every timeout", t.n->flows->n_used);
    if (in_use != 0)
        FAIL("%u relay connections outlived every timeout", in_use);
    if (xlb_tcp_conns_in_use(xlb_relay_endpoint(t.n->f->ctx.relay)) != 0)
        FAIL("the relay's endpoint holds connections past every timeout");
    xlb_stream_use(t.n->f->ctx.stream, &in_use, &capacity);
    if (in_use != 0 || xlb_tcp_conns_in_use(xlb_stream_endpoint(t.n->f->ctx.stream)) != 0)
        FAIL("%u stream client connections outlived every timeout", in_use);
    /* A peer left half-open (xlb's RST to it lost: RSTs are not repeated) would be ended by its
     * keepalive; the peers have none, so they are reset here, and TIME-WAIT runs out. */
    t.client.closed = t.backend.closed = true;
    struct peer *peers[] = {&t.client, &t.backend};
    for (int i = 0; i < 2; i++)
        if (peers[i]->c != NULL)
            xlb_tcp_abort(peers[i]->ep, peers[i]->c);
    for (uint32_t s = 0; s < 10; s++)
        step(1000);
    if (xlb_tcp_conns_in_use(t.client.ep) != 0 || xlb_tcp_conns_in_use(t.backend.ep) != 0)
        FAIL("a peer's connection is left after its reset and TIME-WAIT");
    if (rte_mempool_in_use_count(t.peer_pool) != 0)
        FAIL("the peers' pool: %u mbufs in use", rte_mempool_in_use_count(t.peer_pool));
    unsigned pool_use = rte_mempool_in_use_count(t.n->f->pool);
    if (pool_use != t.pool_baseline)
        FAIL("the worker's pool: %u mbufs in use, %u before", pool_use, t.pool_baseline);
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t setup = data[0];
    data++;
    size--;
    t.loss_pct = setup & 0x07;
    struct xlb_snapshot *snap = t.n->f->snap;
    for (uint32_t v = 0; v < snap->n_vips; v++) {
        bool stream = setup & 0x10;
        snap->vips[v].terminate = !stream;
        snap->vips[v].l7 = snap->vips[v].stream = stream;
    }
    t.rng = 0x9e3779b97f4a7c15ull ^ size;
    t.client.closed = t.backend.closed = false;
    t.client.stalled = t.backend.stalled = false;
    t.client.received = t.backend.received = 0;
    uint64_t start_ms = now_ms();
    client_connect();
    run(QUIET_STEPS);
    for (int r = 0; r < MAX_RECORDS && size >= 3; r++) {
        uint8_t kind = data[0];
        uint32_t len = (uint32_t)data[1] << 8 | data[2];
        data += 3;
        size -= 3;
        if (len > size)
            len = (uint32_t)size;
        record(kind, data, len);
        data += len;
        size -= len;
        run(QUIET_STEPS);
    }
    bool backend_connected = t.backend.c != NULL || t.backend.closed;
    check_end(setup & 0x08);
    if (t.trace)
        fprintf(stderr,
                "fuzz_terminate: backend %s, client read %llu, backend read %llu bytes, %llu "
                "simulated ms\n",
                backend_connected ? "connected" : "never connected",
                (unsigned long long)t.client.received, (unsigned long long)t.backend.received,
                (unsigned long long)(now_ms() - start_ms));
    return 0;
}
