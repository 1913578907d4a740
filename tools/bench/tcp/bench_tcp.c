/*
 * bench_tcp: what the TCP endpoint (dataplane/tcp/, docs/tcp.md) costs a worker, measured
 * in-process: two endpoints back to back (bench_tcp_wire.h), no port, no namespace.
 *
 * The wire carries each segment as a NIC would: copied into one fresh mbuf (rx) and the sent
 * packet freed (tx done). Only the cycles inside the endpoint's API are counted, per side. The
 * baseline ("bare loop") is that rx and tx alone: a frame of the same size copied into a fresh
 * mbuf, put on a tx array and freed, in bursts of 32, measured in the same process, its runs
 * interleaved with the others.
 *
 * Figures, each the median of RUNS runs:
 *  1. bulk, one connection, IPv4, default configuration (256 KiB buffers, MSS 1460, timestamps,
 *     SACK, CUBIC): the active side's application writes 16 KiB chains (8 mbufs of 2 KiB) until
 *     the send queue refuses and flushes; the wire carries the full-MSS segments to the passive
 *     side in bursts of 32, whose application reads (peek/consume) everything after each burst;
 *     the passive side's ACKs go back in bursts of 32; both sides' timers are polled and the
 *     clock moves 1 ms. Per data segment: the receiver's cycles (input, reading, its ACKs,
 *     timers) and the sender's (write, flush, the ACKs' input and what it sends from them,
 *     timers), against the bare loop of a full-size frame. The sender's run is made twice,
 *     interleaved: its application writing 2 KiB mbufs (whose segments are copied into header
 *     mbufs), and writing mbufs of one segment's payload, 1,448 bytes, as the relay writes the
 *     segments it received (each sent in place, its headers in its headroom);
 *  2. open and close, 32 connections at a time: connect, SYN answered with a cookie, SYN-ACK,
 *     cookie ACK accepted, the active side's shutdown (FIN), the passive side's FIN input, its
 *     read of the end of stream and shutdown, the active side's input of ACK and FIN (into
 *     TIME-WAIT), the passive side's input of the last ACK (closed, block freed). Per
 *     connection, each side's cycles; TIME-WAIT's end is not counted (the clock then jumps
 *     past it and the timers fire untimed);
 *  3. memory: the control block (xlb_tcp_conn_size), an idle established connection
 *     (xlb_tcp_conn_memory), the rte_malloc heap an endpoint holds per pool entry, and a busy
 *     connection: the sender's send queue full (snd_buf) and the receiver holding the window
 *     unread, its ACKs lost.
 * With --nic-offload, the endpoints leave TCP and IPv4 header checksums to the port
 * (tx_cksum_offload, tx_ip_cksum_offload) and the wire marks every frame's checksums good, as
 * a NIC with checksum offloads does; without, they are computed on tx and the TCP checksum
 * verified on rx in software.
 * Targets (issue 18) are printed beside the figures: a benchmark never passes or fails. It
 * stops if a segment is retransmitted or lost, or a connection does not end as expected,
 * because the figures would then not measure what they say.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "bench_clock.h"
#include "bench_tcp_wire.h"

#define RUNS          5
#define BULK_SEGMENTS (1u << 17) /* data segments per bulk run */
#define BARE_PACKETS  (1u << 17) /* per bare run */
#define CONN_BATCH    32u        /* connections opened and closed together */
#define CONN_ROUNDS   256u       /* batches per run: 8,192 connections */
#define CHAIN_MBUFS   8u         /* a write: 8 mbufs of 2 KiB, as a 16 KiB HTTP/2 frame */
#define CHAIN_PIECE   2048u
#define SEGMENT_PIECE 1448u /* or 8 of one full segment's payload, as the relay writes */

#define TARGET_SEG_X_BARE  3.0
#define TARGET_CONN_CYCLES 3000
#define TARGET_IDLE_BYTES  4096

#define FULL_FRAME 1500u /* IPv4 + TCP with timestamps + 1448 bytes */
#define ACK_FRAME  52u   /* IPv4 + TCP with timestamps */

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts the runs; then [0] and [RUNS - 1] are the min and max. */
static uint64_t median(uint64_t *runs)
{
    qsort(runs, RUNS, sizeof(runs[0]), compare_u64);
    return runs[RUNS / 2];
}

static double per(uint64_t cycles, uint64_t count)
{
    return (double)cycles / (double)count;
}

/* ---- the bare loop ---- */

