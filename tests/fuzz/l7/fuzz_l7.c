/*
 * Fuzz target for the L7 (HTTP/2) engine (dataplane/l7/) through the worker's burst
 * function, on the L7 packet tests' fixture (tests/packet/l7_fixture.h: both VIPs L7 VIPs with
 * a compiled route table, prefix "/svc/" to a one-backend cluster, the worker's L7 state).
 *
 * A connection's state machine is reachable only after a valid SYN cookie, which a fuzzer cannot
 * forge, so the harness plays the client's handshake itself (SYN, xlb's SYN-ACK read back from
 * the tx batch, the ACK returning the cookie) and the input then drives the connection. Every
 * frame xlb sends is read back (its IP and TCP checksums must be valid) to follow what the
 * client and the backend have received, as real peers would: their ACKs, TSecr and the
 * backend's SNAT port come from there.
 *
 * Input: two bytes of set-up, then up to MAX_RECORDS records of 1 byte kind, 2 bytes big-endian
 * length and that many bytes.
 *   setup[0]: bit 0 IPv6, bit 1 the route has an A55 session cookie (Set-Cookie insertion),
 *             bit 2 the client offers timestamps, bit 3 SACK-permitted, bit 4 window scale,
 *             bits 5-7 the client's MSS (MSS_TABLE, including none and one below 536).
 *   setup[1]: low 4 bits the clients' window scale (clamped to 14 by xlb); bit 4 the clusters'
 *             circuit breakers allow one request in flight; bit 5 the clusters are not ready;
 *             bit 6 the SYN cookie secrets rotate 5 s in (then every 60 s); bit 7 the
 *             backends' neighbour entries are unresolved (no next hop).
 *   kind & 0x0f, modulo 9 (the high bits are modifiers, below):
 *   0 client payload in order (0x10 FIN, 0x20 no PSH, 0x40 no ACK flag, 0x80 the bytes
 *     repeated to MAX_PAYLOAD); empty: a bare ACK
 *   1 client payload at an offset: 2 bytes int16 from the next sequence number, then payload
 *     (retransmissions, overlaps, gaps); 0x10 FIN
 *   2 client control segment: flags byte (any, SYN included), int32 ACK delta from what xlb
 *     sent, uint16 window, int8 seq delta, then SACK blocks (int16 left edge from what xlb sent,
 *     uint16 width); 0x10: the bytes after the first 8 are the raw TCP options instead
 *   3 backend SYN-ACK: option bits (TS, SACK, WS, MSS, wrong ACK), window scale, ACK delta,
 *     uint16 MSS, then payload (data on a SYN-ACK); with 0x10 a RST answering the SYN instead
 *   4 backend control segment: as 2, deltas from what xlb sent the backend
 *   5 backend payload in order (modifiers as 0)
 *   6 backend payload at an offset (int16 first), as 1 (0x10 FIN)
 *   7 the clock: uint16 milliseconds (0x10: seconds), in small steps, with flow expiry and
 *     xlb_l7_poll (retransmissions, giving up) after each
 *   8 the client reuses its port: SYN with a new ISN, and the ACK returning the cookie if xlb
 *     answered with one; 0x10: a new client on the next port (up to MAX_PEERS, more than the
 *     8 the L7 pool and the flow table hold) becomes the one the records drive; 0x20: the
 *     records drive client d[0] modulo those there are
 *
 * After each record: every mbuf is back in the pool once the tx batch is freed, and as many L7
 * pool entries are in use as flows are L7 connections. After the input: the clock runs past
 * every timeout, which must remove every flow; then the L7 pool is full, the mbuf pool is full,
 * no connection is left on the retry list, every SNAT port is free, and the LB load counters
 * balance: each cluster's started == finished, each locality's issued == succeeded + failed.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#include "l7/l7.h"
#include "l7/l7_conn.h"
#include "l7_fixture.h"
#include "xlb_msg.h"

#define MAX_RECORDS 16
#define MAX_PAYLOAD 1400u
#define POOL_MBUFS  1023u /* the packet fixture's pool */
#define SLOTS_CHECK 16u   /* cluster and locality load slots checked (the fixture's are 1-4) */

