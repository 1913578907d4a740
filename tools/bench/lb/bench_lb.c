/*
 * bench_lb: what the compiled LB tree (lib/lb) costs a worker and the control plane.
 *
 * Picks go through xlb_lb_pick on an L4 VIP (routes NULL) exactly as a worker would make them:
 * the worker counts each pick (locality `issued`, cluster `started`, endpoint `session_picks`)
 * and the cluster has the default circuit breaker (max_requests 1024, requests in flight summed
 * over two workers' counters). The loop completes every request (cluster `finished`), as the
 * data plane would when the connection ends, so the breaker never opens. The "dry run" rows
 * repeat a pick the way `xlbctl simulate` makes it (no counters, no breaker), to show what the
 * bookkeeping costs.
 *
 * On the development guest the counted picks are bimodal between processes: in some processes
 * the round-robin pick costs about 100 cycles instead of about 40, in others the override pick
 * about 110-140 instead of about 75, for the whole life of the process, while the dry runs stay
 * put (see docs/performance.md). Run it several times before reading much into one figure.
 *
 * Each pick figure is reported beside a baseline from the same run: the same loop without the
 * pick (the same random draws, the same pre-generated session copy, the same completion
 * counter), so "pick - baseline" is the pick alone and "ratio" is pick / baseline. Then the
 * time xlb_cluster_compile takes for one 10,000-endpoint cluster (republishing a one-cluster
 * change; publishing itself is one pointer swap) and the memory a compiled cluster holds per
 * endpoint. Targets are printed for comparison only: a benchmark never passes or fails.
 *
 * The "connectivity" rows make the same picks as the L7 stream mode does (request.connectivity,
 * lib/lb/xlb_lb_connectivity.h) with every fourth endpoint CONNECTING and the rest READY: round
 * robin skips the CONNECTING ones, ring hash walks past them.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"
#include "cluster_compile.h"
#include "xlb_lb.h"
#include "xlb_lb_connectivity.h"
#include "xlb_maglev.h"

/* Strings of the hand-built configuration, in the char * its parsed form holds. */
static char bench_name[] = "bench", no_string[] = "";

#define PICKS             1000000u
#define RUNS              5
#define LOCALITIES        10
#define WORKERS           2
#define CLUSTER_SLOT      7
#define N_SESSIONS        (1u << 16) /* pre-generated session endpoints, read in order */
#define COMPILE_ENDPOINTS 10000u

#define TARGET_RR_CYCLES       50
#define TARGET_OVERRIDE_CYCLES 100
#define TARGET_REPUBLISH_MS    5.0
#define TARGET_BYTES_PER_EP    128

static volatile uint64_t sink; /* keeps picks from being optimised away */

/* Forces the baselines to do their loads and stores as the pick loops must. */
#define BARRIER() __asm__ volatile("" ::: "memory")

static void die(const char *what)
{
    fprintf(stderr, "bench_lb: %s\n", what);
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p == NULL)
        die("out of memory");
    return p;
}

/*
 * Endpoint i's address in 198.18.0.0/15: four /17 blocks (198.18.0/17, 198.18.128/17,
 * 198.19.0/17, 198.19.128/17) taken in turn, and the port moves on each time the blocks are
 * used up, so any count stays unique.
 */
static void endpoint_address(uint32_t i, struct xlb_host_port *out)
{
    static const uint32_t blocks[4] = {0xc6120000u, 0xc6128000u, 0xc6130000u, 0xc6138000u};
    uint32_t within = i / 4;
    xlb_addr_from_ipv4(htonl(blocks[i % 4] + within % 32768), &out->addr);
    out->port = (uint16_t)(8080 + within / 32768);
}

/* ---- inputs: one EDS priority of LOCALITIES weighted localities ---- */

struct inputs {
    uint32_t n;
    struct xlb_host_port *where;
    struct xlb_eds_endpoint *endpoints;
    struct xlb_eds_locality localities[LOCALITIES];
    char names[LOCALITIES][16];
    struct xlb_eds_priority priority;
    struct xlb_endpoint_config eds;
    uint32_t *slots;
    struct xlb_cluster_config rr_config, ring_config, lr_config, pf_config, wrr_config;
};

