/*
 * bench_l7: what the L7 (HTTP/2) mode (dataplane/l7/) costs a worker, measured in-process
 * without a NIC, as bench_fwd measures the L4 path.
 *
 * The fixture is bench_fwd's (tools/bench/fwd/bench_fwd_setup.c): EAL, one port, a snapshot
 * whose VIP 198.18.0.100:443 reaches a compiled round-robin cluster of 16 on-link backends,
 * four SNAT addresses, a real flow table and LB worker state with its load counters. Here the
 * VIP is made an L7 VIP: its LB tree gets a compiled route table (lib/route, from
 * control/route_compile: one virtual host "*", one prefix route "/xlb.test.Echo/" to the
 * cluster) and, in the "cookie" variant, the route's A55 session cookie "xlb-session" (path "/",
 * max-age 3600), as the demo's StatefulSession filter gives it. The worker's L7 state comes from
 * xlb_l7_worker_create and sits in ctx->l7, as xlb_worker_main has it.
 *
 * Every frame is crafted as a Linux client (MSS 1460, SACK, timestamps, window scale 7) and a
 * gRPC backend would send it, and goes through the real burst function, xlb_burst_process. HPACK
 * blocks come from nghttp2's deflater, as h2load and gRPC make them: the first request or
 * response of a connection adds its fields to the dynamic table, the later ones are indexed.
 *
 * A new connection is, in bursts of 32 connections:
 *   1. SYN                     -> xlb answers with a SYN cookie (the SYN-ACK's ISN and TSval are
 *                                 read from the tx batch, as the client would)
 *   2. ACK returning the cookie -> a connection from the pool, a flow, xlb's SETTINGS
 *   3. preface, SETTINGS, WINDOW_UPDATE, the first request's HEADERS and a DATA frame
 *                              -> kept, scanned, HPACK-decoded; xlb ACKs
 *   4. SETTINGS ACK            -> binding: route, pick, Set-Cookie field; ACK to the client and
 *                                 SYN to the backend
 *   5. the backend's SYN-ACK   -> spliced; xlb replays the client's bytes to the backend
 *   6. the backend's ACK of the replay -> passed to the client; the binding entry goes back
 * and its removal, later, by the idle expiry (xlb_flow_expire). "conn life" adds the close:
 *   7. the client's FIN        -> passed to the backend
 *   8. the backend's FIN       -> passed to the client; the connection entry goes back
 *   9. the client's last ACK   -> passed to the backend through the closed flow
 * and prints what that costs as new connections per second per worker (TSC rate / cycles of
 * steps 1-9 and the removal). Only the cycles spent in
 * xlb_burst_process (and xlb_flow_expire for the removal) are counted. "hot": 32 connections
 * go through the steps together; "spread": each step is taken by as many connections as the
 * binding pool holds (a quarter of the pool, at least 64) before the next step starts, so a
 * connection's state is cold when its next packet comes.
 *
 * Per inspected packet, on connections spliced that way (then the backend's ACK of the replay,
 * its SETTINGS, SETTINGS ACK and the response HEADERS of stream 1, and the client's SETTINGS
 * ACK): each packet goes to a connection drawn at random, and carries
 *   - DATA: one DATA frame on stream 1 (a streaming call), 64 bytes of TCP payload, either
 *     direction;
 *   - unary RPC: the client's request (HEADERS + DATA with END_STREAM on a new stream) and the
 *     backend's answer (HEADERS, DATA, trailers HEADERS with grpc-status 0) -- with the cookie,
 *     xlb inserts its Set-Cookie in every response (the requests carry no cookie, like h2load's).
 * Every segment carries the client's or backend's current sequence number and ACK, read back
 * from what xlb forwarded, so every segment is in order and scanned. The loop does what
 * xlb_worker_main does around rx and tx: TSC into now_tsc, xlb_flow_expire, xlb_l7_poll, the
 * burst function, then the tx batch is freed. Cycles of those three calls are xlb's; the
 * baseline ("bare loop") is the same rx and tx -- the same frames built in mbufs, put on the tx
 * batch unparsed and freed -- measured in the same process, interleaved with the others.
 *
 * Memory: what a bound connection holds (its entry and its decoders' use of the worker's HPACK
 * heap, after the first request and response), sizeof the pool element as pool sizing counts it
 * (xlb_l7_connection_bytes()) and the rte_malloc heap the worker's L7 state holds per
 * connection, besides the flow table's entry (bench_fwd).
 *
 * Each figure is the median of RUNS runs. Targets are printed for comparison only: a benchmark
 * never passes or fails. It stops when a packet is not answered or forwarded as expected,
 * because the figures would then not measure what they say.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "bench_fwd_setup.h"
#include "bench_l7_h2.h"
#include "bench_l7_vip.h"
#include "bench_l7_wire.h"
#include "l7/l7.h"
#include "nat/nat.h"
#include "route_compile.h"
#include "xlb_tcp_options.h"

#define RUNS               5
#define PACKETS            (1u << 18) /* per per-packet run, and RPCs per RPC run */
#define MIN_CONNECTIONS    16384u     /* per new-connection run: rounds over the pool until then */
#define TARGET_CONN_CYCLES 10000
#define TARGET_CONN_RATE   50000 /* new connections per second per worker, issue 24 */

