/*
 * Route matching cost (lib/route): ns per xlb_route_match on 1,000 prefix routes where only the
 * last matches, against a baseline of one memcmp per route in the same run; then 1,000 regex
 * routes. Reports, never asserts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "route_compile.h"
#include "xlb_route.h"

/* Strings of the hand-built configuration, in the char * its parsed form holds. */
static char any_domain[] = "*", cluster_name[] = "c";

#define N_ROUTES 1000
#define ITERS    2000

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One vhost "*" with N_ROUTES routes "/svc<i>/" (prefix or regex), all to cluster "c". */
static struct xlb_route_table *build(bool regex, char paths[][32])
{
    struct xlb_route_config cfg = {0};
    struct xlb_virtual_host vh = {0};
    struct xlb_domain dom = {any_domain, XLB_DOMAIN_UNIVERSE};
    struct xlb_route *routes = calloc(N_ROUTES, sizeof(*routes));
    char(*regexes)[40] = calloc(N_ROUTES, sizeof(*regexes));
    if (routes == NULL || regexes == NULL)
        exit(1);
    for (int i = 0; i < N_ROUTES; i++) {
        snprintf(paths[i], 32, "/svc%04d/", i);
        snprintf(regexes[i], 40, "/svc%04d/[A-Za-z]+", i);
        routes[i].match.path_type = regex ? XLB_PATH_REGEX : XLB_PATH_PREFIX;
        routes[i].match.path = regex ? regexes[i] : paths[i];
        routes[i].match.case_sensitive = true;
        routes[i].action = XLB_ROUTE_CLUSTER;
        routes[i].cluster = cluster_name;
    }
    vh.domains = &dom;
    vh.n_domains = 1;
    vh.routes = routes;
    vh.n_routes = N_ROUTES;
    cfg.vhosts = &vh;
    cfg.n_vhosts = 1;
    struct xlb_route_table *t = NULL;
    if (xlb_route_compile(&cfg, NULL, 0, &t) != 0)
        exit(1);
    free(routes);
    free(regexes);
    return t;
}

int main(void)
{
    static char paths[N_ROUTES][32];
    const char *path = "/svc0999/Method";
    size_t path_len = strlen(path);
    struct xlb_route_scratch *s = xlb_route_scratch_create();
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 1);
    struct xlb_route_request req = {path, (uint32_t)path_len, "x", 1, NULL, 0};
    struct xlb_route_result res;

    /* Baseline: the cheapest conceivable scan, one memcmp per route. */
    struct xlb_route_table *t = build(false, paths);
    volatile unsigned sink = 0;
    double t0 = now_ns();
    for (int it = 0; it < ITERS; it++)
        for (int i = 0; i < N_ROUTES; i++)
            if (memcmp(path, paths[i], 9) == 0)
                sink += (unsigned)i;
    double base = (now_ns() - t0) / ITERS;

    t0 = now_ns();
    for (int it = 0; it < ITERS; it++)
        sink += xlb_route_match(t, 0, &req, &rng, s, &res);
    double prefix = (now_ns() - t0) / ITERS;
    xlb_route_table_free(t);

    t = build(true, paths);
    t0 = now_ns();
    for (int it = 0; it < ITERS / 10; it++)
        sink += xlb_route_match(t, 0, &req, &rng, s, &res);
    double regex = (now_ns() - t0) / (ITERS / 10);
    xlb_route_table_free(t);
    xlb_route_scratch_free(s);

    printf("routes=%d (last one matches)\n", N_ROUTES);
    printf("baseline memcmp scan: %8.0f ns/match\n", base);
    printf("prefix routes:        %8.0f ns/match  (%.2fx baseline)\n", prefix, prefix / base);
    printf("regex routes (JIT):   %8.0f ns/match  (%.2fx baseline)\n", regex, regex / base);
    return sink == 0xFFFFFFFFu;
}
