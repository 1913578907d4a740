/*
 * SIGHUP: re-read the bootstrap and apply, without a restart and without touching what the
 * workers are doing, every part that only feeds the snapshot: VIPs, static resources, port
 * addresses and gateways, metrics_max_series, tcp_mss_clamp,
 * l4_syn_proxy, connection_hash_key, drain_seconds. Parts that shape the process (EAL,
 * workers, ports, sockets, xDS servers, node, SNAT addresses) are compared and reported as needing
 * a restart; they keep their running values. An invalid file changes nothing.
 *
 * SNAT addresses are restart-only because the workers' flow tables hand out ports of the set
 * xlbd started with and the NIC's steering rules match it: an address dropped from the
 * snapshot alone would still be given to new flows while the replies of every flow on it were
 * dropped as not ours. So the running bootstrap keeps the started set, and the snapshot, which
 * is built from it, keeps owning it.
 */
#include <stdio.h>
#include <string.h>

#include "control_plane.h"
#include "xlb_log.h"

#define SWAP(a, b)                                                                                 \
    do {                                                                                           \
        __typeof__(a) swap_tmp = (a);                                                              \
        (a) = (b);                                                                                 \
        (b) = swap_tmp;                                                                            \
    } while (0)

static bool same_string(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool same_eal(const struct xlb_bootstrap *a, const struct xlb_bootstrap *b)
{
    if (a->n_eal_args != b->n_eal_args)
        return false;
    for (unsigned i = 0; i < a->n_eal_args; i++)
        if (strcmp(a->eal_args[i], b->eal_args[i]) != 0)
            return false;
    return true;
}

static bool same_port_names(const struct xlb_bootstrap *a, const struct xlb_bootstrap *b)
{
    if (a->n_ports != b->n_ports)
        return false;
    for (unsigned p = 0; p < a->n_ports; p++)
        if (strcmp(a->ports[p].name, b->ports[p].name) != 0)
            return false;
    return true;
}

static bool same_port_mtus(const struct xlb_bootstrap *a, const struct xlb_bootstrap *b)
{
    for (unsigned p = 0; p < a->n_ports && p < b->n_ports; p++)
        if (a->ports[p].mtu != b->ports[p].mtu)
            return false;
    return true;
}

static bool same_json(const cJSON *a, const cJSON *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && cJSON_Compare(a, b, true));
}

static bool same_node(const struct xlb_node_config *a, const struct xlb_node_config *b)
{
    return same_string(a->id, b->id) && same_string(a->cluster, b->cluster) &&
           same_string(a->region, b->region) && same_string(a->zone, b->zone) &&
           same_string(a->sub_zone, b->sub_zone) && same_json(a->metadata, b->metadata);
}

static bool same_xds(const struct xlb_bootstrap *a, const struct xlb_bootstrap *b)
{
    if (a->n_xds_servers != b->n_xds_servers)
        return false;
    for (unsigned i = 0; i < a->n_xds_servers; i++) {
        const struct xlb_xds_server_config *x = &a->xds_servers[i], *y = &b->xds_servers[i];
        if (!same_string(x->server_uri, y->server_uri) || x->creds != y->creds ||
            !same_string(x->ca_certificate_file, y->ca_certificate_file) ||
            !same_string(x->certificate_file, y->certificate_file) ||
            !same_string(x->private_key_file, y->private_key_file) ||
            x->ignore_resource_deletion != y->ignore_resource_deletion)
            return false;
    }
    return same_node(&a->node, &b->node);
}

static bool same_metrics_listener(const struct xlb_bootstrap *a, const struct xlb_bootstrap *b)
{
    return a->metrics_enabled == b->metrics_enabled &&
           (!a->metrics_enabled ||
            (xlb_addr_equal(&a->metrics_listen.addr, &b->metrics_listen.addr) &&
             a->metrics_listen.port == b->metrics_listen.port));
}

