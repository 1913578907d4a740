/*
 * bench_fwd: what the full-NAT data path (dataplane/flow/, dataplane/nat/) costs a worker, measured
 * in-process without a NIC.
 *
 * Crafted frames go through the worker's real burst function, xlb_burst_process. It runs with
 * a real snapshot: one port, an L4 VIP whose LB tree is a compiled round-robin cluster of 16
 * on-link backends (resolved neighbours), and four SNAT addresses. It uses a real flow table
 * and a real LB worker state with its load counters. The cluster's circuit breaker allows
 * 2^30 requests: every open connection counts as one, and the xDS default of 1,024 would
 * refuse the 1,025th connection. Per burst the loop does what xlb_worker_main does around rx
 * and tx: read the TSC into now_tsc, run xlb_flow_expire, process the burst, and hand the tx
 * batch on (here: free it).
 *
 * rx is simulated by taking 32 mbufs from a mempool (through the lcore's cache) and copying a
 * frame template into each. The copy gets the flow's addresses and ports and a valid IPv4
 * header checksum, and RTE_MBUF_F_RX_IP_CKSUM_GOOD is set, as a NIC with the offload xlb
 * enables would set it. tx frees the mbufs. The baseline ("bare loop") is exactly that, with
 * the packets put on the tx batch unparsed: what a bare receive-and-transmit costs per packet
 * in this harness. It is measured in the same process, interleaved with the forwarding runs.
 * Flows are drawn at random for every packet, in both loops alike.
 *
 * Figures, each the median of RUNS runs:
 *  1. the bare loop, in cycles per packet;
 *  2. established flows (SYN + backend SYN-ACK first): data segments client -> backend and
 *     backend -> client, in cycles per packet for the whole loop. Also as the packet rate
 *     relative to the bare loop, and split into the burst function and the expiry scan;
 *  3. new connections: SYN, SYN-ACK and ACK per connection (the SYNs with Linux's options,
 *     their MSS clamped to the port's 1400), counted as the cycles spent in
 *     xlb_burst_process. The table is filled to capacity, then every flow expires
 *     (xlb_flow_expire with now_tsc moved past the idle timeout), and the removal is counted too.
 *     "hot": 32 connections at a time, so each SYN-ACK finds what its SYN touched in cache;
 *     "spread": a quarter of the table at a time (the SYN cap), the SYN-ACKs and ACKs in a
 *     random order, so at 100,000 flows they mostly do not;
 *  4. memory per flow entry: rte_malloc heap bytes held by a flow table of known capacity,
 *     and by its rte_hash alone, per entry.
 * Targets are printed for comparison only: a benchmark never passes or fails. It stops if a
 * packet is dropped, because the figures would then not measure forwarding.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "bench_fwd_memif.h"
#include "bench_fwd_setup.h"
#include "nat/nat.h"

#define RUNS                      5
#define PACKETS                   (1u << 20) /* per forwarding run */
#define MIN_CONNECTIONS           65536u /* per new-connection run: rounds over the table until then */
#define NEW_CONNECTIONS_MAX_FLOWS 1000000u
#define MEMORY_MAX_CAPACITY       10000000u

#define TARGET_RATE_RATIO     0.5
#define TARGET_CONN_CYCLES    2000
#define TARGET_BYTES_PER_FLOW 128

static int compare_u64(const void *a, const void *b_)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b_;
    return (x > y) - (x < y);
}

/* The median of RUNS values (sorted in place). */
static uint64_t median(uint64_t *runs)
{
    qsort(runs, RUNS, sizeof(runs[0]), compare_u64);
    return runs[RUNS / 2];
}

/* ---- handshakes and expiry ---- */

/*
 * n (<= BURST) frames of template t with tuples[0..n) through the burst function. Returns the
 * TSC cycles the call took; every frame must be on the tx batch, which is left to the caller.
 */
