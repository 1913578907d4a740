/*
 * bench_stream: cycles the L7 stream mode (dataplane/stream/, issue 19) spends per new client
 * connection and per unary RPC, in-process, against a bare rx/tx loop of the same run.
 *
 * The peers are test_stream's (tests/packet/stream_peers.c): the client is a real nghttp2
 * client session over an xlb TCP endpoint, the two backends real nghttp2 server sessions over
 * another, and the wire between them and the worker's burst function runs in simulated
 * milliseconds (step()). xlb is reached only through its burst function, xlb_stream_poll and
 * xlb_flow_expire; the harness sums the TSC cycles of those calls (stream_xlb_cycles), so the
 * peers' TCP and HTTP/2 are not counted. A step's poll and expiry count when the step did
 * something (a packet into or out of xlb, a flow or stream connection gone); on idle steps
 * they are the worker's idle loop, not the work measured, and are printed apart.
 *
 * - A new client connection: the client's SYN (answered with a SYN cookie), the ACK returning
 *   the cookie (a connection and a flow), the client's preface and SETTINGS (xlb's SETTINGS and
 *   its ACK back), then everything until the wire is quiet (the client's SETTINGS ACK and the
 *   peers' delayed ACKs). The removal is the client's close: its FIN, xlb's GOAWAY and FIN,
 *   the last ACK, until the flow and the stream connection are gone (expiry included).
 * - A unary RPC on one long-lived client connection whose backend subchannels are READY (warmed
 *   up first): the request (HEADERS, one DATA frame with a 21-byte gRPC message and
 *   END_STREAM), picked and forwarded to a backend, the response (HEADERS, a 6-byte DATA
 *   frame, trailers with grpc-status 0) back, and every ACK either way, until the wire is quiet.
 *   One RPC at a time, then 16 submitted together (16 in flight).
 * - The baseline ("bare loop"): 118-byte frames (a 64-byte TCP payload) built into mbufs of
 *   the worker's pool and freed, as bench_l7's bare loop, in the same process between runs.
 *
 * BENCH_STREAM_PROFILE=N (for perf record) runs only the RPC runs, N times at each depth, and
 * prints nothing but their total: the profile is then dominated by an RPC's work.
 *
 * Each figure is the median of RUNS runs (min-max given). A benchmark never passes or fails; it
 * stops when an RPC or connection does not end as it should, since its figures would then not
 * measure what they say.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "packet_fixture.h"
#include "stream_peers.h"

#define RUNS         5
#define CONNS        16   /* new client connections per run */
#define RPCS_PER_RUN 64   /* unary RPCs per run, at each depth */
#define WARMUP_RPCS  8    /* before the runs: every backend subchannel READY */
#define QUIET_STEPS  200  /* simulated ms of an idle wire that end a measurement */
#define STEP_BOUND   2000 /* simulated ms any one wait may take */
#define CLOSE_BOUND  400000
#define BARE_PACKETS 4096
#define BARE_BURST   32
#define BARE_LEN     118
#define STEP_LOG     16 /* packets of a new connection logged one by one */

static struct stream_test *t;

/* What a measurement counted: xlb's cycles by call, packets each way, idle steps apart. */
struct tally {
    uint64_t burst, poll, expire, rx, tx, active_steps, idle_steps, idle_cycles;
};

static void require(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "bench_stream: stopped: %s\n", what);
        exit(1);
    }
}

static uint32_t flows_used(void)
{
    return t->n->flows->n_used;
}

static uint32_t stream_conns_used(void)
{
    uint32_t in_use, capacity;
    xlb_stream_use(t->n->f->ctx.stream, &in_use, &capacity);
    return in_use;
}

/* One step, its xlb cycles added to `y`: the poll's and expiry's only if the step did work. */
static void counted_step(struct tally *y)
{
    const struct stream_xlb_cycles before = stream_xlb_cycles;
    uint32_t flows = flows_used(), conns = stream_conns_used();
    step(t);
    const struct stream_xlb_cycles *c = &stream_xlb_cycles;
    uint64_t poll = c->poll - before.poll, expire = c->expire - before.expire;
    bool active = c->rx != before.rx || c->tx != before.tx || flows != flows_used() ||
                  conns != stream_conns_used();
    y->burst += c->burst - before.burst;
    y->rx += c->rx - before.rx;
    y->tx += c->tx - before.tx;
    if (active) {
        y->poll += poll;
        y->expire += expire;
        y->active_steps++;
    } else {
        y->idle_cycles += poll + expire;
        y->idle_steps++;
    }
}

