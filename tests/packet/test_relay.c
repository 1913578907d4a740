/*
 * The TCP relay of terminate VIPs (dataplane/relay/), driven through the burst function with
 * two TCP endpoints as its peers: a client that connects to the VIP and a backend that accepts
 * from the SNAT address, each on the other side of a wire that drops frames pseudo-randomly
 * (fixed seed). Bulk data both ways arrives exact through the relay, with and without loss;
 * FINs pass as half-closes; a backend's RST resets the client; an ACK with a bad cookie gets a
 * RST and holds nothing; a full relay refuses at the ACK; in the end every flow, connection
 * and mbuf is back.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "flow/flow.h"
#include "hostile_frames.h"
#include "nat_segments.h"
#include "relay/relay.h"
#include "tcp_fixture.h"
#include "xlb_tcp.h"

#define RELAY_CONNS 8
#define PEER_TX     1024
#define MAX_MS      600000u /* simulated milliseconds: every loop's bound */
#define MS          (TSC_HZ / 1000)

static const struct rte_ether_addr port_mac = FIX_PORT_MAC, peer_mac = FIX_PEER_MAC,
                                   backend_mac = NAT_BACKEND_MAC;

/* A peer: one endpoint, its one connection, what it wrote and read. */
struct peer {
    struct xlb_tcp_endpoint *ep;
    struct xlb_tcp_conn *c;
    struct rte_mbuf *tx[PEER_TX];
    uint16_t n_tx;
    uint32_t to_write, written, received, mismatches;
    bool eof, closed, shut, shut_after_write;
    enum xlb_tcp_close_reason why;
};

struct relay_test {
    struct nat_fixture *n;
    /* What the relay sent, beyond one tx batch (the worker would send a full batch at once). */
    struct rte_mbuf *sent[8192];
    uint32_t n_sent;
    struct rte_mempool *peer_pool;
    struct xlb_syn_cookie_keys backend_keys;
    struct peer client, backend;
    struct peer *second; /* another client, on its own endpoint, from port second_port */
    uint16_t second_port;
    unsigned loss_pct;
    uint64_t rng, dropped;
    /* Hostile mode: the peers' first frames become templates, mutated copies go in too. */
    bool hostile;
    struct hostile_gen gen;
    uint8_t templates[HOSTILE_MAX_TEMPLATES][256];
    uint64_t hostile_sent;
};

static uint32_t next_random(struct relay_test *t)
{
    t->rng = t->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(t->rng >> 33);
}

static uint64_t now_ms(const struct relay_test *t)
{
    return t->n->f->ctx.now_tsc / MS;
}

/* ---- the peers' application ---- */

static void on_connected(struct xlb_tcp_conn *c, void *user)
{
    ((struct peer *)user)->c = c;
}
static void on_readable(struct xlb_tcp_conn *c, void *user)
{
    struct peer *p = user;
    p->eof |= tf_read_pattern(p->ep, c, &p->received, &p->mismatches);
}
static void on_writable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    (void)user;
}
static void on_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    (void)c;
    struct peer *p = user;
    p->closed = true;
    p->why = why;
    p->c = NULL;
}
static const struct xlb_tcp_callbacks cbs = {on_connected, on_readable, on_writable, on_closed};

static void app_write(struct relay_test *t, struct peer *p)
{
    if (p->c == NULL || (xlb_tcp_conn_state(p->c) != XLB_TCP_ESTABLISHED &&
                         xlb_tcp_conn_state(p->c) != XLB_TCP_CLOSE_WAIT))
        return;
    /* Bounded: the send buffer refuses after 256 KiB. */
    while (p->written < p->to_write) {
        uint32_t len = RTE_MIN(1000u, p->to_write - p->written);
        struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
        assert_non_null(m);
        uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
        for (uint32_t i = 0; i < len; i++)
            d[i] = tf_pattern(p->written + i);
        if (xlb_tcp_write(p->ep, p->c, m) != 0) {
            rte_pktmbuf_free(m);
            break;
        }
        p->written += len;
    }
    if (p->shut_after_write && p->written == p->to_write && !p->shut) {
        p->shut = true;
        xlb_tcp_shutdown(p->ep, p->c);
    }
    if (p->c != NULL)
        xlb_tcp_flush(p->ep, p->c);
}