#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "fuzz_l7: " __VA_ARGS__);                                                  \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

/* 0: no MSS option (536 for the cookie); 100: below the table, 536 too. */
static const uint16_t MSS_TABLE[8] = {1460, 536, 1220, 1440, 4312, 8960, 100, 0};

static struct l7_fixture *x;
static struct xlb_addr_entry *backend_entry[2]; /* the backends' neighbour entries */
static bool trace; /* FUZZ_L7_TRACE=1: every frame xlb sends, on stderr */

/* One connection as its client and its backend see it. */
struct peer {
    struct l7_conn c; /* numbers (the fixture's struct): client and backend sides */
    /* Toward the backend: xlb's SYN was seen; the backend's next expected seq. */
    bool backend_syn;
    uint32_t b_rcv;
};

/* Clients on ports L7_CLIENT_PORT + i: more than the L7 pool and the flow table hold (8). */
#define MAX_PEERS 10
static struct peer peers[MAX_PEERS];
static unsigned n_peers;
static struct peer *cur; /* the connection the records drive */

/* What every client of the input offers, and xlb's SYN-ACK in the batch just read. */
static struct {
    bool v6, ts, sack, has_ws, has_mss;
    uint8_t ws;
    uint16_t mss;
    bool synack_seen;
    uint16_t synack_port;
    uint32_t synack_seq, synack_tsval;
} s;

static struct xlb_burst_ctx *ctx_of(void)
{
    return &x->n->f->ctx;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- what xlb sent ---- */

/* A TCP segment in the frame (IPv4 or IPv6, untagged)? Anything else is not followed. */
static bool is_tcp(const uint8_t *frame, size_t len)
{
    if (len < sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr))
        return false;
    uint16_t type = get16(frame + 12);
    const uint8_t *ip = frame + sizeof(struct rte_ether_hdr);
    if (type == RTE_ETHER_TYPE_IPV4)
        return ip[9] == IPPROTO_TCP;
    if (type == RTE_ETHER_TYPE_IPV6)
        return len >= sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv6_hdr) &&
               ip[6] == IPPROTO_TCP;
    return false;
}

