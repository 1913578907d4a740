#include "xds_plane.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/struct.pb-c.h"
#include "proto_json.h"
#include "static_resources.h"
#include "xlb_log.h"

/* The node's own strings, in the char * that protobuf-c's Node holds: writable arrays that
 * packing only reads. */
static char client_features[][48] = {
    "envoy.lb.does_not_support_overprovisioning",
    "envoy.lrs.supports_send_all_clusters",
    "xds.config.resource-in-sotw",
};
static char no_string[] = "";
static char user_agent_name[] = "xlb";
static char user_agent_version[] = XLB_VERSION;

/* The LDS resource an xds: target names: its path, as gRPC's xds resolver takes it. */
static const char *lds_name(const char *target)
{
    const char *rest = target + 4; /* after "xds:" (checked by the bootstrap reader) */
    if (strncmp(rest, "//", 2) != 0)
        return rest;
    return strchr(rest + 2, '/') + 1;
}

static int build_node(struct xlb_xds_plane *x, const struct xlb_bootstrap *b,
                      struct xlb_errors *errs)
{
    Envoy__Config__Core__V3__Node init;
    envoy__config__core__v3__node__init(&init);
    Envoy__Config__Core__V3__Locality locality;
    envoy__config__core__v3__locality__init(&locality);
    x->node = init;
    x->locality = locality;
    x->node.id = b->node.id ? b->node.id : no_string;
    x->node.cluster = b->node.cluster ? b->node.cluster : no_string;
    x->locality.region = b->node.region ? b->node.region : no_string;
    x->locality.zone = b->node.zone ? b->node.zone : no_string;
    x->locality.sub_zone = b->node.sub_zone ? b->node.sub_zone : no_string;
    x->node.locality = &x->locality;
    x->node.user_agent_name = user_agent_name;
    x->node.user_agent_version_type_case =
        ENVOY__CONFIG__CORE__V3__NODE__USER_AGENT_VERSION_TYPE_USER_AGENT_VERSION;
    x->node.user_agent_version = user_agent_version;
    for (size_t i = 0; i < 3; i++)
        x->client_features[i] = client_features[i];
    x->node.client_features = x->client_features;
    x->node.n_client_features = 3;
    if (b->node.metadata != NULL) {
        x->metadata = xlb_proto_json_read(&google__protobuf__struct__descriptor, b->node.metadata,
                                          "node.metadata", errs);
        if (x->metadata == NULL)
            return -1;
        x->node.metadata = (Google__Protobuf__Struct *)x->metadata;
    }
    return 0;
}

static int register_vips(struct xlb_xds_plane *x, const struct xlb_bootstrap *b)
{
    free(x->vips);
    x->n_vips = b->n_vips;
    x->vips = calloc(b->n_vips + 1, sizeof(*x->vips));
    if (x->vips == NULL)
        return -1;
    for (unsigned v = 0; v < b->n_vips; v++) {
        const struct xlb_vip_config *vip = &b->vips[v];
        int index = vip->target ? xlb_dm_add_vip(&x->dm, XLB_DM_VIP_L7, lds_name(vip->target))
                                : xlb_dm_add_vip(&x->dm, XLB_DM_VIP_L4, vip->cluster);
        if (index < 0)
            return -1;
        x->vips[v].dm_index = (size_t)index;
    }
    return 0;
}

static void on_ads_change(void *arg)
{
    struct xlb_xds_plane *x = arg;
    x->changed(x->changed_arg);
}

/* LRS runs while some cluster asks for it and ADS has a ready channel. */
static void maybe_start_lrs(struct xlb_xds_plane *x)
{
    const char *const *names;
    if (x->lrs == NULL || x->channel == NULL || xlb_lrs_client_running(x->lrs) ||
        x->lrs_source.cache == NULL ||
        xlb_lrs_source_of(&x->lrs_source).enabled_clusters(&x->lrs_source, &names) == 0)
        return;
    if (xlb_lrs_client_start(x->lrs, x->channel) == 0)
        XLB_LOG(INFO, LRS, "reporting load to the xDS server");
}

