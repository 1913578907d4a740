/*
 * bench_lb_cookie: what an L7 pick with a session cookie (A55) costs a worker, through
 * xlb_lb_pick as a worker makes it: route match (one virtual host, one prefix route to a
 * weighted cluster of two entries), the session cookie found in the request's `cookie` field
 * and decoded, the override host taking the pick (a 100-endpoint round-robin cluster), the
 * pick counted.
 *
 * Rows, each the median and worst of RUNS runs of PICKS picks, in TSC cycles per pick:
 * - "single cluster": a route to one cluster with the route's cookie;
 * - "weighted, route cookie": the two entries carry no filter override, so the route's cookie
 *   applies to both (the fast path: the route does not tell its entries apart);
 * - "weighted, entry cookies": the first entry overrides the filter (A39), so the pick learns
 *   which entry it drew and reads that entry's cookie.
 * A loop that only completes the requests is the baseline. Reports figures, never asserts.
 */
#include <arpa/inet.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "cluster_compile.h"
#include "route_compile.h"
#include "xlb_lb.h"

/* Strings of the hand-built configuration, in the char * its parsed form holds. */
static char cluster_name[] = "bench", no_string[] = "", zone[] = "z", any_domain[] = "*",
            prefix[] = "/svc/", filter_name[] = "ssa", cookie_name[] = "s1";

#define PICKS        1000000u
#define RUNS         7
#define ENDPOINTS    100u
#define SESSION_EP   42u
#define CLUSTER_SLOT 3

static volatile uint64_t sink;

static void die(const char *what)
{
    fprintf(stderr, "bench_lb_cookie: %s\n", what);
    exit(1);
}

static struct xlb_lb_cluster *compile_cluster(struct xlb_host_port *where)
{
    static struct xlb_eds_endpoint endpoints[ENDPOINTS];
    static uint32_t slots[ENDPOINTS];
    for (uint32_t i = 0; i < ENDPOINTS; i++) {
        xlb_addr_from_ipv4(htonl(0xc6120000u + i + 1), &where[i].addr);
        where[i].port = 8080;
        endpoints[i] = (struct xlb_eds_endpoint){
            .addresses = &where[i], .n_addresses = 1, .health = XLB_HEALTH_HEALTHY, .weight = 1};
        slots[i] = i;
    }
    static struct xlb_eds_locality locality;
    locality = (struct xlb_eds_locality){.region = no_string,
                                         .zone = zone,
                                         .sub_zone = no_string,
                                         .weight = 1,
                                         .endpoints = endpoints,
                                         .n_endpoints = ENDPOINTS};
    static struct xlb_eds_priority priority;
    priority = (struct xlb_eds_priority){&locality, 1};
    static struct xlb_endpoint_config eds;
    eds = (struct xlb_endpoint_config){
        .cluster_name = cluster_name, .priorities = &priority, .n_priorities = 1};
    static struct xlb_cluster_config config;
    config = (struct xlb_cluster_config){
        .name = cluster_name,
        .type = XLB_CLUSTER_EDS,
        .eds_service_name = no_string,
        .lb_policy = XLB_LB_ROUND_ROBIN,
        .max_requests = XLB_CIRCUIT_BREAKER_DEFAULT_MAX_REQUESTS,
        .override_host_status = XLB_OVERRIDE_STATUS_DEFAULT,
        .idle_timeout = {.seconds = XLB_IDLE_TIMEOUT_DEFAULT_SECONDS},
    };
    xlb_ring_hash_config_default(&config.ring_hash);
    struct xlb_cluster_compile_input input = {
        .name = cluster_name,
        .config = &config,
        .endpoints = &eds,
        .endpoint_slots = slots,
        .cluster_slot = CLUSTER_SLOT,
    };
    struct xlb_lb_cluster *c;
    char err[128];
    if (xlb_cluster_compile(&input, &c, err, sizeof(err)) != 0)
        die(err);
    return c;
}

/* One virtual host "*", one route "/svc/" to the cluster: alone, or as two weighted entries
 * of which the first carries an override of the stateful session filter when asked. */
