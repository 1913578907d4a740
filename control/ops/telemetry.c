/*
 * DPDK telemetry commands, so that dpdk-telemetry.py (and anything speaking the telemetry
 * socket) reads xlb's state beside the ethdev and mempool commands DPDK registers itself:
 *
 *   /xlb/status            version, uptime, generation, sizes, reloads
 *   /xlb/workers           per worker: lcore, generation, loops, busy and idle cycles, load
 *   /xlb/counters[,W]      packet and event counters, in total or of worker W
 *   /xlb/drops[,W]         drops by reason, in total or of worker W
 *   /xlb/tcp[,W]           the TCP endpoint's counters and connections, in total or of worker W
 *   /xlb/ports, /xlb/vips, /xlb/neighbours
 *   /xlb/clusters          per cluster: requests started, finished, in flight, circuit-breaker
 *                          and overload drops, endpoint counts, chosen priority
 *   /xlb/endpoints[,C]     per endpoint (of cluster C, or of all): cluster, locality, health,
 *                          ejected, usable, successes and failures
 *   /xlb/xds               the ADS stream, ACKs, NACKs and resources by state, per type
 *
 * Entries are keyed cluster_N / endpoint_N like the other lists here; a reply holds at most
 * RTE_TEL_MAX_DICT_ENTRIES of them and what fits in DPDK's 16 KiB reply.
 *
 * Callbacks run on DPDK's telemetry thread: they read the control plane under its lock, and
 * the worker counters directly (single writer, aligned 64-bit values).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "control_plane.h"
#include "lb_metrics.h"
#include "port_link.h"
#include "xlb_lb_connectivity.h"
#include "worker_status.h"
#include "xlb_override_map.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xlb_control_plane *registered;

/* The control plane, locked; NULL after shutdown. Release with release_cp(). */
static struct xlb_control_plane *acquire_cp(void)
{
    pthread_mutex_lock(&registry_lock);
    struct xlb_control_plane *cp = registered;
    if (cp != NULL)
        pthread_mutex_lock(&cp->lock);
    pthread_mutex_unlock(&registry_lock);
    return cp;
}

static void release_cp(struct xlb_control_plane *cp)
{
    pthread_mutex_unlock(&cp->lock);
}

/* A worker index from the command's parameter, or -1 for "all"; -2 when invalid. */
static int worker_param(const struct xlb_control_plane *cp, const char *params)
{
    if (params == NULL || params[0] == '\0')
        return -1;
    char *end;
    long w = strtol(params, &end, 10);
    return *end == '\0' && w >= 0 && w < (long)cp->shared->n_workers ? (int)w : -2;
}

static void sum_stats(const struct xlb_control_plane *cp, int worker, struct xlb_worker_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned w = 0; w < cp->shared->n_workers; w++) {
        if (worker >= 0 && (unsigned)worker != w)
            continue;
        const struct xlb_worker_stats *s = &cp->shared->stats[w];
        out->rx_packets += s->rx_packets;
        out->tx_packets += s->tx_packets;
        for (int e = 0; e < XLB_EVENT_MAX; e++)
            out->events[e] += s->events[e];
        for (int d = 0; d < XLB_DROP_MAX; d++)
            out->drops[d] += s->drops[d];
        xlb_tcp_stats_add(&out->tcp, &s->tcp);
    }
}

static int cmd_status(const char *cmd, const char *params, struct rte_tel_data *d)
{
    struct xlb_control_plane *cp = acquire_cp();
    if (cp == NULL)
        return -1;
    unsigned resolved = 0;
    for (unsigned i = 0; i < cp->neighbours.n; i++)
        resolved += cp->neighbours.entries[i].resolved;
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "version", XLB_VERSION);
    rte_tel_data_add_dict_u64(d, "uptime_s", (xlb_now_ms() - cp->started_ms) / 1000);
    rte_tel_data_add_dict_u64(d, "generation", cp->generation);
    rte_tel_data_add_dict_u64(d, "workers", cp->shared->n_workers);
    rte_tel_data_add_dict_u64(d, "ports", cp->n_ports);
    rte_tel_data_add_dict_u64(d, "vips", cp->bootstrap.n_vips);
    rte_tel_data_add_dict_u64(d, "neighbours", cp->neighbours.n);
    rte_tel_data_add_dict_u64(d, "neighbours_resolved", resolved);
    rte_tel_data_add_dict_u64(d, "reloads_applied", cp->reload.applied);
    rte_tel_data_add_dict_u64(d, "reloads_rejected", cp->reload.rejected);
    release_cp(cp);
    return 0;
}

