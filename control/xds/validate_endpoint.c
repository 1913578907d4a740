/*
 * LocalityLbEndpoints and LbEndpoint as a gRPC client reads them (A27, A55, A61, A76): a
 * weighted locality, endpoints with IP literal addresses, health status, weight and hash key.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "validate_endpoint_internal.h"
#include "xlb_ring_hash.h"

typedef Envoy__Config__Endpoint__V3__LbEndpoint LbEndpoint;
typedef Envoy__Config__Endpoint__V3__LocalityLbEndpoints LocalityLbEndpoints;

static bool read_address(struct xv_ctx *ctx, const char *path,
                         const Envoy__Config__Core__V3__Address *a, struct xlb_host_port *out)
{
    char spath[XV_PATH_MAX], child[XV_PATH_MAX];
    if (a == NULL) {
        xv_error(ctx, path, "field not present");
        return false;
    }
    xv_key(spath, path, "socket_address");
    const Envoy__Config__Core__V3__SocketAddress *sa = a->socket_address;
    if (sa == NULL) {
        xv_error(ctx, spath, "field not present");
        return false;
    }
    bool ok = true;
    xv_key(child, spath, "address");
    if (xlb_addr_parse(sa->address, &out->addr) != 0) {
        xv_error(ctx, child, "\"%.64s\" is not an IPv4 or IPv6 address", sa->address);
        ok = false;
    }
    ok &= xv_port_value(ctx, spath, sa, &out->port);
    return ok;
}

static bool read_addresses(struct xv_ctx *ctx, const char *path,
                           const Envoy__Config__Endpoint__V3__Endpoint *e,
                           struct xlb_eds_endpoint *out)
{
    char child[XV_PATH_MAX];
    out->addresses = xv_calloc(ctx, path, 1 + e->n_additional_addresses, sizeof(*out->addresses));
    if (out->addresses == NULL)
        return false;
    xv_key(child, path, "address");
    bool ok = read_address(ctx, child, e->address, &out->addresses[0]);
    for (size_t k = 0; k < e->n_additional_addresses; k++) {
        char apath[XV_PATH_MAX];
        xv_pathf(apath, "%s.additional_addresses[%zu].address", path, k);
        ok =
            read_address(ctx, apath, e->additional_addresses[k]->address, &out->addresses[1 + k]) &&
            ok;
    }
    out->n_addresses = (uint32_t)(1 + e->n_additional_addresses);
    return ok;
}

/*
 * A76: the endpoint's place on a ring hash (or Maglev) ring comes from its metadata's
 * "envoy.lb" "hash_key" when that is a non-empty string, as Envoy reads it; anything else is
 * no key (the address is hashed), as gRPC reads it. GRPC_XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT
 * set to true ignores the key, gRPC's way back for control planes that set it for other ends.
 */
static const char *metadata_hash_key(const Envoy__Config__Core__V3__Metadata *md)
{
    const char *key = NULL;
    for (size_t i = 0; md != NULL && i < md->n_filter_metadata; i++) {
        const Envoy__Config__Core__V3__Metadata__FilterMetadataEntry *f = md->filter_metadata[i];
        if (f->key == NULL || strcmp(f->key, "envoy.lb") != 0 || f->value == NULL)
            continue;
        key = NULL; /* a later entry for the same filter replaces an earlier one, as in a map */
        for (size_t j = 0; j < f->value->n_fields; j++) {
            const Google__Protobuf__Struct__FieldsEntry *v = f->value->fields[j];
            if (v->key != NULL && strcmp(v->key, "hash_key") == 0)
                key = v->value != NULL &&
                              v->value->kind_case == GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE
                          ? v->value->string_value
                          : NULL;
        }
    }
    return key != NULL && key[0] != '\0' ? key : NULL;
}

static bool hash_keys_ignored(void)
{
    const char *v = getenv("GRPC_XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT");
    return v != NULL && strcasecmp(v, "true") == 0;
}

static bool read_hash_key(struct xv_ctx *ctx, const char *path, const LbEndpoint *lbe,
                          struct xlb_eds_endpoint *out)
{
    const char *key = hash_keys_ignored() ? NULL : metadata_hash_key(lbe->metadata);
    if (key == NULL)
        return true;
    char child[XV_PATH_MAX];
    xv_key(child, path, "metadata.filter_metadata[envoy.lb].hash_key");
    size_t len = strlen(key);
    if (len > XLB_RING_HASH_MAX_KEY) {
        xv_error(ctx, child, "%zu bytes: xlb places keys of at most %d bytes on its rings", len,
                 XLB_RING_HASH_MAX_KEY);
        return false;
    }
    out->hash_key = xv_strdup(ctx, child, key);
    return out->hash_key != NULL;
}

