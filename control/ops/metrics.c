#include "metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "control_plane.h"
#include "control_socket.h"
#include "lb_metrics.h"
#include "metrics_http.h"
#include "metrics_text.h"
#include "port_link.h"
#include "worker_status.h"

/* The TCP endpoint's families (lib/xlb_tcp_stats.h): one xlb_tcp_FAMILY_total per family, the
 * counters that split one event by reason as its label; then the gauges. */
static void tcp_families(const struct xlb_worker_status *status, unsigned n, struct xlb_text *t)
{
    char name[96], help[160];
    for (int c = 0; c < XLB_TCP_COUNTER_MAX; c++) {
        const struct xlb_tcp_counter_desc *desc = &xlb_tcp_counter_descs[c];
        snprintf(name, sizeof(name), "xlb_tcp_%s_total", desc->family);
        if (c == 0 || strcmp(desc->family, xlb_tcp_counter_descs[c - 1].family) != 0) {
            snprintf(help, sizeof(help), "TCP endpoint: %s%s%s (docs/tcp.md).", desc->family,
                     desc->label ? ", by " : "", desc->label ? desc->label : "");
            xlb_metrics_family(t, name, "counter", help);
        }
        for (unsigned w = 0; w < n; w++) {
            uint64_t value = status[w].counters.tcp.counters[c];
            if (desc->label != NULL)
                xlb_text_printf(t, "%s{worker=\"%u\",%s=\"%s\"} %" PRIu64 "\n", name, w,
                                desc->label, desc->value, value);
            else
                xlb_text_printf(t, "%s{worker=\"%u\"} %" PRIu64 "\n", name, w, value);
        }
    }
    static const struct {
        size_t offset;
        const char *name, *help;
    } gauges[] = {
        {offsetof(struct xlb_tcp_stats, conns_in_use), "xlb_tcp_connections",
         "TCP endpoint connections (control blocks in use, TIME-WAIT included)."},
        {offsetof(struct xlb_tcp_stats, conns_high_water), "xlb_tcp_connections_high_water",
         "The most TCP endpoint connections ever in use."},
        {offsetof(struct xlb_tcp_stats, ooo_bytes), "xlb_tcp_ooo_bytes",
         "Bytes the TCP endpoint's reassembly queues hold."},
    };
    for (size_t g = 0; g < RTE_DIM(gauges); g++) {
        xlb_metrics_family(t, gauges[g].name, "gauge", gauges[g].help);
        for (unsigned w = 0; w < n; w++) {
            const struct xlb_tcp_stats *s = &status[w].counters.tcp;
            uint64_t value = *(const uint64_t *)((const char *)s + gauges[g].offset);
            xlb_text_printf(t, "%s{worker=\"%u\"} %" PRIu64 "\n", gauges[g].name, w, value);
        }
    }
}