static bool same_snat(const struct xlb_bootstrap *a, const struct xlb_bootstrap *b)
{
    if (a->n_snat != b->n_snat)
        return false;
    for (unsigned s = 0; s < a->n_snat; s++)
        if (!xlb_addr_equal(&a->snat[s], &b->snat[s]))
            return false;
    return true;
}

/* Names of the restart-only settings that differ. */
static void list_restart_only(const struct xlb_bootstrap *running,
                              const struct xlb_bootstrap *fresh, cJSON *out)
{
    const struct {
        const char *name;
        bool same;
    } checks[] = {
        {"xlb.eal", same_eal(running, fresh)},
        {"xlb.workers", running->workers == fresh->workers},
        {"xlb.control_socket", strcmp(running->control_socket, fresh->control_socket) == 0},
        {"xlb.control_socket_group",
         running->control_socket_has_group == fresh->control_socket_has_group &&
             running->control_socket_group == fresh->control_socket_group},
        {"xlb.control_idle_timeout_ms",
         running->control_idle_timeout_ms == fresh->control_idle_timeout_ms},
        {"xlb.worker_idle_sleep_us", running->worker_idle_sleep_us == fresh->worker_idle_sleep_us},
        {"xlb.worker_stall_ms", running->worker_stall_ms == fresh->worker_stall_ms},
        {"xlb.mbuf_pool_size", running->mbuf_pool_size == fresh->mbuf_pool_size},
        {"xlb.flows_per_worker", running->flows_per_worker == fresh->flows_per_worker},
        {"xlb.tcp_connections_per_worker",
         running->tcp_connections_per_worker == fresh->tcp_connections_per_worker},
        {"xlb.stream_max_concurrent_streams",
         running->stream_max_concurrent_streams == fresh->stream_max_concurrent_streams},
        {"xlb.stream_window_bytes", running->stream_window_bytes == fresh->stream_window_bytes},
        {"xlb.stream_rpcs_per_connection",
         running->stream_rpcs_per_connection == fresh->stream_rpcs_per_connection},
        {"xlb.stream_waiting_rpcs", running->stream_waiting_rpcs == fresh->stream_waiting_rpcs},
        {"xlb.stream_retry_buffers", running->stream_retry_buffers == fresh->stream_retry_buffers},
        {"xlb.stream_retry_buffer_bytes",
         running->stream_retry_buffer_bytes == fresh->stream_retry_buffer_bytes},
        {"xlb.stream_subchannels_per_endpoint",
         running->stream_subchannels_per_endpoint == fresh->stream_subchannels_per_endpoint},
        {"xlb.l7_connections_per_worker",
         running->l7_connections_per_worker == fresh->l7_connections_per_worker},
        {"xlb.aggregate_cluster_backward_compat",
         running->aggregate_cluster_backward_compat == fresh->aggregate_cluster_backward_compat},
        {"xlb.snat", same_snat(running, fresh)},
        {"xlb.ports (names or count)", same_port_names(running, fresh)},
        {"xlb.ports[].mtu", same_port_mtus(running, fresh)},
        {"xlb.metrics_listen", same_metrics_listener(running, fresh)},
        {"xds_servers and node", same_xds(running, fresh)},
    };
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
        if (!checks[i].same)
            cJSON_AddItemToArray(out, cJSON_CreateString(checks[i].name));
}

static bool same_sni(const struct xlb_vip_tls_config *a, const struct xlb_vip_tls_config *b)
{
    if (a->n_sni != b->n_sni)
        return false;
    for (unsigned i = 0; i < a->n_sni; i++)
        if (!same_string(a->sni_certificate_providers[i], b->sni_certificate_providers[i]))
            return false;
    return true;
}

static bool same_vips(const struct xlb_bootstrap *a, const struct xlb_bootstrap *b)
{
    if (a->n_vips != b->n_vips)
        return false;
    for (unsigned v = 0; v < a->n_vips; v++) {
        const struct xlb_vip_config *x = &a->vips[v], *y = &b->vips[v];
        if (!xlb_addr_equal(&x->address, &y->address) || x->port != y->port ||
            !same_string(x->target, y->target) || !same_string(x->cluster, y->cluster) ||
            x->terminate != y->terminate || x->newreno != y->newreno || x->stream != y->stream ||
            !same_string(x->tls.certificate_provider, y->tls.certificate_provider) ||
            x->tls.require_client_certificate != y->tls.require_client_certificate ||
            !same_sni(&x->tls, &y->tls))
            return false;
    }
    return true;
}