#define CLIENT_MSS    1460
#define CLIENT_WSCALE 7
#define MAX_CONNS     65536u

/* ---- new connections ---- */

struct steps {
    uint64_t syn, ack, hello, settings_ack, syn_ack, replay_ack, close;
};

/* Steps 1-6 (and 7-9, the close) for connections [first, first + k), k <= BURST; cycles added
 * to *st. */
static void step(struct steps *st, int which, uint32_t first, uint16_t k)
{
    struct rte_mbuf *pkts[BURST];
    alloc(pkts, k);
    for (uint16_t j = 0; j < k; j++) {
        struct conn *c = &L.conns[first + j];
        switch (which) {
        case 1: {
            c->c_isn = 0x10000000u + (L.isn_serial++ * 0x9e3779b9u);
            c->c_seq = c->c_isn;
            c->c_ack = 0;
            c->c_tsval = (uint32_t)rte_rdtsc();
            c->c_tsecr = 0;
            uint8_t opts[40];
            struct xlb_tcp_opts o = {.mss = CLIENT_MSS,
                                     .has_wscale = true,
                                     .wscale = CLIENT_WSCALE,
                                     .sack_ok = true,
                                     .has_ts = true,
                                     .tsval = c->c_tsval};
            struct seg s = {&bench_l7_router,
                            c->client,
                            htonl(RTE_IPV4(198, 18, 0, 100)),
                            c->client_port,
                            htons(VIP_PORT),
                            c->c_seq,
                            0,
                            RTE_TCP_SYN_FLAG,
                            64240,
                            opts,
                            xlb_tcp_options_write_syn(opts, &o),
                            NULL,
                            0};
            build(pkts[j], &s);
            c->c_seq++;
            break;
        }
        case 2:
            client_seg(pkts[j], c, RTE_TCP_ACK_FLAG, NULL, 0);
            break;
        case 3:
            client_seg(pkts[j], c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, h2.hello.b, h2.hello.len);
            break;
        case 4:
            client_seg(pkts[j], c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, h2.settings_ack.b,
                       h2.settings_ack.len);
            break;
        case 6: /* the backend acknowledges the replay: the binding entry goes back */
            backend_seg(pkts[j], c, RTE_TCP_ACK_FLAG, NULL, 0);
            break;
        case 7: /* the client closes */
            client_seg(pkts[j], c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, NULL, 0);
            c->c_seq++;
            break;
        case 8: /* the backend closes too, acknowledging the client's FIN: the entry goes back */
            c->b_ack++;
            backend_seg(pkts[j], c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, NULL, 0);
            c->b_seq++;
            break;
        case 9: /* the client's last ACK, through the closed flow */
            c->c_ack++;
            client_seg(pkts[j], c, RTE_TCP_ACK_FLAG, NULL, 0);
            break;
        default: {
            uint8_t opts[40];
            c->b_isn = 0x50000000u + (L.isn_serial++ * 0x7f4a7c15u);
            c->b_seq = c->b_isn;
            c->b_ack = c->c_isn + 1;
            c->b_tsval = (uint32_t)rte_rdtsc() >> 8;
            struct xlb_tcp_opts o = {.mss = CLIENT_MSS,
                                     .has_wscale = true,
                                     .wscale = CLIENT_WSCALE,
                                     .sack_ok = true,
                                     .has_ts = true,
                                     .tsval = c->b_tsval,
                                     .tsecr = c->b_tsecr};
            struct seg s = {&c->backend_mac,
                            c->backend,
                            c->snat,
                            c->backend_port,
                            c->snat_port,
                            c->b_seq,
                            c->b_ack,
                            RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
                            65160,
                            opts,
                            xlb_tcp_options_write_syn(opts, &o),
                            NULL,
                            0};
            build(pkts[j], &s);
            c->b_seq++;
            break;
        }
        }
    }
    static const char *names[] = {"",
                                  "SYN",
                                  "cookie ACK",
                                  "first request",
                                  "SETTINGS ACK",
                                  "backend SYN-ACK",
                                  "backend's ACK of the replay",
                                  "client's FIN",
                                  "backend's FIN",
                                  "client's last ACK"};
    unsigned per = which == 4 ? 2 : 1; /* binding: the ACK to the client and the SYN */
    uint64_t cycles = process(pkts, k, names[which], per * k);
    uint64_t *slot[] = {NULL,         &st->syn,        &st->ack,   &st->hello, &st->settings_ack,
                        &st->syn_ack, &st->replay_ack, &st->close, &st->close, &st->close};
    *slot[which] += cycles;
    if (which >= 6) {
        free_tx(); /* forwarded as they came, translated: nothing to learn */
        return;
    }
    /* What the client and the backend learn from xlb's answers. */
    for (uint16_t j = 0; j < k; j++) {
        struct conn *c = &L.conns[first + j];
        struct sent s;
        read_sent(j * per + (per - 1), &s);
        switch (which) {
        case 1:
            if (s.flags != (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) || s.ack != c->c_isn + 1)
                die("step 1: no SYN-ACK");
            c->xlb_isn = s.seq;
            c->c_ack = s.seq + 1;
            c->c_tsecr = s.opts.tsval;
            break;
        case 2: /* xlb's SETTINGS */
            if (s.seq != c->c_ack || s.len != 9)
                die("step 2: no SETTINGS from xlb");
            c->c_ack += s.len;
            c->c_tsecr = s.opts.tsval;
            break;
        case 3:
            if (s.ack != c->c_seq)
                die("step 3: the request was not acknowledged");
            break;
        case 4:
            if (s.flags != RTE_TCP_SYN_FLAG || s.seq != c->c_isn)
                die("step 4: no SYN to the backend");
            c->snat = s.ip->src_addr;
            c->backend = s.ip->dst_addr;
            c->snat_port = s.tcp->src_port;
            c->backend_port = s.tcp->dst_port;
            c->backend_mac =
                rte_pktmbuf_mtod(b.ctx.tx[0].pkts[j * per + 1], struct rte_ether_hdr *)->dst_addr;
            c->b_tsecr = s.opts.tsval;
            break;
        default: /* the replay */
            if (s.seq != c->c_isn + 1 || s.len == 0)
                die("step 5: no replay to the backend");
            c->b_ack = s.seq + s.len;
            c->b_tsecr = s.opts.tsval;
            break;
        }
    }
    free_tx();
}

