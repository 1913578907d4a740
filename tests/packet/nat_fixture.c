#include "nat_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include "xlb_const.h"

/* Strings of the hand-built configuration, in the char * its parsed form holds. The compiler
 * only reads them. */
static char region[] = "r", zone[] = "z", no_string[] = "";

static const struct rte_ether_addr gw_mac = FIX_GW_MAC;
static const struct rte_ether_addr gw6_mac = NAT_GW6_MAC;

static uint32_t locality_slot(void *arg, uint32_t priority, const struct xlb_eds_locality *l)
{
    (void)priority;
    (void)l;
    return *(uint32_t *)arg;
}

struct xlb_lb_cluster *nat_compile_cluster(const struct nat_cluster *c)
{
    struct xlb_host_port addr[4][XLB_MAX_ENDPOINT_ADDRESSES];
    struct xlb_eds_endpoint ep[4];
    uint32_t n = c->n_endpoints, loc_slot = c->locality_slot;
    assert_true(n <= 4);
    for (uint32_t i = 0; i < n; i++) {
        /* "a:p,b:p": Endpoint.address, then additional_addresses (A61). */
        uint32_t k = 0;
        for (const char *at = c->endpoints[i]; at != NULL && k < XLB_MAX_ENDPOINT_ADDRESSES; k++) {
            const char *comma = strchr(at, ',');
            size_t len = comma != NULL ? (size_t)(comma - at) : strlen(at);
            assert_int_equal(xlb_host_port_parse(at, len, &addr[i][k]), 0);
            at = comma != NULL ? comma + 1 : NULL;
        }
        ep[i] = (struct xlb_eds_endpoint){
            .addresses = addr[i], .n_addresses = k, .health = XLB_HEALTH_HEALTHY, .weight = 1};
    }
    struct xlb_eds_locality loc = {.region = region,
                                   .zone = zone,
                                   .sub_zone = no_string,
                                   .weight = 1,
                                   .endpoints = ep,
                                   .n_endpoints = n};
    struct xlb_eds_priority prio = {.localities = &loc, .n_localities = 1};
    struct xlb_endpoint_config eds = {
        .cluster_name = XLB_UNCONST(c->name), .priorities = &prio, .n_priorities = 1};
    struct xlb_cluster_config cfg = {
        .name = XLB_UNCONST(c->name),
        .type = XLB_CLUSTER_EDS,
        .eds_service_name = no_string,
        .lb_policy = c->policy,
        .override_host_status = XLB_OVERRIDE_STATUS_DEFAULT,
        .max_requests = c->max_requests,
    };
    xlb_ring_hash_config_default(&cfg.ring_hash);
    struct xlb_cluster_compile_input in = {
        .name = c->name,
        .config = &cfg,
        .endpoints = &eds,
        .endpoint_slots = c->endpoint_slots,
        .cluster_slot = c->cluster_slot,
        .locality_slot = locality_slot,
        .arg = &loc_slot,
    };
    struct xlb_lb_cluster *out = NULL;
    char err[256] = "";
    if (xlb_cluster_compile(&in, &out, err, sizeof(err)) != 0)
        fail_msg("compile %s: %s", c->name, err);
    assert_non_null(out);
    assert_int_equal(out->n_endpoints, n);
    return out;
}

static void l4_vip(struct xlb_lb_vip *vip, struct xlb_lb_target *target,
                   struct xlb_lb_cluster **leaf)
{
    *target =
        (struct xlb_lb_target){.name = (*leaf)->name, .ready = true, .n_leaves = 1, .leaves = leaf};
    *vip = (struct xlb_lb_vip){.routes = NULL, .n_targets = 1, .targets = target};
}

struct xlb_addr_entry *nat_entry(struct xlb_snapshot *snap, const char *text)
{
    struct xlb_addr a;
    assert_int_equal(xlb_addr_parse(text, &a), 0);
    const struct xlb_addr_entry *e = xlb_snapshot_lookup(snap, &a);
    assert_non_null(e);
    return &snap->entries[e - snap->entries];
}

static void add(struct xlb_snapshot *snap, const char *text, uint8_t role,
                const struct rte_ether_addr *mac)
{
    struct xlb_addr_entry e = {.role = role, .port_mask = role == XLB_ROLE_NEIGHBOUR ? 0 : 1};
    assert_int_equal(xlb_addr_parse(text, &e.addr), 0);
    if (mac != NULL) {
        e.resolved = true;
        e.mac = *mac;
    }
    assert_int_equal(xlb_snapshot_add_address(snap, &e), 0);
}

static void resolve(struct xlb_snapshot *snap, const char *text, const struct rte_ether_addr *mac)
{
    struct xlb_addr_entry *e = nat_entry(snap, text);
    e->resolved = true;
    e->mac = *mac;
}

