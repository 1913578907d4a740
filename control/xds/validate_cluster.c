/*
 * Cluster (CDS) as a gRPC client reads it: discovery type (A27, A37), LRS server, circuit
 * breaking, override_host_status (A55/A60) and the upstream idle_timeout (A75). The LB policy
 * and outlier detection have files of their own.
 */
#include <stdlib.h>
#include <string.h>

#include "envoy/extensions/clusters/aggregate/v3/cluster.pb-c.h"
#include "envoy/extensions/upstreams/http/v3/http_protocol_options.pb-c.h"
#include "validate_cluster_internal.h"
#include "xlb_override_map.h"

typedef Envoy__Config__Cluster__V3__Cluster Cluster;

#define XV_AGGREGATE_TYPE "envoy.extensions.clusters.aggregate.v3.ClusterConfig"

static bool read_eds(struct xv_ctx *ctx, const Cluster *c, struct xlb_cluster_config *out)
{
    out->type = XLB_CLUSTER_EDS;
    if (c->eds_cluster_config == NULL) {
        xv_error(ctx, "eds_cluster_config", "field not present");
        return false;
    }
    const Envoy__Config__Core__V3__ConfigSource *cs = c->eds_cluster_config->eds_config;
    if (cs == NULL) {
        xv_error(ctx, "eds_cluster_config.eds_config", "field not present");
        return false;
    }
    if (!xv_config_source_ads_or_self(cs)) {
        xv_error(ctx, "eds_cluster_config.eds_config", "ConfigSource is not ads or self");
        return false;
    }
    out->eds_service_name =
        xv_strdup(ctx, "eds_cluster_config.service_name", c->eds_cluster_config->service_name);
    return out->eds_service_name != NULL;
}

/* The one socket address of a LOGICAL_DNS cluster: a host name to resolve and a port. */
static bool read_dns_address(struct xv_ctx *ctx, const char *path,
                             const Envoy__Config__Endpoint__V3__LbEndpoint *lbe,
                             struct xlb_cluster_config *out)
{
    char p[XV_PATH_MAX];
    xv_key(p, path, "endpoint");
    if (lbe->host_identifier_case !=
        ENVOY__CONFIG__ENDPOINT__V3__LB_ENDPOINT__HOST_IDENTIFIER_ENDPOINT) {
        xv_error(ctx, p, "field not present");
        return false;
    }
    xv_key(p, p, "address");
    if (lbe->endpoint->address == NULL) {
        xv_error(ctx, p, "field not present");
        return false;
    }
    xv_key(p, p, "socket_address");
    const Envoy__Config__Core__V3__SocketAddress *sa = lbe->endpoint->address->socket_address;
    if (sa == NULL) {
        xv_error(ctx, p, "field not present");
        return false;
    }
    char child[XV_PATH_MAX];
    bool ok = true;
    if (sa->resolver_name[0] != '\0') {
        xv_key(child, p, "resolver_name");
        xv_error(ctx, child, "LOGICAL_DNS clusters must NOT have a custom resolver name set");
        ok = false;
    }
    if (sa->address[0] == '\0') {
        xv_key(child, p, "address");
        xv_error(ctx, child, "field not present");
        ok = false;
    }
    ok &= xv_port_value(ctx, p, sa, &out->dns_port);
    if (!ok)
        return false;
    xv_key(child, p, "address");
    out->dns_host = xv_strdup(ctx, child, sa->address);
    return out->dns_host != NULL;
}

static bool read_logical_dns(struct xv_ctx *ctx, const Cluster *c, struct xlb_cluster_config *out)
{
    out->type = XLB_CLUSTER_LOGICAL_DNS;
    const Envoy__Config__Endpoint__V3__ClusterLoadAssignment *la = c->load_assignment;
    if (la == NULL) {
        xv_error(ctx, "load_assignment", "field not present");
        return false;
    }
    if (la->n_endpoints != 1) {
        xv_error(ctx, "load_assignment.endpoints",
                 "must contain exactly one locality for LOGICAL_DNS cluster, found %zu",
                 la->n_endpoints);
        return false;
    }
    const Envoy__Config__Endpoint__V3__LocalityLbEndpoints *loc = la->endpoints[0];
    if (loc->n_lb_endpoints != 1) {
        xv_error(ctx, "load_assignment.endpoints[0].lb_endpoints",
                 "must contain exactly one endpoint for LOGICAL_DNS cluster, found %zu",
                 loc->n_lb_endpoints);
        return false;
    }
    return read_dns_address(ctx, "load_assignment.endpoints[0].lb_endpoints[0]",
                            loc->lb_endpoints[0], out);
}