/* Every connection of the pool, `window` at a time (BURST: hot; the binding pool: spread, since
 * a connection holds a binding entry from its cookie ACK to the backend's ACK of the replay),
 * to step 6, or 9 when `close`. */
static void connect_all(uint32_t window, struct steps *st, bool close)
{
    int last = close ? 9 : 6;
    for (uint32_t w = 0; w < L.n; w += window) {
        uint32_t end = L.n - w < window ? L.n : w + window;
        for (int which = 1; which <= last; which++)
            for (uint32_t i = w; i < end; i += BURST)
                step(st, which, i, (uint16_t)(end - i < BURST ? end - i : BURST));
    }
    if (L.flows.table->n_used != L.n)
        die("not every connection has its flow");
}

/* Every flow expires: the worker's clock past the established timeout, xlb_flow_expire until
 * the table is empty (connections go back to the pool). */
static uint64_t expire_all(void)
{
    L.clock_offset += (uint64_t)(XLB_FLOW_ESTABLISHED_TIMEOUT_S + 2) * b.tsc_hz;
    uint64_t limit = (uint64_t)L.n * 4 + 65536, calls = 0;
    uint64_t t0 = rte_rdtsc();
    b.ctx.now_tsc = worker_clock(t0);
    while (L.flows.table->n_used != 0 && calls++ < limit)
        xlb_flow_expire(&b.ctx, b.snap);
    uint64_t cycles = rte_rdtsc() - t0;
    if (L.flows.table->n_used != 0)
        die("flows left after the expiry sweep");
    if (b.ctx.tx[0].n != 0)
        free_tx();
    return cycles;
}