static bool same_port_addressing(const struct xlb_bootstrap *a, const struct xlb_bootstrap *b)
{
    for (unsigned p = 0; p < a->n_ports; p++) {
        const struct xlb_port_config *x = &a->ports[p], *y = &b->ports[p];
        if (x->n_addresses != y->n_addresses || x->n_gateways != y->n_gateways ||
            memcmp(x->addresses, y->addresses, x->n_addresses * sizeof(x->addresses[0])) != 0 ||
            memcmp(x->gateways, y->gateways, x->n_gateways * sizeof(x->gateways[0])) != 0)
            return false;
    }
    return true;
}

static void note(cJSON *list, const char *what)
{
    cJSON_AddItemToArray(list, cJSON_CreateString(what));
}

/* Move the live-changeable parts of fresh into running and name the ones that changed; fresh
 * keeps the old ones, to be freed. */
static void apply_live_parts(struct xlb_control_plane *cp, struct xlb_bootstrap *fresh,
                             cJSON *applied)
{
    struct xlb_bootstrap *running = &cp->bootstrap;
    if (!same_vips(running, fresh))
        note(applied, "xlb.vips");
    if (!same_json(running->static_resources, fresh->static_resources))
        note(applied, "xlb.static_resources");
    if (running->metrics_max_series != fresh->metrics_max_series)
        note(applied, "xlb.metrics_max_series");
    SWAP(running->n_vips, fresh->n_vips);
    SWAP(running->vips, fresh->vips);
    SWAP(running->n_cert_providers, fresh->n_cert_providers);
    SWAP(running->cert_providers, fresh->cert_providers);
    SWAP(running->static_resources, fresh->static_resources);
    running->metrics_max_series = fresh->metrics_max_series;
    if (running->tcp_mss_clamp != fresh->tcp_mss_clamp)
        note(applied, "xlb.tcp_mss_clamp");
    running->tcp_mss_clamp = fresh->tcp_mss_clamp;
    if (running->l4_syn_proxy != fresh->l4_syn_proxy ||
        running->l4_syn_proxy_percent != fresh->l4_syn_proxy_percent)
        note(applied, "xlb.l4_syn_proxy");
    running->l4_syn_proxy = fresh->l4_syn_proxy;
    running->l4_syn_proxy_percent = fresh->l4_syn_proxy_percent;
    if (running->connection_hash_keyed != fresh->connection_hash_keyed ||
        memcmp(running->connection_hash_key, fresh->connection_hash_key,
               sizeof(running->connection_hash_key)) != 0)
        note(applied, "xlb.connection_hash_key");
    running->connection_hash_keyed = fresh->connection_hash_keyed;
    memcpy(running->connection_hash_key, fresh->connection_hash_key,
           sizeof(running->connection_hash_key));
    if (running->drain_seconds != fresh->drain_seconds)
        note(applied, "xlb.drain_seconds");
    running->drain_seconds = fresh->drain_seconds;
    /* Addresses of ports that no longer match by name and count are not applied. */
    if (!same_port_names(running, fresh) || same_port_addressing(running, fresh))
        return;
    note(applied, "xlb.ports[].addresses and gateway");
    for (unsigned p = 0; p < running->n_ports; p++) {
        struct xlb_port_config *port = &running->ports[p];
        SWAP(*port, fresh->ports[p]);
        port->mtu = fresh->ports[p].mtu; /* the device keeps the MTU it started with */
        cp->ports[p].n_prefixes = (uint8_t)port->n_addresses;
        memcpy(cp->ports[p].prefixes, port->addresses,
               port->n_addresses * sizeof(port->addresses[0]));
    }
}