static uint64_t send_burst(const struct tmpl *t, const struct tuple *tuples, uint16_t n)
{
    struct rte_mbuf *pkts[BURST];
    if (rte_pktmbuf_alloc_bulk(b.pool, pkts, n) != 0)
        die("mbuf pool empty");
    for (uint16_t i = 0; i < n; i++)
        fill(pkts[i], t, &tuples[i]);
    uint64_t t0 = rte_rdtsc();
    xlb_burst_process(&b.ctx, b.snap, 0, pkts, n);
    uint64_t cycles = rte_rdtsc() - t0;
    if (b.ctx.tx[0].n != n)
        die_dropped("handshake");
    return cycles;
}

struct handshake_cycles {
    uint64_t syn, syn_ack, ack;
};

/*
 * Open a connection on every flow of the table (it ends full), `window` connections at a
 * time: the clients' SYNs, then the backends' SYN-ACKs to the SNAT address and port xlb chose,
 * then (with ack set) the clients' ACKs, each in bursts of 32. With shuffle, the SYN-ACKs and
 * the ACKs of a window come in a random order. Adds the cycles spent in the burst function to
 * *c when c is not NULL.
 */
static void connect_all(struct flows *f, uint32_t window, bool ack, bool shuffle,
                        struct handshake_cycles *c)
{
    struct handshake_cycles sum = {0, 0, 0};
    struct tuple gather[BURST];
    uint32_t *order = xcalloc(window, sizeof(*order));
    uint64_t rng = f->n;
    for (uint32_t w = 0; w < f->n; w += window) {
        uint32_t end = f->n - w < window ? f->n : w + window, len = end - w;
        for (uint32_t i = w; i < end; i += BURST) {
            uint16_t k = (uint16_t)(end - i < BURST ? end - i : BURST);
            sum.syn += send_burst(&b.syn, &f->client[i], k);
            for (uint16_t j = 0; j < k; j++)
                answer_tuple(b.ctx.tx[0].pkts[j], &f->backend[i + j]);
            free_tx();
        }
        for (int phase = 0; phase < (ack ? 2 : 1); phase++) {
            for (uint32_t i = 0; i < len; i++)
                order[i] = w + i;
            for (uint32_t i = len - 1; shuffle && i > 0; i--) {
                uint32_t j = next_index(&rng, i + 1), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            const struct tuple *tuples = phase == 0 ? f->backend : f->client;
            for (uint32_t i = 0; i < len; i += BURST) {
                uint16_t k = (uint16_t)(len - i < BURST ? len - i : BURST);
                for (uint16_t j = 0; j < k; j++)
                    gather[j] = tuples[order[i + j]];
                uint64_t cycles = send_burst(phase == 0 ? &b.syn_ack : &b.ack, gather, k);
                *(phase == 0 ? &sum.syn_ack : &sum.ack) += cycles;
                free_tx();
            }
        }
    }
    free(order);
    if (f->table->n_used != f->n)
        die("the flow table did not fill");
    if (c != NULL) {
        c->syn += sum.syn;
        c->syn_ack += sum.syn_ack;
        c->ack += sum.ack;
    }
}

/* ---- handshakes through the SYN proxy ---- */

/*
 * The client's ACK of a cookie SYN-ACK xlb sent, written over it as the client's TCP would
 * answer: addresses, ports and MACs swapped, seq and ack moved on, the SYN-ACK's TSval echoed
 * (its options' room filled with NOPs around the timestamp). Harness work, not measured.
 */
static void client_ack_of(struct rte_mbuf *m)
{
    struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
    struct rte_ether_addr mac = eth->src_addr;
    eth->src_addr = eth->dst_addr;
    eth->dst_addr = mac;
    struct rte_tcp_hdr *tcp;
    if (b.ipv6) {
        struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(eth + 1);
        uint8_t a[16];
        memcpy(a, ip6->src_addr, 16);
        memcpy(ip6->src_addr, ip6->dst_addr, 16);
        memcpy(ip6->dst_addr, a, 16);
        tcp = (struct rte_tcp_hdr *)(ip6 + 1);
        m->ol_flags = 0;
    } else {
        struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
        rte_be32_t a = ip->src_addr; /* the header's sum does not change */
        ip->src_addr = ip->dst_addr;
        ip->dst_addr = a;
        tcp = (struct rte_tcp_hdr *)(ip + 1);
        m->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD;
    }
    uint8_t *opt = (uint8_t *)(tcp + 1);
    uint32_t opts_len = (uint32_t)(tcp->data_off >> 4) * 4 - sizeof(*tcp), tsval = 0;
    for (uint32_t i = 0; i + 1 < opts_len && opt[i] != 0;) {
        if (opt[i] == 1) {
            i++;
            continue;
        }
        if (opt[i] == 8 && i + 10 <= opts_len)
            memcpy(&tsval, opt + i + 2, 4);
        i += opt[i + 1] < 2 ? opts_len : opt[i + 1];
    }
    if (opts_len < 12)
        die("the cookie SYN-ACK carries no timestamp");
    memset(opt, 1, opts_len);
    opt[2] = 8;
    opt[3] = 10;
    uint32_t our_tsval = rte_cpu_to_be_32(2);
    memcpy(opt + 4, &our_tsval, 4);
    memcpy(opt + 8, &tsval, 4);
    rte_be16_t port = tcp->src_port;
    tcp->src_port = tcp->dst_port;
    tcp->dst_port = port;
    rte_be32_t seq = tcp->sent_seq;
    tcp->sent_seq = tcp->recv_ack;
    tcp->recv_ack = rte_cpu_to_be_32(rte_be_to_cpu_32(seq) + 1);
    tcp->tcp_flags = RTE_TCP_ACK_FLAG;
}

/*
 * connect_all's handshakes with the SYN proxy on, `window` (<= BURST) connections at a time:
 * the clients' SYNs (answered with cookies), their ACKs (the flow and the backend SYN), the
 * backends' SYN-ACKs (absorbed and ACKed), each burst's cycles added to *c: syn, ack and
 * syn_ack.
 */
static void proxy_connect_all(struct flows *f, uint32_t window, struct handshake_cycles *c)
{
    struct rte_mbuf *acks[BURST];
    for (uint32_t i = 0; i < f->n; i += window) {
        uint16_t k = (uint16_t)(f->n - i < window ? f->n - i : window);
        c->syn += send_burst(&b.syn, &f->client[i], k);
        for (uint16_t j = 0; j < k; j++) {
            acks[j] = b.ctx.tx[0].pkts[j];
            client_ack_of(acks[j]);
        }
        b.ctx.tx[0].n = 0;
        uint64_t t0 = rte_rdtsc();
        xlb_burst_process(&b.ctx, b.snap, 0, acks, k);
        c->ack += rte_rdtsc() - t0;
        if (b.ctx.tx[0].n != k)
            die_dropped("proxy: the clients' ACKs");
        for (uint16_t j = 0; j < k; j++)
            answer_tuple(b.ctx.tx[0].pkts[j], &f->backend[i + j]);
        free_tx();
        c->syn_ack += send_burst(&b.syn_ack, &f->backend[i], k);
        free_tx();
    }
    if (f->table->n_used != f->n)
        die("the flow table did not fill");
}

/*
 * Let every flow expire: now_tsc past the established timeout, then xlb_flow_expire as the
 * worker calls it once per poll loop, until the table is empty.
 */
static uint64_t expire_all(struct flows *f)
{
    b.ctx.now_tsc += (uint64_t)(XLB_FLOW_ESTABLISHED_TIMEOUT_S + 1) * b.tsc_hz;
    uint64_t limit = (uint64_t)f->table->capacity * 4 + 65536, calls = 0;
    uint64_t t0 = rte_rdtsc();
    while (f->table->n_used != 0 && calls++ < limit)
        xlb_flow_expire(&b.ctx, b.snap);
    uint64_t cycles = rte_rdtsc() - t0;
    if (f->table->n_used != 0)
        die("flows left after the expiry sweep");
    b.ctx.now_tsc += b.tsc_hz;
    return cycles;
}

/* ---- the loops ---- */

/* The baseline: rx (alloc + fill) and tx (batch + free), nothing parsed. */
static uint64_t loop_bare(const struct tmpl *t, const struct tuple *tuples, uint32_t n,
                          uint64_t seed)
{
    struct rte_mbuf *pkts[BURST];
    uint64_t rng = seed, sent = 0;
    uint64_t start = rte_rdtsc();
    for (uint32_t k = 0; k < PACKETS / BURST; k++) {
        fill_burst(pkts, t, tuples, n, &rng);
        for (unsigned i = 0; i < BURST; i++)
            xlb_tx_enqueue(&b.ctx, 0, pkts[i]);
        sent += free_tx();
    }
    uint64_t cycles = rte_rdtsc() - start;
    if (sent != PACKETS)
        die("bare loop lost packets");
    return cycles;
}

struct fwd_cycles {
    uint64_t total, process, expire;
};

/* As the worker's poll loop: rx, now_tsc, expiry scan, burst function, tx. */
static void loop_forward(const struct tmpl *t, const struct tuple *tuples, uint32_t n,
                         uint64_t seed, struct fwd_cycles *out)
{
    struct rte_mbuf *pkts[BURST];
    uint64_t rng = seed, sent = 0, process = 0, expire = 0;
    uint64_t start = rte_rdtsc();
    for (uint32_t k = 0; k < PACKETS / BURST; k++) {
        fill_burst(pkts, t, tuples, n, &rng);
        uint64_t t0 = rte_rdtsc();
        b.ctx.now_tsc = t0;
        xlb_flow_expire(&b.ctx, b.snap);
        uint64_t t1 = rte_rdtsc();
        xlb_burst_process(&b.ctx, b.snap, 0, pkts, BURST);
        uint64_t t2 = rte_rdtsc();
        sent += free_tx();
        expire += t1 - t0;
        process += t2 - t1;
    }
    out->total = rte_rdtsc() - start;
    out->process = process;
    out->expire = expire;
    if (sent != PACKETS)
        die_dropped("forwarding");
}

/*
 * Reference for the large tables: TSC cycles of one dependent random read in a buffer of
 * `bytes` (a pointer chase over a random cycle of its cache lines), i.e. what a cache and TLB
 * miss costs here. malloc'd memory, 4 KiB pages like the --no-huge heap.
 */
static double chase_cycles(uint64_t bytes)
{
    size_t lines = bytes / 64, steps = 200000;
    uint64_t *buf = xcalloc(lines, 64);
    uint32_t *order = xcalloc(lines, sizeof(*order));
    uint64_t x = bytes;
    for (size_t i = 0; i < lines; i++)
        order[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        uint32_t j = next_index(&x, (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++)
        buf[order[i] * 8] = (uint64_t)(uintptr_t)&buf[order[(i + 1) % lines] * 8];
    const volatile uint64_t *p = &buf[order[0] * 8];
    for (size_t i = 0; i < lines; i++) /* every line and page once */
        p = (const volatile uint64_t *)(uintptr_t)*p;
    uint64_t start = rte_rdtsc();
    for (size_t i = 0; i < steps; i++)
        p = (const volatile uint64_t *)(uintptr_t)*p;
    double cycles = (double)(rte_rdtsc() - start) / (double)steps;
    if (p == NULL)
        die("chase");
    free(buf);
    free(order);
    return cycles;
}

/* ---- reports ---- */

static double per(uint64_t cycles, uint64_t count)
{
    return (double)cycles / (double)count;
}

static double mpps(double cycles_per_packet)
{
    return (double)b.tsc_hz / cycles_per_packet / 1e6;
}

static void print_fwd(uint32_t n, const char *name, uint64_t *total, uint64_t *process,
                      uint64_t *expire, double bare)
{
    uint64_t lo, hi;
    uint64_t t = median(total); /* sorts: min and max are the ends */
    lo = total[0];
    hi = total[RUNS - 1];
    double cycles = per(t, PACKETS);
    printf("%-8u %-20s %8.1f %6.1f-%-6.1f %6.2f %8.1f %7.2f %7.1f %5.2f x %6.2f  >= %.1f\n", n,
           name, cycles, per(lo, PACKETS), per(hi, PACKETS), mpps(cycles),
           per(median(process), PACKETS), per(median(expire), PACKETS), cycles - bare,
           cycles / bare, bare / cycles, TARGET_RATE_RATIO);
}

/*
 * Cycles per new connection: the table filled with handshakes `window` connections at a time,
 * then emptied by expiry, in rounds until at least MIN_CONNECTIONS per run.
 */
static void new_connections(struct flows *f, uint32_t window, bool shuffle, const char *name,
                            double bare)
{
    uint32_t n = f->n, rounds = (MIN_CONNECTIONS + n - 1) / n;
    uint64_t syn[RUNS], syn_ack[RUNS], ack[RUNS], removal[RUNS], total[RUNS];
    connect_all(f, window, true, shuffle, NULL); /* warm-up */
    expire_all(f);
    for (int r = 0; r < RUNS; r++) {
        struct handshake_cycles c = {0, 0, 0};
        uint64_t expired = 0;
        for (uint32_t k = 0; k < rounds; k++) {
            connect_all(f, window, true, shuffle, &c);
            expired += expire_all(f);
        }
        syn[r] = c.syn;
        syn_ack[r] = c.syn_ack;
        ack[r] = c.ack;
        removal[r] = expired;
        total[r] = c.syn + c.syn_ack + c.ack + expired;
    }
    uint64_t conns = (uint64_t)rounds * n;
    uint64_t total_median = median(total);
    /* As a ratio: the handshake's 3 packets received, handled and sent, against the bare
     * loop receiving and sending them. */
    double cycles = per(total_median, conns);
    printf("%-8u %-20s %8.0f %6.0f-%-6.0f   SYN %4.0f  SYN-ACK %4.0f  ACK %4.0f  removal %4.0f"
           "  (window %u, %llu/run)  <= %d; %.1f x the bare loop's 3 packets\n",
           n, name, cycles, per(total[0], conns), per(total[RUNS - 1], conns),
           per(median(syn), conns), per(median(syn_ack), conns), per(median(ack), conns),
           per(median(removal), conns), window, (unsigned long long)conns, TARGET_CONN_CYCLES,
           (cycles + 3 * bare) / (3 * bare));
}

/* The same handshakes with the SYN proxy on, as many connections, in the same process: the
 * proxy's cost per new connection, hot only (32 at a time). */
static void proxy_connections(struct flows *f, const char *name, double bare)
{
    uint32_t n = f->n, rounds = (MIN_CONNECTIONS + n - 1) / n;
    uint64_t syn[RUNS], syn_ack[RUNS], ack[RUNS], removal[RUNS], total[RUNS];
    b.snap->l4_syn_proxy = true;
    struct handshake_cycles warm = {0, 0, 0};
    proxy_connect_all(f, BURST, &warm); /* warm-up */
    expire_all(f);
    for (int r = 0; r < RUNS; r++) {
        struct handshake_cycles c = {0, 0, 0};
        uint64_t expired = 0;
        for (uint32_t k = 0; k < rounds; k++) {
            proxy_connect_all(f, BURST, &c);
            expired += expire_all(f);
        }
        syn[r] = c.syn;
        syn_ack[r] = c.syn_ack;
        ack[r] = c.ack;
        removal[r] = expired;
        total[r] = c.syn + c.syn_ack + c.ack + expired;
    }
    b.snap->l4_syn_proxy = false;
    uint64_t conns = (uint64_t)rounds * n;
    double cycles = per(median(total), conns);
    printf("%-8u %-20s %8.0f %6.0f-%-6.0f   SYN %4.0f  SYN-ACK %4.0f  ACK %4.0f  removal %4.0f"
           "  (window %u, %llu/run)  <= %d; %.1f x the bare loop's 3 packets\n",
           n, name, cycles, per(total[0], conns), per(total[RUNS - 1], conns),
           per(median(syn), conns), per(median(syn_ack), conns), per(median(ack), conns),
           per(median(removal), conns), (unsigned)BURST, (unsigned long long)conns,
           TARGET_CONN_CYCLES, (cycles + 3 * bare) / (3 * bare));
}

static bool with_memif;     /* --memif */
static bool with_syn_proxy; /* --syn-proxy */

/* The memif rows: RUNS runs of each loop, interleaved, on the established flows of f. */
static void run_memif(const struct flows *f)
{
    uint64_t bare[RUNS], c2b[RUNS], b2c[RUNS];
    struct memif_cycles c;
    memif_run(f, PACKETS, 1, &c); /* warm-up */
    for (int r = 0; r < RUNS; r++) {
        memif_run(f, PACKETS, 1000 + (uint64_t)r, &c);
        bare[r] = c.bare;
        c2b[r] = c.c2b;
        b2c[r] = c.b2c;
    }
    double bare_cycles = per(median(bare), PACKETS);
    printf("%-8u %-20s %8.1f %6.1f-%-6.1f %6.2f\n", f->n, "memif bare rx/tx", bare_cycles,
           per(bare[0], PACKETS), per(bare[RUNS - 1], PACKETS), mpps(bare_cycles));
    const char *names[] = {"memif client -> bknd", "memif backend -> cl"};
    uint64_t *runs[] = {c2b, b2c};
    for (int d = 0; d < 2; d++) {
        double cycles = per(median(runs[d]), PACKETS);
        printf("%-8u %-20s %8.1f %6.1f-%-6.1f %6.2f %8s %7s %7.1f %5.2f x %6.2f  >= %.1f\n", f->n,
               names[d], cycles, per(runs[d][0], PACKETS), per(runs[d][RUNS - 1], PACKETS),
               mpps(cycles), "", "", cycles - bare_cycles, cycles / bare_cycles,
               bare_cycles / cycles, TARGET_RATE_RATIO);
    }
}

static void run_size(uint32_t n)
{
    struct flows f;
    flows_create(&f, n);
    /* At most syn_cap flows may be half-open at once (a quarter of the table). */
    uint32_t syn_cap = f.table->syn_cap, hot = syn_cap < BURST ? syn_cap : BURST;
    b.ctx.now_tsc = rte_rdtsc();
    connect_all(&f, hot, true, false, NULL); /* every flow established: SYN, SYN-ACK, ACK */

    uint64_t bare[RUNS], c2b[RUNS], c2b_process[RUNS], c2b_expire[RUNS], b2c[RUNS],
        b2c_process[RUNS], b2c_expire[RUNS];
    struct fwd_cycles fc;
    /* Warm-up: one run of each, not counted. */
    loop_bare(&b.data, f.client, n, 1);
    loop_forward(&b.data, f.client, n, 1, &fc);
    loop_forward(&b.back_data, f.backend, n, 1, &fc);
    for (int r = 0; r < RUNS; r++) {
        uint64_t seed = 1000 + (uint64_t)r;
        bare[r] = loop_bare(&b.data, f.client, n, seed);
        loop_forward(&b.data, f.client, n, seed, &fc);
        c2b[r] = fc.total;
        c2b_process[r] = fc.process;
        c2b_expire[r] = fc.expire;
        loop_forward(&b.back_data, f.backend, n, seed, &fc);
        b2c[r] = fc.total;
        b2c_process[r] = fc.process;
        b2c_expire[r] = fc.expire;
    }
    uint64_t bare_median = median(bare);
    double bare_cycles = per(bare_median, PACKETS);
    printf("%-8u %-20s %8.1f %6.1f-%-6.1f %6.2f\n", n, "bare rx/tx loop", bare_cycles,
           per(bare[0], PACKETS), per(bare[RUNS - 1], PACKETS), mpps(bare_cycles));
    print_fwd(n, "client -> backend", c2b, c2b_process, c2b_expire, bare_cycles);
    print_fwd(n, "backend -> client", b2c, b2c_process, b2c_expire, bare_cycles);
    if (with_memif)
        run_memif(&f);
    if (f.table->n_used != n)
        die("flows were lost while forwarding");
    printf("%-8s (flow table %.1f MiB; reference: one dependent random read over as many bytes "
           "costs %.0f cycles)\n",
           "", (double)f.bytes / (1 << 20), chase_cycles(f.bytes));

    /* New connections: fill the table with handshakes, let it all expire, again. */
    expire_all(&f);
    if (n > NEW_CONNECTIONS_MAX_FLOWS) {
        printf("%-8u (new connections are measured up to %u flows: each run fills the table)\n", n,
               NEW_CONNECTIONS_MAX_FLOWS);
        flows_free(&f);
        return;
    }
    /* Back to back (each SYN-ACK finds what its SYN touched in cache), and spread: as many
     * handshakes at once as the SYN cap lets be half-open (a quarter of the table), their
     * SYN-ACKs and ACKs in a random order, so that at 100,000 flows they mostly do not. */
    uint64_t clamped = b.stats.events[XLB_EVENT_TCP_MSS_CLAMPED];
    new_connections(&f, hot, false, "new conn, hot", bare_cycles);
    new_connections(&f, syn_cap, true, "new conn, spread", bare_cycles);
    if (with_syn_proxy) {
        /* Interleaved with the plain handshakes, so that both see the machine alike. */
        for (int round = 0; round < 2; round++) {
            new_connections(&f, hot, false, "new conn, hot", bare_cycles);
            proxy_connections(&f, "SYN proxy conn, hot", bare_cycles);
        }
    }
    if (b.stats.events[XLB_EVENT_TCP_MSS_CLAMPED] == clamped)
        die("the handshakes' MSS offers were not clamped: the figures would not include it");
    flows_free(&f);
}

/* ---- memory ---- */

static void memory(void)
{
    const uint32_t capacities[] = {1000, 65535, 65536, 100000, 1000000, MEMORY_MAX_CAPACITY};
    /* Per SNAT address: the free-port stack (2 bytes a port), each port's place in it (2) and
     * the port -> flow map (4). */
    size_t ports = (size_t)N_SNAT * (2 * (SNAT_PORTS * 2 + 2) + SNAT_PORTS * 4 + 4);
    /* What does not grow with the capacity: the ports, the table's own header and its flow
     * cache. */
    size_t fixed = ports + sizeof(struct xlb_flow_table) + sizeof(struct xlb_flow_cache);
    printf("\nbytes per flow entry, rte_malloc heap held by xlb_flow_table_create(capacity) "
           "(target <= %d):\n",
           TARGET_BYTES_PER_FLOW);
    printf("  %-10s %10s %10s %12s %10s %12s %12s\n", "capacity", "flow", "rte_hash", "per flow",
           "fixed", "all / cap", "total MiB");
    for (size_t i = 0; i < sizeof(capacities) / sizeof(capacities[0]); i++) {
        uint32_t cap = capacities[i];
        char name[32];
        snprintf(name, sizeof(name), "bench_mem_%u", cap);
        uint64_t h0 = heap_bytes();
        struct xlb_flow_table *t = xlb_flow_table_create(name, cap, (int)rte_socket_id(), b.snat,
                                                         N_SNAT, XLB_SNAT_PORT_BASE, SNAT_PORTS);
        uint64_t h1 = heap_bytes();
        if (t == NULL)
            die("cannot create the flow table (raise -m?)");
        xlb_flow_table_free(t);
        /* The same rte_hash as xlb_flow_table.c creates, alone. */
        struct rte_hash_parameters params = {
            .name = name,
            .entries = cap,
            .key_len = sizeof(struct xlb_flow_hkey),
            .hash_func = rte_hash_crc,
            .socket_id = (int)rte_socket_id(),
            .extra_flag = xlb_flow_table_needs_ext(cap) ? RTE_HASH_EXTRA_FLAGS_EXT_TABLE : 0,
        };
        uint64_t h2 = heap_bytes();
        struct rte_hash *h = rte_hash_create(&params);
        uint64_t h3 = heap_bytes();
        if (h == NULL)
            die("cannot create the hash");
        rte_hash_free(h);
        double c = cap, all = (double)(h1 - h0);
        printf("  %-10u %10.1f %10.1f %12.1f %10.1f %12.1f %12.1f\n", cap,
               (double)sizeof(struct xlb_flow), (double)(h3 - h2) / c, (all - (double)fixed) / c,
               (double)fixed / c, all / c, all / (1 << 20));
    }
    printf("  (flow: sizeof(struct xlb_flow); rte_hash: one %zu-byte key per flow, entries = "
           "capacity; per flow: all but the fixed part, shown per flow too: the SNAT port stacks, "
           "their places and port -> flow maps, %u addresses x %u ports, the table's %zu-byte "
           "header and its "
           "%zu KiB flow cache, %zu KiB per worker whatever the capacity)\n",
           sizeof(struct xlb_flow_hkey), (unsigned)N_SNAT, (unsigned)SNAT_PORTS,
           sizeof(struct xlb_flow_table), sizeof(struct xlb_flow_cache) >> 10, fixed >> 10);
}

/* Overhead of one pair of TSC reads, as the loops take them (median of 1,001). */
static double rdtsc_pair(void)
{
    uint64_t d[1001];
    for (int i = 0; i < 1001; i++) {
        uint64_t t0 = rte_rdtsc();
        uint64_t t1 = rte_rdtsc();
        d[i] = t1 - t0;
    }
    qsort(d, 1001, sizeof(d[0]), compare_u64);
    return (double)d[500];
}

/*
 * Arguments: flow counts (default 1000 and 100000); "--hugepages" runs EAL on hugepages
 * instead of --no-huge (4 KiB pages), where the machine has them; "--memif" adds the rows
 * measured through a memif pair (bench_fwd_memif.h); "--syn-proxy" adds new connections
 * through the L4 SYN proxy (xlb.l4_syn_proxy), interleaved with the plain ones.
 */
int main(int argc, char **argv)
{
    uint32_t sizes[16];
    unsigned n_sizes = 0;
    bool hugepages = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--hugepages") == 0) {
            hugepages = true;
            continue;
        }
        if (strcmp(argv[i], "--memif") == 0) {
            with_memif = true;
            continue;
        }
        if (strcmp(argv[i], "--syn-proxy") == 0) {
            with_syn_proxy = true;
            continue;
        }
        if (strcmp(argv[i], "--ipv6") == 0) {
            b.ipv6 = true;
            continue;
        }
        long n = strtol(argv[i], NULL, 10);
        if (n < 1 || n > (long)MAX_FLOWS || n_sizes == 16) {
            fprintf(stderr,
                    "usage: bench_fwd [--hugepages] [--memif] [--syn-proxy] [--ipv6] [flows "
                    "1..%u]...\n",
                    MAX_FLOWS);
            return 2;
        }
        sizes[n_sizes++] = (uint32_t)n;
    }
    if (n_sizes == 0) {
        sizes[n_sizes++] = 1000;
        sizes[n_sizes++] = 100000;
    }
    /* Without hugepages EAL reserves its memory up front: room for the largest table. */
    uint64_t largest = MEMORY_MAX_CAPACITY; /* the memory table's largest */
    for (unsigned i = 0; i < n_sizes; i++)
        largest = sizes[i] > largest ? sizes[i] : largest;
    char server[128], client[128], *vdevs[] = {server, client, NULL};
    if (with_memif)
        memif_eal_args(server, client);
    eal_init(hugepages, (uint32_t)(1024 + largest * 256 / (1 << 20)), with_memif ? vdevs : NULL);
    setup();
    /* The SYNs and SYN-ACKs offer MSS 1460 (Linux's options); a port limit below it (as for a
     * 1440-byte MTU) makes every handshake pay the MSS clamp's walk and patch, both ways. */
    b.snap->ports[0].mss_max_ipv4 = 1400;
    b.snap->ports[0].mss_max_ipv6 = 1380;
    if (with_memif)
        memif_open();

    printf("bench_fwd: full NAT through xlb_burst_process, TSC %.2f GHz, %s pages, %s, %d-byte "
           "data segments (%u-byte frames), bursts of %u, median of %d runs of %u packets\n",
           (double)b.tsc_hz / 1e9, hugepages ? "huge" : "4 KiB", b.ipv6 ? "IPv6" : "IPv4",
           b.ipv6 ? PAYLOAD - 20 : PAYLOAD, b.data.len, (unsigned)BURST, RUNS, PACKETS);
    printf("(a pair of TSC reads costs %.0f cycles; the forwarding loop reads it 3 times per "
           "burst)\n\n",
           rdtsc_pair());
    printf("%-8s %-20s %8s %-13s %6s %8s %7s %7s %7s %7s  %s\n", "flows", "cycles per packet",
           "median", " (min-max)", "Mpps", "burst fn", "expiry", "- bare", "x bare", "rate",
           "target");
    for (unsigned i = 0; i < n_sizes; i++)
        run_size(sizes[i]);
    memory();
    if (with_memif)
        memif_close();
    teardown();
    rte_eal_cleanup();
    return 0;
}