/* ---- spliced connections ---- */

/* After step 5: the backend's ACK, SETTINGS, SETTINGS ACK and the response HEADERS of stream 1;
 * the client's SETTINGS ACK. Then both sides' numbers are as xlb forwarded them. */
static void establish(void)
{
    struct rte_mbuf *pkts[BURST];
    for (uint32_t i = 0; i < L.n; i += BURST) {
        uint16_t k = (uint16_t)(L.n - i < BURST ? L.n - i : BURST);
        alloc(pkts, k);
        for (uint16_t j = 0; j < k; j++)
            backend_seg(pkts[j], &L.conns[i + j], RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
                        h2.backend_hello.b, h2.backend_hello.len);
        process(pkts, k, "backend's first data", k);
        for (uint16_t j = 0; j < k; j++) {
            struct sent s;
            read_sent(j, &s);
            L.conns[i + j].c_ack = s.seq + s.len; /* with xlb's Set-Cookie, when it has one */
            L.conns[i + j].c_tsecr = s.opts.tsval;
        }
        free_tx();
        alloc(pkts, k);
        for (uint16_t j = 0; j < k; j++) {
            L.conns[i + j].next_stream = 3;
            L.conns[i + j].trailers_sent = false;
            client_seg(pkts[j], &L.conns[i + j], RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
                       h2.settings_ack.b, h2.settings_ack.len);
        }
        process(pkts, k, "client's SETTINGS ACK to the backend", k);
        for (uint16_t j = 0; j < k; j++) {
            struct sent s;
            read_sent(j, &s);
            L.conns[i + j].b_ack = s.seq + s.len;
        }
        free_tx();
    }
}

static inline uint32_t draw(uint64_t *rng)
{
    return next_index(rng, L.n);
}

enum direction { C2B, B2C };

/* The baseline: the same frames built, put on the tx batch unparsed, freed. */
static uint64_t loop_bare(uint64_t seed)
{
    struct rte_mbuf *pkts[BURST];
    uint64_t rng = seed;
    uint64_t start = rte_rdtsc();
    for (uint32_t k = 0; k < PACKETS / BURST; k++) {
        alloc(pkts, BURST);
        for (unsigned i = 0; i < BURST; i++) {
            struct conn *c = &L.conns[draw(&rng)];
            uint32_t seq = c->c_seq;
            client_seg(pkts[i], c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, h2.data.b, h2.data.len);
            c->c_seq = seq; /* nothing was sent */
            xlb_tx_enqueue(&b.ctx, 0, pkts[i]);
        }
        free_tx();
    }
    return rte_rdtsc() - start;
}

/* DATA frames one way; returns xlb's cycles (expiry, poll, burst function). */
static uint64_t loop_data(enum direction dir, uint64_t seed, uint64_t *total)
{
    struct rte_mbuf *pkts[BURST];
    struct conn *which[BURST];
    uint64_t rng = seed, xlb = 0;
    uint64_t start = rte_rdtsc();
    for (uint32_t k = 0; k < PACKETS / BURST; k++) {
        alloc(pkts, BURST);
        for (unsigned i = 0; i < BURST; i++) {
            struct conn *c = which[i] = &L.conns[draw(&rng)];
            if (dir == C2B)
                client_seg(pkts[i], c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, h2.data.b, h2.data.len);
            else
                backend_seg(pkts[i], c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, h2.data.b,
                            h2.data.len);
        }
        xlb +=
            process(pkts, BURST, dir == C2B ? "DATA to the backend" : "DATA to the client", BURST);
        for (unsigned i = 0; i < BURST; i++) {
            struct sent s;
            read_sent(i, &s);
            if (dir == C2B)
                which[i]->b_ack = s.seq + s.len;
            else
                which[i]->c_ack = s.seq + s.len;
        }
        free_tx();
    }
    *total = rte_rdtsc() - start;
    return xlb;
}