static void on_channel(struct xlb_grpc_channel *ch, void *arg)
{
    struct xlb_xds_plane *x = arg;
    if (ch == NULL && x->lrs != NULL)
        xlb_lrs_client_stop(x->lrs);
    x->channel = ch;
    maybe_start_lrs(x);
}

static void on_lrs_stopped(struct xlb_lrs_client *client, const char *reason, void *arg)
{
    /* Started again with the next channel ADS lends (the server ended only this call). */
    XLB_LOG(WARNING, LRS, "%s", reason);
}

static int start_lrs(struct xlb_xds_plane *x, const struct xlb_worker_load *load,
                     unsigned n_workers)
{
    (void)load;
    (void)n_workers;
    struct xlb_lrs_client_config config = {
        .node = &x->node,
        .source = xlb_lrs_source_of(&x->lrs_source),
        .on_stopped = on_lrs_stopped,
        .arg = x,
    };
    x->lrs = xlb_lrs_client_create(x->loop, &config);
    return x->lrs != NULL ? 0 : -1;
}

static int start_ads(struct xlb_xds_plane *x, const struct xlb_bootstrap *b,
                     struct xlb_errors *errs)
{
    struct xlb_ads_config config = {
        .node = &x->node,
        .backoff_seed = xlb_now_ms(),
        .on_channel = on_channel,
    };
    for (unsigned i = 0; i < b->n_xds_servers && i < XLB_ADS_MAX_SERVERS; i++) {
        const struct xlb_xds_server_config *s = &b->xds_servers[i];
        struct xlb_ads_server *out = &config.servers[config.n_servers];
        char error[256];
        if (xlb_grpc_target_parse(s->server_uri, &out->target, error, sizeof(error)) != 0) {
            char path[64];
            snprintf(path, sizeof(path), "xds_servers[%u].server_uri", i);
            xlb_errors_add(errs, path, "%s", error);
            return -1;
        }
        out->target.tls = s->creds == XLB_CREDS_TLS;
        out->target.ca_file = s->ca_certificate_file;
        out->target.cert_file = s->certificate_file;
        out->target.key_file = s->private_key_file;
        out->ignore_resource_deletion = s->ignore_resource_deletion;
        snprintf(out->uri, sizeof(out->uri), "%s", s->server_uri);
        config.n_servers++;
    }
    if (config.n_servers == 0)
        return 0;
    struct xlb_errors warnings = {0};
    xlb_xds_plane_warnings(b, &warnings);
    for (unsigned i = 0; i < warnings.n; i++)
        XLB_LOG(WARNING, XDS, "%s", warnings.lines[i]);
    xlb_errors_free(&warnings);
    x->ads = xlb_ads_client_create(x->loop, &x->cache, &config, on_ads_change, x);
    if (x->ads == NULL) {
        xlb_errors_add(errs, "xds_servers", "cannot start the ADS client");
        return -1;
    }
    return 0;
}

int xlb_xds_plane_init(struct xlb_xds_plane *x, struct xlb_loop *loop,
                       const struct xlb_bootstrap *b, const struct xlb_worker_load *load,
                       unsigned n_workers, const struct xlb_lb_grace *grace,
                       void (*changed)(void *arg), void *arg, struct xlb_errors *errs)
{
    memset(x, 0, sizeof(*x));
    x->loop = loop;
    x->changed = changed;
    x->changed_arg = arg;
    xlb_xds_cache_init(&x->cache);
    x->cache.bootstrap = b; /* cp's, whose address a reload keeps */
    xlb_dm_init(&x->dm, &x->cache);
    if (build_node(x, b, errs) != 0 ||
        xlb_static_resources_load(&x->cache, b->static_resources, errs) != 0)
        return -1;
    if (register_vips(x, b) != 0) {
        xlb_errors_add(errs, "xlb.vips", "out of memory");
        return -1;
    }
    xlb_dm_update(&x->dm);
    /* The load slots are LRS's and the LB trees': one numbering for both. */
    xlb_lrs_source_init(&x->lrs_source, &x->cache, load, n_workers);
    x->lb = xlb_lb_trees_create(&x->lrs_source.slots, grace, load, n_workers, xlb_now_ms());
    if (x->lb == NULL) {
        xlb_errors_add(errs, "xlb.vips", "out of memory");
        return -1;
    }
    x->lrs_source.lb = x->lb;
    xlb_lb_trees_set_aggregate_compat(x->lb, b->aggregate_cluster_backward_compat);
    xlb_lb_trees_set_bootstrap(x->lb, b);
    if (b->n_xds_servers > 0 && start_lrs(x, load, n_workers) != 0) {
        xlb_errors_add(errs, "xds_servers", "cannot start the LRS client");
        return -1;
    }
    if (start_ads(x, b, errs) != 0)
        return -1;
    xlb_xds_plane_update(x);
    return 0;
}