/* rx and tx alone: a frame of len bytes copied into a fresh mbuf, batched, freed. */
static uint64_t loop_bare(uint32_t len)
{
    static uint8_t frame[FULL_FRAME];
    struct rte_mbuf *tx[WIRE_BURST];
    uint64_t start = ticks();
    for (uint32_t k = 0; k < BARE_PACKETS / WIRE_BURST; k++) {
        for (uint32_t i = 0; i < WIRE_BURST; i++) {
            struct rte_mbuf *m = rte_pktmbuf_alloc(W.pool);
            if (m == NULL)
                die("mbuf pool empty");
            char *dst = rte_pktmbuf_append(m, (uint16_t)len);
            memcpy(dst, frame, len);
            m->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
            tx[i] = m;
        }
        for (uint32_t i = 0; i < WIRE_BURST; i++)
            rte_pktmbuf_free(tx[i]);
    }
    return ticks() - start;
}

/* ---- bulk ---- */

static struct rte_mbuf *spare;           /* a chain the send queue refused, written next time */
static uint32_t piece_len = CHAIN_PIECE; /* the bytes of each mbuf the application writes */

static struct rte_mbuf *make_chain(void)
{
    struct rte_mbuf *head = NULL;
    for (uint32_t i = 0; i < CHAIN_MBUFS; i++) {
        struct rte_mbuf *m = rte_pktmbuf_alloc(W.pool);
        if (m == NULL || rte_pktmbuf_append(m, (uint16_t)piece_len) == NULL)
            die("mbuf pool empty");
        if (head != NULL && rte_pktmbuf_chain(head, m) != 0)
            die("chain too long");
        head = head ? head : m;
    }
    return head;
}

/* The sender's application: write until the send queue refuses, then flush. Only the
 * endpoint's calls are timed, not building the chains. */
static void app_write(struct xlb_tcp_conn *c)
{
    /* Bounded: the send queue takes at most snd_buf. */
    for (int i = 0; i < 256; i++) {
        if (spare == NULL)
            spare = make_chain();
        uint64_t t0 = ticks();
        int r = xlb_tcp_write(W.active.ep, c, spare);
        W.active.cycles += ticks() - t0;
        if (r != 0)
            break;
        spare = NULL;
    }
    uint64_t t0 = ticks();
    xlb_tcp_flush(W.active.ep, c);
    W.active.cycles += ticks() - t0;
}

struct bulk_cycles {
    uint64_t send, receive, segs, bytes, acks;
};

static void counts_reset(void)
{
    W.active.cycles = W.passive.cycles = 0;
    memset(&W.to_passive, 0, sizeof(W.to_passive));
    memset(&W.to_active, 0, sizeof(W.to_active));
}

/* From now on the application writes mbufs of piece bytes. */
static void write_pieces(uint32_t piece)
{
    if (piece != piece_len) {
        rte_pktmbuf_free(spare);
        spare = NULL;
        piece_len = piece;
    }
}

/* A bulk run whose application writes mbufs of piece bytes. */
static void bulk_run(struct bulk_cycles *out, uint32_t piece)
{
    struct bconn *b = &W.conns[0];
    write_pieces(piece);
    counts_reset();
    /* Bounded: each round carries at least one segment while the connection lives. */
    for (uint32_t round = 0; W.to_passive.data_segs < BULK_SEGMENTS; round++) {
        if (round > BULK_SEGMENTS)
            die("the bulk transfer stalled");
        app_write(b->active);
        wire_deliver(&W.active, true);
        wire_deliver(&W.passive, false);
        wire_tick(1);
    }
    *out = (struct bulk_cycles){W.active.cycles, W.passive.cycles, W.to_passive.data_segs,
                                W.to_passive.data_bytes, W.to_active.pure_acks};
}

/* Connection 0, established: the bulk transfer's. */
static void bulk_open(void)
{
    wire_connect(0, 0xfff00000u);
    wire_deliver(&W.active, false);  /* SYN -> cookie SYN-ACK */
    wire_deliver(&W.passive, false); /* SYN-ACK -> ACK */
    wire_deliver(&W.active, false);  /* ACK -> accepted */
    struct bconn *b = &W.conns[0];
    if (b->passive == NULL || xlb_tcp_conn_state(b->active) != XLB_TCP_ESTABLISHED ||
        xlb_tcp_conn_state(b->passive) != XLB_TCP_ESTABLISHED)
        die("the bulk connection did not open");
}

/* ---- open and close ---- */

enum {
    A_CONNECT,
    A_SYN_ACK,
    A_SHUTDOWN,
    A_FIN,
    A_STEPS,
    P_SYN = 0,
    P_ACK,
    P_FIN,
    P_SHUTDOWN,
    P_LAST_ACK,
    P_STEPS
};