/* PACKETS unary calls: 32 requests on connections drawn at random, then their 32 answers. */
static void loop_rpc(uint64_t seed, uint64_t *c2b, uint64_t *b2c)
{
    struct rte_mbuf *pkts[BURST];
    struct conn *which[BURST];
    uint32_t streams[BURST];
    uint8_t payload[FRAME_MAX];
    uint64_t rng = seed;
    *c2b = *b2c = 0;
    for (uint32_t k = 0; k < PACKETS / BURST; k++) {
        alloc(pkts, BURST);
        for (unsigned i = 0; i < BURST; i++) {
            struct conn *c = which[i] = &L.conns[draw(&rng)];
            streams[i] = c->next_stream;
            c->next_stream += 2;
            uint32_t n = rpc_request(payload, streams[i]);
            client_seg(pkts[i], c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, payload, n);
        }
        *c2b += process(pkts, BURST, "requests", BURST);
        for (unsigned i = 0; i < BURST; i++) {
            struct sent s;
            read_sent(i, &s);
            which[i]->b_ack = s.seq + s.len;
        }
        free_tx();
        alloc(pkts, BURST);
        for (unsigned i = 0; i < BURST; i++) {
            struct conn *c = which[i];
            uint32_t n = rpc_response(payload, streams[i], !c->trailers_sent);
            c->trailers_sent = true;
            backend_seg(pkts[i], c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, payload, n);
        }
        *b2c += process(pkts, BURST, "responses", BURST);
        for (unsigned i = 0; i < BURST; i++) {
            struct sent s;
            read_sent(i, &s);
            which[i]->c_ack = s.seq + s.len;
            which[i]->c_tsecr = s.opts.tsval;
        }
        free_tx();
    }
}

/* ---- reports ---- */

static int compare_u64(const void *a, const void *b_)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b_;
    return (x > y) - (x < y);
}

static double median_per(uint64_t *runs, uint64_t count)
{
    qsort(runs, RUNS, sizeof(runs[0]), compare_u64);
    return (double)runs[RUNS / 2] / (double)count;
}

static double lo_per(const uint64_t *sorted, uint64_t count)
{
    return (double)sorted[0] / (double)count;
}

static double hi_per(const uint64_t *sorted, uint64_t count)
{
    return (double)sorted[RUNS - 1] / (double)count;
}

static uint64_t event(enum xlb_event_counter e)
{
    return b.stats.events[e];
}

static void per_packet(const char *variant, double *bare_out)
{
    uint64_t bare[RUNS], c2b[RUNS], b2c[RUNS], c2b_all[RUNS], b2c_all[RUNS], rq[RUNS], rs[RUNS];
    uint64_t t;
    /* Warm-up: one of each, not counted. */
    loop_bare(1);
    loop_data(C2B, 1, &t);
    loop_data(B2C, 1, &t);
    loop_rpc(1, &rq[0], &rs[0]);
    uint64_t cookies = event(XLB_EVENT_L7_SET_COOKIES),
             missed = event(XLB_EVENT_L7_SET_COOKIE_MISSED),
             inspect_errors = event(XLB_EVENT_L7_INSPECT_ERRORS);
    for (int r = 0; r < RUNS; r++) {
        uint64_t seed = 1000 + (uint64_t)r;
        bare[r] = loop_bare(seed);
        c2b[r] = loop_data(C2B, seed, &c2b_all[r]);
        b2c[r] = loop_data(B2C, seed, &b2c_all[r]);
        loop_rpc(seed, &rq[r], &rs[r]);
    }
    uint64_t rpc[RUNS];
    for (int r = 0; r < RUNS; r++)
        rpc[r] = rq[r] + rs[r];
    double bare_pp = median_per(bare, PACKETS);
    *bare_out = bare_pp;
    printf("%-7s %-6u %-34s %8.1f %7.1f-%-7.1f\n", variant, L.n, "bare rx/tx loop, per packet",
           bare_pp, lo_per(bare, PACKETS), hi_per(bare, PACKETS));
    struct {
        const char *name;
        uint64_t *runs;
    } rows[] = {{"DATA client -> backend, per packet", c2b},
                {"DATA backend -> client, per packet", b2c},
                {"unary RPC: request (client seg.)", rq},
                {"unary RPC: response (backend seg.)", rs},
                {"unary RPC: both, per RPC", rpc}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        double x = median_per(rows[i].runs, PACKETS);
        double base = i == 4 ? 2 * bare_pp : bare_pp;
        printf("%-7s %-6u %-34s %8.1f %7.1f-%-7.1f %7.2f x %7.2f\n", variant, L.n, rows[i].name, x,
               lo_per(rows[i].runs, PACKETS), hi_per(rows[i].runs, PACKETS), x / base,
               base / (base + x));
    }
    printf("%-7s %-6u (whole DATA loops, harness included: %.1f and %.1f cycles per packet; "
           "Set-Cookie inserted %llu times, missed %llu, inspection given up %llu)\n",
           variant, L.n, median_per(c2b_all, PACKETS), median_per(b2c_all, PACKETS),
           (unsigned long long)(event(XLB_EVENT_L7_SET_COOKIES) - cookies),
           (unsigned long long)(event(XLB_EVENT_L7_SET_COOKIE_MISSED) - missed),
           (unsigned long long)(event(XLB_EVENT_L7_INSPECT_ERRORS) - inspect_errors));
}