void xlb_xds_plane_free(struct xlb_xds_plane *x)
{
    xlb_lrs_client_destroy(x->lrs); /* before ADS frees the channel it runs on */
    x->lrs = NULL;
    xlb_ads_client_destroy(x->ads);
    xlb_lb_trees_free(x->lb);
    xlb_lrs_source_free(&x->lrs_source);
    xlb_dm_free(&x->dm);
    xlb_xds_cache_free(&x->cache);
    if (x->metadata != NULL)
        protobuf_c_message_free_unpacked(x->metadata, NULL);
    free(x->vips);
    memset(x, 0, sizeof(*x));
}

static void recompile_lb(struct xlb_xds_plane *x)
{
    size_t *dm_index = calloc(x->n_vips + 1, sizeof(size_t));
    if (x->lb == NULL || dm_index == NULL) {
        free(dm_index);
        return;
    }
    for (size_t v = 0; v < x->n_vips; v++)
        dm_index[v] = x->vips[v].dm_index;
    if (xlb_lb_trees_update(x->lb, &x->dm, dm_index, x->n_vips, xlb_now_ms()))
        x->lb_changed = true;
    free(dm_index);
}

void xlb_xds_plane_update(struct xlb_xds_plane *x)
{
    uint64_t watches = x->dm.watch_changes;
    xlb_dm_update(&x->dm);
    if (x->ads != NULL && x->dm.watch_changes != watches)
        xlb_ads_client_update_watches(x->ads);
    /* One generation per update that changed some VIP's complete configuration: VIPs that
     * changed together share it, and it keeps counting across reloads. */
    bool bumped = false;
    for (size_t v = 0; v < x->n_vips; v++) {
        const struct xlb_dm_vip *vip = &x->dm.vips[x->vips[v].dm_index];
        struct xlb_xds_vip *state = &x->vips[v];
        if (vip->state != XLB_DM_READY)
            continue;
        if (!state->ever_ready || vip->fingerprint != state->fingerprint) {
            if (!bumped)
                x->ready_generation++;
            bumped = true;
            state->ever_ready = true;
            state->fingerprint = vip->fingerprint;
            state->generation = x->ready_generation;
        }
    }
    recompile_lb(x);
    maybe_start_lrs(x);
}

void xlb_xds_plane_tls_files_changed(struct xlb_xds_plane *x)
{
    if (x->lb == NULL)
        return;
    xlb_lb_trees_tls_files_changed(x->lb);
    recompile_lb(x);
}

void xlb_xds_plane_tick(struct xlb_xds_plane *x)
{
    if (x->lb != NULL && xlb_lb_trees_tick(x->lb, xlb_now_ms()))
        x->lb_changed = true;
}

int xlb_xds_plane_reload(struct xlb_xds_plane *x, const struct xlb_bootstrap *b,
                         struct xlb_errors *errs)
{
    xlb_xds_cache_drop_static(&x->cache);
    xlb_static_resources_load(&x->cache, b->static_resources, errs);
    xlb_dm_free(&x->dm);
    xlb_dm_init(&x->dm, &x->cache);
    if (register_vips(x, b) != 0) {
        xlb_errors_add(errs, "xlb.vips", "out of memory");
        return -1;
    }
    xlb_xds_plane_update(x);
    if (x->ads != NULL)
        xlb_ads_client_update_watches(x->ads);
    return 0;
}