static struct xlb_route_table *compile_routes(bool weighted, bool entry_override)
{
    struct xlb_filter_override override = {.filter_name = filter_name,
                                           .kind = XLB_SESSION_OVERRIDE_DISABLED};
    struct xlb_weighted_cluster entries[2] = {{cluster_name, 1, {NULL, 0}},
                                              {cluster_name, 1, {NULL, 0}}};
    if (entry_override)
        entries[0].overrides = (struct xlb_filter_overrides){&override, 1};
    struct xlb_domain dom = {any_domain, XLB_DOMAIN_UNIVERSE};
    struct xlb_route route = {0};
    route.match.path_type = XLB_PATH_PREFIX;
    route.match.path = prefix;
    route.match.case_sensitive = true;
    route.action = weighted ? XLB_ROUTE_WEIGHTED_CLUSTERS : XLB_ROUTE_CLUSTER;
    route.cluster = cluster_name;
    route.weighted = entries;
    route.n_weighted = 2;
    route.total_weight = 2;
    struct xlb_virtual_host vh = {.domains = &dom, .n_domains = 1, .routes = &route, .n_routes = 1};
    struct xlb_route_config cfg = {.vhosts = &vh, .n_vhosts = 1};
    const char *names[1] = {cluster_name};
    struct xlb_route_table *t;
    if (xlb_route_compile(&cfg, names, 1, &t) != 0 || t->n_clusters != 1)
        die("route compile");
    return t;
}

struct bench_vip {
    struct xlb_lb_cluster *leaf;
    struct xlb_lb_target target;
    struct xlb_lb_vip vip;
    char *route_cookie[1];
    struct xlb_lb_cookie_attrs route_attrs[1];
    uint32_t route_first_entry[1];
    char *entry_cookie[2];
    struct xlb_lb_cookie_attrs entry_attrs[2];
};

/* The VIP as xlb_vip_compile leaves it: the route's cookie s1, and with entry cookies the
 * first entry's own (the same name with another Max-Age, so that both read the same field the
 * same way and the rows differ only by the entry lookup; the second entry inherits). */
static void vip_make(struct bench_vip *b, struct xlb_lb_cluster *c, struct xlb_route_table *t,
                     bool entry_cookies)
{
    memset(b, 0, sizeof(*b));
    b->leaf = c;
    b->target = (struct xlb_lb_target){
        .name = cluster_name, .ready = true, .n_leaves = 1, .leaves = &b->leaf};
    b->route_cookie[0] = cookie_name;
    b->vip = (struct xlb_lb_vip){.routes = t,
                                 .n_targets = 1,
                                 .targets = &b->target,
                                 .route_cookie = b->route_cookie,
                                 .route_cookie_attrs = b->route_attrs};
    if (!entry_cookies)
        return;
    b->route_first_entry[0] = 0;
    b->entry_cookie[0] = cookie_name;
    b->entry_attrs[0] = (struct xlb_lb_cookie_attrs){.has_max_age = true, .max_age_s = 60};
    b->entry_cookie[1] = cookie_name;
    b->vip.route_first_entry = b->route_first_entry;
    b->vip.entry_cookie = b->entry_cookie;
    b->vip.entry_cookie_attrs = b->entry_attrs;
    b->vip.n_entry_cookies = 2;
}

struct fixture {
    struct xlb_worker_load *load;
    struct xlb_lb_worker w;
    struct xlb_route_request http;
    struct xlb_route_field cookie;
    char cookie_value[128];
    uint32_t session_picks;
};

static void complete(struct fixture *f)
{
    f->load->clusters[CLUSTER_SLOT].finished++;
}

static uint64_t loop_base(struct fixture *f, const struct xlb_lb_vip *v)
{
    (void)v;
    uint64_t acc = 0;
    for (uint32_t i = 0; i < PICKS; i++) {
        acc += i;
        complete(f);
        __asm__ volatile("" ::: "memory");
    }
    return acc;
}