static void follow_to_client(struct peer *pr, const struct l7_out *o)
{
    struct l7_conn *c = &pr->c;
    if ((o->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) ==
        (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) {
        s.synack_seen = true;
        s.synack_port = c->port;
        s.synack_seq = o->seq;
        s.synack_tsval = o->tsval;
        return;
    }
    if (o->flags & RTE_TCP_RST_FLAG)
        return;
    uint32_t end = o->seq + o->len + ((o->flags & RTE_TCP_FIN_FLAG) ? 1u : 0u);
    if (SEQ_LT(c->x_seq, end))
        c->x_seq = end;
    if (o->has_ts)
        c->x_tsval = o->tsval;
}

static void follow_to_backend(struct peer *pr, const struct l7_out *o)
{
    struct l7_conn *c = &pr->c;
    if ((o->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) == RTE_TCP_SYN_FLAG) {
        pr->backend_syn = true;
        /* A SNAT port freed by an older connection may serve this one now. */
        for (unsigned k = 0; k < n_peers; k++)
            if (peers[k].c.snat_port == o->sport)
                peers[k].c.snat_port = 0;
        c->snat_port = o->sport;
        pr->b_rcv = o->seq + 1;
        if (o->has_ts)
            c->b_tsecr = o->tsval;
        return;
    }
    if (o->flags & RTE_TCP_RST_FLAG)
        return;
    uint32_t end = o->seq + o->len + ((o->flags & RTE_TCP_FIN_FLAG) ? 1u : 0u);
    if (pr->backend_syn && SEQ_LT(pr->b_rcv, end))
        pr->b_rcv = end;
    if (o->has_ts)
        c->b_tsecr = o->tsval;
}

/* Read back and free every frame xlb queued; each must be well formed. */
static void observe(void)
{
    struct fixture *f = x->n->f;
    for (unsigned i = 0; i < f->ctx.tx[0].n; i++) {
        size_t len;
        const uint8_t *frame = fixture_tx(f, i, &len);
        if (!is_tcp(frame, len))
            continue;
        struct l7_out o;
        l7_read(x, i, &o); /* asserts valid IP and TCP checksums */
        if (o.v6 != s.v6)
            FAIL("tx frame %u of the other address family", i);
        if (trace)
            fprintf(stderr, "  xlb -> %s: flags %02x seq %u ack %u win %u len %u\n",
                    o.dport == L7_BACKEND_PORT ? "backend" : "client", o.flags, o.seq, o.ack,
                    o.window, o.len);
        struct peer *pr = NULL;
        bool syn = (o.flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) == RTE_TCP_SYN_FLAG;
        for (unsigned k = 0; k < n_peers && pr == NULL; k++) {
            const struct l7_conn *c = &peers[k].c;
            if (o.sport == VIP_PORT ? o.dport == c->port
                : syn               ? o.seq == c->c_isn
                                    : c->snat_port != 0 && o.sport == c->snat_port)
                pr = &peers[k];
        }
        if (pr == NULL)
            continue;
        if (o.sport == VIP_PORT)
            follow_to_client(pr, &o);
        else if (o.dport == L7_BACKEND_PORT)
            follow_to_backend(pr, &o);
    }
    fixture_clear_tx(f);
    struct xlb_msg msg;
    while (xlb_msg_receive(f->to_control, &msg) == 0)
        ;
}

/* Every mbuf back; one pool entry per L7 flow. */
static void check_step(void)
{
    struct xlb_flow_table *t = x->n->flows;
    if (rte_mempool_avail_count(x->n->f->pool) != POOL_MBUFS)
        FAIL("mbuf leak: %u of %u in the pool", rte_mempool_avail_count(x->n->f->pool), POOL_MBUFS);
    uint32_t l7_flows = 0;
    for (uint32_t i = 0; i < t->capacity; i++)
        if (t->flows[i].used && t->flows[i].kind == XLB_FLOW_KIND_L7_SPLICE)
            l7_flows++;
    unsigned in_use = rte_mempool_in_use_count(x->l7->conns);
    if (in_use != l7_flows)
        FAIL("%u L7 pool entries in use for %u L7 flows", in_use, l7_flows);
}

/* The worker's loop between bursts. */
static void loop(void)
{
    struct xlb_burst_ctx *ctx = ctx_of();
    xlb_flow_expire(ctx, x->n->f->snap);
    xlb_l7_poll(ctx, x->n->f->snap);
    observe();
}

/* The clock moves on ms milliseconds, in steps the poll loop would see: fine while
 * retransmissions are due (250 ms doubling, 4 times), coarser for timeouts of seconds. */
static void advance(uint64_t ms, bool until_empty)
{
    uint64_t done = 0;
    while (done < ms) {
        if (until_empty && x->n->flows->n_used == 0 && x->l7->retry == NULL)
            break;
        uint64_t step = done < 10000 ? 25 : done < 60000 ? 1000 : 50000;
        if (step > ms - done)
            step = ms - done;
        ctx_of()->now_tsc += step * L7_TSC_PER_MS;
        done += step;
        loop();
    }
}

static void deliver(const struct l7_seg *seg)
{
    l7_send(x, seg);
    observe();
}

/* ---- segments from the peers ---- */

/* TS (when the connection has it) and SACK blocks, as a Linux peer lays them out. */
static void set_options(struct l7_seg *seg, bool ts, uint32_t tsval, uint32_t tsecr,
                        unsigned n_sack, const uint32_t *left, const uint32_t *right)
{
    uint8_t *o = seg->opts;
    unsigned n = 0;
    if (ts) {
        const uint8_t head[4] = {1, 1, 8, 10};
        memcpy(o, head, 4);
        put32(o + 4, tsval);
        put32(o + 8, tsecr);
        n = 12;
    }
    if (n_sack > 0) {
        o[n++] = 1;
        o[n++] = 1;
        o[n++] = 5;
        o[n++] = (uint8_t)(2 + 8 * n_sack);
        for (unsigned i = 0; i < n_sack; i++) {
            put32(o + n, left[i]);
            put32(o + n + 4, right[i]);
            n += 8;
        }
    }
    seg->opts_len = (uint8_t)n;
}

/* Raw options from the input, padded with EOL to a multiple of 4 (at most 40 bytes). */
static void raw_options(struct l7_seg *seg, const uint8_t *d, uint32_t n)
{
    if (n > 40)
        n = 40;
    memset(seg->opts, 0, sizeof(seg->opts));
    if (n > 0)
        memcpy(seg->opts, d, n);
    seg->opts_len = (uint8_t)((n + 3) & ~3u);
}

static struct l7_seg client_seg(uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t *payload,
                                uint32_t len)
{
    struct l7_conn *c = &cur->c;
    uint32_t tsval = c->c_tsval;
    struct l7_seg seg = l7_from_client(c, flags, seq, ack, payload, len);
    set_options(&seg, s.ts, tsval, c->x_tsval, 0, NULL, NULL);
    return seg;
}

static struct l7_seg backend_seg(uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t *payload,
                                 uint32_t len)
{
    struct l7_conn *c = &cur->c;
    c->b_tsval++;
    struct l7_seg seg = l7_from_backend(c, flags, seq, ack, payload, len);
    if (c->snat_port == 0)
        seg.dport = PORT_BASE; /* no SYN seen: a port of the worker's slice all the same */
    set_options(&seg, s.ts, c->b_tsval, c->b_tsecr, 0, NULL, NULL);
    return seg;
}

/* SYN and, if xlb answers with a cookie, the ACK returning it. */
static bool handshake(uint32_t isn)
{
    struct l7_conn *c = &cur->c;
    c->c_isn = isn;
    s.synack_seen = false;
    uint32_t tsval = c->c_tsval++;
    struct l7_seg syn = l7_from_client(c, RTE_TCP_SYN_FLAG, isn, 0, NULL, 0);
    syn.window = 64240;
    uint8_t *o = syn.opts;
    unsigned n = 0;
    if (s.has_mss) {
        o[n++] = 2;
        o[n++] = 4;
        o[n++] = (uint8_t)(s.mss >> 8);
        o[n++] = (uint8_t)s.mss;
    }
    if (s.ts) {
        o[n++] = s.sack ? 4 : 1;
        o[n++] = s.sack ? 2 : 1;
        o[n++] = 8;
        o[n++] = 10;
        put32(o + n, tsval);
        put32(o + n + 4, 0);
        n += 8;
    } else if (s.sack) {
        o[n++] = 1;
        o[n++] = 1;
        o[n++] = 4;
        o[n++] = 2;
    }
    if (s.has_ws) {
        o[n++] = 1;
        o[n++] = 3;
        o[n++] = 3;
        o[n++] = s.ws;
    }
    syn.opts_len = (uint8_t)n;
    deliver(&syn);
    if (!s.synack_seen || s.synack_port != c->port)
        return false;
    /* The client's view of a fresh connection; the backend's too. */
    c->c_seq = isn + 1;
    c->cookie = s.synack_seq;
    c->x_seq = s.synack_seq + 1;
    c->x_tsval = s.synack_tsval;
    c->snat_port = 0;
    c->b_seq = L7_BACKEND_ISN;
    c->b_tsecr = 0;
    cur->backend_syn = false;
    cur->b_rcv = 0;
    struct l7_seg ack = client_seg(RTE_TCP_ACK_FLAG, c->c_seq, c->x_seq, NULL, 0);
    deliver(&ack);
    return true;
}

/* ---- records ---- */

static uint8_t data_flags(uint8_t kind)
{
    uint8_t flags = 0;
    if (!(kind & 0x40))
        flags |= RTE_TCP_ACK_FLAG;
    if (kind & 0x10)
        flags |= RTE_TCP_FIN_FLAG;
    return flags;
}

/* Modifier 0x80 of payload records: the bytes repeated to MAX_PAYLOAD (large DATA frames,
 * the 8 KiB receive buffer, big header blocks, MSS cuts from short inputs). */
static uint8_t repeated[MAX_PAYLOAD];

static const uint8_t *repeat(uint8_t kind, const uint8_t *d, uint32_t *len)
{
    if (!(kind & 0x80) || *len == 0)
        return d;
    for (uint32_t i = 0; i < MAX_PAYLOAD; i++)
        repeated[i] = d[i % *len];
    *len = MAX_PAYLOAD;
    return repeated;
}

static void client_data(uint8_t kind, const uint8_t *d, uint32_t len)
{
    struct l7_conn *c = &cur->c;
    d = repeat(kind, d, &len);
    uint8_t flags = data_flags(kind) | (len > 0 && !(kind & 0x20) ? RTE_TCP_PSH_FLAG : 0);
    struct l7_seg seg = client_seg(flags, c->c_seq, c->x_seq, d, len);
    deliver(&seg);
    c->c_seq += len + ((flags & RTE_TCP_FIN_FLAG) ? 1u : 0u);
}

/* Payload at an offset: the next sequence number moves on only when no gap was left. */
static void data_at(bool from_backend, uint8_t kind, const uint8_t *d, uint32_t len)
{
    if (len < 2)
        return;
    struct l7_conn *c = &cur->c;
    int16_t offset = (int16_t)get16(d);
    d += 2;
    len -= 2;
    uint8_t flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | ((kind & 0x10) ? RTE_TCP_FIN_FLAG : 0);
    uint32_t *next = from_backend ? &c->b_seq : &c->c_seq;
    uint32_t seq = *next + (uint32_t)(int32_t)offset;
    struct l7_seg seg = from_backend ? backend_seg(flags, seq, cur->b_rcv, d, len)
                                     : client_seg(flags, seq, c->x_seq, d, len);
    deliver(&seg);
    uint32_t end = seq + len + ((flags & RTE_TCP_FIN_FLAG) ? 1u : 0u);
    if (!SEQ_LT(*next, seq) && SEQ_LT(*next, end))
        *next = end;
}

/* A control segment: flags, ACK, window, seq and SACK blocks, or raw options. */
static void control(bool from_backend, uint8_t kind, const uint8_t *d, uint32_t len)
{
    uint8_t p[8] = {0};
    memcpy(p, d, len < 8 ? len : 8);
    struct l7_conn *c = &cur->c;
    uint32_t base = from_backend ? cur->b_rcv : c->x_seq;
    uint32_t ack = base + get32(p + 1);
    uint32_t seq = (from_backend ? c->b_seq : c->c_seq) + (uint32_t)(int32_t)(int8_t)p[7];
    struct l7_seg seg =
        from_backend ? backend_seg(p[0], seq, ack, NULL, 0) : client_seg(p[0], seq, ack, NULL, 0);
    seg.window = get16(p + 5);
    const uint8_t *rest = len > 8 ? d + 8 : NULL;
    uint32_t n_rest = len > 8 ? len - 8 : 0;
    if (kind & 0x10) {
        raw_options(&seg, rest, n_rest);
    } else if (n_rest >= 4) {
        uint32_t left[4], right[4];
        unsigned n = n_rest / 4, max = s.ts ? 3 : 4;
        if (n > max)
            n = max;
        for (unsigned i = 0; i < n; i++) {
            left[i] = base + (uint32_t)(int32_t)(int16_t)get16(rest + 4 * i);
            right[i] = left[i] + get16(rest + 4 * i + 2);
        }
        uint32_t tsval = from_backend ? c->b_tsval : c->c_tsval - 1;
        uint32_t tsecr = from_backend ? c->b_tsecr : c->x_tsval;
        set_options(&seg, s.ts, tsval, tsecr, n, left, right);
    }
    deliver(&seg);
    if (p[0] & RTE_TCP_SYN_FLAG) {
        if (from_backend)
            c->b_seq = seq + 1;
    } else if ((p[0] & RTE_TCP_FIN_FLAG) && seq == (from_backend ? c->b_seq : c->c_seq)) {
        if (from_backend)
            c->b_seq++;
        else
            c->c_seq++;
    }
}

static void backend_syn_ack(uint8_t kind, const uint8_t *d, uint32_t len)
{
    uint8_t p[5] = {0x0f, L7_BACKEND_WS, 0, 0x05, 0xb4}; /* TS, SACK, WS 6, MSS 1460 */
    if (len > 0)
        memcpy(p, d, len < 5 ? len : 5);
    struct l7_conn *c = &cur->c;
    uint32_t ack = cur->backend_syn ? cur->b_rcv : c->c_isn + 1;
    if (p[0] & 0x10)
        ack += (uint32_t)(int32_t)(int8_t)p[2];
    const uint8_t *payload = len > 5 ? d + 5 : NULL;
    uint32_t n_payload = len > 5 ? len - 5 : 0;
    if (kind & 0x10) {
        struct l7_seg rst = backend_seg(RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, 0, ack, NULL, 0);
        rst.window = 0;
        rst.opts_len = 0;
        deliver(&rst);
        return;
    }
    c->b_seq = L7_BACKEND_ISN;
    c->b_tsval++;
    struct l7_seg seg =
        l7_from_backend(c, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, c->b_seq, ack, payload, n_payload);
    if (c->snat_port == 0)
        seg.dport = PORT_BASE;
    seg.window = 65160;
    uint8_t *o = seg.opts;
    unsigned n = 0;
    if (p[0] & 0x08) {
        o[n++] = 2;
        o[n++] = 4;
        o[n++] = p[3];
        o[n++] = p[4];
    }
    if (p[0] & 0x01) {
        o[n++] = (p[0] & 0x02) ? 4 : 1;
        o[n++] = (p[0] & 0x02) ? 2 : 1;
        o[n++] = 8;
        o[n++] = 10;
        put32(o + n, c->b_tsval);
        put32(o + n + 4, c->b_tsecr);
        n += 8;
    } else if (p[0] & 0x02) {
        o[n++] = 1;
        o[n++] = 1;
        o[n++] = 4;
        o[n++] = 2;
    }
    if (p[0] & 0x04) {
        o[n++] = 1;
        o[n++] = 3;
        o[n++] = 3;
        o[n++] = p[1];
    }
    seg.opts_len = (uint8_t)n;
    deliver(&seg);
    c->b_seq = L7_BACKEND_ISN + 1 + n_payload;
}

static void backend_data(uint8_t kind, const uint8_t *d, uint32_t len)
{
    struct l7_conn *c = &cur->c;
    d = repeat(kind, d, &len);
    uint8_t flags = data_flags(kind) | (len > 0 && !(kind & 0x20) ? RTE_TCP_PSH_FLAG : 0);
    struct l7_seg seg = backend_seg(flags, c->b_seq, cur->b_rcv, d, len);
    deliver(&seg);
    c->b_seq += len + ((flags & RTE_TCP_FIN_FLAG) ? 1u : 0u);
}

static void clock_record(uint8_t kind, const uint8_t *d, uint32_t len)
{
    uint8_t p[2] = {0, 0};
    memcpy(p, d, len < 2 ? len : 2);
    uint64_t n = get16(p);
    advance((kind & 0x10) ? n % 1024 * 1000 : n, false);
}

/* 8: the current client reuses its port (a new ISN); 0x10: a new client on the next port
 * becomes the current one; 0x20: the current one is client d[0] modulo those there are. */
static void connection(uint8_t kind, const uint8_t *d, uint32_t len)
{
    if (kind & 0x20) {
        if (len > 0)
            cur = &peers[d[0] % n_peers];
        return;
    }
    if (kind & 0x10) {
        if (n_peers == MAX_PEERS)
            return;
        cur = &peers[n_peers];
        memset(cur, 0, sizeof(*cur));
        l7_conn_init(&cur->c, s.v6);
        cur->c.port = (uint16_t)(L7_CLIENT_PORT + n_peers);
        cur->c.c_isn = L7_CLIENT_ISN + n_peers * 0x00100000u;
        n_peers++;
    }
    handshake(cur->c.c_isn + ((kind & 0x10) ? 0 : 0x01000000u));
}

static void record(uint8_t kind, const uint8_t *d, uint32_t len)
{
    if (trace)
        fprintf(stderr, "record kind %02x (%u), %u bytes\n", kind, (unsigned)((kind & 0x0f) % 9),
                len);
    switch ((kind & 0x0f) % 9) {
    case 0:
        client_data(kind, d, len);
        break;
    case 1:
        data_at(false, kind, d, len);
        break;
    case 2:
        control(false, kind, d, len);
        break;
    case 3:
        backend_syn_ack(kind, d, len);
        break;
    case 4:
        control(true, kind, d, len);
        break;
    case 5:
        backend_data(kind, d, len);
        break;
    case 6:
        data_at(true, kind, d, len);
        break;
    case 7:
        clock_record(kind, d, len);
        break;
    default:
        connection(kind, d, len);
        break;
    }
}

/* ---- set-up and the checks after each input ---- */

int LLVMFuzzerInitialize(int *argc, char ***argv); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    /* A fixture assertion (a frame with a bad checksum, say) aborts with its message. */
    setenv("CMOCKA_TEST_ABORT", "1", 1);
    trace = getenv("FUZZ_L7_TRACE") != NULL;
    void *state = NULL;
    if (l7_setup(&state) != 0 || state == NULL)
        abort();
    x = state;
    backend_entry[0] = nat_entry(x->n->f->snap, L7_BACKEND4);
    backend_entry[1] = nat_entry(x->n->f->snap, L7_BACKEND6);
    return 0;
}