static bool read_aggregate(struct xv_ctx *ctx, const Cluster *c, struct xlb_cluster_config *out)
{
    out->type = XLB_CLUSTER_AGGREGATE;
    const Google__Protobuf__Any *any = c->cluster_type->typed_config;
    if (any == NULL) {
        xv_error(ctx, "cluster_type.typed_config", "field not present");
        return false;
    }
    /* gRPC recognises the extension by its config type; the name is informative only. */
    const char *type = xv_any_type(ctx, "cluster_type.typed_config", any);
    if (type == NULL)
        return false;
    if (strcmp(type, XV_AGGREGATE_TYPE) != 0) {
        xv_error(ctx, "cluster_type.typed_config.type_url",
                 "unknown cluster_type extension \"%.96s\"", type);
        return false;
    }
    Envoy__Extensions__Clusters__Aggregate__V3__ClusterConfig *cc =
        (Envoy__Extensions__Clusters__Aggregate__V3__ClusterConfig *)xv_unpack(
            ctx, "cluster_type.typed_config", any,
            &envoy__extensions__clusters__aggregate__v3__cluster_config__descriptor,
            "aggregate cluster config");
    if (cc == NULL)
        return false;
    bool ok = cc->n_clusters > 0;
    if (!ok)
        xv_error(ctx, "cluster_type.typed_config.value.clusters", "must be non-empty");
    else
        out->aggregate_clusters = xv_calloc(ctx, "cluster_type", cc->n_clusters, sizeof(char *));
    for (size_t i = 0; ok && out->aggregate_clusters != NULL && i < cc->n_clusters; i++) {
        out->aggregate_clusters[i] = xv_strdup(ctx, "cluster_type", cc->clusters[i]);
        out->n_aggregate_clusters++;
        ok = out->aggregate_clusters[i] != NULL;
    }
    protobuf_c_message_free_unpacked(&cc->base, NULL);
    return ok && out->aggregate_clusters != NULL;
}

static bool read_discovery(struct xv_ctx *ctx, const Cluster *c, struct xlb_cluster_config *out)
{
    if (c->cluster_discovery_type_case ==
        ENVOY__CONFIG__CLUSTER__V3__CLUSTER__CLUSTER_DISCOVERY_TYPE_CLUSTER_TYPE)
        return read_aggregate(ctx, c, out);
    /* Unset means STATIC, the enum's zero value. */
    Envoy__Config__Cluster__V3__Cluster__DiscoveryType type =
        c->cluster_discovery_type_case ==
                ENVOY__CONFIG__CLUSTER__V3__CLUSTER__CLUSTER_DISCOVERY_TYPE_TYPE
            ? c->type
            : ENVOY__CONFIG__CLUSTER__V3__CLUSTER__DISCOVERY_TYPE__STATIC;
    if (type == ENVOY__CONFIG__CLUSTER__V3__CLUSTER__DISCOVERY_TYPE__EDS)
        return read_eds(ctx, c, out);
    if (type == ENVOY__CONFIG__CLUSTER__V3__CLUSTER__DISCOVERY_TYPE__LOGICAL_DNS)
        return read_logical_dns(ctx, c, out);
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &envoy__config__cluster__v3__cluster__discovery_type__descriptor, (int)type);
    if (v != NULL)
        xv_error(ctx, "type", "%s is not supported", v->name);
    else
        xv_error(ctx, "type", "unknown discovery type %d", (int)type);
    return false;
}

static bool read_lrs(struct xv_ctx *ctx, const Cluster *c, struct xlb_cluster_config *out)
{
    if (c->lrs_server == NULL)
        return true;
    if (c->lrs_server->config_source_specifier_case !=
        ENVOY__CONFIG__CORE__V3__CONFIG_SOURCE__CONFIG_SOURCE_SPECIFIER_SELF) {
        xv_error(ctx, "lrs_server", "ConfigSource is not self");
        return false;
    }
    out->lrs_enabled = true;
    return true;
}

static void read_circuit_breakers(const Cluster *c, struct xlb_cluster_config *out)
{
    out->max_requests = XLB_CIRCUIT_BREAKER_DEFAULT_MAX_REQUESTS;
    if (c->circuit_breakers == NULL)
        return;
    /* The first DEFAULT-priority threshold decides; HIGH priority has no meaning for gRPC. */
    for (size_t i = 0; i < c->circuit_breakers->n_thresholds; i++) {
        const Envoy__Config__Cluster__V3__CircuitBreakers__Thresholds *t =
            c->circuit_breakers->thresholds[i];
        if (t->priority != ENVOY__CONFIG__CORE__V3__ROUTING_PRIORITY__DEFAULT)
            continue;
        if (t->max_requests != NULL)
            out->max_requests = t->max_requests->value;
        break;
    }
}

/* UNKNOWN, HEALTHY and DRAINING count; other statuses are ignored rather than NACKed (A55). */
static void read_override_host_status(const Cluster *c, struct xlb_cluster_config *out)
{
    const Envoy__Config__Core__V3__HealthStatusSet *set =
        c->common_lb_config != NULL ? c->common_lb_config->override_host_status : NULL;
    if (set == NULL) {
        out->override_host_status = XLB_OVERRIDE_STATUS_DEFAULT;
        return;
    }
    out->override_host_status = 0;
    for (size_t i = 0; i < set->n_statuses; i++) {
        int s = (int)set->statuses[i];
        if (s == XLB_HEALTH_UNKNOWN || s == XLB_HEALTH_HEALTHY || s == XLB_HEALTH_DRAINING)
            out->override_host_status |= XLB_HEALTH_BIT(s);
    }
}

