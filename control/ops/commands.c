/* The control socket's commands: each turns live state into a JSON result. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "command_help.h"
#include "control_plane.h"
#include "control_socket.h"
#include "flows.h"
#include "metrics.h"
#include "port_link.h"
#include "simulate.h"
#include "tcp_listing.h"
#include "worker_status.h"
#include "xlb_log.h"

/* Usage and summary live in command_help.c, shared with xlbctl. */
struct command {
    const char *name;
    cJSON *(*run)(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len);
    /* Whether this request changes state (NULL: never); only privileged peers may run it
     * then (xlb_control_socket_may_change_state). */
    bool (*changes_state)(const cJSON *args);
};

static bool always(const cJSON *args)
{
    (void)args;
    return true;
}

/* `log` with arguments sets a level; without, it only lists them. */
static bool sets_log_level(const cJSON *args)
{
    return cJSON_GetObjectItemCaseSensitive(args, "component") != NULL ||
           cJSON_GetObjectItemCaseSensitive(args, "level") != NULL;
}

static void add_u64(cJSON *obj, const char *name, uint64_t value)
{
    /* JSON numbers are doubles: exact up to 2^53, far beyond any counter here. */
    cJSON_AddNumberToObject(obj, name, (double)value);
}

static void add_addr(cJSON *obj, const char *name, const struct xlb_addr *addr)
{
    char text[XLB_ADDR_STRLEN];
    cJSON_AddStringToObject(obj, name, xlb_addr_format(addr, text, sizeof(text)));
}

static void add_mac(cJSON *obj, const char *name, const struct rte_ether_addr *mac)
{
    char text[RTE_ETHER_ADDR_FMT_SIZE];
    rte_ether_format_addr(text, sizeof(text), mac);
    cJSON_AddStringToObject(obj, name, text);
}

static cJSON *worker_status(struct xlb_control_plane *cp, unsigned w)
{
    struct xlb_worker_status st;
    xlb_worker_status_gather(cp->shared, cp->worker_lcores, w, &st);
    cJSON *worker = cJSON_CreateObject();
    cJSON_AddNumberToObject(worker, "worker", st.worker);
    cJSON_AddNumberToObject(worker, "lcore", st.lcore);
    add_u64(worker, "generation", st.counters.observed_generation);
    if (!st.quiesced)
        cJSON_AddNullToObject(worker, "last_quiescent_ms_ago");
    else
        cJSON_AddNumberToObject(worker, "last_quiescent_ms_ago", st.last_quiescent_ms_ago);
    cJSON_AddBoolToObject(worker, "stalled", st.stalled);
    add_u64(worker, "stalls", st.stall_episodes);
    add_u64(worker, "loops", st.counters.loops);
    add_u64(worker, "busy_loops", st.counters.busy_loops);
    add_u64(worker, "busy_cycles", st.counters.busy_cycles);
    add_u64(worker, "idle_cycles", st.counters.idle_cycles);
    add_u64(worker, "busy_percent", st.busy_percent);
    add_u64(worker, "flows_in_use", st.counters.flows_in_use);
    add_u64(worker, "flows_high_water", st.counters.flows_high_water);
    add_u64(worker, "flows_capacity", st.counters.flows_capacity);
    add_u64(worker, "l7_connections_in_use", st.counters.l7_in_use);
    add_u64(worker, "l7_connections_high_water", st.counters.l7_high_water);
    add_u64(worker, "l7_connections_capacity", st.counters.l7_capacity);
    add_u64(worker, "l7_hpack_bytes_in_use", st.counters.l7_hpack_in_use);
    add_u64(worker, "l7_hpack_bytes_high_water", st.counters.l7_hpack_high_water);
    add_u64(worker, "l7_hpack_bytes_capacity", st.counters.l7_hpack_capacity);
    add_u64(worker, "tcp_connections_in_use", st.counters.tcp.conns_in_use);
    add_u64(worker, "tcp_connections_high_water", st.counters.tcp.conns_high_water);
    return worker;
}