static int cmd_workers(const char *cmd, const char *params, struct rte_tel_data *d)
{
    struct xlb_control_plane *cp = acquire_cp();
    if (cp == NULL)
        return -1;
    rte_tel_data_start_dict(d);
    for (unsigned w = 0; w < cp->shared->n_workers; w++) {
        struct xlb_worker_status st;
        xlb_worker_status_gather(cp->shared, cp->worker_lcores, w, &st);
        struct rte_tel_data *c = rte_tel_data_alloc();
        if (c == NULL)
            break;
        rte_tel_data_start_dict(c);
        rte_tel_data_add_dict_u64(c, "lcore", st.lcore);
        rte_tel_data_add_dict_u64(c, "generation", st.counters.observed_generation);
        rte_tel_data_add_dict_u64(c, "loops", st.counters.loops);
        rte_tel_data_add_dict_u64(c, "busy_loops", st.counters.busy_loops);
        rte_tel_data_add_dict_u64(c, "busy_cycles", st.counters.busy_cycles);
        rte_tel_data_add_dict_u64(c, "idle_cycles", st.counters.idle_cycles);
        rte_tel_data_add_dict_u64(c, "busy_percent", st.busy_percent);
        rte_tel_data_add_dict_u64(c, "flows_in_use", st.counters.flows_in_use);
        rte_tel_data_add_dict_u64(c, "flows_high_water", st.counters.flows_high_water);
        rte_tel_data_add_dict_u64(c, "flows_capacity", st.counters.flows_capacity);
        rte_tel_data_add_dict_u64(c, "l7_connections_in_use", st.counters.l7_in_use);
        rte_tel_data_add_dict_u64(c, "l7_connections_high_water", st.counters.l7_high_water);
        rte_tel_data_add_dict_u64(c, "l7_connections_capacity", st.counters.l7_capacity);
        rte_tel_data_add_dict_u64(c, "l7_hpack_bytes_in_use", st.counters.l7_hpack_in_use);
        rte_tel_data_add_dict_u64(c, "l7_hpack_bytes_high_water", st.counters.l7_hpack_high_water);
        rte_tel_data_add_dict_u64(c, "l7_hpack_bytes_capacity", st.counters.l7_hpack_capacity);
        rte_tel_data_add_dict_u64(c, "stalled", st.stalled ? 1 : 0);
        rte_tel_data_add_dict_u64(c, "stalls", st.stall_episodes);
        char name[32];
        snprintf(name, sizeof(name), "worker_%u", w);
        rte_tel_data_add_dict_container(d, name, c, 0);
    }
    release_cp(cp);
    return 0;
}

static int counters_or_drops(const char *params, struct rte_tel_data *d, bool drops)
{
    struct xlb_control_plane *cp = acquire_cp();
    if (cp == NULL)
        return -1;
    int worker = worker_param(cp, params);
    if (worker == -2) {
        release_cp(cp);
        return -EINVAL;
    }
    struct xlb_worker_stats sum;
    sum_stats(cp, worker, &sum);
    release_cp(cp);
    rte_tel_data_start_dict(d);
    if (drops) {
        for (int r = 0; r < XLB_DROP_MAX; r++)
            rte_tel_data_add_dict_u64(d, xlb_drop_reason_name(r), sum.drops[r]);
        return 0;
    }
    rte_tel_data_add_dict_u64(d, "rx_packets", sum.rx_packets);
    rte_tel_data_add_dict_u64(d, "tx_packets", sum.tx_packets);
    for (int e = 0; e < XLB_EVENT_MAX; e++)
        rte_tel_data_add_dict_u64(d, xlb_event_counter_name(e), sum.events[e]);
    return 0;
}

static int cmd_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
    return counters_or_drops(params, d, false);
}

static int cmd_drops(const char *cmd, const char *params, struct rte_tel_data *d)
{
    return counters_or_drops(params, d, true);
}