static uint64_t xlb_total(const struct tally *y)
{
    return y->burst + y->poll + y->expire;
}

/* Steps until no packet moved for QUIET_STEPS simulated ms (bounded). */
static void until_quiet(struct tally *y)
{
    unsigned quiet = 0;
    for (unsigned i = 0; i < STEP_BOUND && quiet < QUIET_STEPS; i++) {
        uint64_t moved = y->rx + y->tx;
        counted_step(y);
        quiet = y->rx + y->tx == moved ? quiet + 1 : 0;
    }
    require(quiet == QUIET_STEPS, "the wire never went quiet");
}

/* ---- the baseline ---- */

static uint64_t loop_bare(void)
{
    static uint8_t frame[BARE_LEN] = {[12] = 0x08, [14] = 0x45};
    struct rte_mempool *pool = t->n->f->pool;
    struct rte_mbuf *pkts[BARE_BURST];
    uint64_t start = rte_rdtsc();
    for (unsigned k = 0; k < BARE_PACKETS / BARE_BURST; k++) {
        require(rte_pktmbuf_alloc_bulk(pool, pkts, BARE_BURST) == 0, "bare loop: no mbufs");
        for (unsigned i = 0; i < BARE_BURST; i++) {
            frame[BARE_LEN - 1] = (uint8_t)i;
            memcpy(rte_pktmbuf_append(pkts[i], BARE_LEN), frame, BARE_LEN);
        }
        rte_pktmbuf_free_bulk(pkts, BARE_BURST);
    }
    return rte_rdtsc() - start;
}

/* ---- new client connections ---- */

struct conn_run {
    uint64_t setup, removal, steps[STEP_LOG];
    uint32_t setup_rx, setup_tx, removal_rx, removal_tx, n_logged;
    struct stream_xlb_packet logged[STEP_LOG];
};

/* The client's TIME-WAIT, uncounted: its endpoint has room for four connections. */
static void client_time_wait(void)
{
    for (unsigned i = 0; i < 5 * STEP_BOUND && xlb_tcp_conns_in_use(t->ep) > 0; i++)
        step(t);
    require(xlb_tcp_conns_in_use(t->ep) == 0, "the client's connection never closed");
}

static void one_connection(uint16_t port, struct conn_run *r)
{
    struct tally set = {0}, rm = {0};
    uint32_t flows = flows_used();
    struct stream_xlb_packet log[STEP_LOG] = {0};
    stream_xlb_cycles.log = log;
    stream_xlb_cycles.n_log = 0;
    stream_xlb_cycles.cap_log = STEP_LOG;
    stream_client_connect(t, port);
    for (unsigned i = 0; i < STEP_BOUND && !t->settings_acked; i++)
        counted_step(&set);
    require(t->settings_acked, "xlb never acknowledged the client's SETTINGS");
    until_quiet(&set);
    stream_xlb_cycles.log = NULL;
    require(flows_used() == flows + 1 && stream_conns_used() == 1, "no connection in xlb");
    r->n_logged = stream_xlb_cycles.n_log;
    memcpy(r->logged, log, sizeof(log));
    r->setup = xlb_total(&set);
    r->setup_rx = (uint32_t)set.rx;
    r->setup_tx = (uint32_t)set.tx;

    xlb_tcp_shutdown(t->ep, t->c);
    for (unsigned i = 0; i < CLOSE_BOUND && (flows_used() > flows || stream_conns_used() > 0); i++)
        counted_step(&rm);
    require(flows_used() == flows && stream_conns_used() == 0, "the connection was not removed");
    r->removal = xlb_total(&rm);
    r->removal_rx = (uint32_t)rm.rx;
    r->removal_tx = (uint32_t)rm.tx;
    client_time_wait();
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, unsigned n)
{
    qsort(v, n, sizeof(*v), compare_u64);
    return v[n / 2];
}

/* Per run: the median over its connections; printed: the median of the runs. */
struct conn_figures {
    uint64_t setup[RUNS], removal[RUNS], packet[STEP_LOG][RUNS];
    uint32_t rx, tx, removal_rx, removal_tx, n_logged;
    struct stream_xlb_packet logged[STEP_LOG];
};