static void inputs_make(struct inputs *in, uint32_t n)
{
    memset(in, 0, sizeof(*in));
    in->n = n;
    in->where = xcalloc(n, sizeof(*in->where));
    in->endpoints = xcalloc(n, sizeof(*in->endpoints));
    in->slots = xcalloc(n, sizeof(*in->slots));
    for (uint32_t i = 0; i < n; i++) {
        endpoint_address(i, &in->where[i]);
        in->endpoints[i] = (struct xlb_eds_endpoint){.addresses = &in->where[i],
                                                     .n_addresses = 1,
                                                     .health = XLB_HEALTH_HEALTHY,
                                                     .weight = 1};
        in->slots[i] = i;
    }
    /* Locality l holds endpoints [n*l/10, n*(l+1)/10) and has weight l + 1. */
    for (uint32_t l = 0; l < LOCALITIES; l++) {
        uint32_t from = (uint32_t)((uint64_t)n * l / LOCALITIES);
        uint32_t to = (uint32_t)((uint64_t)n * (l + 1) / LOCALITIES);
        snprintf(in->names[l], sizeof(in->names[l]), "zone-%u", l);
        in->localities[l] = (struct xlb_eds_locality){
            .region = bench_name,
            .zone = in->names[l],
            .sub_zone = no_string,
            .weight = l + 1,
            .endpoints = in->endpoints + from,
            .n_endpoints = to - from,
        };
    }
    in->priority = (struct xlb_eds_priority){in->localities, LOCALITIES};
    in->eds = (struct xlb_endpoint_config){
        .cluster_name = bench_name, .priorities = &in->priority, .n_priorities = 1};
    /* What validation gives a Cluster that only sets lb_policy. */
    struct xlb_cluster_config base = {
        .name = bench_name,
        .type = XLB_CLUSTER_EDS,
        .eds_service_name = no_string,
        .lb_policy = XLB_LB_ROUND_ROBIN,
        .max_requests = XLB_CIRCUIT_BREAKER_DEFAULT_MAX_REQUESTS,
        .override_host_status = XLB_OVERRIDE_STATUS_DEFAULT,
        .idle_timeout = {.seconds = XLB_IDLE_TIMEOUT_DEFAULT_SECONDS},
    };
    xlb_ring_hash_config_default(&base.ring_hash);
    in->rr_config = base;
    in->ring_config = base;
    in->ring_config.lb_policy = XLB_LB_RING_HASH;
    in->lr_config = base;
    in->lr_config.lb_policy = XLB_LB_LEAST_REQUEST;
    in->lr_config.choice_count = 2;
    in->pf_config = base;
    in->pf_config.lb_policy = XLB_LB_PICK_FIRST;
    in->wrr_config = base;
    in->wrr_config.lb_policy = XLB_LB_WRR;
    xlb_wrr_config_default(&in->wrr_config.wrr);
}

static void inputs_free(struct inputs *in)
{
    free(in->where);
    free(in->endpoints);
    free(in->slots);
}

/* Locality load slots (also the round-robin cursor index), handed out in order. */
static uint32_t next_locality_slot(void *arg, uint32_t priority, const struct xlb_eds_locality *l)
{
    (void)priority;
    (void)l;
    uint32_t *next = arg;
    return (*next)++;
}

static struct xlb_lb_cluster *compile(const struct inputs *in, const struct xlb_cluster_config *cfg)
{
    uint32_t next_slot = 0;
    struct xlb_cluster_compile_input input = {
        .name = bench_name,
        .config = cfg,
        .endpoints = &in->eds,
        .endpoint_slots = in->slots,
        .ejected = NULL,
        .cluster_slot = CLUSTER_SLOT,
        .locality_slot = next_locality_slot,
        .drop_slot = NULL,
        .arg = &next_slot,
    };
    struct xlb_lb_cluster *c;
    char err[128];
    if (xlb_cluster_compile(&input, &c, err, sizeof(err)) != 0)
        die(err);
    return c;
}