static int cmd_tcp(const char *cmd, const char *params, struct rte_tel_data *d)
{
    struct xlb_control_plane *cp = acquire_cp();
    if (cp == NULL)
        return -1;
    int worker = worker_param(cp, params);
    if (worker == -2) {
        release_cp(cp);
        return -EINVAL;
    }
    struct xlb_worker_stats sum;
    sum_stats(cp, worker, &sum);
    release_cp(cp);
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_u64(d, "connections", sum.tcp.conns_in_use);
    rte_tel_data_add_dict_u64(d, "connections_high_water", sum.tcp.conns_high_water);
    rte_tel_data_add_dict_u64(d, "ooo_bytes", sum.tcp.ooo_bytes);
    for (int c = 0; c < XLB_TCP_COUNTER_MAX; c++)
        rte_tel_data_add_dict_u64(d, xlb_tcp_counter_descs[c].name, sum.tcp.counters[c]);
    return 0;
}

static int cmd_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
    struct xlb_control_plane *cp = acquire_cp();
    if (cp == NULL)
        return -1;
    rte_tel_data_start_dict(d);
    for (unsigned p = 0; p < cp->n_ports; p++) {
        struct rte_tel_data *c = rte_tel_data_alloc();
        if (c == NULL)
            break;
        struct rte_eth_stats stats = {0};
        struct xlb_port_link link;
        rte_eth_stats_get(cp->ports[p].port_id, &stats);
        xlb_port_link_read(cp->ports[p].port_id, &link);
        rte_tel_data_start_dict(c);
        rte_tel_data_add_dict_string(c, "name", cp->bootstrap.ports[p].name);
        rte_tel_data_add_dict_u64(c, "port_id", cp->ports[p].port_id);
        rte_tel_data_add_dict_u64(c, "link_up", link.state == XLB_LINK_UP);
        rte_tel_data_add_dict_u64(c, "rx_packets", stats.ipackets);
        rte_tel_data_add_dict_u64(c, "tx_packets", stats.opackets);
        rte_tel_data_add_dict_u64(c, "rx_dropped", stats.imissed + stats.rx_nombuf);
        char name[32];
        snprintf(name, sizeof(name), "port_%u", p);
        rte_tel_data_add_dict_container(d, name, c, 0);
    }
    release_cp(cp);
    return 0;
}

static int cmd_vips(const char *cmd, const char *params, struct rte_tel_data *d)
{
    struct xlb_control_plane *cp = acquire_cp();
    if (cp == NULL)
        return -1;
    rte_tel_data_start_dict(d);
    for (unsigned v = 0; v < cp->bootstrap.n_vips && v < RTE_TEL_MAX_DICT_ENTRIES; v++) {
        const struct xlb_vip_config *vip = &cp->bootstrap.vips[v];
        struct rte_tel_data *c = rte_tel_data_alloc();
        if (c == NULL)
            break;
        char addr[XLB_ADDR_STRLEN], name[32];
        rte_tel_data_start_dict(c);
        rte_tel_data_add_dict_string(c, "address",
                                     xlb_addr_format(&vip->address, addr, sizeof(addr)));
        rte_tel_data_add_dict_u64(c, "port", vip->port);
        rte_tel_data_add_dict_string(c, "mode", vip->target ? "l7" : "l4");
        rte_tel_data_add_dict_string(c, vip->target ? "target" : "cluster",
                                     vip->target ? vip->target : vip->cluster);
        rte_tel_data_add_dict_string(c, "state", xlb_xds_plane_vip_state(&cp->xds, v));
        snprintf(name, sizeof(name), "vip_%u", v);
        rte_tel_data_add_dict_container(d, name, c, 0);
    }
    release_cp(cp);
    return 0;
}

static int cmd_neighbours(const char *cmd, const char *params, struct rte_tel_data *d)
{
    struct xlb_control_plane *cp = acquire_cp();
    if (cp == NULL)
        return -1;
    rte_tel_data_start_dict(d);
    for (unsigned i = 0; i < cp->neighbours.n && i < RTE_TEL_MAX_DICT_ENTRIES; i++) {
        const struct xlb_neighbour_state *n = &cp->neighbours.entries[i];
        struct rte_tel_data *c = rte_tel_data_alloc();
        if (c == NULL)
            break;
        char addr[XLB_ADDR_STRLEN], mac[RTE_ETHER_ADDR_FMT_SIZE], name[32];
        rte_ether_format_addr(mac, sizeof(mac), &n->mac);
        rte_tel_data_start_dict(c);
        rte_tel_data_add_dict_string(c, "address", xlb_addr_format(&n->addr, addr, sizeof(addr)));
        rte_tel_data_add_dict_string(c, "port", cp->bootstrap.ports[n->port_index].name);
        rte_tel_data_add_dict_string(c, "state", n->resolved ? "reachable" : "incomplete");
        rte_tel_data_add_dict_string(c, "mac", n->resolved ? mac : "");
        snprintf(name, sizeof(name), "neighbour_%u", i);
        rte_tel_data_add_dict_container(d, name, c, 0);
    }
    release_cp(cp);
    return 0;
}