/* The running SNAT set stays owned, so the new file may not give one of its addresses to a
 * VIP or a port (the file's own rules only see the file's own SNAT list). */
static void check_running_snat(const struct xlb_bootstrap *running,
                               const struct xlb_bootstrap *fresh, struct xlb_errors *errs)
{
    for (unsigned s = 0; s < running->n_snat; s++) {
        const struct xlb_addr *snat = &running->snat[s];
        char text[XLB_ADDR_STRLEN], path[64];
        xlb_addr_format(snat, text, sizeof(text));
        for (unsigned v = 0; v < fresh->n_vips; v++)
            if (xlb_addr_equal(&fresh->vips[v].address, snat)) {
                snprintf(path, sizeof(path), "xlb.vips[%u].address", v);
                xlb_errors_add(errs, path,
                               "%s is a running snat address (snat changes need a restart)", text);
            }
        for (unsigned p = 0; p < fresh->n_ports; p++)
            for (unsigned a = 0; a < fresh->ports[p].n_addresses; a++)
                if (xlb_addr_equal(&fresh->ports[p].addresses[a].addr, snat)) {
                    snprintf(path, sizeof(path), "xlb.ports[%u].addresses[%u]", p, a);
                    xlb_errors_add(errs, path,
                                   "%s is a running snat address (snat changes need a restart)",
                                   text);
                }
    }
}

static void record(struct xlb_control_plane *cp, cJSON *report, bool ok)
{
    cJSON_AddStringToObject(report, "result", ok ? "applied" : "rejected");
    cJSON_Delete(cp->reload.last);
    cp->reload.last = report;
    cp->reload.last_ms = xlb_now_ms();
    if (ok)
        cp->reload.applied++;
    else
        cp->reload.rejected++;
}

void xlb_control_plane_reload(struct xlb_control_plane *cp)
{
    struct xlb_bootstrap fresh;
    struct xlb_errors errs = {0};
    cJSON *report = cJSON_CreateObject();
    int rc = xlb_bootstrap_load(cp->config_path, &fresh, &errs);

    if (rc == 0)
        rc = xlb_xds_plane_check(&fresh, &errs); /* static resources, validated as xDS would */
    if (rc == 0) {
        check_running_snat(&cp->bootstrap, &fresh, &errs);
        rc = errs.n > 0 ? -1 : 0;
    }
    /* The TLS VIPs' files are read now: a bad pair rejects the reload, the running
     * certificates keep serving. */
    struct xlb_tls_set tls = {0};
    if (rc == 0)
        rc = xlb_tls_set_build(&tls, &fresh, &cp->tls.keys, &errs);
    pthread_mutex_lock(&cp->lock);
    if (rc != 0) {
        cJSON *errors = cJSON_AddArrayToObject(report, "errors");
        for (unsigned i = 0; i < errs.n; i++) {
            XLB_LOG(ERR, CONTROL, "reload rejected: %s", errs.lines[i]);
            cJSON_AddItemToArray(errors, cJSON_CreateString(errs.lines[i]));
        }
        record(cp, report, false);
    } else {
        cJSON *restart = cJSON_AddArrayToObject(report, "needs_restart");
        cJSON *applied = cJSON_AddArrayToObject(report, "applied");
        list_restart_only(&cp->bootstrap, &fresh, restart);
        apply_live_parts(cp, &fresh, applied);
        xlb_tls_watch_install(&cp->tls, &tls, xlb_now_ms());
        xlb_xds_plane_reload(&cp->xds, &cp->bootstrap, &errs);
        xlb_control_plane_want_neighbours(cp);
        cp->republish = true;
        xlb_control_plane_publish(cp); /* on failure the report tick retries */
        record(cp, report, true);
        XLB_LOG(NOTICE, CONTROL, "reload applied: generation %" PRIu64 "%s", cp->generation,
                cJSON_GetArraySize(restart) ? "; some settings need a restart (xlbctl status)"
                                            : "");
    }
    pthread_mutex_unlock(&cp->lock);
    xlb_bootstrap_free(&fresh);
    xlb_errors_free(&errs);
}