static void worker_families(const struct xlb_control_plane *cp, struct xlb_text *t)
{
    unsigned n = cp->shared->n_workers;
    struct xlb_worker_status *status = calloc(n + 1, sizeof(*status));
    if (status == NULL)
        return;
    for (unsigned w = 0; w < n; w++)
        xlb_worker_status_gather(cp->shared, cp->worker_lcores, w, &status[w]);
    /* Families with one value per worker: field offset, name, type, help. */
    static const struct {
        size_t offset;
        const char *name, *type, *help;
    } per_worker[] = {
        {offsetof(struct xlb_worker_status, counters.rx_packets), "xlb_worker_rx_packets_total",
         "counter", "Packets a worker received."},
        {offsetof(struct xlb_worker_status, counters.tx_packets), "xlb_worker_tx_packets_total",
         "counter", "Packets a worker transmitted."},
        {offsetof(struct xlb_worker_status, counters.busy_cycles), "xlb_worker_busy_cycles_total",
         "counter", "TSC cycles in poll loops that processed packets."},
        {offsetof(struct xlb_worker_status, counters.idle_cycles), "xlb_worker_idle_cycles_total",
         "counter", "TSC cycles in poll loops that found no packet."},
        {offsetof(struct xlb_worker_status, counters.observed_generation),
         "xlb_worker_snapshot_generation", "gauge",
         "Snapshot generation the worker last processed a burst with."},
        {offsetof(struct xlb_worker_status, counters.flows_in_use), "xlb_worker_flows", "gauge",
         "Flow table entries in use."},
        {offsetof(struct xlb_worker_status, counters.flows_high_water),
         "xlb_worker_flows_high_water", "gauge", "The most flow table entries ever in use."},
        {offsetof(struct xlb_worker_status, counters.flows_capacity), "xlb_worker_flows_capacity",
         "gauge", "Flow table entries."},
        {offsetof(struct xlb_worker_status, counters.l7_in_use), "xlb_worker_l7_connections",
         "gauge", "L7 connection pool entries in use."},
        {offsetof(struct xlb_worker_status, counters.l7_high_water),
         "xlb_worker_l7_connections_high_water", "gauge",
         "The most L7 connection pool entries ever in use."},
        {offsetof(struct xlb_worker_status, counters.l7_capacity),
         "xlb_worker_l7_connections_capacity", "gauge", "L7 connection pool entries."},
        {offsetof(struct xlb_worker_status, counters.l7_hpack_in_use), "xlb_worker_l7_hpack_bytes",
         "gauge", "L7 HPACK heap bytes in use."},
        {offsetof(struct xlb_worker_status, counters.l7_hpack_high_water),
         "xlb_worker_l7_hpack_bytes_high_water", "gauge",
         "The most L7 HPACK heap bytes ever in use."},
        {offsetof(struct xlb_worker_status, counters.l7_hpack_capacity),
         "xlb_worker_l7_hpack_bytes_capacity", "gauge", "L7 HPACK heap bytes."},
    };
    for (size_t f = 0; f < RTE_DIM(per_worker); f++) {
        xlb_metrics_family(t, per_worker[f].name, per_worker[f].type, per_worker[f].help);
        for (unsigned w = 0; w < n; w++) {
            uint64_t value = *(const uint64_t *)((const char *)&status[w] + per_worker[f].offset);
            xlb_text_printf(t, "%s{worker=\"%u\"} %" PRIu64 "\n", per_worker[f].name, w, value);
        }
    }
    xlb_metrics_family(t, "xlb_worker_stalled", "gauge",
                       "1 while the worker has reported no quiescent state for longer than "
                       "xlb.worker_stall_ms.");
    for (unsigned w = 0; w < n; w++)
        xlb_text_printf(t, "xlb_worker_stalled{worker=\"%u\"} %u\n", w, status[w].stalled ? 1 : 0);
    xlb_metrics_family(t, "xlb_worker_stalls_total", "counter",
                       "Episodes in which the worker was stalled.");
    for (unsigned w = 0; w < n; w++)
        xlb_text_printf(t, "xlb_worker_stalls_total{worker=\"%u\"} %" PRIu64 "\n", w,
                        status[w].stall_episodes);
    xlb_metrics_family(t, "xlb_worker_events_total", "counter", "What workers did, by event.");
    for (unsigned w = 0; w < n; w++)
        for (int e = 0; e < XLB_EVENT_MAX; e++)
            xlb_text_printf(t, "xlb_worker_events_total{worker=\"%u\",event=\"%s\"} %" PRIu64 "\n",
                            w, xlb_event_counter_name(e), status[w].counters.events[e]);
    xlb_metrics_family(t, "xlb_worker_drops_total", "counter",
                       "Packets workers dropped, by reason.");
    for (unsigned w = 0; w < n; w++)
        for (int d = 0; d < XLB_DROP_MAX; d++)
            xlb_text_printf(t, "xlb_worker_drops_total{worker=\"%u\",reason=\"%s\"} %" PRIu64 "\n",
                            w, xlb_drop_reason_name(d), status[w].counters.drops[d]);
    tcp_families(status, n, t);
    free(status);
}