static cJSON *port_status(struct xlb_control_plane *cp, unsigned p)
{
    const struct xlb_port_view *view = &cp->ports[p];
    cJSON *port = cJSON_CreateObject();
    cJSON_AddStringToObject(port, "name", cp->bootstrap.ports[p].name);
    cJSON_AddNumberToObject(port, "port_id", view->port_id);
    add_mac(port, "mac", &view->mac);
    cJSON_AddNumberToObject(port, "mtu", view->mtu);
    uint16_t clamp = cp->bootstrap.tcp_mss_clamp;
    if (clamp != 0) {
        cJSON_AddNumberToObject(port, "tcp_mss_max_ipv4",
                                xlb_port_mss_max(view->mtu, clamp, false));
        cJSON_AddNumberToObject(port, "tcp_mss_max_ipv6", xlb_port_mss_max(view->mtu, clamp, true));
    }
    cJSON *addresses = cJSON_AddArrayToObject(port, "addresses");
    for (unsigned a = 0; a < view->n_prefixes; a++) {
        char text[XLB_ADDR_STRLEN], prefix[XLB_ADDR_STRLEN + 8];
        xlb_addr_format(&view->prefixes[a].addr, text, sizeof(text));
        snprintf(prefix, sizeof(prefix), "%s/%u", text, view->prefixes[a].len);
        cJSON_AddItemToArray(addresses, cJSON_CreateString(prefix));
    }
    struct xlb_port_link link;
    xlb_port_link_read(view->port_id, &link);
    cJSON_AddStringToObject(port, "link", xlb_link_state_name(link.state));
    if (link.state == XLB_LINK_UP)
        cJSON_AddNumberToObject(port, "speed_mbps", link.speed_mbps);
    if (link.kernel_state != NULL) {
        cJSON *kernel = cJSON_AddObjectToObject(port, "kernel_interface");
        cJSON_AddStringToObject(kernel, "name", link.kernel_if);
        cJSON_AddStringToObject(kernel, "state", link.kernel_state);
    }
    struct rte_eth_stats stats;
    if (rte_eth_stats_get(view->port_id, &stats) == 0) {
        add_u64(port, "rx_packets", stats.ipackets);
        add_u64(port, "tx_packets", stats.opackets);
        add_u64(port, "rx_bytes", stats.ibytes);
        add_u64(port, "tx_bytes", stats.obytes);
        add_u64(port, "rx_dropped", stats.imissed + stats.rx_nombuf);
        add_u64(port, "rx_errors", stats.ierrors);
        add_u64(port, "tx_errors", stats.oerrors);
    }
    return port;
}

static void add_tls_sums(cJSON *obj, const struct xlb_tls_counters *sum)
{
    add_u64(obj, "handshakes", sum->handshakes);
    add_u64(obj, "resumptions", sum->resumptions);
    cJSON *failures = cJSON_AddObjectToObject(obj, "failures");
    uint64_t failed = 0;
    for (int f = XLB_TLS_FAIL_NONE + 1; f < XLB_TLS_FAIL_COUNT; f++) {
        add_u64(failures, xlb_tls_failure_name((enum xlb_tls_failure)f), sum->failures[f]);
        failed += sum->failures[f];
    }
    add_u64(obj, "failed", failed);
}

/* The subchannels' handshakes to clusters with upstream TLS (A29), over the workers. */
static cJSON *upstream_tls_status(const struct xlb_control_plane *cp)
{
    struct xlb_tls_counters sum = {0};
    for (unsigned w = 0; w < cp->shared->n_workers; w++)
        xlb_tls_counters_add(&sum, &cp->shared->stats[w].upstream_tls);
    cJSON *obj = cJSON_CreateObject();
    add_tls_sums(obj, &sum);
    return obj;
}

static void describe_certificate(const SSL_CTX *ctx, cJSON *out)
{
    struct xlb_tls_cert_info info;
    xlb_tls_cert_describe(ctx, &info);
    cJSON_AddStringToObject(out, "subject", info.subject);
    cJSON_AddStringToObject(out, "sans", info.sans);
    cJSON_AddStringToObject(out, "not_after", info.not_after);
}