struct conn_cycles {
    uint64_t active[A_STEPS], passive[P_STEPS];
};

/* What a step cost each side: their cycles since the last mark. */
static void mark(uint64_t *active_step, uint64_t *passive_step)
{
    static uint64_t last_active, last_passive;
    if (active_step != NULL)
        *active_step += W.active.cycles - last_active;
    if (passive_step != NULL)
        *passive_step += W.passive.cycles - last_passive;
    last_active = W.active.cycles;
    last_passive = W.passive.cycles;
}

static void conn_batch(uint32_t *iss, struct conn_cycles *cc)
{
    mark(NULL, NULL);
    for (uint32_t i = 0; i < CONN_BATCH; i++)
        wire_connect(i, (*iss += 0x10000));
    mark(&cc->active[A_CONNECT], NULL);
    wire_deliver(&W.active, false);
    mark(NULL, &cc->passive[P_SYN]);
    wire_deliver(&W.passive, false);
    mark(&cc->active[A_SYN_ACK], NULL);
    wire_deliver(&W.active, false);
    mark(NULL, &cc->passive[P_ACK]);
    for (uint32_t i = 0; i < CONN_BATCH; i++) {
        struct bconn *b = &W.conns[i];
        if (b->passive == NULL)
            die("a connection was not accepted");
        uint64_t t0 = ticks();
        xlb_tcp_shutdown(W.active.ep, b->active);
        W.active.cycles += ticks() - t0;
    }
    mark(&cc->active[A_SHUTDOWN], NULL);
    wire_deliver(&W.active, false);
    mark(NULL, &cc->passive[P_FIN]);
    for (uint32_t i = 0; i < CONN_BATCH; i++) {
        struct bconn *b = &W.conns[i];
        const uint8_t *d;
        uint32_t len;
        bool eof = false;
        uint64_t t0 = ticks();
        if (b->passive != NULL && xlb_tcp_peek(b->passive, &d, &len, &eof) == 0 && eof)
            xlb_tcp_shutdown(W.passive.ep, b->passive);
        W.passive.cycles += ticks() - t0;
        if (!eof)
            die("the passive side saw no end of stream");
    }
    mark(NULL, &cc->passive[P_SHUTDOWN]);
    wire_deliver(&W.passive, false);
    mark(&cc->active[A_FIN], NULL);
    wire_deliver(&W.active, false);
    mark(NULL, &cc->passive[P_LAST_ACK]);
    for (uint32_t i = 0; i < CONN_BATCH; i++)
        if (!W.conns[i].passive_closed || !W.conns[i].active_closed ||
            xlb_tcp_conn_state(W.conns[i].active) != XLB_TCP_TIME_WAIT)
            die("a connection did not close as expected");
    if (xlb_tcp_conns_in_use(W.passive.ep) != 0 || W.active.n_tx || W.passive.n_tx)
        die("the passive side kept a connection, or segments are left");
    wire_drain(); /* TIME-WAIT's end: not counted */
}

static void conn_run(struct conn_cycles *cc, uint64_t *active, uint64_t *passive)
{
    static uint32_t iss = 1;
    memset(cc, 0, sizeof(*cc));
    W.active.cycles = W.passive.cycles = 0;
    for (uint32_t r = 0; r < CONN_ROUNDS; r++)
        conn_batch(&iss, cc);
    *active = W.active.cycles;
    *passive = W.passive.cycles;
}

/* ---- memory ---- */

static void memory_pool(void)
{
    const uint32_t sizes[] = {1024, 65536};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        struct xlb_tcp_config cfg;
        xlb_tcp_config_default(&cfg);
        cfg.max_connections = sizes[i];
        uint64_t h0 = heap_bytes();
        struct xlb_tcp_endpoint *ep = xlb_tcp_endpoint_create(&cfg, W.pool, W.now_ms);
        uint64_t h1 = heap_bytes();
        if (ep == NULL)
            die("cannot create an endpoint (raise -m?)");
        xlb_tcp_endpoint_free(ep);
        printf("  endpoint of %5u connections: %.1f MiB of rte_malloc heap, %.0f bytes per "
               "connection\n",
               sizes[i], (double)(h1 - h0) / (1 << 20), per(h1 - h0, sizes[i]));
    }
}