/* ---- picks ---- */

struct l4_vip {
    struct xlb_lb_cluster *leaf;
    struct xlb_lb_target target;
    struct xlb_lb_vip vip;
};

/* An L4 VIP (no routes) whose one target is the cluster. */
static void vip_make(struct l4_vip *v, struct xlb_lb_cluster *c)
{
    v->leaf = c;
    v->target = (struct xlb_lb_target){
        .name = bench_name, .ready = true, .n_leaves = 1, .leaves = &v->leaf};
    v->vip = (struct xlb_lb_vip){.routes = NULL, .n_targets = 1, .targets = &v->target};
}

struct fixture {
    uint32_t n;
    struct l4_vip rr, ring, lr, pf, wrr;
    struct xlb_maglev *maglev;
    struct xlb_host_port *sessions; /* N_SESSIONS random endpoints */
    uint32_t *session_index;        /* their endpoint indexes, for the check */
    struct xlb_worker_load *loads;  /* WORKERS copies; ours is [0] */
    struct xlb_lb_worker w;
    struct xlb_rng draw; /* the harness's random numbers (connection ids, Maglev hashes) */
    bool connectivity;   /* picks as the stream mode makes them */
};

static void complete(struct fixture *f)
{
    f->loads[0].clusters[CLUSTER_SLOT].finished++;
}

typedef uint64_t (*pick_loop)(struct fixture *f);

/* Baseline of round robin and ring hash: one draw and one completion per iteration. */
static uint64_t loop_base_draw_complete(struct fixture *f)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < PICKS; i++) {
        acc += xlb_rng_next(&f->draw);
        complete(f);
        BARRIER();
    }
    return acc;
}

/* Round robin: the weighted locality draw happens inside the pick (w->rng). */
static uint64_t loop_rr(struct fixture *f)
{
    uint64_t acc = 0;
    struct xlb_lb_request req = {
        .http = NULL, .connection_id = 0, .session = NULL, .connectivity = f->connectivity};
    struct xlb_lb_trace t;
    for (uint32_t i = 0; i < PICKS; i++) {
        xlb_lb_pick(&f->rr.vip, &req, &f->w, &t);
        acc += t.endpoint;
        complete(f);
    }
    return acc;
}

/* Least request (A48, choice_count 2): each call ends at once, as round robin's do, so the
 * endpoints' in-flight counts stay near 0 and every draw reads two of them. */
static uint64_t loop_lr(struct fixture *f)
{
    uint64_t acc = 0;
    struct xlb_lb_request req = {
        .http = NULL, .connection_id = 0, .session = NULL, .connectivity = f->connectivity};
    struct xlb_lb_trace t;
    for (uint32_t i = 0; i < PICKS; i++) {
        xlb_lb_pick(&f->lr.vip, &req, &f->w, &t);
        acc += t.endpoint;
        complete(f);
        if (f->w.load != NULL && t.slot < XLB_ENDPOINT_SLOTS)
            f->w.load->endpoints[t.slot]
                .in_flight--; /* the call ends (xlb_flow_request_finished) */
    }
    return acc;
}

/* Weighted round robin (A58) in its steady state: weights from reports, shares built, a new
 * round of shares every update period of the clock (which stays within one here). */
#define WRR_NOW_MS 60000u
static uint64_t loop_wrr(struct fixture *f)
{
    uint64_t acc = 0;
    struct xlb_lb_request req = {.http = NULL,
                                 .connection_id = 0,
                                 .session = NULL,
                                 .connectivity = f->connectivity,
                                 .now_ms = WRR_NOW_MS};
    struct xlb_lb_trace t;
    for (uint32_t i = 0; i < PICKS; i++) {
        xlb_lb_pick(&f->wrr.vip, &req, &f->w, &t);
        acc += t.endpoint;
        complete(f);
    }
    return acc;
}

