/*
 * pick_bench: what a pick costs, in TSC cycles, for each pick algorithm in lib/pick/, with 10,
 * 1,000 and 100,000 endpoints; the memory each structure takes per endpoint; and how long a
 * build of 10,000 endpoints takes. Never asserts: it prints a table to compare runs with.
 *
 * Each figure is the median of several runs of many back-to-back picks, minus nothing: the
 * "baseline" row (reading the next precomputed request hash) is printed so readers can see
 * how much of a figure is the harness itself.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"
#include "xlb_host_port.h"
#include "xlb_least_request.h"
#include "xlb_wrr.h"
#include "xlb_maglev.h"
#include "xlb_override_map.h"
#include "xlb_ring_hash.h"
#include "xlb_rng.h"
#include "xlb_rr.h"
#include "xlb_wchoice.h"

#define ITERATIONS (1u << 20)
#define RUNS       7
#define N_HASHES   (1u << 16) /* precomputed request hashes, cycled through */
#define N_QUERIES  (1u << 12) /* override lookups, cycled through */
#define LOCALITIES 3

static volatile uint64_t sink; /* keeps picks from being optimised away */

/* Everything the picks of one endpoint count need, built once. */
struct fixture {
    uint32_t n;
    char (*keys)[XLB_HOST_PORT_STRLEN];
    struct xlb_host_port *where;
    uint64_t *hashes;
    struct xlb_host_port *queries; /* override lookups: random endpoints, cache-resident */
    uint64_t *usable;
    struct xlb_wchoice *localities;
    struct xlb_rr *rr[LOCALITIES];
    struct xlb_ring_hash *ring;
    struct xlb_maglev *maglev;
    struct xlb_override_map *override;
    struct xlb_least_request *least_request;
    uint32_t *in_flight;  /* per slot, as a worker's own counts would be */
    uint32_t *wrr_shares; /* per entry: weights 1..4 scaled, as utilizations 0.25..1 give */
    uint32_t wrr_seq;
    struct xlb_rng rng;
    struct xlb_rr_cursor cursors[LOCALITIES];
};

typedef uint64_t (*pick_loop)(struct fixture *f);

static uint64_t loop_baseline(struct fixture *f)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < ITERATIONS; i++)
        acc += f->hashes[i & (N_HASHES - 1)];
    return acc;
}

static uint64_t loop_rr_locality(struct fixture *f)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < ITERATIONS; i++) {
        uint32_t loc = xlb_wchoice_pick(f->localities, &f->rng);
        acc += xlb_rr_pick(f->rr[loc], &f->cursors[loc]);
    }
    return acc;
}

static uint64_t loop_ring_hash(struct fixture *f)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < ITERATIONS; i++)
        acc += xlb_ring_hash_pick(f->ring, f->hashes[i & (N_HASHES - 1)], f->usable);
    return acc;
}

static uint64_t loop_maglev(struct fixture *f)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < ITERATIONS; i++)
        acc += xlb_maglev_pick(f->maglev, f->hashes[i & (N_HASHES - 1)]);
    return acc;
}

/* Two choices (A48's default) over all endpoints, usability checked as in stream mode. */
static uint64_t loop_least_request(struct fixture *f)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < ITERATIONS; i++)
        acc += xlb_least_request_pick(f->least_request, f->in_flight, f->usable, &f->rng, NULL);
    return acc;
}

/* A58's scheduler alone: the stride walk until an entry's share takes the position. */
static uint64_t loop_wrr(struct fixture *f)
{
    uint64_t acc = 0;
    uint32_t n = f->n, seq = f->wrr_seq;
    for (uint32_t i = 0; i < ITERATIONS; i++)
        for (uint32_t step = 0; step < n * XLB_WRR_MAX_ROUNDS; step++) {
            uint32_t s = seq++;
            if (xlb_wrr_takes(f->wrr_shares[s % n], s % n, n, s)) {
                acc += s % n;
                break;
            }
        }
    f->wrr_seq = seq;
    return acc;
}

static void build_wrr(struct fixture *f)
{
    struct xlb_wrr_round round = {0};
    f->wrr_shares = calloc(f->n, sizeof(uint32_t));
    if (f->wrr_shares == NULL)
        abort();
    for (uint32_t i = 0; i < f->n; i++)
        xlb_wrr_round_add(&round, (float)(1 + i % 4));
    for (uint32_t i = 0; i < f->n; i++)
        f->wrr_shares[i] = xlb_wrr_share(&round, (float)(1 + i % 4));
}