static void connection_run(unsigned run, struct conn_figures *fig)
{
    static struct conn_run r[CONNS];
    uint64_t setup[CONNS], removal[CONNS], packet[CONNS];
    for (unsigned i = 0; i < CONNS; i++)
        one_connection((uint16_t)(41000 + run * CONNS + i), &r[i]);
    for (unsigned i = 0; i < CONNS; i++) {
        setup[i] = r[i].setup;
        removal[i] = r[i].removal;
        require(r[i].n_logged == r[0].n_logged, "connections took different packets");
    }
    fig->setup[run] = median(setup, CONNS);
    fig->removal[run] = median(removal, CONNS);
    fig->n_logged = r[0].n_logged;
    memcpy(fig->logged, r[0].logged, sizeof(fig->logged));
    fig->rx = r[0].setup_rx;
    fig->tx = r[0].setup_tx;
    fig->removal_rx = r[0].removal_rx;
    fig->removal_tx = r[0].removal_tx;
    for (unsigned p = 0; p < r[0].n_logged; p++) {
        for (unsigned i = 0; i < CONNS; i++)
            packet[i] = r[i].logged[p].cycles;
        fig->packet[p][run] = median(packet, CONNS);
    }
}

/* ---- unary RPCs on one connection ---- */

static void rpcs_done(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        require(t->rpcs[i].closed && t->rpcs[i].error_code == 0 &&
                    strcmp(t->rpcs[i].grpc_status, "0") == 0 &&
                    strncmp(t->rpcs[i].body, "from ", 5) == 0,
                "an RPC did not end with grpc-status 0 and its message");
}

static bool all_closed(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!t->rpcs[i].closed)
            return false;
    return true;
}

/* RPCS_PER_RUN unary RPCs, `depth` submitted together; then the wire goes quiet. */
static void rpc_run(unsigned depth, struct tally *y)
{
    for (unsigned k = 0; k < RPCS_PER_RUN / depth; k++) {
        t->n_rpcs = 0;
        for (unsigned i = 0; i < depth; i++)
            submit_rpc_message(t);
        for (unsigned i = 0; i < STEP_BOUND && !all_closed(depth); i++)
            counted_step(y);
        rpcs_done(depth);
    }
    until_quiet(y);
}

static void rpc_connection(void)
{
    stream_client_connect(t, 40999);
    struct tally warm = {0};
    t->n_rpcs = 0;
    for (unsigned i = 0; i < WARMUP_RPCS; i++)
        submit_rpc_message(t);
    for (unsigned i = 0; i < STEP_BOUND && !all_closed(WARMUP_RPCS); i++)
        counted_step(&warm);
    rpcs_done(WARMUP_RPCS);
    require(t->n_backends == BACKENDS, "the RPCs did not reach both backends");
    until_quiet(&warm);
}

/* ---- output ---- */

static void print_row(const char *what, uint64_t *runs, double per, double bare)
{
    double m = (double)median(runs, RUNS) / per;
    printf("%-44s %9.0f (%.0f-%.0f) %7.1f x bare\n", what, m, (double)runs[0] / per,
           (double)runs[RUNS - 1] / per, m / bare);
}

static const char *flags_text(uint8_t f, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s%s%s", f & RTE_TCP_SYN_FLAG ? "S" : "", f & RTE_TCP_FIN_FLAG ? "F" : "",
             f & RTE_TCP_PSH_FLAG ? "P" : "", f & RTE_TCP_ACK_FLAG ? "." : "");
    return buf;
}

/* BENCH_STREAM_PROFILE: the RPC runs alone, many times, for a profiler. */
static void profile_rpcs(unsigned n)
{
    struct tally y = {0};
    rpc_connection();
    for (unsigned i = 0; i < n; i++) {
        rpc_run(1, &y);
        rpc_run(16, &y);
    }
    printf("bench_stream: profile mode, %u RPCs, %.0f cycles in xlb per RPC, "
           "sessions' heap in use %u bytes (one connection, its subchannels)\n",
           2 * n * RPCS_PER_RUN, (double)xlb_total(&y) / (2.0 * n * RPCS_PER_RUN),
           xlb_stream_heap_in_use(t->n->f->ctx.stream));
}