/* Pick first (A62): every pick finds the held endpoint still usable (the steady state). */
static uint64_t loop_pf(struct fixture *f)
{
    uint64_t acc = 0;
    struct xlb_lb_request req = {
        .http = NULL, .connection_id = 0, .session = NULL, .connectivity = f->connectivity};
    struct xlb_lb_trace t;
    for (uint32_t i = 0; i < PICKS; i++) {
        xlb_lb_pick(&f->pf.vip, &req, &f->w, &t);
        acc += t.endpoint;
        complete(f);
    }
    return acc;
}

static uint64_t loop_ring(struct fixture *f)
{
    uint64_t acc = 0;
    struct xlb_lb_request req = {
        .http = NULL, .connection_id = 0, .session = NULL, .connectivity = f->connectivity};
    struct xlb_lb_trace t;
    for (uint32_t i = 0; i < PICKS; i++) {
        req.connection_id = xlb_rng_next(&f->draw);
        xlb_lb_pick(&f->ring.vip, &req, &f->w, &t);
        acc += t.endpoint;
        complete(f);
    }
    return acc;
}

static uint64_t loop_base_draw(struct fixture *f)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < PICKS; i++) {
        acc += xlb_rng_next(&f->draw);
        BARRIER();
    }
    return acc;
}

static uint64_t loop_maglev(struct fixture *f)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < PICKS; i++)
        acc += xlb_maglev_pick(f->maglev, xlb_rng_next(&f->draw));
    return acc;
}

/* Baseline of the override pick: copy the next session endpoint in, complete. */
static uint64_t loop_base_session(struct fixture *f)
{
    uint64_t acc = 0;
    struct xlb_lb_session s = {.n_addresses = 1};
    for (uint32_t i = 0; i < PICKS; i++) {
        s.addresses[0] = f->sessions[i & (N_SESSIONS - 1)];
        BARRIER();
        acc += s.addresses[0].port;
        complete(f);
    }
    return acc;
}

/* Override host: the request carries a decoded session naming a random endpoint. */
static uint64_t loop_override(struct fixture *f)
{
    uint64_t acc = 0;
    struct xlb_lb_session s = {.n_addresses = 1};
    struct xlb_lb_request req = {.http = NULL, .connection_id = 0, .session = &s};
    struct xlb_lb_trace t;
    for (uint32_t i = 0; i < PICKS; i++) {
        s.addresses[0] = f->sessions[i & (N_SESSIONS - 1)];
        xlb_lb_pick(&f->rr.vip, &req, &f->w, &t);
        acc += t.endpoint;
        complete(f);
    }
    return acc;
}

struct cycles {
    double median, max;
};

static struct cycles median_cycles(struct fixture *f, pick_loop loop)
{
    double runs[RUNS];
    sink += loop(f); /* warm caches and branch predictors */
    for (int r = 0; r < RUNS; r++) {
        uint64_t start = ticks();
        sink += loop(f);
        runs[r] = (double)(ticks() - start) / PICKS;
    }
    qsort(runs, RUNS, sizeof(runs[0]), compare_doubles);
    return (struct cycles){runs[RUNS / 2], runs[RUNS - 1]};
}

/* Before timing anything: every kind of pick must pick, and the override must be honoured. */
static void check(struct fixture *f)
{
    struct xlb_lb_session s = {.n_addresses = 1};
    struct xlb_lb_request req = {0};
    struct xlb_lb_trace t;
    for (uint32_t i = 0; i < 10000; i++) {
        req.session = NULL;
        req.connection_id = xlb_rng_next(&f->draw);
        if (xlb_lb_pick(&f->rr.vip, &req, &f->w, &t) != XLB_LB_PICKED || t.endpoint >= f->n)
            die("round robin pick failed");
        complete(f);
        if (xlb_lb_pick(&f->ring.vip, &req, &f->w, &t) != XLB_LB_PICKED || t.endpoint >= f->n)
            die("ring hash pick failed");
        complete(f);
        if (xlb_lb_pick(&f->pf.vip, &req, &f->w, &t) != XLB_LB_PICKED || t.endpoint != 0)
            die("pick first did not pick the first endpoint");
        complete(f);
        s.addresses[0] = f->sessions[i & (N_SESSIONS - 1)];
        req.session = &s;
        if (xlb_lb_pick(&f->rr.vip, &req, &f->w, &t) != XLB_LB_PICKED ||
            t.override != XLB_LB_OVERRIDE_USED ||
            t.endpoint != f->session_index[i & (N_SESSIONS - 1)])
            die("override pick did not use the session's endpoint");
        complete(f);
        if (xlb_maglev_pick(f->maglev, req.connection_id) >= f->n)
            die("maglev pick failed");
    }
}