static void print_conn_info(const char *who, const struct xlb_tcp_conn *c)
{
    struct xlb_tcp_conn_info info;
    xlb_tcp_conn_info(c, &info);
    printf("  %-34s %8u bytes  (%.1f KiB; send queue %u, in flight %u, receive queue %u)\n", who,
           xlb_tcp_conn_memory(c), xlb_tcp_conn_memory(c) / 1024.0, info.snd_queue, info.unacked,
           info.rcv_queue);
}

/* The bulk connection with a full send queue, its window delivered and unread, the ACKs lost. */
static void memory_busy(void)
{
    struct bconn *b = &W.conns[0];
    /* Bounded: without ACKs the sender stops at its window; three turns carry what it sent. */
    for (int i = 0; i < 3; i++) {
        app_write(b->active);
        wire_deliver(&W.active, false);
        wire_drop(&W.passive);
    }
    print_conn_info("busy, sender (send queue full)", b->active);
    print_conn_info("busy, receiver (window unread)", b->passive);
}

/* ---- main ---- */

static double rdtsc_pair(void)
{
    uint64_t d[1001];
    for (int i = 0; i < 1001; i++) {
        uint64_t t0 = ticks();
        uint64_t t1 = ticks();
        d[i] = t1 - t0;
    }
    qsort(d, 1001, sizeof(d[0]), compare_u64);
    return (double)d[500];
}

static void print_row(const char *name, uint64_t *runs, uint64_t count, double bare,
                      const char *target)
{
    double m = per(median(runs), count);
    printf("%-40s %8.1f %8.1f-%-8.1f", name, m, per(runs[0], count), per(runs[RUNS - 1], count));
    if (bare > 0)
        printf(" %6.2f x", m / bare);
    else
        printf(" %8s", "");
    printf("  %s\n", target);
}

