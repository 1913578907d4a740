/*
 * NAT robustness: for 30 s of wall clock (or 200M frames, whichever comes first) a seeded random
 * mix of traffic goes through the burst function with a live flow table, LB trees and redirect
 * rings: client SYNs from many addresses and ports to an IPv4 and an IPv6 L4 VIP, backend
 * replies (SYN-ACK, data, FIN, RST) on flows that exist and to random SNAT ports, client
 * segments on flows that exist and that do not (mostly in the flows' windows, some not), ICMP
 * errors about flows, other traffic to the VIPs, hostile noise, and mutations of all of these (byte
 * flips, truncation at every length, bad data offsets, bad IP lengths, IPv4 options, VLAN tags,
 * wrong checksums, fragments, extension headers). The virtual clock advances every burst, with now
 * and then a long pause, and xlb_flow_expire and xlb_flow_flush_step run once per burst, as in the
 * worker's loop. Phases change the SYN rate, the clock speed, the address family mix and the
 * configuration (an unresolved backend, a VIP without LB tree, a backend of the wrong family, a
 * flush of a backend's flows), so the table fills and evicts, the SYN pool fills, SNAT ports run
 * out, the circuit breaker opens, and the table drains again.
 *
 * Checked: no crash (and no ASan/UBSan report in sanitized builds); every frame accounted for
 * (rx + redirected in == tx + drops + handled silently + redirected out); every mbuf back in the
 * pool after each burst; what is sent leaves from the port's MAC and, for TCP, from a VIP or
 * SNAT address, with every checksum right when the input was valid; the table's used entries,
 * hash keys, free list, SNAT port stacks, half-open count and timer wheel consistent (walked
 * periodically and at the end); expiry never stalls while flows are due; and once the clock
 * passes every timeout a bounded number of expiry calls leaves no flow, every port free, flows
 * created == flows closed + evicted and every cluster's started == finished.
 *
 * XLB_NAT_ROBUSTNESS_SEED and XLB_NAT_ROBUSTNESS_SECONDS override the seed and the duration
 * (to replay a failure, or for a shorter local run).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <rte_ring.h>

#include "nat/nat.h"
#include "nat_invariants.h"
#include "nat_traffic.h"
#include "xlb_msg.h"

#define DURATION_S  30.0
#define MAX_FRAMES  200000000ull
#define PHASE_BURST 4096 /* bursts per phase */
#define CHECK_EVERY 2048 /* bursts between full table walks */
#define POOL_SIZE   1023 /* the packet fixture's pool */

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;

static const char *const kind_names[K_MAX] = {
    "syn_new",        "syn_again", "backend_flow", "client_flow", "client_noflow",
    "backend_random", "other",     "icmp_error",   "noise",
};

/* ---- set-up ---- */

static void bytes_of(const char *text, uint8_t *out)
{
    int family = strchr(text, ':') != NULL ? AF_INET6 : AF_INET;
    assert_int_equal(inet_pton(family, text, out), 1);
}

static uint64_t env_u64(const char *name, uint64_t fallback)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtoull(v, NULL, 0) : fallback;
}

static int setup(void **state)
{
    struct robust *r = calloc(1, sizeof(*r));
    assert_non_null(r);

    static const char *const ep4[] = {BACKEND4A ":9001", BACKEND4B ":9001"};
    static const char *const ep6[] = {"[" BACKEND6A "]:9001", "[" BACKEND6B "]:9001"};
    static const char *const epmix[] = {"[" BACKEND6A "]:9001"};
    static const uint32_t slots4[] = {7, 8}, slots6[] = {9, 10}, slotsmix[] = {11};
    static const struct nat_cluster clusters[] = {
        {"backends4", XLB_LB_ROUND_ROBIN, ep4, 2, slots4, CLUSTER4, 1, 0},
        {"backends6", XLB_LB_RING_HASH, ep6, 2, slots6, CLUSTER6, 2, MAX_REQ6},
        {"wrong_family", XLB_LB_ROUND_ROBIN, epmix, 1, slotsmix, CLUSTERMIX, 3, 0},
    };
    static const struct nat_backend backends[] = {
        {BACKEND4A, NAT_BACKEND_MAC},
        {BACKEND4B, NAT_BACKEND_MAC},
        {BACKEND6A, NAT_BACKEND_MAC},
        {BACKEND6B, NAT_BACKEND_MAC},
    };
    const struct nat_config cfg = {
        .name = "natrob",
        .flows = FLOWS,
        .port_count = PORT_COUNT,
        .start_tsc = START_TSC,
        .lb_seed = 7,
        .n_workers = N_WORKERS,
        .backends = backends,
        .n_backends = 4,
        .clusters = clusters,
        .n_clusters = 3,
    };
    r->nat = nat_fixture_create(&cfg);
    r->f = r->nat->f;
    /* A low MSS limit: the SYNs and SYN-ACKs, mutated options included, go through the clamp. */
    r->f->snap->ports[0].mss_max_ipv4 = 600;
    r->f->snap->ports[0].mss_max_ipv6 = 580;
    r->flows = r->nat->flows;
    r->load = r->nat->load;

    bytes_of(FIX_VIP4, r->vip4_b);
    bytes_of(FIX_VIP6, r->vip6_b);
    bytes_of(SNAT4, r->snat4_b);
    bytes_of(SNAT6, r->snat6_b);
    bytes_of(FIX_PORT4, r->port4_b);
    bytes_of(FIX_PORT6, r->port6_b);
    bytes_of(BACKEND4A, r->backend4_b);
    bytes_of(BACKEND6A, r->backend6_b);

    uint64_t seed = env_u64("XLB_NAT_ROBUSTNESS_SEED", 0x5eed);
    r->rng = seed != 0 ? seed : 1;
    hostile_init(&r->noise, seed ^ 0x9e3779b97f4a7c15ull, port_mac.addr_bytes);
    traffic_add_templates(r);
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    struct robust *r = *state;
    nat_fixture_destroy(r->nat); /* asserts the rings are empty and every mbuf is back */
    free(r);
    return 0;
}