static void check_end(void)
{
    struct xlb_burst_ctx *ctx = ctx_of();
    struct xlb_flow_table *t = x->n->flows;
    /* Past every timeout (receiving 10 s, retries, closing 30 s, idle 300 s) with the worker's
     * loop running: every flow must be gone by itself. */
    advance(800000, true);
    if (t->n_used != 0)
        FAIL("%u flows outlived every timeout", t->n_used);
    /* (As fuzz_nat does; nothing should be left, and the check above says so.) */
    for (uint32_t i = 0; i < t->capacity; i++)
        if (t->flows[i].used)
            xlb_flow_release(ctx, &t->flows[i]);
    observe();
    check_step();
    if (x->l7->retry != NULL)
        FAIL("a connection is still on the retry list");
    unsigned avail = rte_mempool_avail_count(x->l7->conns);
    if (avail != x->l7->n_conns)
        FAIL("L7 pool leak: %u of %u entries free", avail, x->l7->n_conns);
    if (t->n_used != 0 || t->n_syn != 0 || t->n_free_ports[0] != t->port_count ||
        t->n_free_ports[1] != t->port_count)
        FAIL("flow table: %u used, %u SYN, %u/%u free ports", t->n_used, t->n_syn,
             t->n_free_ports[0], t->n_free_ports[1]);
    const struct xlb_worker_load *load = x->n->load;
    for (unsigned i = 0; i < SLOTS_CHECK; i++) {
        const struct xlb_cluster_load *cl = &load->clusters[i];
        if (cl->started != cl->finished)
            FAIL("cluster slot %u: %lu started, %lu finished", i, (unsigned long)cl->started,
                 (unsigned long)cl->finished);
        const struct xlb_locality_load *l = &load->localities[i];
        if (l->issued != l->succeeded + l->failed)
            FAIL("locality slot %u: %lu issued, %lu succeeded, %lu failed", i,
                 (unsigned long)l->issued, (unsigned long)l->succeeded, (unsigned long)l->failed);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    struct xlb_burst_ctx *ctx = ctx_of();
    /* The same clock at every input's start (no flow is left to mind). */
    ctx->now_tsc = L7_START_TSC;
    xlb_flow_expire(ctx, x->n->f->snap);
    uint8_t setup0 = data[0], setup1 = data[1];
    data += 2;
    size -= 2;
    memset(&s, 0, sizeof(s));
    s.v6 = setup0 & 0x01;
    n_peers = 1;
    cur = &peers[0];
    memset(cur, 0, sizeof(*cur));
    l7_conn_init(&cur->c, s.v6);
    for (int i = 0; i < 2; i++) {
        x->n->vip[i].route_cookie = (setup0 & 0x02) ? x->cookie_names : NULL;
        x->n->vip[i].route_cookie_attrs = (setup0 & 0x02) ? x->cookie_attrs : NULL;
        /* A circuit breaker of one request in flight; a cluster that is not ready. */
        x->n->leaf[i]->max_requests = (setup1 & 0x10) ? 1 : 0;
        x->n->target[i].ready = !(setup1 & 0x20);
        backend_entry[i]->resolved = !(setup1 & 0x80);
    }
    /* The same cookie secrets at every input's start, and a rotation 5 s in if asked: an
     * input replays exactly. */
    static const uint8_t seed[16] = {'x', 'l', 'b', '-', 'f', 'u', 'z', 'z', '-', 'l', '7'};
    xlb_syn_cookie_keys_init(&x->l7->keys, seed);
    x->l7->master[0] = UINT64_C(0x786c622d66757a7a);
    x->l7->master[1] = UINT64_C(0x2d6c372d6d617374);
    x->l7->rotate_tsc = (setup1 & 0x40) ? L7_START_TSC + 5000 * L7_TSC_PER_MS : UINT64_MAX;
    s.ts = setup0 & 0x04;
    s.sack = setup0 & 0x08;
    s.has_ws = setup0 & 0x10;
    s.mss = MSS_TABLE[setup0 >> 5];
    s.has_mss = s.mss != 0;
    s.ws = setup1 & 0x0f;

    uint64_t connections = l7_event(x, XLB_EVENT_L7_CONNECTIONS);
    if (!handshake(cur->c.c_isn))
        FAIL("no SYN-ACK to the client's SYN");
    if (l7_event(x, XLB_EVENT_L7_CONNECTIONS) != connections + 1)
        FAIL("the ACK returning a fresh cookie made no connection");
    loop();
    check_step();
    for (int r = 0; r < MAX_RECORDS && size >= 3; r++) {
        uint8_t kind = data[0];
        uint32_t len = get16(data + 1);
        data += 3;
        size -= 3;
        if (len > size)
            len = (uint32_t)size;
        uint32_t use = len > MAX_PAYLOAD ? MAX_PAYLOAD : len;
        record(kind, data, use);
        data += len;
        size -= len;
        loop();
        check_step();
    }
    check_end();
    if (trace) {
        static const struct {
            enum xlb_event_counter e;
            const char *name;
        } ev[] = {
            {XLB_EVENT_L7_CONNECTIONS, "connections"},
            {XLB_EVENT_L7_BOUND, "bound"},
            {XLB_EVENT_L7_SPLICED, "spliced"},
            {XLB_EVENT_L7_REJECTED, "rejected"},
            {XLB_EVENT_L7_STREAMS, "streams"},
            {XLB_EVENT_L7_SET_COOKIES, "set_cookies"},
            {XLB_EVENT_L7_PROTOCOL_ERRORS, "protocol_errors"},
            {XLB_EVENT_L7_INSPECT_ERRORS, "inspect_errors"},
            {XLB_EVENT_L7_RECEIVE_TIMEOUTS, "receive_timeouts"},
        };
        for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
            fprintf(stderr, "%s %lu  ", ev[i].name, (unsigned long)l7_event(x, ev[i].e));
        fprintf(stderr, "\n");
    }
    return 0;
}