static struct xlb_maglev *build_maglev(const struct inputs *in, double *ms)
{
    char(*keys)[XLB_HOST_PORT_STRLEN] = xcalloc(in->n, sizeof(*keys));
    struct xlb_maglev_endpoint *eps = xcalloc(in->n, sizeof(*eps));
    for (uint32_t i = 0; i < in->n; i++) {
        xlb_host_port_format(&in->where[i], keys[i], sizeof(keys[i]));
        eps[i] = (struct xlb_maglev_endpoint){keys[i], i, 1};
    }
    struct xlb_maglev *m;
    double start = now_ms();
    if (xlb_maglev_build(eps, in->n, 0, &m) != 0)
        die("maglev build failed");
    *ms = now_ms() - start;
    free(eps);
    free(keys);
    return m;
}

struct pick_row {
    const char *name;
    pick_loop pick, baseline;
    double target;
    bool dry; /* as `xlbctl simulate` picks: nothing counted, no circuit breaker */
    bool connectivity;
};

static void print_row(uint32_t n, const char *name, struct cycles pick, struct cycles base,
                      double target)
{
    char goal[32] = "";
    if (target > 0)
        snprintf(goal, sizeof(goal), "<= %.0f", target);
    printf("%-9u %-24s %8.1f %8.1f %8.1f %8.1f %7.1f x %7s\n", n, name, pick.median, pick.max,
           base.median, pick.median - base.median, pick.median / base.median, goal);
}

static double bytes_per_endpoint(const struct xlb_lb_cluster *c);