static void port_families(const struct xlb_control_plane *cp, struct xlb_text *t)
{
    static const struct {
        size_t offset;
        const char *name, *help;
    } per_port[] = {
        {offsetof(struct rte_eth_stats, ipackets), "xlb_port_rx_packets_total",
         "Packets the port received."},
        {offsetof(struct rte_eth_stats, opackets), "xlb_port_tx_packets_total",
         "Packets the port transmitted."},
        {offsetof(struct rte_eth_stats, ibytes), "xlb_port_rx_bytes_total",
         "Bytes the port received."},
        {offsetof(struct rte_eth_stats, obytes), "xlb_port_tx_bytes_total",
         "Bytes the port transmitted."},
        {offsetof(struct rte_eth_stats, imissed), "xlb_port_rx_missed_total",
         "Packets the port dropped for want of room in its rx queues."},
        {offsetof(struct rte_eth_stats, rx_nombuf), "xlb_port_rx_nombuf_total",
         "Packets the port dropped for want of mbufs."},
        {offsetof(struct rte_eth_stats, ierrors), "xlb_port_rx_errors_total",
         "Erroneous packets the port received."},
        {offsetof(struct rte_eth_stats, oerrors), "xlb_port_tx_errors_total",
         "Packets the port failed to transmit."},
    };
    struct rte_eth_stats stats[XLB_MAX_PORTS];
    for (unsigned p = 0; p < cp->n_ports; p++)
        if (rte_eth_stats_get(cp->ports[p].port_id, &stats[p]) != 0)
            memset(&stats[p], 0, sizeof(stats[p]));
    for (size_t f = 0; f < RTE_DIM(per_port); f++) {
        xlb_metrics_family(t, per_port[f].name, "counter", per_port[f].help);
        for (unsigned p = 0; p < cp->n_ports; p++)
            xlb_text_printf(t, "%s{port=\"%s\"} %" PRIu64 "\n", per_port[f].name,
                            cp->bootstrap.ports[p].name,
                            *(const uint64_t *)((const char *)&stats[p] + per_port[f].offset));
    }
    xlb_metrics_family(t, "xlb_port_link_up", "gauge", "1 when the port's link is up.");
    for (unsigned p = 0; p < cp->n_ports; p++) {
        struct xlb_port_link link;
        xlb_port_link_read(cp->ports[p].port_id, &link);
        xlb_text_printf(t, "xlb_port_link_up{port=\"%s\"} %d\n", cp->bootstrap.ports[p].name,
                        link.state == XLB_LINK_UP);
    }
}

static void vip_family(const struct xlb_control_plane *cp, struct xlb_text *t)
{
    xlb_metrics_family(t, "xlb_vip_info", "gauge",
                       "1 per configured VIP, with its mode, target and state.");
    for (unsigned v = 0; v < cp->bootstrap.n_vips; v++) {
        const struct xlb_vip_config *vip = &cp->bootstrap.vips[v];
        char addr[XLB_ADDR_STRLEN], target[512];
        xlb_metrics_escape(vip->target ? vip->target : vip->cluster, target, sizeof(target));
        xlb_text_printf(t,
                        "xlb_vip_info{vip=\"%s\",port=\"%u\",mode=\"%s\",target=\"%s\","
                        "state=\"%s\"} 1\n",
                        xlb_addr_format(&vip->address, addr, sizeof(addr)), vip->port,
                        vip->target ? "l7" : "l4", target, xlb_xds_plane_vip_state(&cp->xds, v));
    }
}

static void tls_failure_samples(struct xlb_text *t, const char *family, const char *labels,
                                const struct xlb_tls_counters *c)
{
    for (int f = XLB_TLS_FAIL_NONE + 1; f < XLB_TLS_FAIL_COUNT; f++)
        xlb_text_printf(t, "%s{%s%sreason=\"%s\"} %" PRIu64 "\n", family, labels,
                        labels[0] != '\0' ? "," : "", xlb_tls_failure_name((enum xlb_tls_failure)f),
                        c->failures[f]);
}

/* The TLS VIPs' handshakes and certificates, the subchannels' upstream handshakes, summed over
 * the workers (docs/tls.md). */