/* A TLS VIP's certificate and its handshakes summed over the workers (docs/tls.md). */
static cJSON *vip_tls_status(const struct xlb_control_plane *cp, const struct xlb_vip_config *vip)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "certificate_provider", vip->tls.certificate_provider);
    cJSON_AddBoolToObject(obj, "require_client_certificate", vip->tls.require_client_certificate);
    const struct xlb_tls_server *srv = xlb_tls_watch_server(&cp->tls, vip->tls.index);
    /* The default certificate's description at the top, every one (SNI's too) in the list. */
    cJSON *certs = cJSON_AddArrayToObject(obj, "certificates");
    for (uint32_t i = 0; srv != NULL && i < srv->n_certs; i++) {
        cJSON *cert = cJSON_CreateObject();
        describe_certificate(srv->certs[i], cert);
        cJSON_AddItemToArray(certs, cert);
        if (i == 0)
            describe_certificate(srv->certs[i], obj);
    }
    struct xlb_tls_counters sum = {0};
    for (unsigned w = 0; w < cp->shared->n_workers; w++)
        xlb_tls_counters_add(&sum, &cp->shared->stats[w].tls[vip->tls.index]);
    add_tls_sums(obj, &sum);
    cJSON_AddNumberToObject(obj, "rebuilds", (double)cp->tls.builds);
    cJSON_AddNumberToObject(obj, "rebuilds_refused", (double)cp->tls.failures);
    if (cp->tls.last_error[0] != '\0')
        cJSON_AddStringToObject(obj, "last_refusal", cp->tls.last_error);
    return obj;
}

static cJSON *vip_status(const struct xlb_control_plane *cp, unsigned v)
{
    const struct xlb_vip_config *vip = &cp->bootstrap.vips[v];
    cJSON *obj = cJSON_CreateObject();
    add_addr(obj, "address", &vip->address);
    cJSON_AddNumberToObject(obj, "port", vip->port);
    cJSON_AddStringToObject(obj, "mode", vip->target ? "l7" : "l4");
    cJSON_AddStringToObject(obj, vip->target ? "target" : "cluster",
                            vip->target ? vip->target : vip->cluster);
    cJSON *config = xlb_xds_plane_vip_status(&cp->xds, v);
    cJSON_AddItemToObject(obj, "config", config);
    cJSON_AddStringToObject(obj, "state", xlb_xds_plane_vip_state(&cp->xds, v));
    /* What operators read: "warming: why", "serving gen N" (with why, if a newer one is
     * pending or failed), or "error: why". */
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(config, "reason");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(config, "serving_generation");
    char summary[512];
    if (cJSON_IsNumber(gen))
        snprintf(summary, sizeof(summary), "serving gen %.0f%s%s%s", gen->valuedouble,
                 cJSON_IsString(reason) ? " (" : "",
                 cJSON_IsString(reason) ? reason->valuestring : "",
                 cJSON_IsString(reason) ? ")" : "");
    else
        snprintf(summary, sizeof(summary), "%s: %s", xlb_xds_plane_vip_state(&cp->xds, v),
                 cJSON_IsString(reason) ? reason->valuestring : "?");
    cJSON_AddStringToObject(obj, "summary", summary);
    if (vip->tls.certificate_provider != NULL)
        cJSON_AddItemToObject(obj, "tls", vip_tls_status(cp, vip));
    return obj;
}

static cJSON *cmd_status(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    cJSON *result = cJSON_CreateObject();
    cJSON_AddStringToObject(result, "version", XLB_VERSION);
    cJSON_AddNumberToObject(result, "uptime_s", (double)(xlb_now_ms() - cp->started_ms) / 1000.0);
    add_u64(result, "generation", cp->generation);
    cJSON *workers = cJSON_AddArrayToObject(result, "workers");
    for (unsigned w = 0; w < cp->shared->n_workers; w++)
        cJSON_AddItemToArray(workers, worker_status(cp, w));
    cJSON *retired = cJSON_AddObjectToObject(result, "retired_snapshots");
    add_u64(retired, "waiting_for_stalled", cp->shared->overflow.count);
    add_u64(retired, "overflowed", cp->shared->overflow.overflowed);
    add_u64(retired, "publishes_refused", cp->shared->overflow.refused);
    cJSON *ports = cJSON_AddArrayToObject(result, "ports");
    for (unsigned p = 0; p < cp->n_ports; p++)
        cJSON_AddItemToArray(ports, port_status(cp, p));
    cJSON *vips = cJSON_AddArrayToObject(result, "vips");
    for (unsigned v = 0; v < cp->bootstrap.n_vips; v++)
        cJSON_AddItemToArray(vips, vip_status(cp, v));
    cJSON_AddItemToObject(result, "upstream_tls", upstream_tls_status(cp));
    cJSON *reload = cJSON_AddObjectToObject(result, "reload");
    add_u64(reload, "applied", cp->reload.applied);
    add_u64(reload, "rejected", cp->reload.rejected);
    if (cp->reload.last != NULL) {
        cJSON_AddNumberToObject(reload, "last_s_ago",
                                (double)(xlb_now_ms() - cp->reload.last_ms) / 1000.0);
        cJSON_AddItemToObject(reload, "last", cJSON_Duplicate(cp->reload.last, true));
    }
    return result;
}