static void run_size(uint32_t n, uint64_t tsc_per_ms)
{
    struct inputs in;
    /* The worker's state lives in its own cache-aligned memory, as an lcore's would. */
    struct fixture *f = aligned_alloc(64, (sizeof(*f) + 63) / 64 * 64);
    if (f == NULL)
        die("out of memory");
    memset(f, 0, sizeof(*f));
    f->n = n;
    inputs_make(&in, n);
    vip_make(&f->rr, compile(&in, &in.rr_config));
    vip_make(&f->ring, compile(&in, &in.ring_config));
    vip_make(&f->lr, compile(&in, &in.lr_config));
    vip_make(&f->pf, compile(&in, &in.pf_config));
    vip_make(&f->wrr, compile(&in, &in.wrr_config));
    double maglev_ms;
    f->maglev = build_maglev(&in, &maglev_ms);

    xlb_rng_seed(&f->draw, 1000 + n);
    f->sessions = xcalloc(N_SESSIONS, sizeof(*f->sessions));
    f->session_index = xcalloc(N_SESSIONS, sizeof(*f->session_index));
    for (uint32_t i = 0; i < N_SESSIONS; i++) {
        f->session_index[i] = xlb_rng_below(&f->draw, n);
        f->sessions[i] = in.where[f->session_index[i]];
    }
    f->loads = xcalloc(WORKERS, sizeof(*f->loads));
    if (xlb_lb_worker_init(&f->w, 2000 + n, &f->loads[0], f->loads, WORKERS) != 0)
        die("worker init failed");
    check(f);
    /* Every fourth endpoint CONNECTING, the others READY, for the connectivity rows. */
    if (xlb_lb_connectivity_init(&f->w) != 0)
        die("out of memory");
    for (uint32_t i = 0; i < n; i++)
        xlb_lb_connectivity_set(&f->w, in.slots[i],
                                i % 4 == 0 ? XLB_CONN_CONNECTING : XLB_CONN_READY, 0);
    /* WRR weights as reports leave them: utilizations 0.25 to 1 at 100 qps, out of blackout. */
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_wrr_report r = {.cpu_utilization = 0.25 + 0.75 * (i % 16) / 15.0, .qps = 100};
        xlb_wrr_weight_update(&f->loads[0].endpoints[in.slots[i]].weight, 1.0f, &r,
                              WRR_NOW_MS - XLB_WRR_BLACKOUT_MS - 1);
    }

    const struct pick_row rows[] = {
        {"round robin + locality", loop_rr, loop_base_draw_complete, TARGET_RR_CYCLES, false},
        {"  same, dry run", loop_rr, loop_base_draw_complete, 0, true},
        {"ring hash", loop_ring, loop_base_draw_complete, 0, false},
        {"least request (2 draws)", loop_lr, loop_base_draw_complete, 0, false},
        {"pick first (sticky)", loop_pf, loop_base_draw_complete, 0, false},
        {"  same, base = RR", loop_pf, loop_rr, 0, false},
        {"maglev (lib/pick only)", loop_maglev, loop_base_draw, 0, false},
        {"override lookup", loop_override, loop_base_session, TARGET_OVERRIDE_CYCLES, false},
        {"  same, dry run", loop_override, loop_base_session, 0, true},
        {"round robin, connectivity", loop_rr, loop_base_draw_complete, 0, false, true},
        {"ring hash, connectivity", loop_ring, loop_base_draw_complete, 0, false, true},
        {"least request, connect.", loop_lr, loop_base_draw_complete, 0, false, true},
        {"weighted RR (A58), conn.", loop_wrr, loop_base_draw_complete, 0, false, true},
    };
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        struct cycles base = median_cycles(f, rows[r].baseline);
        f->w.load = rows[r].dry ? NULL : &f->loads[0];
        f->w.loads = rows[r].dry ? NULL : f->loads;
        f->connectivity = rows[r].connectivity;
        struct cycles cycles = median_cycles(f, rows[r].pick);
        f->w.load = &f->loads[0];
        f->w.loads = f->loads;
        print_row(n, rows[r].name, cycles, base, rows[r].target);
    }
    printf("%-9s (round robin cluster: %.0f bytes per endpoint; ring: %u points; maglev: table %u, "
           "built in %.0f ms; TSC %.2f GHz)\n",
           "", bytes_per_endpoint(f->rr.leaf), f->ring.leaf->priorities[0].ring->n_points,
           f->maglev->size, maglev_ms, (double)tsc_per_ms / 1e6);

    xlb_lb_worker_fini(&f->w);
    xlb_lb_cluster_release(f->rr.leaf);
    xlb_lb_cluster_release(f->ring.leaf);
    xlb_lb_cluster_release(f->lr.leaf);
    xlb_lb_cluster_release(f->pf.leaf);
    xlb_lb_cluster_release(f->wrr.leaf);
    xlb_maglev_free(f->maglev);
    free(f->sessions);
    free(f->session_index);
    free(f->loads);
    free(f);
    inputs_free(&in);
}

/*
 * Reference for the large tables: TSC cycles of one dependent random read in a buffer of
 * `bytes` (a pointer chase over a random cycle of cache lines), i.e. what a cache miss costs.
 */