static uint64_t loop_pick(struct fixture *f, const struct xlb_lb_vip *v)
{
    uint64_t acc = 0;
    struct xlb_lb_request req = {.http = &f->http};
    struct xlb_lb_trace t;
    for (uint32_t i = 0; i < PICKS; i++) {
        req.connection_id = i;
        xlb_lb_pick(v, &req, &f->w, &t);
        acc += t.endpoint;
        f->session_picks += t.override == XLB_LB_OVERRIDE_USED;
        complete(f);
    }
    return acc;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void row(struct fixture *f, const char *name, const struct xlb_lb_vip *v,
                uint64_t (*loop)(struct fixture *, const struct xlb_lb_vip *), double base)
{
    uint64_t runs[RUNS];
    f->session_picks = 0;
    for (int r = 0; r < RUNS; r++) {
        uint64_t t0 = ticks();
        sink += loop(f, v);
        runs[r] = ticks() - t0;
    }
    qsort(runs, RUNS, sizeof(runs[0]), compare_u64);
    double median = (double)runs[RUNS / 2] / PICKS, worst = (double)runs[RUNS - 1] / PICKS;
    if (base < 0)
        printf("%-26s %8.1f %8.1f\n", name, median, worst);
    else
        printf("%-26s %8.1f %8.1f %8.1f   (%u of %u picks by the cookie)\n", name, median, worst,
               median - base, f->session_picks / RUNS, PICKS);
}

int main(void)
{
    struct xlb_host_port where[ENDPOINTS];
    struct xlb_lb_cluster *c = compile_cluster(where);
    struct fixture *f = aligned_alloc(64, (sizeof(*f) + 63) / 64 * 64);
    if (f == NULL)
        die("out of memory");
    memset(f, 0, sizeof(*f));
    f->load = calloc(1, sizeof(*f->load));
    if (f->load == NULL || xlb_lb_worker_init(&f->w, 7, f->load, f->load, 1) != 0)
        die("worker init");
    /* The cookie names endpoint SESSION_EP: every pick is a session pick. */
    char value[64];
    struct xlb_host_port *s = &where[SESSION_EP];
    int len = xlb_host_port_format(s, value, sizeof(value));
    char b64[96];
    if (len <= 0)
        die("address format");
    int n = EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)value, (int)len);
    snprintf(f->cookie_value, sizeof(f->cookie_value), "%s=%.*s", cookie_name, n, b64);
    f->cookie =
        (struct xlb_route_field){"cookie", f->cookie_value, 6, (uint32_t)strlen(f->cookie_value)};
    f->http = (struct xlb_route_request){"/svc/Method", 11, "x", 1, &f->cookie, 1};

    struct xlb_route_table *single = compile_routes(false, false);
    struct xlb_route_table *weighted = compile_routes(true, false);
    struct xlb_route_table *entries = compile_routes(true, true);
    static struct bench_vip v_single, v_weighted, v_entries;
    vip_make(&v_single, c, single, false);
    vip_make(&v_weighted, c, weighted, false);
    vip_make(&v_entries, c, entries, true);

    printf("bench_lb_cookie: TSC cycles per L7 pick with a session cookie (xlb_lb_pick, %u "
           "endpoints, round robin, counters on), median and worst of %d runs of %u picks\n",
           ENDPOINTS, RUNS, PICKS);
    printf("%-26s %8s %8s %8s\n", "pick", "cycles", "worst", "- base");
    uint64_t runs[RUNS];
    for (int r = 0; r < RUNS; r++) {
        uint64_t t0 = ticks();
        sink += loop_base(f, NULL);
        runs[r] = ticks() - t0;
    }
    qsort(runs, RUNS, sizeof(runs[0]), compare_u64);
    double base = (double)runs[RUNS / 2] / PICKS;
    row(f, "baseline", NULL, loop_base, -1);
    row(f, "single cluster", &v_single.vip, loop_pick, base);
    row(f, "weighted, route cookie", &v_weighted.vip, loop_pick, base);
    row(f, "weighted, entry cookies", &v_entries.vip, loop_pick, base);
    xlb_route_table_free(single);
    xlb_route_table_free(weighted);
    xlb_route_table_free(entries);
    xlb_lb_cluster_release(c);
    xlb_lb_worker_fini(&f->w);
    free(f->load);
    free(f);
    return 0;
}