/* ---- the wires ---- */

static void relay_to_peers(struct relay_test *t);

/* A peer's packets (IP first) as frames into the burst function, some lost; what the relay
 * sends for each goes on at once (as a NIC would send it), so the small pool suffices. */
static void peer_to_relay(struct relay_test *t, struct peer *p, const struct rte_ether_addr *src)
{
    uint8_t frame[2048];
    for (uint16_t i = 0; i < p->n_tx; i++) {
        struct rte_mbuf *m = p->tx[i];
        uint32_t len = rte_pktmbuf_pkt_len(m);
        assert_true(len + sizeof(struct rte_ether_hdr) <= sizeof(frame));
        struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
        eth->src_addr = *src;
        eth->dst_addr = port_mac;
        eth->ether_type = rte_cpu_to_be_16((rte_pktmbuf_mtod(m, const uint8_t *)[0] >> 4) == 4
                                               ? RTE_ETHER_TYPE_IPV4
                                               : RTE_ETHER_TYPE_IPV6);
        const void *ip = rte_pktmbuf_read(m, 0, len, frame + sizeof(*eth));
        if (ip != frame + sizeof(*eth))
            memcpy(frame + sizeof(*eth), ip, len);
        rte_pktmbuf_free(m);
        if (t->hostile && t->gen.n_templates < HOSTILE_MAX_TEMPLATES &&
            sizeof(*eth) + len <= sizeof(t->templates[0])) {
            uint8_t *copy = t->templates[t->gen.n_templates];
            memcpy(copy, frame, sizeof(*eth) + len);
            hostile_add_template(&t->gen, copy, sizeof(*eth) + len);
        }
        if (next_random(t) % 100 < t->loss_pct) {
            t->dropped++;
            continue;
        }
        fixture_send(t->n->f, frame, sizeof(*eth) + len);
        relay_to_peers(t);
    }
    p->n_tx = 0;
}

static struct rte_mbuf *ip_packet(struct relay_test *t, struct rte_mbuf *frame)
{
    uint32_t len = rte_pktmbuf_pkt_len(frame) - (uint32_t)sizeof(struct rte_ether_hdr);
    struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
    assert_non_null(m);
    uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
    assert_non_null(d);
    const void *src = rte_pktmbuf_read(frame, sizeof(struct rte_ether_hdr), len, d);
    if (src != d)
        memcpy(d, src, len);
    return m;
}

static struct relay_test *the_test;

/* The context's tx_flush, as the worker's: a full batch leaves at once (here, to the wire). */
static void take_batch(struct xlb_burst_ctx *ctx, uint16_t port_index)
{
    struct xlb_tx_batch *b = &ctx->tx[port_index];
    for (uint16_t i = 0; i < b->n; i++) {
        assert_true(the_test->n_sent < RTE_DIM(the_test->sent));
        the_test->sent[the_test->n_sent++] = b->pkts[i];
    }
    b->n = 0;
}

/* A frame the relay sent, to the peer it is addressed to (by destination MAC, which must be
 * that peer's), some lost. The backend answers a SYN with a cookie and accepts the ACK. */
static void relay_to_peers(struct relay_test *t)
{
    take_batch(&t->n->f->ctx, 0);
    uint32_t n = t->n_sent;
    t->n_sent = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct rte_mbuf *frame = t->sent[i];
        const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(frame, const struct rte_ether_hdr *);
        assert_memory_equal(&eth->src_addr, &port_mac, sizeof(port_mac));
        bool to_backend = rte_is_same_ether_addr(&eth->dst_addr, &backend_mac);
        if (!to_backend && !rte_is_same_ether_addr(&eth->dst_addr, &peer_mac)) {
            assert_true(t->hostile); /* a RST to a mutated frame's source */
            rte_pktmbuf_free(frame);
            continue;
        }
        struct rte_mbuf *m = ip_packet(t, frame);
        rte_pktmbuf_free(frame);
        if (next_random(t) % 100 < t->loss_pct) {
            t->dropped++;
            rte_pktmbuf_free(m);
            continue;
        }
        const struct rte_tcp_hdr *to = rte_pktmbuf_mtod_offset(m, const struct rte_tcp_hdr *, 20);
        struct peer *p = to_backend ? &t->backend : &t->client;
        if (!to_backend && t->second != NULL && to->dst_port == htons(t->second_port))
            p = t->second;
        if (p->c != NULL) {
            xlb_tcp_receive(p->ep, p->c, m, now_ms(t));
            continue;
        }
        if (!to_backend || p->closed) {
            rte_pktmbuf_free(m);
            continue;
        }
        const struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, const struct rte_tcp_hdr *, 20);
        if (th->tcp_flags & RTE_TCP_SYN_FLAG)
            xlb_tcp_answer_syn(p->ep, m, &t->backend_keys, now_ms(t));
        else
            xlb_tcp_accept(p->ep, m, &t->backend_keys, now_ms(t), &cbs, p);
    }
}