static double chase_cycles(size_t bytes)
{
    size_t lines = bytes / 64, steps = 1000000;
    uint64_t *buf = xcalloc(lines, 64);
    uint32_t *order = xcalloc(lines, sizeof(*order));
    struct xlb_rng rng;
    xlb_rng_seed(&rng, bytes);
    for (size_t i = 0; i < lines; i++)
        order[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        uint32_t j = xlb_rng_below(&rng, (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++)
        buf[order[i] * 8] = (uint64_t)(uintptr_t)&buf[order[(i + 1) % lines] * 8];
    const uint64_t *p = &buf[order[0] * 8];
    for (size_t i = 0; i < lines; i++) /* warm: every line and page once */
        p = (const uint64_t *)(uintptr_t)*p;
    uint64_t start = ticks();
    for (size_t i = 0; i < steps; i++)
        p = (const uint64_t *)(uintptr_t)*p;
    double cycles = (double)(ticks() - start) / steps;
    sink += (uint64_t)(uintptr_t)p;
    free(buf);
    free(order);
    return cycles;
}

static void memory_latency(void)
{
    const size_t sizes[] = {32u << 10, 1u << 20, 4u << 20, 8u << 20, 32u << 20};
    printf("%-9s reference, one dependent random read:", "");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        printf(" %zu KiB %.0f%s", sizes[i] >> 10, chase_cycles(sizes[i]),
               i + 1 < sizeof(sizes) / sizeof(sizes[0]) ? "," : " cycles\n");
}

/* ---- control plane: compile time and memory ---- */

/*
 * The least any compile of n endpoints does: allocate the endpoint array and copy each
 * endpoint's address, weight and health into it.
 */
static double baseline_copy_ms(const struct inputs *in)
{
    double start = now_ms();
    struct xlb_lb_endpoint *e = calloc(in->n + 1, sizeof(*e));
    if (e == NULL)
        die("out of memory");
    for (uint32_t i = 0; i < in->n; i++) {
        e[i].where = in->endpoints[i].addresses[0];
        e[i].weight = in->endpoints[i].weight;
        e[i].health = (uint8_t)in->endpoints[i].health;
        e[i].slot = in->slots[i];
    }
    BARRIER();
    double ms = now_ms() - start;
    sink += e[in->n / 2].slot;
    free(e);
    return ms;
}

static double median_of(double *runs)
{
    qsort(runs, RUNS, sizeof(runs[0]), compare_doubles);
    return runs[RUNS / 2];
}

/* After median_of: the runs are sorted. */
static void print_compile(const char *name, double *runs, double base)
{
    double median = median_of(runs);
    printf("  %-40s %7.3f ms  (%.3f-%.3f) %6.0f x  <= %.0f ms\n", name, median, runs[0],
           runs[RUNS - 1], median / base, TARGET_REPUBLISH_MS);
}

static void compile_times(const struct inputs *in)
{
    double base[RUNS], rr[RUNS], ring[RUNS], release[RUNS];
    xlb_lb_cluster_release(compile(in, &in->rr_config)); /* warm the allocator */
    for (int r = 0; r < RUNS; r++) {
        base[r] = baseline_copy_ms(in);
        double start = now_ms();
        struct xlb_lb_cluster *c = compile(in, &in->rr_config);
        rr[r] = now_ms() - start;
        start = now_ms();
        xlb_lb_cluster_release(c);
        release[r] = now_ms() - start;
        start = now_ms();
        c = compile(in, &in->ring_config);
        ring[r] = now_ms() - start;
        xlb_lb_cluster_release(c);
    }
    double b = median_of(base);
    printf("\nxlb_cluster_compile, one cluster of %u endpoints in %u localities "
           "(median of %d, min-max, vs. baseline, target):\n",
           in->n, (unsigned)LOCALITIES, RUNS);
    printf("  %-40s %7.3f ms  (%.3f-%.3f)\n", "baseline: allocate + copy the endpoints", b, base[0],
           base[RUNS - 1]);
    print_compile("round robin + locality", rr, b);
    print_compile("ring hash", ring, b);
    printf("  %-40s %7.3f ms  (after the grace period, not on the publish path)\n",
           "release of the old round robin cluster", median_of(release));
}

struct footprint {
    uint64_t endpoints, usable, rr, wchoice, override, ring;
};

/* The arrays a compiled cluster holds, as allocated by cluster_compile.c. */
static void footprint_of(const struct xlb_lb_cluster *c, struct footprint *fp)
{
    memset(fp, 0, sizeof(*fp));
    fp->endpoints = ((uint64_t)c->n_endpoints + 1) * sizeof(c->endpoints[0]);
    fp->usable = (XLB_USABLE_WORDS(c->n_endpoints) + 1) * sizeof(uint64_t);
    for (uint32_t p = 0; p < c->n_priorities; p++) {
        const struct xlb_lb_priority *prio = &c->priorities[p];
        for (uint32_t l = 0; l < prio->n_localities; l++)
            if (prio->localities[l].rr != NULL)
                fp->rr += xlb_rr_bytes(prio->localities[l].rr);
        if (prio->locality_choice != NULL)
            fp->wchoice += xlb_wchoice_bytes(prio->locality_choice);
        if (prio->ring != NULL)
            fp->ring += xlb_ring_hash_bytes(prio->ring);
    }
    if (c->override != NULL)
        fp->override = xlb_override_map_bytes(c->override);
}

static uint64_t footprint_total(const struct footprint *fp)
{
    return fp->endpoints + fp->usable + fp->rr + fp->wchoice + fp->override + fp->ring;
}

static double bytes_per_endpoint(const struct xlb_lb_cluster *c)
{
    struct footprint fp;
    footprint_of(c, &fp);
    return (double)footprint_total(&fp) / c->n_endpoints;
}

static void print_footprint(const char *name, const struct xlb_lb_cluster *c)
{
    struct footprint fp;
    footprint_of(c, &fp);
    double n = c->n_endpoints;
    uint64_t total = footprint_total(&fp);
    printf("  %-24s %7.1f %7.2f %7.2f %7.3f %8.1f %7.1f  %7.1f  (%.0f KiB)\n", name,
           fp.endpoints / n, fp.usable / n, fp.rr / n, fp.wchoice / n, fp.override / n, fp.ring / n,
           total / n, total / 1024.0);
}

static void memory(const struct inputs *in)
{
    struct xlb_lb_cluster *rr = compile(in, &in->rr_config);
    struct xlb_lb_cluster *ring = compile(in, &in->ring_config);
    printf("\nbytes per endpoint of a compiled cluster of %u endpoints (target <= %d):\n", in->n,
           TARGET_BYTES_PER_EP);
    printf("  %-24s %7s %7s %7s %7s %8s %7s  %7s\n", "cluster", "eps", "usable", "rr", "wchoice",
           "override", "ring", "total");
    print_footprint("round robin + locality", rr);
    print_footprint("ring hash", ring);
    printf("  (sizeof(struct xlb_lb_endpoint) = %zu; override map: %u buckets of %zu bytes)\n",
           sizeof(struct xlb_lb_endpoint), rr->override->mask + 1,
           sizeof(struct xlb_override_bucket));
    xlb_lb_cluster_release(rr);
    xlb_lb_cluster_release(ring);
}

/* TSC ticks per millisecond, to turn cycles into time. */
static uint64_t tsc_per_ms(void)
{
    double start = now_ms();
    uint64_t t0 = ticks();
    while (now_ms() - start < 100)
        ;
    return (uint64_t)((double)(ticks() - t0) / (now_ms() - start));
}

/* Arguments: the endpoint counts to measure picks with (default 10, 1000 and 100000). */
int main(int argc, char **argv)
{
    uint64_t tsc = tsc_per_ms();
    printf("bench_lb: TSC cycles per pick through xlb_lb_pick (L4 VIP, %d localities, counters "
           "on), median and worst of %d runs of %u picks\n",
           LOCALITIES, RUNS, PICKS);
    printf("%-9s %-24s %8s %8s %8s %8s %9s %7s\n", "endpoints", "pick", "cycles", "worst",
           "baseline", "- base", "ratio", "target");
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            long n = strtol(argv[i], NULL, 10);
            if (n < 1 || n > XLB_ENDPOINT_SLOTS)
                die("endpoint counts are 1..131072");
            run_size((uint32_t)n, tsc);
        }
    } else {
        const uint32_t sizes[] = {10, 1000, 100000};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            run_size(sizes[i], tsc);
    }
    memory_latency();

    struct inputs in;
    inputs_make(&in, COMPILE_ENDPOINTS);
    compile_times(&in);
    memory(&in);
    inputs_free(&in);
    return 0;
}