static void tls_families(const struct xlb_control_plane *cp, struct xlb_text *t)
{
    struct xlb_tls_counters vips[XLB_MAX_TLS_VIPS] = {0}, upstream = {0};
    for (unsigned w = 0; w < cp->shared->n_workers; w++) {
        for (unsigned i = 0; i < XLB_MAX_TLS_VIPS; i++)
            xlb_tls_counters_add(&vips[i], &cp->shared->stats[w].tls[i]);
        xlb_tls_counters_add(&upstream, &cp->shared->stats[w].upstream_tls);
    }
    static const char *const names[] = {
        "xlb_vip_tls_handshakes_total", "xlb_vip_tls_resumptions_total",
        "xlb_vip_tls_failures_total", "xlb_vip_tls_certificate_expiry_timestamp_seconds"};
    static const char *const helps[] = {
        "TLS handshakes a VIP completed, full or resumed.",
        "TLS handshakes a VIP completed with a session ticket.",
        "TLS handshakes a VIP ended, by reason.",
        "When the certificate a VIP serves by default expires (Unix time)."};
    for (int k = 0; k < 4; k++) {
        xlb_metrics_family(t, names[k], k == 3 ? "gauge" : "counter", helps[k]);
        for (unsigned v = 0; v < cp->bootstrap.n_vips; v++) {
            const struct xlb_vip_config *vip = &cp->bootstrap.vips[v];
            if (vip->tls.certificate_provider == NULL)
                continue;
            const struct xlb_tls_counters *c = &vips[vip->tls.index];
            char addr[XLB_ADDR_STRLEN], labels[96];
            snprintf(labels, sizeof(labels), "vip=\"%s\",port=\"%u\"",
                     xlb_addr_format(&vip->address, addr, sizeof(addr)), vip->port);
            const struct xlb_tls_server *srv = xlb_tls_watch_server(&cp->tls, vip->tls.index);
            struct xlb_tls_cert_info info = {0};
            if (k == 3 && srv != NULL && srv->n_certs > 0)
                xlb_tls_cert_describe(srv->certs[0], &info);
            if (k == 2)
                tls_failure_samples(t, names[k], labels, c);
            else
                xlb_text_printf(t, "%s{%s} %" PRIu64 "\n", names[k], labels,
                                k == 0   ? c->handshakes
                                : k == 1 ? c->resumptions
                                         : (uint64_t)info.not_after_unix);
        }
    }
    xlb_metrics_family(t, "xlb_upstream_tls_handshakes_total", "counter",
                       "TLS handshakes of subchannels to clusters with upstream TLS (A29).");
    xlb_text_printf(t, "xlb_upstream_tls_handshakes_total %" PRIu64 "\n", upstream.handshakes);
    xlb_metrics_family(t, "xlb_upstream_tls_failures_total", "counter",
                       "Upstream TLS handshakes that failed, by reason.");
    tls_failure_samples(t, "xlb_upstream_tls_failures_total", "", &upstream);
}

/* Per-entity series stop at the cap; returns how many were left out. */
static unsigned neighbour_family(const struct xlb_control_plane *cp, struct xlb_text *t,
                                 unsigned budget)
{
    xlb_metrics_family(t, "xlb_neighbour_resolved", "gauge",
                       "1 when a neighbour xlb must reach (a gateway) has a known MAC address.");
    unsigned shown = 0;
    for (unsigned i = 0; i < cp->neighbours.n; i++) {
        const struct xlb_neighbour_state *n = &cp->neighbours.entries[i];
        if (shown == budget)
            return cp->neighbours.n - i;
        char addr[XLB_ADDR_STRLEN];
        xlb_text_printf(t, "xlb_neighbour_resolved{address=\"%s\",port=\"%s\",role=\"%s\"} %d\n",
                        xlb_addr_format(&n->addr, addr, sizeof(addr)),
                        cp->bootstrap.ports[n->port_index].name,
                        n->is_gateway ? "gateway" : "neighbour", n->resolved ? 1 : 0);
        shown++;
    }
    return 0;
}