static uint64_t loop_override(struct fixture *f)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < ITERATIONS; i++) {
        const struct xlb_host_port *q = &f->queries[i & (N_QUERIES - 1)];
        acc += xlb_override_pick(f->override, q, XLB_OVERRIDE_STATUS_DEFAULT, f->usable);
    }
    return acc;
}

static double median_cycles(struct fixture *f, pick_loop loop)
{
    double runs[RUNS];
    sink += loop(f); /* warm caches and branch predictors */
    for (int r = 0; r < RUNS; r++) {
        uint64_t start = ticks();
        sink += loop(f);
        runs[r] = (double)(ticks() - start) / ITERATIONS;
    }
    qsort(runs, RUNS, sizeof(runs[0]), compare_doubles);
    return runs[RUNS / 2];
}

static void make_addresses(struct fixture *f)
{
    f->keys = malloc(sizeof(*f->keys) * f->n);
    f->where = malloc(sizeof(*f->where) * f->n);
    for (uint32_t i = 0; i < f->n; i++) {
        xlb_addr_from_ipv4(htonl(0xc6120000u + i), &f->where[i].addr); /* 198.18.0.0/15 */
        f->where[i].port = 8080;
        xlb_host_port_format(&f->where[i], f->keys[i], sizeof(f->keys[i]));
    }
    f->hashes = malloc(sizeof(*f->hashes) * N_HASHES);
    for (uint32_t i = 0; i < N_HASHES; i++)
        f->hashes[i] = xlb_rng_next(&f->rng);
    f->queries = malloc(sizeof(*f->queries) * N_QUERIES);
    for (uint32_t i = 0; i < N_QUERIES; i++)
        f->queries[i] = f->where[xlb_rng_below(&f->rng, f->n)];
    f->usable = malloc(sizeof(uint64_t) * XLB_USABLE_WORDS(f->n));
    memset(f->usable, 0xff, sizeof(uint64_t) * XLB_USABLE_WORDS(f->n));
}

/* Three localities of weights 1, 2, 3 sharing the endpoints between them. */
static int build_rr_locality(struct fixture *f)
{
    const uint32_t items[LOCALITIES] = {0, 1, 2}, weights[LOCALITIES] = {1, 2, 3};
    uint32_t *slots = malloc(sizeof(*slots) * f->n);
    for (uint32_t i = 0; i < f->n; i++)
        slots[i] = i;
    int rc = xlb_wchoice_build(items, weights, LOCALITIES, &f->localities);
    for (uint32_t l = 0; l < LOCALITIES && rc == 0; l++) {
        uint32_t from = f->n * l / LOCALITIES, to = f->n * (l + 1) / LOCALITIES;
        rc = xlb_rr_build(slots + from, to - from, &f->rr[l]);
        if (rc == 0)
            xlb_rr_cursor_reset(&f->cursors[l], f->rr[l], &f->rng);
    }
    free(slots);
    return rc;
}

static int build_ring(struct fixture *f)
{
    struct xlb_ring_hash_endpoint *eps = malloc(sizeof(*eps) * f->n);
    for (uint32_t i = 0; i < f->n; i++)
        eps[i] = (struct xlb_ring_hash_endpoint){f->keys[i], i, 1};
    struct xlb_ring_hash_config config;
    xlb_ring_hash_config_default(&config);
    int rc = xlb_ring_hash_build(eps, f->n, &config, &f->ring);
    free(eps);
    return rc;
}

static int build_maglev(struct fixture *f)
{
    struct xlb_maglev_endpoint *eps = malloc(sizeof(*eps) * f->n);
    for (uint32_t i = 0; i < f->n; i++)
        eps[i] = (struct xlb_maglev_endpoint){f->keys[i], i, 1};
    int rc = xlb_maglev_build(eps, f->n, 0, &f->maglev);
    free(eps);
    return rc;
}

static int build_override(struct fixture *f)
{
    struct xlb_override_endpoint *eps = malloc(sizeof(*eps) * f->n);
    for (uint32_t i = 0; i < f->n; i++)
        eps[i] = (struct xlb_override_endpoint){f->where[i], i, XLB_HEALTH_HEALTHY};
    int rc = xlb_override_map_build(eps, f->n, &f->override);
    free(eps);
    return rc;
}