/*
 * A75: idle_timeout comes from upstream_config, which must then hold an HttpProtocolOptions
 * (in protobuf form). Absent anywhere along upstream_config -> common_http_protocol_options ->
 * idle_timeout, the default of 1 hour applies. typed_extension_protocol_options, where Envoy
 * also keeps HttpProtocolOptions, is not read: the proposal does not name it.
 */
static bool read_idle_timeout(struct xv_ctx *ctx, const Cluster *c, struct xlb_cluster_config *out)
{
    out->idle_timeout.seconds = XLB_IDLE_TIMEOUT_DEFAULT_SECONDS;
    out->idle_timeout.nanos = 0;
    if (c->upstream_config == NULL)
        return true;
    Envoy__Extensions__Upstreams__Http__V3__HttpProtocolOptions *hpo =
        (Envoy__Extensions__Upstreams__Http__V3__HttpProtocolOptions *)xv_unpack_only(
            ctx, "upstream_config.typed_config", c->upstream_config->typed_config,
            &envoy__extensions__upstreams__http__v3__http_protocol_options__descriptor,
            "upstream config type");
    if (hpo == NULL)
        return false;
    bool ok = true;
    if (hpo->common_http_protocol_options != NULL &&
        hpo->common_http_protocol_options->idle_timeout != NULL)
        ok = xv_duration(ctx,
                         "upstream_config.typed_config.value.common_http_protocol_options."
                         "idle_timeout",
                         hpo->common_http_protocol_options->idle_timeout, &out->idle_timeout);
    protobuf_c_message_free_unpacked(&hpo->base, NULL);
    return ok;
}

/*
 * A17: a cluster whose health_checks has a grpc_health_check makes the stream mode's
 * subchannels watch grpc.health.v1.Health for its service_name. gRPC takes this from the
 * service config and ignores health_checks; xlb, configured by xDS, takes Envoy's field for it
 * (docs/conformance.md). Other kinds of health check (HTTP, TCP) are ignored, as gRPC ignores
 * them all.
 */
static bool read_health_checks(struct xv_ctx *ctx, const Cluster *c, struct xlb_cluster_config *out)
{
    for (size_t i = 0; i < c->n_health_checks; i++) {
        const Envoy__Config__Core__V3__HealthCheck__GrpcHealthCheck *g =
            c->health_checks[i]->grpc_health_check;
        if (c->health_checks[i]->health_checker_case !=
                ENVOY__CONFIG__CORE__V3__HEALTH_CHECK__HEALTH_CHECKER_GRPC_HEALTH_CHECK ||
            g == NULL)
            continue;
        char path[XV_PATH_MAX];
        xv_pathf(path, "health_checks[%zu].grpc_health_check.service_name", i);
        const char *name = g->service_name != NULL ? g->service_name : "";
        if (strlen(name) > XLB_HEALTH_SERVICE_MAX) {
            xv_error(ctx, path, "%zu bytes: xlb sends service names of at most %u bytes",
                     strlen(name), XLB_HEALTH_SERVICE_MAX);
            return false;
        }
        out->health_check_service = xv_strdup(ctx, path, name);
        return out->health_check_service != NULL;
    }
    return true;
}

int xlb_validate_cluster(const Cluster *msg, struct xlb_cluster_config *out,
                         struct xlb_errors *errs)
{
    return xlb_validate_cluster_with(msg, NULL, out, errs);
}

int xlb_validate_cluster_with(const Cluster *msg, const struct xlb_bootstrap *bootstrap,
                              struct xlb_cluster_config *out, struct xlb_errors *errs)
{
    struct xv_ctx ctx;
    xv_ctx_init(&ctx, errs, "cluster", msg->name);
    ctx.bootstrap = bootstrap;
    memset(out, 0, sizeof(*out));
    out->name = xv_strdup(&ctx, "name", msg->name);
    bool ok = out->name != NULL;
    ok = read_discovery(&ctx, msg, out) && ok;
    ok = xv_cluster_lb(&ctx, msg, out) && ok;
    ok = read_lrs(&ctx, msg, out) && ok;
    read_circuit_breakers(msg, out);
    ok = xv_outlier_detection(&ctx, msg, &out->outlier) && ok;
    read_override_host_status(msg, out);
    ok = read_idle_timeout(&ctx, msg, out) && ok;
    ok = xv_transport_socket(&ctx, msg, &out->upstream_tls) && ok;
    ok = read_health_checks(&ctx, msg, out) && ok;
    if (!ok) {
        xlb_cluster_config_free(out);
        return -1;
    }
    return 0;
}

void xlb_cluster_config_free(struct xlb_cluster_config *config)
{
    free(config->name);
    free(config->eds_service_name);
    free(config->dns_host);
    for (size_t i = 0; i < config->n_aggregate_clusters; i++)
        free(config->aggregate_clusters[i]);
    free(config->aggregate_clusters);
    xlb_upstream_tls_free(&config->upstream_tls);
    free(config->health_check_service);
    memset(config, 0, sizeof(*config));
}