int xlb_xds_plane_check(const struct xlb_bootstrap *b, struct xlb_errors *errs)
{
    struct xlb_xds_cache scratch;
    xlb_xds_cache_init(&scratch);
    scratch.bootstrap = b;
    int rc = xlb_static_resources_load(&scratch, b->static_resources, errs);
    xlb_xds_cache_free(&scratch);
    return rc;
}

/* Whether host (a name or an address literal) stays on this machine: "localhost",
 * 127.0.0.0/8, ::1 or a v4-mapped 127/8. Any other name may resolve off the machine. */
static bool host_is_loopback(const char *host)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (strcmp(host, "localhost") == 0)
        return true;
    if (inet_pton(AF_INET, host, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &v6) != 1)
        return false;
    if (IN6_IS_ADDR_LOOPBACK(&v6))
        return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

void xlb_xds_plane_warnings(const struct xlb_bootstrap *b, struct xlb_errors *warnings)
{
    for (unsigned i = 0; i < b->n_xds_servers; i++) {
        const struct xlb_xds_server_config *s = &b->xds_servers[i];
        struct xlb_grpc_target target;
        char error[256], path[64];
        if (s->creds != XLB_CREDS_INSECURE || s->server_uri == NULL ||
            xlb_grpc_target_parse(s->server_uri, &target, error, sizeof(error)) != 0 ||
            host_is_loopback(target.host))
            continue;
        snprintf(path, sizeof(path), "xds_servers[%u].channel_creds", i);
        xlb_errors_add(warnings, path,
                       "insecure credentials towards %s, which is not on loopback: anyone on "
                       "the path can inject configuration (use \"tls\")",
                       s->server_uri);
    }
}

/* ---- for xlbctl ---- */

static cJSON *cluster_status(const struct xlb_dm_cluster *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddStringToObject(o, "state", xlb_dm_state_name(c->state));
    if (c->error != NULL)
        cJSON_AddStringToObject(o, "error", c->error);
    if (c->note != NULL)
        cJSON_AddStringToObject(o, "note", c->note);
    if (c->state == XLB_DM_WARMING && c->awaited != NULL) {
        char what[320];
        snprintf(what, sizeof(what), "%s \"%s\"", xlb_xds_type_name[c->awaited->type],
                 c->awaited->name);
        cJSON_AddStringToObject(o, "waiting_for", what);
    }
    return o;
}

const char *xlb_xds_plane_vip_state(const struct xlb_xds_plane *x, size_t v)
{
    if (v >= x->n_vips)
        return "unknown";
    const struct xlb_dm_vip *vip = &x->dm.vips[x->vips[v].dm_index];
    if (vip->state == XLB_DM_READY)
        return "ready";
    if (x->vips[v].ever_ready)
        return "stale"; /* the last complete configuration is kept (warming) */
    return vip->state == XLB_DM_WARMING ? "warming" : "error";
}

cJSON *xlb_xds_plane_vip_status(const struct xlb_xds_plane *x, size_t v)
{
    cJSON *o = cJSON_CreateObject();
    if (v >= x->n_vips)
        return o;
    const struct xlb_dm_vip *vip = &x->dm.vips[x->vips[v].dm_index];
    cJSON_AddStringToObject(o, "state", xlb_xds_plane_vip_state(x, v));
    if (vip->reason != NULL)
        cJSON_AddStringToObject(o, "reason", vip->reason);
    if (x->vips[v].ever_ready)
        cJSON_AddNumberToObject(o, "serving_generation", (double)x->vips[v].generation);
    cJSON *clusters = cJSON_AddArrayToObject(o, "clusters");
    for (size_t c = 0; c < vip->n_clusters; c++)
        if (vip->clusters[c].from_route)
            cJSON_AddItemToArray(clusters, cluster_status(&vip->clusters[c]));
    return o;
}

static const char *const state_names[] = {
    [XLB_RES_REQUESTED] = "requested", [XLB_RES_ACKED] = "acked",
    [XLB_RES_NACKED] = "nacked",       [XLB_RES_DOES_NOT_EXIST] = "does_not_exist",
    [XLB_RES_STATIC] = "static",
};