static uint64_t overload_drops(const struct xlb_lbm_cluster *c)
{
    uint64_t n = 0;
    for (uint32_t d = 0; d < c->n_drops; d++)
        n += c->drops[d].dropped;
    return n;
}

static struct rte_tel_data *cluster_dict(const struct xlb_lbm_cluster *c)
{
    struct rte_tel_data *d = rte_tel_data_alloc();
    if (d == NULL)
        return NULL;
    uint64_t usable = 0, ejected = 0;
    for (uint32_t e = 0; e < c->n_endpoints; e++) {
        ejected += c->endpoints[e].ejected;
        usable += !c->endpoints[e].ejected && c->endpoints[e].health != XLB_HEALTH_DRAINING;
    }
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "name", c->name);
    rte_tel_data_add_dict_u64(d, "requests_started", c->started);
    rte_tel_data_add_dict_u64(d, "requests_finished", c->finished);
    rte_tel_data_add_dict_u64(d, "requests_in_flight",
                              c->started > c->finished ? c->started - c->finished : 0);
    rte_tel_data_add_dict_u64(d, "circuit_breaker_drops", c->circuit_dropped);
    rte_tel_data_add_dict_u64(d, "overload_drops", overload_drops(c));
    rte_tel_data_add_dict_u64(d, "endpoints", c->n_endpoints);
    rte_tel_data_add_dict_u64(d, "endpoints_usable", usable);
    rte_tel_data_add_dict_u64(d, "endpoints_ejected", ejected);
    rte_tel_data_add_dict_int(d, "chosen_priority",
                              c->chosen_priority == XLB_LBM_NO_PRIORITY ? -1
                                                                        : (int)c->chosen_priority);
    return d;
}

/* The LB values of the running trees, under cp's lock (strings point into them). */
static struct xlb_control_plane *acquire_lb(struct xlb_lb_metrics *m)
{
    struct xlb_control_plane *cp = acquire_cp();
    if (cp != NULL &&
        xlb_lb_metrics_gather(cp->xds.lb, cp->shared->load, cp->shared->n_workers, m) != 0) {
        release_cp(cp);
        return NULL;
    }
    return cp;
}

static int cmd_clusters(const char *cmd, const char *params, struct rte_tel_data *d)
{
    struct xlb_lb_metrics m;
    struct xlb_control_plane *cp = acquire_lb(&m);
    if (cp == NULL)
        return -1;
    rte_tel_data_start_dict(d);
    for (uint32_t i = 0; i < m.n_clusters && i < RTE_TEL_MAX_DICT_ENTRIES; i++) {
        struct rte_tel_data *c = cluster_dict(&m.clusters[i]);
        char name[32];
        snprintf(name, sizeof(name), "cluster_%u", i);
        if (c != NULL)
            rte_tel_data_add_dict_container(d, name, c, 0);
    }
    xlb_lb_metrics_free(&m);
    release_cp(cp);
    return 0;
}

static struct rte_tel_data *endpoint_dict(const struct xlb_lbm_cluster *c,
                                          const struct xlb_lbm_endpoint *e)
{
    struct rte_tel_data *d = rte_tel_data_alloc();
    if (d == NULL)
        return NULL;
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "cluster", c->name);
    rte_tel_data_add_dict_string(d, "address", e->address);
    rte_tel_data_add_dict_string(d, "locality", c->localities[e->locality].name);
    rte_tel_data_add_dict_u64(d, "priority", c->localities[e->locality].priority);
    rte_tel_data_add_dict_string(d, "health", xlb_lbm_health_name(e->health));
    rte_tel_data_add_dict_u64(d, "ejected", e->ejected);
    rte_tel_data_add_dict_u64(d, "usable", !e->ejected && e->health != XLB_HEALTH_DRAINING);
    rte_tel_data_add_dict_u64(d, "succeeded", e->succeeded);
    rte_tel_data_add_dict_u64(d, "failed", e->failed);
    rte_tel_data_add_dict_string(d, "connectivity", xlb_connectivity_name(e->connectivity));
    return d;
}