/* The packet fixture's snapshot, completed: resolved gateways, backends, SNAT, two L4 VIPs. */
static void complete_snapshot(struct nat_fixture *n, const struct nat_config *cfg)
{
    struct xlb_snapshot *snap = n->f->snap;
    struct xlb_port_view *port = &snap->ports[0];
    port->n_gateways = 2;
    assert_int_equal(xlb_addr_parse(FIX_GW4, &port->gateways[0]), 0);
    assert_int_equal(xlb_addr_parse(FIX_GW6, &port->gateways[1]), 0);
    resolve(snap, FIX_GW4, &gw_mac);
    resolve(snap, FIX_GW6, &gw6_mac);
    for (unsigned i = 0; i < cfg->n_backends; i++)
        add(snap, cfg->backends[i].addr, XLB_ROLE_NEIGHBOUR, &cfg->backends[i].mac);
    add(snap, SNAT4, XLB_ROLE_SNAT, NULL);
    add(snap, SNAT6, XLB_ROLE_SNAT, NULL);

    snap->n_vips = 2;
    assert_int_equal(xlb_addr_parse(FIX_VIP4, &snap->vips[0].addr), 0);
    snap->vips[0].l4_port = VIP_PORT;
    snap->vips[0].l7 = false;
    snap->vips[0].lb = &n->vip[0];
    assert_int_equal(xlb_addr_parse(FIX_VIP6, &snap->vips[1].addr), 0);
    snap->vips[1].l4_port = VIP_PORT;
    snap->vips[1].l7 = false;
    snap->vips[1].lb = &n->vip[1];
}

struct nat_fixture *nat_fixture_create(const struct nat_config *cfg)
{
    static unsigned serial;
    assert_true(cfg->n_clusters >= 2 && cfg->n_clusters <= NAT_MAX_CLUSTERS);
    assert_true(cfg->n_workers <= NAT_MAX_WORKERS);
    struct nat_fixture *n = calloc(1, sizeof(*n));
    assert_non_null(n);
    n->f = fixture_create();

    n->n_clusters = cfg->n_clusters;
    for (unsigned i = 0; i < cfg->n_clusters; i++)
        n->leaf[i] = nat_compile_cluster(&cfg->clusters[i]);
    for (unsigned i = 0; i < cfg->n_clusters; i++)
        l4_vip(&n->vip[i], &n->target[i], &n->leaf[i]);
    complete_snapshot(n, cfg);

    struct xlb_addr snat[2];
    assert_int_equal(xlb_addr_parse(SNAT4, &snat[0]), 0);
    assert_int_equal(xlb_addr_parse(SNAT6, &snat[1]), 0);
    char name[32];
    snprintf(name, sizeof(name), "%s_flows_%u", cfg->name, serial++);
    /* Worker 0's slice of cfg->port_count ports from PORT_BASE, as xlbd makes its slices. */
    uint16_t first, count;
    xlb_snat_worker_ports(PORT_BASE, cfg->port_count, 0, &first, &count);
    n->flows = xlb_flow_table_create(name, cfg->flows, SOCKET_ID_ANY, snat, 2, first, count);
    assert_non_null(n->flows);
    n->load = calloc(1, sizeof(*n->load));
    assert_non_null(n->load);
    assert_int_equal(xlb_lb_worker_init(&n->lb, cfg->lb_seed, n->load, n->load, 1), 0);
    n->n_workers = cfg->n_workers;
    for (unsigned w = 0; w < cfg->n_workers; w++) {
        snprintf(name, sizeof(name), "%s_redirect_%u", cfg->name, w);
        n->redirect[w] = rte_ring_create(name, 1024, SOCKET_ID_ANY, RING_F_SC_DEQ);
        assert_non_null(n->redirect[w]);
    }

    struct fixture *f = n->f;
    xlb_burst_ctx_init(&f->ctx, &(struct xlb_burst_params){
                                    .stats = &f->stats,
                                    .to_control = f->to_control,
                                    .pool = f->pool,
                                    .flows = n->flows,
                                    .lb = &n->lb,
                                    .redirect = cfg->n_workers > 0 ? n->redirect : NULL,
                                    .worker_id = 0,
                                    .n_workers = cfg->n_workers,
                                    .snat_port_base = PORT_BASE,
                                    .snat_slice = cfg->port_count,
                                    .tsc_hz = TSC_HZ,
                                    .now_tsc = cfg->start_tsc,
                                });
    return n;
}

void nat_fixture_destroy(struct nat_fixture *n)
{
    n->f->snap->n_vips = 0; /* the VIPs' LB trees are ours, not reference counted */
    for (unsigned w = 0; w < n->n_workers; w++) {
        assert_int_equal(rte_ring_count(n->redirect[w]), 0);
        rte_ring_free(n->redirect[w]);
    }
    xlb_flow_table_free(n->flows);
    xlb_lb_worker_fini(&n->lb);
    free(n->load);
    for (unsigned i = 0; i < n->n_clusters; i++)
        xlb_lb_cluster_release(n->leaf[i]);
    fixture_destroy(n->f); /* asserts every mbuf is back in the pool */
    free(n);
}
