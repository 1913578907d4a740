/* bench_l7's L7 VIP on bench_fwd's fixture, and its memory report (see bench_l7_vip.h). */
#include <stdio.h>

#include <rte_lcore.h>

#include "bench_fwd_setup.h"
#include "bench_l7_vip.h"
#include "l7/l7.h"
#include "route_compile.h"

static struct xlb_route_table *routes;
/* The configuration's strings, in the char * its parsed form holds. */
static char cookie_name[] = "xlb-session", cookie_path[] = "/", any_domain[] = "*",
            route_prefix[] = "/xlb.test.Echo/";
static char *cookie_names[1] = {cookie_name};
static struct xlb_lb_cookie_attrs cookie_attrs[1] = {{cookie_path, true, 3600}};

void l7_vip_make(void)
{
    struct xlb_domain dom = {any_domain, XLB_DOMAIN_UNIVERSE};
    struct xlb_route route = {0};
    route.match.path_type = XLB_PATH_PREFIX;
    route.match.path = route_prefix;
    route.match.case_sensitive = true;
    route.action = XLB_ROUTE_CLUSTER;
    route.cluster = b.cluster->name;
    struct xlb_virtual_host vh = {0};
    vh.domains = &dom;
    vh.n_domains = 1;
    vh.routes = &route;
    vh.n_routes = 1;
    struct xlb_route_config cfg = {0};
    cfg.vhosts = &vh;
    cfg.n_vhosts = 1;
    const char *names[1] = {b.cluster->name};
    if (xlb_route_compile(&cfg, names, 1, &routes) != 0 || routes->n_clusters != 1)
        die("route compile");
    b.vip.routes = routes;
    b.vip.n_targets = 1;
    b.snap->vips[0].l7 = true;
}

void l7_vip_cookie(bool on)
{
    b.vip.route_cookie = on ? cookie_names : NULL;
    b.vip.route_cookie_attrs = on ? cookie_attrs : NULL;
}

void l7_memory_report(void)
{
    const uint32_t sizes[] = {256, 1024};
    printf("\nmemory per L7 connection: sizeof the pool element (xlb_l7_connection_bytes) %zu "
           "bytes\n",
           xlb_l7_connection_bytes());
    printf("  %-12s %14s %14s\n", "connections", "heap, per conn", "total MiB");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t h0 = heap_bytes();
        struct xlb_l7_worker *w = xlb_l7_worker_create(7, sizes[i], (int)rte_socket_id());
        uint64_t h1 = heap_bytes();
        if (w == NULL)
            die("cannot create the L7 worker state (raise -m?)");
        xlb_l7_worker_free(w);
        printf("  %-12u %14.0f %14.1f\n", sizes[i], (double)(h1 - h0) / sizes[i],
               (double)(h1 - h0) / (1 << 20));
    }
    printf("  (heap: the rte_malloc heap xlb_l7_worker_create(n) holds -- pool elements with "
           "their mempool headers, the index, the worker's encoder -- divided by n; each "
           "connection also has a flow table entry, ~120 bytes: bench_fwd)\n");
}

void l7_vip_free(void)
{
    b.vip.routes = NULL;
    l7_vip_cookie(false);
    xlb_route_table_free(routes);
    routes = NULL;
}