/* ---- the run ---- */

static void set_config(struct robust *r, unsigned which)
{
    struct xlb_snapshot *snap = r->f->snap;
    snap->vips[0].lb = which == 1 ? &r->nat->vip[2] : which == 2 ? NULL : &r->nat->vip[0];
    snap->vips[1].lb = which == 3 ? NULL : &r->nat->vip[1];
    nat_entry(snap, BACKEND4B)->resolved = which != 4;
    nat_entry(snap, BACKEND6B)->resolved = which != 5;
}

static void new_phase(struct robust *r)
{
    static const unsigned syn[] = {0, 2, 10, 30, 60};
    static const unsigned noise[] = {0, 5, 20};
    static const unsigned mutate_pct[] = {5, 30, 60};
    static const unsigned v4[] = {10, 50, 50, 90};
    static const uint64_t step[] = {20, 500, 5000, 100000, 1000000}; /* 20 us .. 1 s */
    r->phase = (struct phase){
        .syn_pct = syn[below(r, 5)],
        .noise_pct = noise[below(r, 3)],
        .mutate_pct = mutate_pct[below(r, 3)],
        .v4_pct = v4[below(r, 4)],
        .step = step[below(r, 5)],
        .burst_max = chance(r, 80) ? XLB_RX_BURST : 1 + below(r, XLB_RX_BURST),
    };
    /* Mostly the normal configuration; sometimes a VIP without backends or an unreachable one. */
    set_config(r, chance(r, 70) ? 0 : 1 + below(r, 5));
    /* Sometimes xlbctl flows flush: a backend's flows, on any port or on one. */
    struct xlb_flush *flush = &r->f->ctx.flush;
    if (!flush->active && chance(r, 25)) {
        static const char *const backends[] = {BACKEND4A, BACKEND4B, BACKEND6A, BACKEND6B};
        memset(flush, 0, sizeof(*flush));
        assert_int_equal(xlb_addr_parse(backends[below(r, 4)], &flush->addr), 0);
        flush->port = chance(r, 50) ? 0 : chance(r, 80) ? VIP_PORT : 1234;
        flush->cursor = 0;
        flush->active = true;
    }
}

static struct rte_mbuf *frame_mbuf(struct robust *r, const uint8_t *frame, size_t len)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(r->f->pool);
    assert_non_null(m);
    uint8_t *data = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
    assert_non_null(data);
    if (len > 0)
        memcpy(data, frame, len);
    m->port = 0; /* as the PMD sets it */
    return m;
}

static unsigned fill(struct robust *r, struct rte_mbuf **pkts, bool *clean, unsigned n)
{
    static uint8_t frame[HOSTILE_MAX_FRAME];
    for (unsigned i = 0; i < n; i++) {
        struct layout lo;
        size_t len = traffic_generate(r, frame, &clean[i], &lo);
        if (lo.l3 != 0 && chance(r, r->phase.mutate_pct)) {
            len = frame_mutate(r, frame, len, &lo);
            clean[i] = false;
            r->mutated++;
        }
        pkts[i] = frame_mbuf(r, frame, len);
    }
    return n;
}

/* Frames another worker handed to this one: some with a port this worker does not have. */
static void redirected_burst(struct robust *r)
{
    struct rte_mbuf *pkts[XLB_RX_BURST];
    bool clean[XLB_RX_BURST];
    unsigned n = fill(r, pkts, clean, 1 + below(r, 8));
    for (unsigned i = 0; i < n; i++)
        if (chance(r, 5))
            pkts[i]->port = (uint16_t)(1 + below(r, 8));
    r->frames_redirected += n;
    xlb_burst_process_redirected(&r->f->ctx, r->f->snap, pkts, (uint16_t)n);
    collect_tx(r, pkts, clean, n);
}