/* The VIPs as status lists them, and the subchannels' upstream TLS. */
static cJSON *cmd_vips(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    (void)args, (void)error, (void)len;
    cJSON *result = cJSON_CreateObject();
    cJSON *vips = cJSON_AddArrayToObject(result, "vips");
    for (unsigned v = 0; v < cp->bootstrap.n_vips; v++)
        cJSON_AddItemToArray(vips, vip_status(cp, v));
    cJSON_AddItemToObject(result, "upstream_tls", upstream_tls_status(cp));
    return result;
}

static cJSON *counters_json(const struct xlb_worker_stats *stats)
{
    cJSON *obj = cJSON_CreateObject();
    add_u64(obj, "rx_packets", stats->rx_packets);
    add_u64(obj, "tx_packets", stats->tx_packets);
    cJSON *events = cJSON_AddObjectToObject(obj, "events");
    for (int e = 0; e < XLB_EVENT_MAX; e++)
        add_u64(events, xlb_event_counter_name(e), stats->events[e]);
    cJSON *drops = cJSON_AddObjectToObject(obj, "drops");
    for (int d = 0; d < XLB_DROP_MAX; d++)
        add_u64(drops, xlb_drop_reason_name(d), stats->drops[d]);
    cJSON *tcp = cJSON_AddObjectToObject(obj, "tcp");
    for (int c = 0; c < XLB_TCP_COUNTER_MAX; c++)
        add_u64(tcp, xlb_tcp_counter_descs[c].name, stats->tcp.counters[c]);
    add_u64(tcp, "connections", stats->tcp.conns_in_use);
    add_u64(tcp, "ooo_bytes", stats->tcp.ooo_bytes);
    return obj;
}

static cJSON *cmd_counters(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    struct xlb_worker_stats total = {0};
    cJSON *result = cJSON_CreateObject();
    cJSON *workers = cJSON_AddArrayToObject(result, "workers");
    for (unsigned w = 0; w < cp->shared->n_workers; w++) {
        /* One read of each field: the worker keeps writing while we sum. */
        struct xlb_worker_stats copy = cp->shared->stats[w];
        total.rx_packets += copy.rx_packets;
        total.tx_packets += copy.tx_packets;
        for (int e = 0; e < XLB_EVENT_MAX; e++)
            total.events[e] += copy.events[e];
        for (int d = 0; d < XLB_DROP_MAX; d++)
            total.drops[d] += copy.drops[d];
        xlb_tcp_stats_add(&total.tcp, &copy.tcp);
        cJSON *worker = counters_json(&copy);
        cJSON_AddNumberToObject(worker, "worker", w);
        cJSON_AddItemToArray(workers, worker);
    }
    cJSON_AddItemToObject(result, "total", counters_json(&total));
    return result;
}