cJSON *xlb_xds_plane_config_dump(const struct xlb_xds_plane *x)
{
    cJSON *list = cJSON_CreateArray();
    for (int t = 0; t < XLB_XDS_TYPES; t++)
        for (const struct xlb_xds_resource *r = x->cache.list[t]; r != NULL; r = r->next) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "type", xlb_xds_type_name[t]);
            cJSON_AddStringToObject(o, "name", r->name);
            cJSON_AddStringToObject(o, "state", state_names[r->state]);
            cJSON_AddBoolToObject(o, "watched", r->watched);
            if (r->version != NULL)
                cJSON_AddStringToObject(o, "version", r->version);
            if (r->error != NULL)
                cJSON_AddStringToObject(o, "error", r->error);
            if (r->message != NULL) {
                cJSON *value = xlb_proto_json_print(r->message);
                if (value != NULL)
                    cJSON_AddItemToObject(o, "resource", value);
            }
            cJSON_AddItemToArray(list, o);
        }
    return list;
}

cJSON *xlb_xds_plane_status(const struct xlb_xds_plane *x)
{
    if (x->ads != NULL) {
        cJSON *s = xlb_ads_client_status(x->ads);
        cJSON *lrs = cJSON_AddObjectToObject(s, "lrs");
        cJSON_AddBoolToObject(lrs, "running", x->lrs && xlb_lrs_client_running(x->lrs));
        cJSON_AddNumberToObject(lrs, "interval_ms",
                                x->lrs ? (double)xlb_lrs_client_interval_ms(x->lrs) : 0);
        cJSON_AddNumberToObject(lrs, "reports",
                                x->lrs ? (double)xlb_lrs_client_reports(x->lrs) : 0);
        return s;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNullToObject(o, "server");
    cJSON_AddStringToObject(o, "note", "no xds_servers: static resources only");
    return o;
}

static enum xlb_xdsm_state metrics_state(const struct xlb_xds_resource *r)
{
    switch (r->state) {
    case XLB_RES_ACKED:
        return XLB_XDSM_ACKED;
    case XLB_RES_NACKED:
        return r->has_value ? XLB_XDSM_NACKED_BUT_CACHED : XLB_XDSM_NACKED;
    case XLB_RES_DOES_NOT_EXIST:
        return XLB_XDSM_DOES_NOT_EXIST;
    case XLB_RES_STATIC:
        return XLB_XDSM_STATIC;
    default:
        return XLB_XDSM_REQUESTED;
    }
}

void xlb_xds_plane_metrics(const struct xlb_xds_plane *x, struct xlb_xds_metrics *out)
{
    memset(out, 0, sizeof(*out));
    out->has_ads = x->ads != NULL;
    if (x->ads != NULL)
        xlb_ads_client_counters(x->ads, &out->ads);
    for (int t = 0; t < XLB_XDS_TYPES; t++)
        for (const struct xlb_xds_resource *r = x->cache.list[t]; r != NULL; r = r->next)
            out->resources[t][metrics_state(r)]++;
}

/* ---- clusters and endpoints ---- */

static const struct xlb_dm_cluster *find_cluster(const struct xlb_xds_plane *x, const char *name,
                                                 cJSON *vips)
{
    const struct xlb_dm_cluster *found = NULL;
    for (size_t v = 0; v < x->dm.n_vips; v++) {
        const struct xlb_dm_cluster *c = xlb_dm_vip_cluster(&x->dm.vips[v], name);
        if (c == NULL)
            continue;
        found = c;
        if (vips != NULL)
            cJSON_AddItemToArray(vips, cJSON_CreateString(x->dm.vips[v].target));
    }
    return found;
}

static const char *cluster_type(const struct xlb_cluster_config *c)
{
    return c->type == XLB_CLUSTER_EDS           ? "eds"
           : c->type == XLB_CLUSTER_LOGICAL_DNS ? "logical_dns"
                                                : "aggregate";
}

static const char *const health_names[] = {
    [XLB_HEALTH_UNKNOWN] = "unknown",
    [XLB_HEALTH_HEALTHY] = "healthy",
    [XLB_HEALTH_DRAINING] = "draining",
};

cJSON *xlb_xds_plane_clusters(const struct xlb_xds_plane *x)
{
    cJSON *list = cJSON_CreateArray();
    for (const struct xlb_xds_resource *r = x->cache.list[XLB_XDS_CDS]; r != NULL; r = r->next) {
        cJSON *vips = cJSON_CreateArray();
        const struct xlb_dm_cluster *c = find_cluster(x, r->name, vips);
        if (c == NULL) {
            cJSON_Delete(vips);
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", r->name);
        cJSON_AddStringToObject(o, "state", xlb_dm_state_name(c->state));
        if (c->value != NULL) {
            cJSON_AddStringToObject(o, "type", cluster_type(c->value));
            cJSON_AddStringToObject(o, "lb_policy", xlb_lb_policy_name(c->value->lb_policy));
            cJSON_AddNumberToObject(o, "max_requests", c->value->max_requests);
            cJSON_AddBoolToObject(o, "outlier_detection", c->value->outlier.enabled);
        }
        size_t priorities = 0, localities = 0, endpoints = 0;
        if (c->endpoints != NULL) {
            priorities = c->endpoints->n_priorities;
            for (size_t p = 0; p < priorities; p++) {
                localities += c->endpoints->priorities[p].n_localities;
                for (size_t l = 0; l < c->endpoints->priorities[p].n_localities; l++)
                    endpoints += c->endpoints->priorities[p].localities[l].n_endpoints;
            }
        }
        cJSON_AddNumberToObject(o, "priorities", (double)priorities);
        cJSON_AddNumberToObject(o, "localities", (double)localities);
        cJSON_AddNumberToObject(o, "endpoints", (double)endpoints);
        if (c->error != NULL)
            cJSON_AddStringToObject(o, "error", c->error);
        xlb_lb_trees_describe_cluster(x->lb, r->name, o);
        cJSON_AddItemToObject(o, "vips", vips);
        cJSON_AddItemToArray(list, o);
    }
    return list;
}

cJSON *xlb_xds_plane_endpoints(const struct xlb_xds_plane *x, const char *name)
{
    const struct xlb_dm_cluster *c = find_cluster(x, name, NULL);
    if (c == NULL)
        return NULL;
    cJSON *list = cJSON_CreateArray();
    for (size_t p = 0; c->endpoints != NULL && p < c->endpoints->n_priorities; p++) {
        const struct xlb_eds_priority *prio = &c->endpoints->priorities[p];
        for (size_t l = 0; l < prio->n_localities; l++) {
            const struct xlb_eds_locality *loc = &prio->localities[l];
            for (size_t e = 0; e < loc->n_endpoints; e++) {
                const struct xlb_eds_endpoint *ep = &loc->endpoints[e];
                char address[XLB_HOST_PORT_STRLEN], locality[256];
                xlb_host_port_format(&ep->addresses[0], address, sizeof(address));
                snprintf(locality, sizeof(locality), "%s/%s/%s", loc->region ? loc->region : "",
                         loc->zone ? loc->zone : "", loc->sub_zone ? loc->sub_zone : "");
                cJSON *o = cJSON_CreateObject();
                cJSON_AddNumberToObject(o, "priority", (double)p);
                cJSON_AddStringToObject(o, "locality", locality);
                cJSON_AddNumberToObject(o, "locality_weight", loc->weight);
                cJSON_AddStringToObject(o, "address", address);
                if (ep->n_addresses > 1) { /* A61 */
                    cJSON *more = cJSON_AddArrayToObject(o, "additional_addresses");
                    for (uint32_t k = 1; more != NULL && k < ep->n_addresses; k++) {
                        xlb_host_port_format(&ep->addresses[k], address, sizeof(address));
                        cJSON_AddItemToArray(more, cJSON_CreateString(address));
                    }
                }
                cJSON_AddNumberToObject(o, "weight", ep->weight);
                bool named = (size_t)ep->health < sizeof(health_names) / sizeof(health_names[0]) &&
                             health_names[ep->health] != NULL;
                cJSON_AddStringToObject(o, "health", named ? health_names[ep->health] : "other");
                cJSON_AddItemToArray(list, o);
            }
        }
    }
    xlb_lb_trees_describe_endpoints(x->lb, name, xlb_now_ms(), list);
    return list;
}