/*
 * Connections made (and, with `close`, closed) `window` at a time, removed by expiry, rounds over
 * the pool until MIN_CONNECTIONS. One row: cycles per connection by step; with `close`, also the
 * new connections a worker can take per second at this cost (TSC rate / (total + removal)).
 */
static void new_connections(const char *variant, uint32_t window, const char *name, double bare,
                            bool close)
{
    uint32_t rounds = (MIN_CONNECTIONS + L.n - 1) / L.n;
    uint64_t syn[RUNS], ack[RUNS], hello[RUNS], sack[RUNS], synack[RUNS], replay[RUNS],
        closing[RUNS], removal[RUNS], total[RUNS], life[RUNS];
    struct steps st;
    memset(&st, 0, sizeof(st));
    connect_all(window, &st, close); /* warm-up */
    expire_all();
    for (int r = 0; r < RUNS; r++) {
        memset(&st, 0, sizeof(st));
        uint64_t expired = 0;
        for (uint32_t k = 0; k < rounds; k++) {
            connect_all(window, &st, close);
            expired += expire_all();
        }
        syn[r] = st.syn;
        ack[r] = st.ack;
        hello[r] = st.hello;
        sack[r] = st.settings_ack;
        synack[r] = st.syn_ack;
        replay[r] = st.replay_ack;
        closing[r] = st.close;
        removal[r] = expired;
        total[r] =
            st.syn + st.ack + st.hello + st.settings_ack + st.syn_ack + st.replay_ack + st.close;
        life[r] = total[r] + expired;
    }
    uint64_t conns = (uint64_t)rounds * L.n;
    double t = median_per(total, conns);
    printf("%-7s %-6u %-17s %7.0f %6.0f-%-6.0f  SYN %5.0f  ACK %5.0f  request %5.0f  "
           "SETTINGS ACK %5.0f  SYN-ACK %5.0f  replay ACK %4.0f",
           variant, L.n, name, t, lo_per(total, conns), hi_per(total, conns),
           median_per(syn, conns), median_per(ack, conns), median_per(hello, conns),
           median_per(sack, conns), median_per(synack, conns), median_per(replay, conns));
    if (close)
        printf("  close %5.0f", median_per(closing, conns));
    printf(" | removal %4.0f | %4.1f bare pkts", median_per(removal, conns), t / bare);
    if (close)
        printf(" | %.0f conn/s per worker (>= %d)", (double)b.tsc_hz / median_per(life, conns),
               TARGET_CONN_RATE);
    else
        printf("  <= %d", TARGET_CONN_CYCLES);
    printf("\n");
}

/* ---- main ---- */