/* Returns 1 when kept, 0 when gRPC ignores it (its health status), -1 on an error. */
static int read_endpoint(struct xv_ctx *ctx, const char *path, const LbEndpoint *lbe,
                         struct xlb_eds_endpoint *out)
{
    int status = (int)lbe->health_status;
    /* UNHEALTHY, TIMEOUT, DEGRADED and unknown values: never picked, never overridden. */
    if (status != XLB_HEALTH_UNKNOWN && status != XLB_HEALTH_HEALTHY &&
        status != XLB_HEALTH_DRAINING)
        return 0;
    out->health = (enum xlb_health_status)status;
    char child[XV_PATH_MAX];
    bool ok = true;
    out->weight = 1;
    if (lbe->load_balancing_weight != NULL) {
        out->weight = lbe->load_balancing_weight->value;
        if (out->weight == 0) {
            xv_key(child, path, "load_balancing_weight");
            xv_error(ctx, child, "must be greater than 0");
            ok = false;
        }
    }
    xv_key(child, path, "endpoint");
    if (lbe->host_identifier_case !=
        ENVOY__CONFIG__ENDPOINT__V3__LB_ENDPOINT__HOST_IDENTIFIER_ENDPOINT) {
        xv_error(ctx, child, "field not present");
        return -1;
    }
    ok = read_addresses(ctx, child, lbe->endpoint, out) && ok;
    ok = read_hash_key(ctx, path, lbe, out) && ok;
    return ok ? 1 : -1;
}

static bool read_endpoints(struct xv_ctx *ctx, const char *path, const LocalityLbEndpoints *msg,
                           struct xlb_eds_locality *out)
{
    char epath[XV_PATH_MAX];
    xv_key(epath, path, "lb_endpoints");
    out->endpoints = xv_calloc(ctx, epath, msg->n_lb_endpoints, sizeof(*out->endpoints));
    if (out->endpoints == NULL)
        return false;
    bool ok = true;
    uint64_t sum = 0;
    for (size_t j = 0; j < msg->n_lb_endpoints; j++) {
        char ipath[XV_PATH_MAX];
        xv_idx(ipath, epath, j);
        struct xlb_eds_endpoint *slot = &out->endpoints[out->n_endpoints];
        int kept = read_endpoint(ctx, ipath, msg->lb_endpoints[j], slot);
        /* Counted when it failed too, so that free() releases its addresses. */
        if (kept != 0)
            out->n_endpoints++;
        if (kept == 1)
            sum += slot->weight;
        ok = ok && kept >= 0;
    }
    if (ok && sum > UINT32_MAX) {
        xv_error(ctx, epath, "sum of endpoint weights %llu exceeds uint32 max",
                 (unsigned long long)sum);
        ok = false;
    }
    return ok;
}

int xv_locality(struct xv_ctx *ctx, const char *path, const LocalityLbEndpoints *msg,
                struct xlb_eds_locality *out, uint32_t *priority)
{
    /* A locality without weight gets no traffic: gRPC drops it before looking further. */
    if (msg->load_balancing_weight == NULL || msg->load_balancing_weight->value == 0)
        return 0;
    out->weight = msg->load_balancing_weight->value;
    *priority = msg->priority;
    char child[XV_PATH_MAX];
    xv_key(child, path, "locality");
    if (msg->locality == NULL) {
        xv_error(ctx, child, "field not present");
        return -1;
    }
    out->region = xv_strdup(ctx, child, msg->locality->region);
    out->zone = xv_strdup(ctx, child, msg->locality->zone);
    out->sub_zone = xv_strdup(ctx, child, msg->locality->sub_zone);
    if (out->region == NULL || out->zone == NULL || out->sub_zone == NULL)
        return -1;
    return read_endpoints(ctx, path, msg, out) ? 1 : -1;
}

void xv_locality_free(struct xlb_eds_locality *loc)
{
    free(loc->region);
    free(loc->zone);
    free(loc->sub_zone);
    for (size_t j = 0; j < loc->n_endpoints; j++) {
        free(loc->endpoints[j].addresses);
        free(loc->endpoints[j].hash_key);
    }
    free(loc->endpoints);
    memset(loc, 0, sizeof(*loc));
}