/* Clusters, localities, drop categories and endpoints (capped by metrics_max_series). */
static void lb_families(const struct xlb_control_plane *cp, struct xlb_text *t)
{
    struct xlb_lb_metrics lb;
    if (xlb_lb_metrics_gather(cp->xds.lb, cp->shared->load, cp->shared->n_workers, &lb) != 0) {
        t->failed = true; /* out of memory: no partial exposition */
        return;
    }
    xlb_lb_metrics_render(&lb, cp->bootstrap.metrics_max_series, t);
    xlb_lb_metrics_free(&lb);
}

static void client_limit_samples(struct xlb_text *t, const char *listener,
                                 const struct xlb_stream_server_stats *s)
{
    const struct {
        const char *reason;
        uint64_t n;
    } rows[] = {{"idle", s->closed_idle},
                {"unread_output", s->closed_output},
                {"evicted", s->evicted},
                {"refused", s->refused},
                {"request_too_long", s->closed_overflow}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        xlb_text_printf(t,
                        "xlb_control_clients_closed_total{listener=\"%s\",reason=\"%s\"} "
                        "%" PRIu64 "\n",
                        listener, rows[i].reason, rows[i].n);
}

/* Clients of the control socket and of this listener closed by their limits. */
static void client_limit_family(const struct xlb_control_plane *cp, struct xlb_text *t)
{
    xlb_metrics_family(t, "xlb_control_clients_closed_total", "counter",
                       "Control socket and metrics clients closed by a limit, by reason.");
    if (cp->socket != NULL)
        client_limit_samples(t, "control",
                             xlb_stream_server_stats(xlb_control_socket_server(cp->socket)));
    if (cp->metrics_http != NULL)
        client_limit_samples(t, "metrics",
                             xlb_stream_server_stats(xlb_metrics_http_server(cp->metrics_http)));
}

void xlb_metrics_render(const struct xlb_control_plane *cp, struct xlb_text *t)
{
    xlb_metrics_family(t, "xlb_info", "gauge", "Constant 1, labelled with the version.");
    xlb_text_printf(t, "xlb_info{version=\"%s\"} 1\n", XLB_VERSION);
    xlb_metrics_family(t, "xlb_uptime_seconds", "gauge", "Seconds since xlbd started.");
    xlb_text_printf(t, "xlb_uptime_seconds %.3f\n",
                    (double)(xlb_now_ms() - cp->started_ms) / 1000.0);
    xlb_metrics_family(t, "xlb_snapshot_generation", "gauge",
                       "Generation of the published snapshot.");
    xlb_text_printf(t, "xlb_snapshot_generation %" PRIu64 "\n", cp->generation);
    xlb_metrics_family(t, "xlb_config_reloads_total", "counter", "SIGHUP reloads, by result.");
    xlb_text_printf(t, "xlb_config_reloads_total{result=\"applied\"} %" PRIu64 "\n",
                    cp->reload.applied);
    xlb_text_printf(t, "xlb_config_reloads_total{result=\"rejected\"} %" PRIu64 "\n",
                    cp->reload.rejected);
    worker_families(cp, t);
    client_limit_family(cp, t);
    port_families(cp, t);
    vip_family(cp, t);
    tls_families(cp, t);
    lb_families(cp, t);
    struct xlb_xds_metrics xds;
    xlb_xds_plane_metrics(&cp->xds, &xds);
    xlb_xds_metrics_render(&xds, t);
    unsigned dropped = neighbour_family(cp, t, cp->bootstrap.metrics_max_series);
    xlb_metrics_family(t, "xlb_neighbour_unsolicited_ignored_total", "counter",
                       "ARP replies and neighbour advertisements that would have set or changed "
                       "a neighbour's MAC without a solicitation outstanding, ignored.");
    xlb_text_printf(t, "xlb_neighbour_unsolicited_ignored_total %" PRIu64 "\n",
                    cp->neighbours.unsolicited_ignored);
    xlb_metrics_family(t, "xlb_metrics_series_dropped", "gauge",
                       "Per-entity series left out of this exposition by metrics_max_series.");
    xlb_text_printf(t, "xlb_metrics_series_dropped %u\n", dropped);
}