static cJSON *cmd_neighbours(struct xlb_control_plane *cp, const cJSON *args, char *error,
                             size_t len)
{
    cJSON *result = cJSON_CreateArray();
    uint64_t now = xlb_now_ms();
    for (unsigned i = 0; i < cp->neighbours.n; i++) {
        const struct xlb_neighbour_state *n = &cp->neighbours.entries[i];
        cJSON *obj = cJSON_CreateObject();
        add_addr(obj, "address", &n->addr);
        cJSON_AddStringToObject(obj, "port", cp->bootstrap.ports[n->port_index].name);
        cJSON_AddStringToObject(obj, "role", n->is_gateway ? "gateway" : "neighbour");
        cJSON_AddStringToObject(obj, "state", n->resolved ? "reachable" : "incomplete");
        if (n->resolved) {
            add_mac(obj, "mac", &n->mac);
            cJSON_AddNumberToObject(obj, "confirmed_s_ago",
                                    (double)(now - n->resolved_ms) / 1000.0);
        }
        add_u64(obj, "solicitations", n->solicitations);
        add_u64(obj, "unsolicited_ignored", n->unsolicited_ignored);
        cJSON_AddItemToArray(result, obj);
    }
    return result;
}

static cJSON *cmd_metrics(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    struct xlb_text text = {0};
    xlb_metrics_render(cp, &text);
    cJSON *result = text.failed ? NULL : cJSON_CreateObject();
    if (result != NULL)
        cJSON_AddStringToObject(result, "text", text.data);
    xlb_text_free(&text);
    return result;
}

static const char *const level_names[] = {
    [RTE_LOG_EMERG] = "emerg", [RTE_LOG_ALERT] = "alert",     [RTE_LOG_CRIT] = "crit",
    [RTE_LOG_ERR] = "err",     [RTE_LOG_WARNING] = "warning", [RTE_LOG_NOTICE] = "notice",
    [RTE_LOG_INFO] = "info",   [RTE_LOG_DEBUG] = "debug",
};

static int level_by_name(const char *name)
{
    for (unsigned l = RTE_LOG_EMERG; l <= RTE_LOG_DEBUG; l++)
        if (strcmp(level_names[l], name) == 0)
            return (int)l;
    return -1;
}

static cJSON *log_levels(void)
{
    static const char *const components[] = {
#define XLB_LOG_NAME(id, name) RTE_STR(name),
        XLB_LOG_COMPONENTS(XLB_LOG_NAME)
#undef XLB_LOG_NAME
    };
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof(components) / sizeof(components[0]); i++) {
        int level = rte_log_get_level((uint32_t)xlb_log_type_by_component(components[i]));
        cJSON *obj = cJSON_CreateObject();
        cJSON_AddStringToObject(obj, "component", components[i]);
        cJSON_AddStringToObject(
            obj, "level",
            level >= (int)RTE_LOG_EMERG && level <= (int)RTE_LOG_DEBUG ? level_names[level] : "?");
        cJSON_AddItemToArray(list, obj);
    }
    return list;
}

/* log: list the levels; log {component, level}: set one component ("all": every xlb one). */
static cJSON *cmd_log(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    const cJSON *component = cJSON_GetObjectItemCaseSensitive(args, "component");
    const cJSON *level = cJSON_GetObjectItemCaseSensitive(args, "level");
    if (component == NULL && level == NULL)
        return log_levels();
    if (!cJSON_IsString(component) || !cJSON_IsString(level)) {
        snprintf(error, len, "log takes \"component\" and \"level\" strings");
        return NULL;
    }
    int value = level_by_name(level->valuestring);
    if (value < 0) {
        snprintf(error, len,
                 "no log level \"%.32s\" (emerg alert crit err warning notice info debug)",
                 level->valuestring);
        return NULL;
    }
    if (strcmp(component->valuestring, "all") == 0) {
        rte_log_set_level_pattern("xlb.*", (uint32_t)value);
        return log_levels();
    }
    int type = xlb_log_type_by_component(component->valuestring);
    if (type < 0) {
        snprintf(error, len, "no log component \"%.32s\" (see xlbctl log)", component->valuestring);
        return NULL;
    }
    rte_log_set_level((uint32_t)type, (uint32_t)value);
    return log_levels();
}

static cJSON *cmd_xds(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    return xlb_xds_plane_status(&cp->xds);
}

static cJSON *cmd_config_dump(struct xlb_control_plane *cp, const cJSON *args, char *error,
                              size_t len)
{
    return xlb_xds_plane_config_dump(&cp->xds);
}