static void run(uint32_t n, bool cookie)
{
    const char *variant = cookie ? "cookie" : "plain";
    l7_vip_cookie(cookie);
    L.n = n;
    L.conns = xcalloc(n, sizeof(*L.conns));
    for (uint32_t i = 0; i < n; i++) {
        L.conns[i].client = htonl(0x64400000u + 1 + i % 4096); /* 100.64.0.0/10 */
        L.conns[i].client_port = htons((uint16_t)(1024 + i / 4096));
    }
    L.l7 = xlb_l7_worker_create(0, n, (int)rte_socket_id());
    if (L.l7 == NULL)
        die("cannot create the L7 worker state (raise -m?)");
    b.ctx.l7 = L.l7;
    flows_create(&L.flows, n);

    struct steps st;
    memset(&st, 0, sizeof(st));
    connect_all(BURST, &st, false);
    establish();
    uint32_t hpack, hpack_high, hpack_size;
    xlb_l7_hpack_heap_use(L.l7, &hpack, &hpack_high, &hpack_size);
    printf("%-7s %-6u bound connection: entry %zu bytes + HPACK heap in use %.0f (both decoders) "
           "= %.0f bytes\n",
           variant, n, xlb_l7_bound_bytes(), (double)hpack / n,
           (double)xlb_l7_bound_bytes() + (double)hpack / n);
    double bare;
    per_packet(variant, &bare);
    expire_all();
    uint32_t bindings, bindings_in_use;
    xlb_l7_binding_use(L.l7, &bindings_in_use, &bindings);
    new_connections(variant, BURST, "new conn, hot", bare, false);
    new_connections(variant, bindings, "new conn, spread", bare, false);
    new_connections(variant, BURST, "conn life, hot", bare, true);

    flows_free(&L.flows);
    b.ctx.l7 = NULL;
    xlb_l7_worker_free(L.l7);
    free(L.conns);
}

int main(int argc, char **argv)
{
    uint32_t sizes[8];
    unsigned n_sizes = 0;
    for (int i = 1; i < argc; i++) {
        long n = strtol(argv[i], NULL, 10);
        if (n < BURST || n > (long)MAX_CONNS || n_sizes == 8) {
            fprintf(stderr, "usage: bench_l7 [connections %u..%u]...\n", (unsigned)BURST,
                    MAX_CONNS);
            return 2;
        }
        sizes[n_sizes++] = (uint32_t)n;
    }
    if (n_sizes == 0) {
        sizes[n_sizes++] = 64;
        sizes[n_sizes++] = 1024;
    }
    uint32_t largest = 1024;
    for (unsigned i = 0; i < n_sizes; i++)
        largest = sizes[i] > largest ? sizes[i] : largest;
    eal_init(false, (uint32_t)(512 + (uint64_t)largest * 2 * xlb_l7_connection_bytes() / (1 << 20)),
             NULL);
    setup();
    l7_vip_make();
    h2_make();

    printf("bench_l7: L7 (HTTP/2) connections through xlb_burst_process, TSC %.2f GHz, 4 KiB "
           "pages, bursts of %u, median of %d runs\n",
           (double)b.tsc_hz / 1e9, (unsigned)BURST, RUNS);
    printf("plain: no session affinity; cookie: the route has an A55 session cookie (a "
           "Set-Cookie field is prepared at binding and inserted in responses)\n");
    printf("first request segment %u bytes (preface, SETTINGS, WINDOW_UPDATE, HEADERS %u-byte "
           "block, DATA); later request blocks %u bytes, response %u, trailers %u\n\n",
           h2.hello.len, h2.req_first.len, h2.req_next.len, h2.resp_next.len, h2.trailers_next.len);
    printf("per packet, %u packets (RPCs) per run; cycles in xlb (expiry, poll, burst function); "
           "'x bare': against the bare loop (per RPC: two bare packets); 'rate': bare / (bare + "
           "xlb)\n",
           PACKETS);
    printf("'new conn' rows: cycles per new connection in the burst function, median (min-max), "
           "then by step (SYN, cookie ACK, first request, SETTINGS ACK: binding, backend SYN-ACK: "
           "replay), the removal by expiry (not in the total), and the total in bare-loop "
           "packets; %u connections or more per run\n",
           MIN_CONNECTIONS);
    printf("%-7s %-6s %-34s %8s %-15s %9s %7s\n", "variant", "conns", "", "median", " (min-max)",
           "x bare", "rate");
    for (unsigned i = 0; i < n_sizes; i++)
        for (int cookie = 0; cookie < 2; cookie++)
            run(sizes[i], cookie);
    l7_memory_report();
    b.snap->vips[0].l7 = false;
    l7_vip_free();
    teardown();
    rte_eal_cleanup();
    return 0;
}