static int cmd_endpoints(const char *cmd, const char *params, struct rte_tel_data *d)
{
    struct xlb_lb_metrics m;
    struct xlb_control_plane *cp = acquire_lb(&m);
    if (cp == NULL)
        return -1;
    bool any = params == NULL || params[0] == '\0', found = any;
    unsigned n = 0;
    rte_tel_data_start_dict(d);
    for (uint32_t i = 0; i < m.n_clusters; i++) {
        const struct xlb_lbm_cluster *c = &m.clusters[i];
        if (!any && strcmp(c->name, params) != 0)
            continue;
        found = true;
        for (uint32_t e = 0; e < c->n_endpoints && n < RTE_TEL_MAX_DICT_ENTRIES; e++) {
            struct rte_tel_data *ep = endpoint_dict(c, &c->endpoints[e]);
            char name[32];
            snprintf(name, sizeof(name), "endpoint_%u", n++);
            if (ep != NULL)
                rte_tel_data_add_dict_container(d, name, ep, 0);
        }
    }
    xlb_lb_metrics_free(&m);
    release_cp(cp);
    return found ? 0 : -EINVAL;
}

static struct rte_tel_data *xds_type_dict(const struct xlb_xds_metrics *m, int type)
{
    struct rte_tel_data *d = rte_tel_data_alloc();
    if (d == NULL)
        return NULL;
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_u64(d, "acks", m->ads.acks[type]);
    rte_tel_data_add_dict_u64(d, "nacks", m->ads.nacks[type]);
    for (int s = 0; s < XLB_XDSM_STATES; s++)
        rte_tel_data_add_dict_u64(d, xlb_xdsm_state_name[s], m->resources[type][s]);
    return d;
}

static int cmd_xds(const char *cmd, const char *params, struct rte_tel_data *d)
{
    struct xlb_control_plane *cp = acquire_cp();
    if (cp == NULL)
        return -1;
    struct xlb_xds_metrics m;
    xlb_xds_plane_metrics(&cp->xds, &m);
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "server", m.has_ads ? m.ads.server : "");
    rte_tel_data_add_dict_u64(d, "stream_connected", m.ads.connected);
    for (int t = 0; t < XLB_XDS_TYPES; t++) {
        struct rte_tel_data *c = xds_type_dict(&m, t);
        if (c != NULL)
            rte_tel_data_add_dict_container(d, xlb_xds_type_name[t], c, 0);
    }
    release_cp(cp);
    return 0;
}

int xlb_telemetry_register(struct xlb_control_plane *cp)
{
    static const struct {
        const char *name;
        telemetry_cb fn;
        const char *help;
    } commands[] = {
        {"/xlb/status", cmd_status, "xlb status. Takes no parameters"},
        {"/xlb/workers", cmd_workers, "xlb workers: generation, loops, busy/idle cycles"},
        {"/xlb/counters", cmd_counters, "xlb packet counters. Parameters: worker id (optional)"},
        {"/xlb/drops", cmd_drops, "xlb drops by reason. Parameters: worker id (optional)"},
        {"/xlb/tcp", cmd_tcp,
         "xlb TCP endpoint counters and connections. Parameters: worker id (optional)"},
        {"/xlb/ports", cmd_ports, "xlb ports: link and packet counts"},
        {"/xlb/vips", cmd_vips, "xlb VIPs: mode, target, state"},
        {"/xlb/neighbours", cmd_neighbours, "xlb gateways and neighbours"},
        {"/xlb/clusters", cmd_clusters,
         "xlb clusters: requests, circuit-breaker and overload drops, endpoint counts"},
        {"/xlb/endpoints", cmd_endpoints,
         "xlb endpoints: health, ejection, successes and failures. Parameters: cluster "
         "(optional)"},
        {"/xlb/xds", cmd_xds, "xlb xDS: stream, ACKs, NACKs and resources by state per type"},
    };
    static bool done;
    pthread_mutex_lock(&registry_lock);
    registered = cp;
    pthread_mutex_unlock(&registry_lock);
    if (done)
        return 0;
    for (size_t i = 0; i < RTE_DIM(commands); i++)
        if (rte_telemetry_register_cmd(commands[i].name, commands[i].fn, commands[i].help) != 0)
            return -1;
    done = true;
    return 0;
}

void xlb_telemetry_unregister(struct xlb_control_plane *cp)
{
    pthread_mutex_lock(&registry_lock);
    if (registered == cp)
        registered = NULL;
    pthread_mutex_unlock(&registry_lock);
    /* A callback that took cp before the line above holds its lock: wait for it. */
    pthread_mutex_lock(&cp->lock);
    pthread_mutex_unlock(&cp->lock);
}
