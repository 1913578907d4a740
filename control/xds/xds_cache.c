#include "xds_cache.h"

#include <stdlib.h>
#include <string.h>

const char *const xlb_xds_type_url[XLB_XDS_TYPES] = {
    [XLB_XDS_LDS] = "type.googleapis.com/envoy.config.listener.v3.Listener",
    [XLB_XDS_RDS] = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
    [XLB_XDS_CDS] = "type.googleapis.com/envoy.config.cluster.v3.Cluster",
    [XLB_XDS_EDS] = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
};

const char *const xlb_xds_type_name[XLB_XDS_TYPES] = {
    [XLB_XDS_LDS] = "listener",
    [XLB_XDS_RDS] = "route_configuration",
    [XLB_XDS_CDS] = "cluster",
    [XLB_XDS_EDS] = "cluster_load_assignment",
};

int xlb_xds_type_by_url(const char *type_url)
{
    for (int t = 0; t < XLB_XDS_TYPES; t++)
        if (strcmp(type_url, xlb_xds_type_url[t]) == 0)
            return t;
    return -1;
}

/* FNV-1a over the name. */
static unsigned bucket_of(const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % XLB_XDS_CACHE_BUCKETS;
}

static void unindex(struct xlb_xds_cache *cache, struct xlb_xds_resource *res)
{
    struct xlb_xds_resource **link = &cache->index[res->type][bucket_of(res->name)];
    while (*link != NULL && *link != res)
        link = &(*link)->hash_next;
    if (*link == res)
        *link = res->hash_next;
}

void xlb_xds_cache_init(struct xlb_xds_cache *cache)
{
    memset(cache, 0, sizeof(*cache));
}

static void free_value(struct xlb_xds_resource *res)
{
    if (!res->has_value)
        return;
    switch (res->type) {
    case XLB_XDS_LDS:
        xlb_listener_config_free(&res->value.listener);
        break;
    case XLB_XDS_RDS:
        xlb_route_config_free(&res->value.route);
        break;
    case XLB_XDS_CDS:
        xlb_cluster_config_free(&res->value.cluster);
        break;
    default:
        xlb_endpoint_config_free(&res->value.endpoints);
        break;
    }
    if (res->message != NULL)
        protobuf_c_message_free_unpacked(res->message, NULL);
    res->message = NULL;
    res->has_value = false;
}

static void free_resource(struct xlb_xds_resource *res)
{
    free_value(res);
    free(res->name);
    free(res->version);
    free(res->error);
    free(res);
}

void xlb_xds_cache_free(struct xlb_xds_cache *cache)
{
    for (int t = 0; t < XLB_XDS_TYPES; t++) {
        while (cache->list[t] != NULL) {
            struct xlb_xds_resource *res = cache->list[t];
            cache->list[t] = res->next;
            free_resource(res);
        }
    }
}

void xlb_xds_cache_drop_static(struct xlb_xds_cache *cache)
{
    for (int t = 0; t < XLB_XDS_TYPES; t++) {
        struct xlb_xds_resource **link = &cache->list[t];
        while (*link != NULL) {
            struct xlb_xds_resource *res = *link;
            if (res->state != XLB_RES_STATIC) {
                link = &res->next;
                continue;
            }
            *link = res->next;
            unindex(cache, res);
            free_resource(res);
            cache->changes++;
        }
    }
}

struct xlb_xds_resource *xlb_xds_cache_find(const struct xlb_xds_cache *cache,
                                            enum xlb_xds_type type, const char *name)
{
    for (struct xlb_xds_resource *res = cache->index[type][bucket_of(name)]; res != NULL;
         res = res->hash_next)
        if (strcmp(res->name, name) == 0)
            return res;
    return NULL;
}

struct xlb_xds_resource *xlb_xds_cache_get(struct xlb_xds_cache *cache, enum xlb_xds_type type,
                                           const char *name)
{
    struct xlb_xds_resource *res = xlb_xds_cache_find(cache, type, name);
    if (res != NULL)
        return res;
    res = calloc(1, sizeof(*res));
    if (res == NULL || (res->name = strdup(name)) == NULL) {
        free(res);
        return NULL;
    }
    res->type = type;
    res->state = XLB_RES_REQUESTED;
    res->next = cache->list[type];
    cache->list[type] = res;
    unsigned b = bucket_of(name);
    res->hash_next = cache->index[type][b];
    cache->index[type][b] = res;
    cache->changes++;
    return res;
}

static int validate(const struct xlb_xds_cache *cache, enum xlb_xds_type type,
                    const ProtobufCMessage *msg, void *value, struct xlb_errors *errs)
{
    switch (type) {
    case XLB_XDS_LDS:
        return xlb_validate_listener((const Envoy__Config__Listener__V3__Listener *)msg, value,
                                     errs);
    case XLB_XDS_RDS:
        return xlb_validate_route_config((const Envoy__Config__Route__V3__RouteConfiguration *)msg,
                                         value, errs);
    case XLB_XDS_CDS:
        return xlb_validate_cluster_with((const Envoy__Config__Cluster__V3__Cluster *)msg,
                                         cache->bootstrap, value, errs);
    default:
        return xlb_validate_endpoints(
            (const Envoy__Config__Endpoint__V3__ClusterLoadAssignment *)msg, value, errs);
    }
}

int xlb_xds_cache_update(struct xlb_xds_cache *cache, struct xlb_xds_resource *res,
                         ProtobufCMessage *msg, const char *version, bool is_static,
                         struct xlb_errors *errs)
{
    __typeof__(res->value) fresh;
    memset(&fresh, 0, sizeof(fresh));
    unsigned before = errs->n;
    /* Unique across the cache's life, so a resource dropped and loaded again (a reload of
     * static resources) never repeats a fingerprint the dependency manager saw before. */
    res->changes = ++cache->changes;
    if (validate(cache, res->type, msg, &fresh, errs) != 0) {
        free(res->error);
        res->error = xlb_errors_join(errs, before);
        res->state = XLB_RES_NACKED;
        protobuf_c_message_free_unpacked(msg, NULL);
        return -1;
    }
    free_value(res);
    res->value = fresh;
    res->message = msg;
    res->has_value = true;
    res->state = is_static ? XLB_RES_STATIC : XLB_RES_ACKED;
    free(res->error);
    res->error = NULL;
    free(res->version);
    res->version = version ? strdup(version) : NULL;
    return 0;
}

void xlb_xds_cache_forget(struct xlb_xds_cache *cache, struct xlb_xds_resource *res)
{
    if (res->state == XLB_RES_STATIC)
        return;
    free_value(res);
    free(res->version);
    free(res->error);
    res->version = res->error = NULL;
    res->state = XLB_RES_REQUESTED;
    res->changes = ++cache->changes;
}

void xlb_xds_cache_does_not_exist(struct xlb_xds_cache *cache, struct xlb_xds_resource *res)
{
    if (res->state == XLB_RES_STATIC)
        return;
    free_value(res);
    res->state = XLB_RES_DOES_NOT_EXIST;
    /* Unique across the cache's life, so a resource dropped and loaded again (a reload of
     * static resources) never repeats a fingerprint the dependency manager saw before. */
    res->changes = ++cache->changes;
}