static int build_least_request(struct fixture *f)
{
    uint32_t *slots = malloc(sizeof(*slots) * f->n);
    f->in_flight = malloc(sizeof(*f->in_flight) * f->n);
    for (uint32_t i = 0; i < f->n; i++) {
        slots[i] = i;
        f->in_flight[i] = xlb_rng_below(&f->rng, 16);
    }
    int rc = xlb_least_request_build(slots, NULL, f->n, XLB_LEAST_REQUEST_DEFAULT_CHOICES,
                                     &f->least_request);
    free(slots);
    return rc;
}

static void release(struct fixture *f)
{
    xlb_least_request_free(f->least_request);
    free(f->in_flight);
    xlb_wchoice_free(f->localities);
    for (int l = 0; l < LOCALITIES; l++)
        xlb_rr_free(f->rr[l]);
    xlb_ring_hash_free(f->ring);
    xlb_maglev_free(f->maglev);
    xlb_override_map_free(f->override);
    free(f->keys);
    free(f->where);
    free(f->hashes);
    free(f->queries);
    free(f->usable);
}

static uint64_t rr_locality_bytes(const struct fixture *f)
{
    uint64_t bytes = xlb_wchoice_bytes(f->localities);
    for (int l = 0; l < LOCALITIES; l++)
        bytes += xlb_rr_bytes(f->rr[l]);
    return bytes;
}

typedef int (*builder)(struct fixture *f);

static double timed_build(struct fixture *f, builder build)
{
    double start = now_ms();
    if (build(f) != 0) {
        fprintf(stderr, "pick_bench: build failed for %u endpoints\n", f->n);
        exit(1);
    }
    return now_ms() - start;
}

static void build_all(struct fixture *f, double ms[4])
{
    ms[0] = timed_build(f, build_rr_locality);
    ms[1] = timed_build(f, build_ring);
    ms[2] = timed_build(f, build_maglev);
    ms[3] = timed_build(f, build_override);
}

static void run_size(uint32_t n)
{
    struct fixture f = {.n = n};
    double ms[4];
    xlb_rng_seed(&f.rng, 2024 + n);
    make_addresses(&f);
    build_all(&f, ms);

    printf("%-9u %-22s %8.1f %10s\n", n, "baseline (read hash)", median_cycles(&f, loop_baseline),
           "-");
    printf("%-9s %-22s %8.1f %10.1f\n", "", "round robin + locality",
           median_cycles(&f, loop_rr_locality), (double)rr_locality_bytes(&f) / n);
    printf("%-9s %-22s %8.1f %10.1f   (%u points)\n", "", "ring hash",
           median_cycles(&f, loop_ring_hash), (double)xlb_ring_hash_bytes(f.ring) / n,
           f.ring->n_points);
    printf("%-9s %-22s %8.1f %10.1f   (table %u)\n", "", "maglev", median_cycles(&f, loop_maglev),
           (double)xlb_maglev_bytes(f.maglev) / n, f.maglev->size);
    timed_build(&f, build_least_request);
    printf("%-9s %-22s %8.1f %10.1f\n", "", "least request (2 of n)",
           median_cycles(&f, loop_least_request),
           (double)xlb_least_request_bytes(f.least_request) / n);
    build_wrr(&f);
    printf("%-9s %-22s %8.1f %10.1f\n", "", "weighted RR (stride)", median_cycles(&f, loop_wrr),
           (double)sizeof(struct xlb_endpoint_weight));
    free(f.wrr_shares);
    printf("%-9s %-22s %8.1f %10.1f\n", "", "override lookup", median_cycles(&f, loop_override),
           (double)xlb_override_map_bytes(f.override) / n);
    release(&f);
}

int main(void)
{
    printf("pick_bench: TSC cycles per pick, median of %d runs of %u picks\n", RUNS, ITERATIONS);
    printf("%-9s %-22s %8s %10s\n", "endpoints", "algorithm", "cycles", "bytes/ep");
    const uint32_t sizes[] = {10, 1000, 100000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        run_size(sizes[i]);

    struct fixture f = {.n = 10000};
    double ms[4];
    xlb_rng_seed(&f.rng, 10000);
    make_addresses(&f);
    build_all(&f, ms);
    printf("\nbuild ms for 10000 endpoints: rr+locality %.2f, ring hash %.2f, maglev %.2f, "
           "override map %.2f\n",
           ms[0], ms[1], ms[2], ms[3]);
    release(&f);
    return 0;
}