/* Empty the redirect rings as their owners would; some frames come back to be processed
 * here as redirected (worker 1 handing back what it cannot place). */
static void drain_rings(struct robust *r)
{
    struct rte_mbuf *pkts[XLB_RX_BURST];
    bool clean[XLB_RX_BURST];
    memset(clean, 0, sizeof(clean));
    for (unsigned w = 0; w < N_WORKERS; w++) {
        unsigned n;
        while ((n = rte_ring_sc_dequeue_burst(r->nat->redirect[w], (void **)pkts, XLB_RX_BURST,
                                              NULL)) > 0) {
            assert_int_equal(w, 1); /* nothing is redirected to this worker by itself */
            if (chance(r, 25)) {
                r->frames_redirected += n;
                xlb_burst_process_redirected(&r->f->ctx, r->f->snap, pkts, (uint16_t)n);
                collect_tx(r, pkts, clean, n);
            } else {
                rte_pktmbuf_free_bulk(pkts, n);
            }
        }
    }
    struct xlb_msg msg;
    while (xlb_msg_receive(r->f->to_control, &msg) == 0)
        ;
}

static void advance_clock(struct robust *r)
{
    struct xlb_burst_ctx *ctx = &r->f->ctx;
    ctx->now_tsc += rnd(r) % (2 * r->phase.step + 1);
    /* Now and then the worker stood still: a pause of up to 700 s, beyond a lap of the wheel. */
    if (below(r, 20000) == 0)
        ctx->now_tsc += rnd(r) % (700 * TSC_HZ);
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static void print_totals(const struct robust *r, double elapsed)
{
    const struct xlb_worker_stats *s = &r->f->stats;
    print_message("%" PRIu64 " frames (%" PRIu64 " redirected in) in %.1f s, %" PRIu64
                  " bursts, %.0f s of virtual time; %" PRIu64 " mutated\n",
                  s->rx_packets, event(r, XLB_EVENT_REDIRECTED_IN), elapsed, r->bursts,
                  (double)(r->f->ctx.now_tsc - START_TSC) / TSC_HZ, r->mutated);
    print_message("%" PRIu64 " transmitted (%" PRIu64 " from clean frames checked), %" PRIu64
                  " dropped, %" PRIu64 " handled silently, %" PRIu64 " redirected out\n",
                  r->tx, r->clean_checked, fixture_total_drops(r->f), event(r, XLB_EVENT_CONSUMED),
                  event(r, XLB_EVENT_REDIRECTED_OUT));
    print_message("expiry: at most %" PRIu64 " calls in a row without progress while behind\n",
                  r->longest_stall);
    print_message("flows: %" PRIu64 " created, %" PRIu64 " resumed, %" PRIu64
                  " closed, at most %u open at once; %" PRIu64 " resets sent\n",
                  event(r, XLB_EVENT_FLOWS_CREATED), event(r, XLB_EVENT_FLOWS_RESUMED),
                  event(r, XLB_EVENT_FLOWS_CLOSED), r->max_used,
                  event(r, XLB_EVENT_TCP_RESETS_SENT));
    static const uint32_t clusters[] = {CLUSTER4, CLUSTER6, CLUSTERMIX};
    for (unsigned c = 0; c < 3; c++) {
        const struct xlb_cluster_load *l = &r->load->clusters[clusters[c]];
        print_message("cluster %u: %" PRIu64 " started, %" PRIu64 " finished, %" PRIu64
                      " refused by the circuit breaker\n",
                      clusters[c], l->started, l->finished, l->circuit_dropped);
    }
    for (int k = 0; k < K_MAX; k++)
        print_message("  kind %-16s %" PRIu64 "\n", kind_names[k], r->kinds[k]);
    for (int d = 0; d < XLB_DROP_MAX; d++)
        if (s->drops[d] != 0)
            print_message("  drop %-26s %" PRIu64 "\n", xlb_drop_reason_name(d), s->drops[d]);
    for (int e = 0; e < XLB_EVENT_MAX; e++)
        if (s->events[e] != 0)
            print_message("  event %-25s %" PRIu64 "\n", xlb_event_counter_name(e), s->events[e]);
}

static void nat_robustness(void **state)
{
    struct robust *r = *state;
    struct xlb_burst_ctx *ctx = &r->f->ctx;
    double duration = DURATION_S;
    const char *env = getenv("XLB_NAT_ROBUSTNESS_SECONDS");
    if (env != NULL && *env != '\0')
        duration = atof(env);
    print_message("seed %#" PRIx64 ", %.0f s or %llu frames\n",
                  env_u64("XLB_NAT_ROBUSTNESS_SEED", 0x5eed), duration, MAX_FRAMES);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct rte_mbuf *pkts[XLB_RX_BURST];
    bool clean[XLB_RX_BURST];

    for (r->bursts = 0; r->frames_rx < MAX_FRAMES; r->bursts++) {
        if ((r->bursts & 63) == 0 && seconds_since(&start) >= duration)
            break;
        if (r->bursts % PHASE_BURST == 0)
            new_phase(r);
        advance_clock(r);
        uint64_t closed = event(r, XLB_EVENT_FLOWS_CLOSED);
        xlb_flow_expire(ctx, r->f->snap); /* once per poll loop, as the worker does */
        check_expiry_progress(r, closed);
        xlb_flow_flush_step(ctx);

        unsigned n = fill(r, pkts, clean, r->phase.burst_max);
        r->frames_rx += n;
        xlb_burst_process(ctx, r->f->snap, 0, pkts, (uint16_t)n);
        collect_tx(r, pkts, clean, n);
        if (below(r, 16) == 0)
            redirected_burst(r);
        drain_rings(r);

        /* Every mbuf is back after each loop: the pool never runs dry. */
        assert_int_equal(rte_mempool_avail_count(r->f->pool), POOL_SIZE);
        assert_true(r->flows->n_used <= FLOWS);
        if (r->flows->n_used > r->max_used)
            r->max_used = r->flows->n_used;
        if (r->bursts % CHECK_EVERY == 0) {
            check_table(r);
            check_accounting(r);
        }
    }
    double elapsed = seconds_since(&start);
    set_config(r, 0);
    check_table(r);
    check_accounting(r);
    print_totals(r, elapsed);
    expire_everything(r);
    print_message("after expiry: %u flows, %u + %u SNAT ports free\n", r->flows->n_used,
                  r->flows->n_free_ports[0], r->flows->n_free_ports[1]);

    assert_true(elapsed >= duration || r->frames_rx >= MAX_FRAMES);
    /* Every path of the NAT was taken. */
    const struct xlb_worker_stats *s = &r->f->stats;
    static const enum xlb_drop_reason reached[] = {
        XLB_DROP_L2_TRUNCATED,        XLB_DROP_VLAN_TRUNCATED,       XLB_DROP_NOT_OUR_MAC,
        XLB_DROP_IPV4_MALFORMED,      XLB_DROP_IPV4_BAD_CHECKSUM,    XLB_DROP_IPV4_FRAGMENT,
        XLB_DROP_IPV6_MALFORMED,      XLB_DROP_IPV6_EXT_HEADER,      XLB_DROP_NOT_OUR_ADDRESS,
        XLB_DROP_TCP_MALFORMED,       XLB_DROP_TCP_NO_SERVICE,       XLB_DROP_TCP_NO_FLOW,
        XLB_DROP_NO_BACKEND,          XLB_DROP_LB_CIRCUIT_OPEN,      XLB_DROP_BACKEND_FAMILY,
        XLB_DROP_NEXT_HOP_UNRESOLVED, XLB_DROP_SYN_POOL_FULL,        XLB_DROP_SNAT_PORTS_EXHAUSTED,
        XLB_DROP_FLOW_OTHER_WORKER,   XLB_DROP_PROTOCOL_UNSUPPORTED, XLB_DROP_ICMP_MALFORMED,
        XLB_DROP_TCP_OUT_OF_WINDOW,
    };
    for (size_t i = 0; i < sizeof(reached) / sizeof(reached[0]); i++)
        if (s->drops[reached[i]] == 0)
            fail_msg("drop reason %s never reached", xlb_drop_reason_name(reached[i]));
    assert_true(event(r, XLB_EVENT_FLOWS_CREATED) > 0);
    assert_true(event(r, XLB_EVENT_FLOWS_RESUMED) > 0);
    assert_true(event(r, XLB_EVENT_TCP_RESETS_SENT) > 0);
    assert_true(event(r, XLB_EVENT_REDIRECTED_OUT) > 0);
    assert_true(event(r, XLB_EVENT_FLOWS_EVICTED) > 0);
    assert_true(event(r, XLB_EVENT_FLOWS_FLUSHED) > 0);
    assert_true(event(r, XLB_EVENT_ICMP_ERRORS_TRANSLATED) > 0);
    assert_true(event(r, XLB_EVENT_ECHO_REPLIES) > 0);
    assert_int_equal(r->max_used, FLOWS);
    assert_true(r->load->endpoints[7].succeeded > 0 && r->load->endpoints[7].failed > 0);
    assert_true(r->load->endpoints[9].succeeded > 0 && r->load->endpoints[9].failed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(nat_robustness, setup, teardown),
    };
    return cmocka_run_group_tests_name("nat_robustness", tests, NULL, NULL);
}