/* Mutated copies of the peers' frames, a few per step. */
static void send_hostile(struct relay_test *t)
{
    uint8_t frame[HOSTILE_MAX_FRAME];
    for (int i = 0; i < 4 && t->gen.n_templates > 0; i++) {
        size_t len = hostile_next(&t->gen, frame);
        fixture_send(t->n->f, frame, len);
        t->hostile_sent++;
        relay_to_peers(t);
    }
}

/* One simulated millisecond: the wires both ways, the applications, the timers. */
static void step(struct relay_test *t)
{
    struct fixture *f = t->n->f;
    if (t->hostile)
        send_hostile(t);
    peer_to_relay(t, &t->client, &peer_mac);
    if (t->second != NULL)
        peer_to_relay(t, t->second, &peer_mac);
    peer_to_relay(t, &t->backend, &backend_mac);
    relay_to_peers(t);
    app_write(t, &t->client);
    app_write(t, &t->backend);
    f->ctx.now_tsc += MS;
    xlb_tcp_poll(t->client.ep, now_ms(t), 256);
    xlb_tcp_poll(t->backend.ep, now_ms(t), 256);
    if (t->second != NULL)
        xlb_tcp_poll(t->second->ep, now_ms(t), 256);
    xlb_relay_poll(&f->ctx, f->snap);
    xlb_flow_expire(&f->ctx, f->snap);
}

/* ---- set-up ---- */