int main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "--nic-offload") != 0)) {
        fprintf(stderr, "usage: bench_tcp [--nic-offload]\n");
        return 2;
    }
    W.nic_offload = argc == 2;
    eal_init(512);
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = CONN_BATCH;
    cfg.tx_cksum_offload = W.nic_offload;
    cfg.tx_ip_cksum_offload = W.nic_offload; /* a port with one has both (port_offloads.c) */
    wire_create(&cfg);

    printf("bench_tcp: two TCP endpoints back to back (dataplane/tcp/), TSC %.2f GHz, 4 KiB "
           "pages, IPv4, default configuration (MSS 1460, timestamps, SACK, CUBIC, 256 KiB "
           "buffers), median of %d runs\n",
           (double)rte_get_tsc_hz() / 1e9, RUNS);
    printf("TCP checksums: %s\n",
           W.nic_offload ? "NIC offload (tx left to the port, rx flagged good, none computed)"
                         : "software (computed on tx, verified on rx: rx flag unknown)");
    printf("cycles inside the endpoint's API only; the wire's rx copy and tx free are the bare "
           "loop's, not counted; a pair of TSC reads costs %.0f cycles\n",
           rdtsc_pair());
    printf("bulk: %u data segments per run; open+close: %u connections per run, %u at a time\n\n",
           BULK_SEGMENTS, CONN_BATCH * CONN_ROUNDS, CONN_BATCH);

    bulk_open();
    printf("memory:\n  %-34s %8u bytes\n", "control block (xlb_tcp_conn_size)",
           xlb_tcp_conn_size());
    print_conn_info("idle established, active end", W.conns[0].active);
    print_conn_info("idle established, passive end", W.conns[0].passive);
    printf("  (target: <= %d bytes per idle connection)\n\n", TARGET_IDLE_BYTES);

    uint64_t bare_full[RUNS], bare_ack[RUNS], send[RUNS], receive[RUNS], active[RUNS],
        passive[RUNS], send_in_place[RUNS];
    uint64_t segs = 0, bytes = 0, acks = 0, conns = (uint64_t)CONN_BATCH * CONN_ROUNDS;
    struct conn_cycles steps[RUNS];
    struct bulk_cycles bc;
    /* Warm-up: one of each, not counted (the bulk one also opens the congestion window). */
    loop_bare(FULL_FRAME);
    bulk_run(&bc, CHAIN_PIECE);
    bulk_run(&bc, SEGMENT_PIECE);
    const struct xlb_tcp_counters *sc = xlb_tcp_counters(W.active.ep);
    uint64_t retransmits = sc->retransmits;
    uint64_t in_place[2] = {0, 0}, in_place_segs = 0; /* [0]: 2 KiB mbufs, [1]: a segment's */
    for (int r = 0; r < RUNS; r++) {
        bare_full[r] = loop_bare(FULL_FRAME);
        bare_ack[r] = loop_bare(ACK_FRAME);
        uint64_t in_place_at = sc->segs_in_place;
        bulk_run(&bc, CHAIN_PIECE);
        in_place[0] += sc->segs_in_place - in_place_at;
        /* A run ends at the burst that passes BULK_SEGMENTS: scaled to exactly that many. */
        send[r] = bc.send * BULK_SEGMENTS / bc.segs;
        receive[r] = bc.receive * BULK_SEGMENTS / bc.segs;
        segs += bc.segs;
        bytes += bc.bytes;
        acks += bc.acks;
        in_place_at = sc->segs_in_place;
        bulk_run(&bc, SEGMENT_PIECE);
        send_in_place[r] = bc.send * BULK_SEGMENTS / bc.segs;
        in_place_segs += bc.segs;
        in_place[1] += sc->segs_in_place - in_place_at;
    }
    if (sc->retransmits != retransmits || W.lost != 0)
        die("segments were retransmitted or lost in the bulk runs");
    write_pieces(CHAIN_PIECE); /* the busy sender's queue: 2 KiB mbufs, as before */
    memory_busy();
    xlb_tcp_abort(W.passive.ep, W.conns[0].passive);
    xlb_tcp_abort(W.active.ep, W.conns[0].active);
    wire_drain();
    struct conn_cycles warm;
    uint64_t a, p;
    conn_run(&warm, &a, &p);
    for (int r = 0; r < RUNS; r++)
        conn_run(&steps[r], &active[r], &passive[r]);
    if (W.lost != 0)
        die("segments reached a connection already gone in the open+close runs");
    memory_pool();

    double full = per(median(bare_full), BARE_PACKETS);
    double ack = per(median(bare_ack), BARE_PACKETS);
    char target[64];
    printf("\n%-40s %8s %-17s %8s  %s\n", "cycles", "median", " (min-max)", "x bare", "target");
    print_row("bare loop, full-size frame (1500 B)", bare_full, BARE_PACKETS, 0, "");
    print_row("bare loop, pure ACK frame (52 B)", bare_ack, BARE_PACKETS, 0, "");
    snprintf(target, sizeof(target), "<= %.1f x bare", TARGET_SEG_X_BARE);
    print_row("bulk receive, per data segment", receive, BULK_SEGMENTS, full, target);
    print_row("bulk send, per data segment", send, BULK_SEGMENTS, full, target);
    print_row("bulk send, one segment per mbuf written", send_in_place, BULK_SEGMENTS, full,
              target);
    printf("%-40s %.1f bytes per segment, %.2f ACKs per segment, %llu window updates in all\n",
           "  (bulk)", (double)bytes / (double)segs, (double)acks / (double)segs,
           (unsigned long long)xlb_tcp_counters(W.passive.ep)->window_updates);
    printf("%-40s %.1f %% of the segments sent in place writing 2 KiB mbufs, %.1f %% writing "
           "one segment's payload per mbuf\n",
           "  (send)", 100.0 * (double)in_place[0] / (double)segs,
           100.0 * (double)in_place[1] / (double)in_place_segs);
    snprintf(target, sizeof(target), "<= %d", TARGET_CONN_CYCLES);
    print_row("passive open+close, per connection", passive, conns, ack, target);
    print_row("active open+close, per connection", active, conns, ack, target);
    uint64_t st[RUNS];
    const char *pn[] = {"SYN (cookie)", "cookie ACK (accept)", "FIN in", "read EOF + shutdown",
                        "last ACK in"};
    const char *an[] = {"connect (SYN)", "SYN-ACK in", "shutdown (FIN)", "ACK + FIN in"};
    printf("  passive steps:");
    for (int s = 0; s < P_STEPS; s++) {
        for (int r = 0; r < RUNS; r++)
            st[r] = steps[r].passive[s];
        printf("  %s %.0f", pn[s], per(median(st), conns));
    }
    printf("\n  active steps: ");
    for (int s = 0; s < A_STEPS; s++) {
        for (int r = 0; r < RUNS; r++)
            st[r] = steps[r].active[s];
        printf("  %s %.0f", an[s], per(median(st), conns));
    }
    printf("\n  ('x bare' of the open+close rows: against the bare loop of a pure ACK frame)\n");
    printf("(bulk: 'x bare' against the bare loop of a full-size frame; ratio of the pair, "
           "endpoint + bare: receive %.2f, send %.2f)\n",
           (per(median(receive), BULK_SEGMENTS) + full) / full,
           (per(median(send), BULK_SEGMENTS) + full) / full);
    wire_free();
    rte_eal_cleanup();
    return 0;
}