int main(void)
{
    fixture_eal_init();
    t = stream_test_create();
    for (unsigned i = 0; i < STEP_BOUND && !t->settings_acked; i++)
        step(t);
    require(t->settings_acked, "the first connection never came up");
    xlb_tcp_shutdown(t->ep, t->c);
    for (unsigned i = 0; i < CLOSE_BOUND && (flows_used() > 0 || stream_conns_used() > 0); i++)
        step(t);
    client_time_wait();
    const char *profile = getenv("BENCH_STREAM_PROFILE");
    if (profile != NULL && atoi(profile) > 0) {
        profile_rpcs((unsigned)atoi(profile));
        stream_test_destroy(t);
        rte_eal_cleanup();
        return 0;
    }

    static struct conn_figures conn;
    uint64_t bare[RUNS], rpc1[RUNS], rpc16[RUNS], idle[RUNS], timers1[RUNS], timers16[RUNS];
    uint64_t rx1 = 0, tx1 = 0, rx16 = 0, tx16 = 0, steps1 = 0, steps16 = 0;
    loop_bare();
    for (unsigned r = 0; r < RUNS; r++) {
        bare[r] = loop_bare();
        connection_run(r, &conn);
    }
    rpc_connection();
    for (unsigned r = 0; r < RUNS; r++) {
        struct tally one = {0}, sixteen = {0};
        bare[r] += loop_bare();
        rpc_run(1, &one);
        rpc_run(16, &sixteen);
        rpc1[r] = xlb_total(&one);
        rpc16[r] = xlb_total(&sixteen);
        timers1[r] = one.poll + one.expire;
        timers16[r] = sixteen.poll + sixteen.expire;
        idle[r] =
            (one.idle_cycles + sixteen.idle_cycles) * 1000 / (one.idle_steps + sixteen.idle_steps);
        rx1 = one.rx, tx1 = one.tx, steps1 = one.active_steps;
        rx16 = sixteen.rx, tx16 = sixteen.tx, steps16 = sixteen.active_steps;
    }
    double bare_pp = (double)median(bare, RUNS) / (2.0 * BARE_PACKETS);

    printf("bench_stream: L7 stream mode through xlb_burst_process, xlb_stream_poll and "
           "xlb_flow_expire (test_stream's nghttp2 peers), TSC %.2f GHz, median (min-max) of %d "
           "runs\n",
           (double)rte_get_tsc_hz() / 1e9, RUNS);
    printf("%-44s %9.1f (%.1f-%.1f)\n", "bare rx/tx loop, per packet", bare_pp,
           (double)bare[0] / (2.0 * BARE_PACKETS), (double)bare[RUNS - 1] / (2.0 * BARE_PACKETS));
    printf("\nnew client connection (%d a run, one at a time), cycles in xlb; packets into xlb "
           "%u, out %u:\n",
           CONNS, conn.rx, conn.tx);
    print_row("  SYN .. SETTINGS acked, wire quiet (total)", conn.setup, 1, bare_pp);
    for (unsigned p = 0; p < conn.n_logged; p++) {
        char label[64], fl[8];
        snprintf(label, sizeof(label), "    packet %u: %u bytes [%s] (burst only)", p + 1,
                 conn.logged[p].len, flags_text(conn.logged[p].tcp_flags, fl, sizeof(fl)));
        print_row(label, conn.packet[p], 1, bare_pp);
    }
    char label[64];
    snprintf(label, sizeof(label), "  removal: close .. flow gone (%u in, %u out)", conn.removal_rx,
             conn.removal_tx);
    print_row(label, conn.removal, 1, bare_pp);
    printf("\nunary RPC on one connection, subchannels READY, %d RPCs a run, cycles in xlb per "
           "RPC:\n",
           RPCS_PER_RUN);
    snprintf(label, sizeof(label), "  1 in flight (%.1f in, %.1f out, %.1f steps)",
             (double)rx1 / RPCS_PER_RUN, (double)tx1 / RPCS_PER_RUN, (double)steps1 / RPCS_PER_RUN);
    print_row(label, rpc1, RPCS_PER_RUN, bare_pp);
    snprintf(label, sizeof(label), "  16 in flight (%.1f in, %.1f out, %.2f steps)",
             (double)rx16 / RPCS_PER_RUN, (double)tx16 / RPCS_PER_RUN,
             (double)steps16 / RPCS_PER_RUN);
    print_row(label, rpc16, RPCS_PER_RUN, bare_pp);
    print_row("    of which poll and expiry, 1 in flight", timers1, RPCS_PER_RUN, bare_pp);
    print_row("    of which poll and expiry, 16 in flight", timers16, RPCS_PER_RUN, bare_pp);
    printf("\nan idle step (poll and expiry, not counted above): %.0f cycles\n",
           (double)median(idle, RUNS) / 1000);
    printf("('x bare': in bare-loop packets; 'in'/'out': packets into and out of xlb; "
           "'steps': simulated ms with work)\n");

    stream_test_destroy(t);
    rte_eal_cleanup();
    return 0;
}