static cJSON *cmd_clusters(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    return xlb_xds_plane_clusters(&cp->xds);
}

static cJSON *cmd_endpoints(struct xlb_control_plane *cp, const cJSON *args, char *error,
                            size_t len)
{
    const cJSON *cluster = cJSON_GetObjectItemCaseSensitive(args, "cluster");
    if (!cJSON_IsString(cluster)) {
        snprintf(error, len, "endpoints takes a \"cluster\" name");
        return NULL;
    }
    cJSON *list = xlb_xds_plane_endpoints(&cp->xds, cluster->valuestring);
    if (list == NULL)
        snprintf(error, len, "no VIP reaches a cluster \"%.128s\"", cluster->valuestring);
    return list;
}

static cJSON *cmd_simulate(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    return xlb_simulate(xlb_snapshot_latest(cp->shared), cp->shared->load, cp->shared->n_workers,
                        args, error, len);
}

static cJSON *cmd_flows(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    return xlb_flows_list(cp->flows, cp->socket, args, error, len);
}

static cJSON *cmd_flows_flush(struct xlb_control_plane *cp, const cJSON *args, char *error,
                              size_t len)
{
    return xlb_flows_flush(cp->shared, args, error, len);
}

static cJSON *cmd_tcp(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    return xlb_tcp_listing_list(cp->tcp_listing, cp->socket, args, error, len);
}

static cJSON *command_help(const struct xlb_command_help *h)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "name", h->name);
    cJSON_AddStringToObject(obj, "usage", h->usage);
    cJSON_AddStringToObject(obj, "summary", h->summary);
    return obj;
}

static cJSON *cmd_help(struct xlb_control_plane *cp, const cJSON *args, char *error, size_t len)
{
    const cJSON *topic = cJSON_GetObjectItemCaseSensitive(args, "command");
    if (cJSON_IsString(topic)) {
        const struct xlb_command_help *h = xlb_command_help_find(topic->valuestring);
        if (h == NULL) {
            snprintf(error, len, "no command \"%.64s\"", topic->valuestring);
            return NULL;
        }
        return command_help(h);
    }
    cJSON *list = cJSON_CreateArray();
    for (const struct xlb_command_help *h = xlb_command_help; h->name != NULL; h++)
        cJSON_AddItemToArray(list, command_help(h));
    return list;
}

static const struct command commands[] = {
    {"status", cmd_status},
    {"vips", cmd_vips},
    {"counters", cmd_counters},
    {"neighbours", cmd_neighbours},
    {"xds", cmd_xds},
    {"clusters", cmd_clusters},
    {"endpoints", cmd_endpoints},
    {"simulate", cmd_simulate},
    {"flows", cmd_flows},
    {"flows_flush", cmd_flows_flush, always},
    {"tcp", cmd_tcp},
    {"config_dump", cmd_config_dump},
    {"metrics", cmd_metrics},
    {"log", cmd_log, sets_log_level},
    {"help", cmd_help},
    {NULL, NULL},
};

static const struct command *find_command(const char *name)
{
    for (const struct command *c = commands; c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

cJSON *xlb_commands_execute(const cJSON *request, void *arg)
{
    struct xlb_control_plane *cp = arg;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(request, "command");
    if (!cJSON_IsString(name))
        return xlb_reply_error("request needs a \"command\" string");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(request, "args");
    if (args != NULL && !cJSON_IsObject(args))
        return xlb_reply_error("\"args\" must be an object");
    const struct command *c = find_command(name->valuestring);
    if (c == NULL)
        return xlb_reply_error("unknown command \"%.64s\" (try help)", name->valuestring);
    char error[256] = "";
    if (c->changes_state != NULL && c->changes_state(args) &&
        !xlb_control_socket_may_change_state(cp->socket, error, sizeof(error)))
        return xlb_reply_error("%s changes state: not allowed: %s", c->name, error);
    cJSON *result = c->run(cp, args, error, sizeof(error));
    if (result == NULL)
        return xlb_reply_error("%s", error[0] ? error : "out of memory");
    if (result == XLB_REPLY_LATER)
        return result; /* the command answers from a timer (control_socket.h) */
    return xlb_reply_ok(result);
}