static struct relay_test *relay_test_create(unsigned relay_conns)
{
    static struct relay_test t;
    static unsigned serial;
    memset(&t, 0, sizeof(t));
    t.rng = 0x9e3779b97f4a7c15ull;
    char name[32];
    snprintf(name, sizeof(name), "relay%u", serial++);
    t.n = nat_fixture_two_clusters(name, 64, 0, 0);
    struct fixture *f = t.n->f;
    for (uint32_t v = 0; v < f->snap->n_vips; v++)
        f->snap->vips[v].terminate = true;
    f->ctx.relay =
        xlb_relay_worker_create(0, relay_conns, f->pool, f->pool->size / 2, SOCKET_ID_ANY);
    f->ctx.tx_flush = take_batch;
    the_test = &t;
    assert_non_null(f->ctx.relay);
    xlb_tcp_endpoint_set_clock(xlb_relay_endpoint(f->ctx.relay), now_ms(&t));
    snprintf(name, sizeof(name), "relay_peers%u", serial);
    t.peer_pool =
        rte_pktmbuf_pool_create(name, 16383, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    assert_non_null(t.peer_pool);
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = 4;
    struct peer *peers[] = {&t.client, &t.backend};
    for (int i = 0; i < 2; i++) {
        peers[i]->ep = xlb_tcp_endpoint_create(&cfg, t.peer_pool, now_ms(&t));
        assert_non_null(peers[i]->ep);
        xlb_tcp_tx_set(peers[i]->ep, peers[i]->tx, PEER_TX, &peers[i]->n_tx);
    }
    uint8_t seed[16] = {7};
    xlb_syn_cookie_keys_init(&t.backend_keys, seed);
    return &t;
}

/* The client connects to the VIP (FIX_VIP4:VIP_PORT) from FIX_PEER4:port. */
static void client_connect(struct relay_test *t, uint16_t port)
{
    struct xlb_tcp_tuple tuple = {
        .family = AF_INET, .local_port = htons(port), .remote_port = htons(VIP_PORT)};
    inet_pton(AF_INET, FIX_PEER4, tuple.local);
    inet_pton(AF_INET, FIX_VIP4, tuple.remote);
    t->client.c = xlb_tcp_connect(t->client.ep, &tuple, 0x7ffff000u, now_ms(t), &cbs, &t->client);
    assert_non_null(t->client.c);
}

/* Everything over: the flow gone (its linger), the relay's and the peers' connections back,
 * every mbuf back in both pools. A connection a replayed handshake ACK opened (a valid cookie
 * in a mutated copy: as with any SYN cookies) ends by the backend's silence or the idle
 * timeout (300 s), within the bound. */
static void relay_test_destroy(struct relay_test *t)
{
    struct fixture *f = t->n->f;
    t->hostile = false;
    for (uint32_t i = 0; i < 400000 && (t->n->flows->n_used > 0 || t->client.n_tx ||
                                        t->backend.n_tx || f->ctx.tx[0].n);
         i++)
        step(t);
    assert_int_equal(t->n->flows->n_used, 0);
    uint32_t in_use, capacity;
    xlb_relay_use(f->ctx.relay, &in_use, &capacity);
    assert_int_equal(in_use, 0);
    for (uint32_t i = 0; i < 3000; i++) /* TIME-WAIT: 2 s */
        step(t);
    assert_int_equal(xlb_tcp_conns_in_use(xlb_relay_endpoint(f->ctx.relay)), 0);
    assert_int_equal(xlb_tcp_conns_in_use(t->client.ep), 0);
    assert_int_equal(xlb_tcp_conns_in_use(t->backend.ep), 0);
    xlb_tcp_endpoint_free(t->client.ep);
    xlb_tcp_endpoint_free(t->backend.ep);
    assert_int_equal(rte_mempool_in_use_count(t->peer_pool), 0);
    rte_mempool_free(t->peer_pool);
    xlb_relay_worker_free(f->ctx.relay);
    f->ctx.relay = NULL;
    nat_fixture_destroy(t->n);
}

static void dump_ep(const char *name, struct xlb_tcp_endpoint *ep)
{
    struct xlb_tcp_conn_info info[8];
    uint32_t n = xlb_tcp_list(ep, info, 8);
    for (uint32_t i = 0; i < n; i++)
        print_message("%s: port %u state %s cwnd %u snd_wnd %u rcv_wnd %u sndq %u rcvq %u ooo %u "
                      "unacked %u rto %u\n",
                      name, ntohs(info[i].tuple.local_port), xlb_tcp_state_name(info[i].state),
                      info[i].cwnd, info[i].snd_wnd, info[i].rcv_wnd, info[i].snd_queue,
                      info[i].rcv_queue, info[i].ooo_bytes, info[i].unacked, info[i].rto_ms);
}

/* ---- tests ---- */

static void bulk(unsigned loss_pct, uint32_t bytes, bool hostile)
{
    struct relay_test *t = relay_test_create(RELAY_CONNS);
    t->loss_pct = loss_pct;
    t->hostile = hostile;
    static const struct rte_ether_addr mac = FIX_PORT_MAC;
    hostile_init(&t->gen, 42, mac.addr_bytes);
    t->client.to_write = t->backend.to_write = bytes;
    t->client.shut_after_write = t->backend.shut_after_write = true;
    client_connect(t, 40000);
    uint32_t ms;
    for (ms = 0; ms < MAX_MS && !(t->client.closed && t->backend.closed); ms++) {
        step(t);
    }
    const struct xlb_tcp_counters *c = xlb_tcp_counters(xlb_relay_endpoint(t->n->f->ctx.relay));
    print_message("loss %u%%%s: %u bytes each way in %u simulated ms, %llu frames dropped, "
                  "relay retransmits %llu, fast retransmits %llu\n",
                  loss_pct, hostile ? " with hostile frames" : "", bytes, ms,
                  (unsigned long long)t->dropped, (unsigned long long)c->retransmits,
                  (unsigned long long)c->recovery.fast_retransmits);
    if (t->backend.received != bytes || t->client.received != bytes) {
        const struct xlb_tcp_counters *r = c;
        print_message(
            "why client %d backend %d; relay rst_out abort %llu timeout %llu bad_ack %llu "
            "closed %llu, rst_in exact %llu, timeouts %llu, rcv_worker_full %llu, "
            "tx_full %llu no_mbuf %llu, relay events: resets passed %llu closed %llu, "
            "drops no_route %llu ended %llu\n",
            t->client.why, t->backend.why, (unsigned long long)r->rst_out_abort,
            (unsigned long long)r->rst_out_timeout, (unsigned long long)r->rst_out_bad_ack,
            (unsigned long long)r->rst_out_closed, (unsigned long long)r->rst_in_exact,
            (unsigned long long)r->timeouts, (unsigned long long)r->rcv_worker_full,
            (unsigned long long)r->tx_full, (unsigned long long)r->no_mbuf,
            (unsigned long long)t->n->f->stats.events[XLB_EVENT_RELAY_RESETS_PASSED],
            (unsigned long long)t->n->f->stats.events[XLB_EVENT_RELAY_CLOSED],
            (unsigned long long)t->n->f->stats.drops[XLB_DROP_RELAY_NO_ROUTE],
            (unsigned long long)t->n->f->stats.drops[XLB_DROP_RELAY_ENDED]);
    }
    if (ms == MAX_MS) {
        dump_ep("relay", xlb_relay_endpoint(t->n->f->ctx.relay));
        dump_ep("client", t->client.ep);
        dump_ep("backend", t->backend.ep);
        print_message("written %u/%u received %u/%u\n", t->client.written, t->backend.written,
                      t->client.received, t->backend.received);
    }
    assert_true(ms < MAX_MS);
    assert_int_equal(t->backend.received, bytes);
    assert_int_equal(t->client.received, bytes);
    assert_int_equal(t->client.mismatches + t->backend.mismatches, 0);
    assert_true(t->client.eof && t->backend.eof);
    assert_int_equal(t->client.why, XLB_TCP_CLOSE_NORMAL);
    assert_int_equal(t->backend.why, XLB_TCP_CLOSE_NORMAL);
    if (hostile)
        print_message("%llu hostile frames beside it, %llu relayed connections opened\n",
                      (unsigned long long)t->hostile_sent,
                      (unsigned long long)t->n->f->stats.events[XLB_EVENT_RELAY_OPENED]);
    else
        assert_int_equal(t->n->f->stats.events[XLB_EVENT_RELAY_OPENED], 1);
    if (loss_pct > 0)
        assert_true(t->dropped > 0 && c->retransmits > 0);
    relay_test_destroy(t);
}

static void bulk_both_ways_lossless(void **state)
{
    (void)state;
    bulk(0, 2000000, false);
}

static void bulk_both_ways_with_3pct_loss(void **state)
{
    (void)state;
    bulk(3, 1000000, false);
}

/* The robustness replay over live relayed connections: mutated copies of their own frames
 * (flipped bytes, truncations, noise) go in beside them; the transfer still ends exact. */
static void hostile_frames_beside_a_transfer(void **state)
{
    (void)state;
    bulk(1, 500000, true);
}

/* The client half-closes first; the backend still sends everything, then its FIN. */
static void half_close_passes_through(void **state)
{
    (void)state;
    struct relay_test *t = relay_test_create(RELAY_CONNS);
    t->client.to_write = 3000;
    t->client.shut_after_write = true;
    client_connect(t, 40001);
    for (uint32_t ms = 0; ms < MAX_MS && !t->backend.eof; ms++)
        step(t);
    assert_true(t->backend.eof);
    assert_int_equal(t->backend.received, 3000);
    assert_false(t->client.eof);
    t->backend.to_write = 50000;
    t->backend.shut_after_write = true;
    for (uint32_t ms = 0; ms < MAX_MS && !(t->client.closed && t->backend.closed); ms++)
        step(t);
    assert_int_equal(t->client.received, 50000);
    assert_true(t->client.eof);
    relay_test_destroy(t);
}

static void backend_reset_resets_the_client(void **state)
{
    (void)state;
    struct relay_test *t = relay_test_create(RELAY_CONNS);
    client_connect(t, 40002);
    for (uint32_t ms = 0; ms < MAX_MS && t->backend.c == NULL; ms++)
        step(t);
    assert_non_null(t->backend.c);
    xlb_tcp_abort(t->backend.ep, t->backend.c);
    for (uint32_t ms = 0; ms < MAX_MS && !t->client.closed; ms++)
        step(t);
    assert_true(t->client.closed);
    assert_int_equal(t->client.why, XLB_TCP_CLOSE_RESET);
    assert_int_equal(t->n->f->stats.events[XLB_EVENT_RELAY_RESETS_PASSED], 1);
    relay_test_destroy(t);
}

/* An ACK no SYN cookie of ours: a RST back, no flow, no connection. */
static void bad_cookie_gets_a_reset(void **state)
{
    (void)state;
    struct relay_test *t = relay_test_create(RELAY_CONNS);
    struct seg ack = from_client4(40003, RTE_TCP_ACK_FLAG, NULL);
    uint8_t frame[256];
    size_t len = tcp_frame(frame, &ack);
    assert_int_equal(fixture_send(t->n->f, frame, len), 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(t->n->f, 0, &out_len);
    const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(out + 14 + 20);
    assert_true(th->tcp_flags & RTE_TCP_RST_FLAG);
    fixture_clear_tx(t->n->f);
    assert_int_equal(t->n->f->stats.events[XLB_EVENT_RELAY_BAD_COOKIES], 1);
    assert_int_equal(t->n->flows->n_used, 0);
    assert_int_equal(xlb_tcp_conns_in_use(xlb_relay_endpoint(t->n->f->ctx.relay)), 0);
    relay_test_destroy(t);
}

/* Room for one relayed connection: a second client is refused at its ACK with a RST, counted;
 * the first goes on. */
static void a_full_relay_refuses_at_the_ack(void **state)
{
    (void)state;
    struct relay_test *t = relay_test_create(2);
    client_connect(t, 40004);
    for (uint32_t ms = 0; ms < MAX_MS && t->backend.c == NULL; ms++)
        step(t);
    assert_non_null(t->backend.c);
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = 2;
    static struct peer second;
    memset(&second, 0, sizeof(second));
    second.ep = xlb_tcp_endpoint_create(&cfg, t->peer_pool, now_ms(t));
    xlb_tcp_tx_set(second.ep, second.tx, PEER_TX, &second.n_tx);
    t->second = &second;
    t->second_port = 40005;
    struct xlb_tcp_tuple tuple = {
        .family = AF_INET, .local_port = htons(40005), .remote_port = htons(VIP_PORT)};
    inet_pton(AF_INET, FIX_PEER4, tuple.local);
    inet_pton(AF_INET, FIX_VIP4, tuple.remote);
    second.c = xlb_tcp_connect(second.ep, &tuple, 1, now_ms(t), &cbs, &second);
    assert_non_null(second.c);
    for (uint32_t ms = 0; ms < MAX_MS && !second.closed; ms++)
        step(t);
    assert_true(second.closed);
    assert_int_equal(second.why, XLB_TCP_CLOSE_RESET);
    assert_int_equal(t->n->f->stats.events[XLB_EVENT_RELAY_POOL_FULL], 1);
    /* The first is unharmed: it still carries data both ways. */
    t->client.to_write = t->backend.to_write = 10000;
    t->client.shut_after_write = t->backend.shut_after_write = true;
    for (uint32_t ms = 0; ms < MAX_MS && !(t->client.closed && t->backend.closed); ms++)
        step(t);
    assert_int_equal(t->client.received, 10000);
    assert_int_equal(t->backend.received, 10000);
    assert_int_equal(xlb_tcp_conns_in_use(second.ep), 0);
    assert_int_equal(second.n_tx, 0);
    t->second = NULL;
    xlb_tcp_endpoint_free(second.ep);
    relay_test_destroy(t);
}

int main(void)
{
    fixture_eal_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bulk_both_ways_lossless),
        cmocka_unit_test(bulk_both_ways_with_3pct_loss),
        cmocka_unit_test(hostile_frames_beside_a_transfer),
        cmocka_unit_test(half_close_passes_through),
        cmocka_unit_test(backend_reset_resets_the_client),
        cmocka_unit_test(bad_cookie_gets_a_reset),
        cmocka_unit_test(a_full_relay_refuses_at_the_ack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
