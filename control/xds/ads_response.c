/*
 * A DiscoveryResponse applied to the cache: every resource decoded (unwrapped first when the
 * server sent it in a Resource wrapper), checked against what was asked for, validated; valid
 * ones applied even when others are not (A46); the response ACKed or NACKed as a whole. And A57's
 * does-not-exist timers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ads_internal.h"
#include "envoy/config/cluster/v3/cluster.pb-c.h"
#include "envoy/config/endpoint/v3/endpoint.pb-c.h"
#include "envoy/config/listener/v3/listener.pb-c.h"
#include "envoy/config/route/v3/route.pb-c.h"
#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "xlb_log.h"

static const ProtobufCMessageDescriptor *const descriptors[XLB_XDS_TYPES] = {
    [XLB_XDS_LDS] = &envoy__config__listener__v3__listener__descriptor,
    [XLB_XDS_RDS] = &envoy__config__route__v3__route_configuration__descriptor,
    [XLB_XDS_CDS] = &envoy__config__cluster__v3__cluster__descriptor,
    [XLB_XDS_EDS] = &envoy__config__endpoint__v3__cluster_load_assignment__descriptor,
};

static const char *resource_name(enum xlb_xds_type type, const ProtobufCMessage *m)
{
    switch (type) {
    case XLB_XDS_LDS:
        return ((const Envoy__Config__Listener__V3__Listener *)m)->name;
    case XLB_XDS_RDS:
        return ((const Envoy__Config__Route__V3__RouteConfiguration *)m)->name;
    case XLB_XDS_CDS:
        return ((const Envoy__Config__Cluster__V3__Cluster *)m)->name;
    default:
        return ((const Envoy__Config__Endpoint__V3__ClusterLoadAssignment *)m)->cluster_name;
    }
}

/* ---- does-not-exist timers ---- */

static void on_does_not_exist(void *arg)
{
    struct ads_timer *timer = arg;
    struct xlb_ads_client *c = timer->client;
    struct xlb_xds_resource *res = xlb_xds_cache_find(c->cache, timer->type, timer->name);
    ads_cancel_timer(c, timer->type, timer->name); /* frees timer */
    if (res != NULL && res->watched && !res->has_value && res->state == XLB_RES_REQUESTED) {
        XLB_LOG(WARNING, XDS, "%s \"%s\" does not exist (no answer in %" PRIu64 " ms)",
                xlb_xds_type_name[res->type], res->name, c->config.does_not_exist_ms);
        xlb_xds_cache_does_not_exist(c->cache, res);
        c->changed(c->arg);
    }
}

static bool timer_running(const struct xlb_ads_client *c, enum xlb_xds_type type, const char *name)
{
    for (const struct ads_timer *t = c->timers; t != NULL; t = t->next)
        if (t->type == type && strcmp(t->name, name) == 0)
            return true;
    return false;
}

/* After a request of this type went out on a connected stream: time every resource that is
 * not cached (A57: on a new stream too, only those). */
void ads_start_timers(struct xlb_ads_client *c, enum xlb_xds_type type, bool new_stream)
{
    for (struct xlb_xds_resource *r = c->cache->list[type]; r != NULL; r = r->next) {
        if (!r->watched || r->has_value || r->state != XLB_RES_REQUESTED ||
            timer_running(c, type, r->name))
            continue;
        struct ads_timer *t = calloc(1, sizeof(*t));
        if (t == NULL || (t->name = strdup(r->name)) == NULL) {
            free(t);
            continue;
        }
        t->client = c;
        t->type = type;
        t->id = xlb_loop_add_timeout(c->loop, c->config.does_not_exist_ms, on_does_not_exist, t);
        t->next = c->timers;
        c->timers = t;
    }
}

void ads_cancel_timer(struct xlb_ads_client *c, enum xlb_xds_type type, const char *name)
{
    for (struct ads_timer **link = &c->timers; *link != NULL; link = &(*link)->next) {
        struct ads_timer *t = *link;
        if (t->type != type || strcmp(t->name, name) != 0)
            continue;
        *link = t->next;
        xlb_loop_cancel(c->loop, t->id);
        free(t->name);
        free(t);
        return;
    }
}

void ads_cancel_all_timers(struct xlb_ads_client *c)
{
    while (c->timers != NULL)
        ads_cancel_timer(c, c->timers->type, c->timers->name);
}

/* ---- responses ---- */

static bool seen_before(char **seen, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(seen[i], name) == 0)
            return true;
    return false;
}

/* xds.config.resource-in-sotw: a server may send each resource wrapped in a Resource message
 * (the name there takes precedence over the resource's own, as in gRPC). */
#define RESOURCE_WRAPPER_URL "type.googleapis.com/envoy.service.discovery.v3.Resource"

/*
 * The Any that holds the resource itself: any, or the one inside its wrapper. A wrapper is
 * unpacked into *wrapper (the caller frees it) and its name, when set, goes to *name. NULL,
 * with the reason in errs, when the wrapper cannot be used (*name may still be set).
 */
static const Google__Protobuf__Any *unwrap(enum xlb_xds_type type, const Google__Protobuf__Any *any,
                                           const char *where,
                                           Envoy__Service__Discovery__V3__Resource **wrapper,
                                           const char **name, struct xlb_errors *errs)
{
    *wrapper = NULL;
    *name = NULL;
    if (strcmp(any->type_url, RESOURCE_WRAPPER_URL) != 0)
        return any;
    *wrapper =
        envoy__service__discovery__v3__resource__unpack(NULL, any->value.len, any->value.data);
    if (*wrapper == NULL) {
        xlb_errors_add(errs, where, "cannot be decoded as a Resource wrapper");
        return NULL;
    }
    if ((*wrapper)->name[0] != '\0')
        *name = (*wrapper)->name;
    const Google__Protobuf__Any *inner = (*wrapper)->resource;
    if (inner == NULL) {
        xlb_errors_add(errs, where, "Resource wrapper without a resource");
        return NULL;
    }
    if (strcmp(inner->type_url, xlb_xds_type_url[type]) != 0) {
        xlb_errors_add(errs, where, "Resource wrapper holds type %s in a response of type %s",
                       inner->type_url[0] ? inner->type_url : "(none)", xlb_xds_type_url[type]);
        return NULL;
    }
    return inner;
}

/* The decoded resource m, named name: applied when it was asked for (its name is then added to
 * seen), else freed. */
static void apply_decoded(struct xlb_ads_client *c, enum xlb_xds_type type, const char *where,
                          ProtobufCMessage *m, const char *name, const char *version, char **seen,
                          size_t *n_seen, struct xlb_errors *errs)
{
    struct xlb_xds_resource *res = name[0] ? xlb_xds_cache_find(c->cache, type, name) : NULL;
    if (name[0] == '\0') {
        xlb_errors_add(errs, where, "%s without a name", xlb_xds_type_name[type]);
    } else if (seen_before(seen, *n_seen, name)) {
        xlb_errors_add(errs, where, "%s \"%s\" appears twice in one response",
                       xlb_xds_type_name[type], name);
    } else if (res != NULL && res->watched) {
        seen[(*n_seen)++] = res->name;
        ads_cancel_timer(c, type, name);
        xlb_xds_cache_update(c->cache, res, m, version, false, errs); /* takes m */
        return;
    }
    /* Not asked for (ignored, as gRPC does), or an error already reported. */
    protobuf_c_message_free_unpacked(m, NULL);
}

/* One resource of the response, plain or wrapped. */
static void apply_resource(struct xlb_ads_client *c, enum xlb_xds_type type, size_t index,
                           const Google__Protobuf__Any *any, const char *version, char **seen,
                           size_t *n_seen, struct xlb_errors *errs)
{
    char where[32];
    snprintf(where, sizeof(where), "resources[%zu]", index);
    Envoy__Service__Discovery__V3__Resource *wrapper;
    const char *name;
    any = unwrap(type, any, where, &wrapper, &name, errs);
    if (any == NULL) {
        /* Reported by unwrap. A rejected resource whose name is known keeps its previous value,
         * as one that fails validation does: not deleted as absent from LDS/CDS. */
        struct xlb_xds_resource *res = name ? xlb_xds_cache_find(c->cache, type, name) : NULL;
        if (res != NULL && res->watched && !seen_before(seen, *n_seen, name))
            seen[(*n_seen)++] = res->name;
    } else if (strcmp(any->type_url, xlb_xds_type_url[type]) != 0) {
        xlb_errors_add(errs, where, "type %s in a response of type %s", any->type_url,
                       xlb_xds_type_url[type]);
    } else {
        ProtobufCMessage *m =
            protobuf_c_message_unpack(descriptors[type], NULL, any->value.len, any->value.data);
        if (m == NULL)
            xlb_errors_add(errs, where, "cannot be decoded as %s", xlb_xds_type_name[type]);
        else
            apply_decoded(c, type, where, m, name ? name : resource_name(type, m), version, seen,
                          n_seen, errs);
    }
    if (wrapper != NULL)
        envoy__service__discovery__v3__resource__free_unpacked(wrapper, NULL);
}

/* State of the world for LDS and CDS: a watched resource missing from the answer is gone. */
static void apply_deletions(struct xlb_ads_client *c, enum xlb_xds_type type, char **seen,
                            size_t n_seen)
{
    if (type != XLB_XDS_LDS && type != XLB_XDS_CDS)
        return;
    bool keep = c->config.servers[c->server].ignore_resource_deletion;
    for (struct xlb_xds_resource *r = c->cache->list[type]; r != NULL; r = r->next) {
        if (!r->watched || r->state == XLB_RES_STATIC || seen_before(seen, n_seen, r->name))
            continue;
        if (keep && r->has_value) {
            XLB_LOG(WARNING, XDS,
                    "%s \"%s\" deleted by the server; kept "
                    "(ignore_resource_deletion)",
                    xlb_xds_type_name[type], r->name);
            continue;
        }
        ads_cancel_timer(c, type, r->name);
        if (r->state != XLB_RES_DOES_NOT_EXIST)
            xlb_xds_cache_does_not_exist(c->cache, r);
    }
}

static void record_nack(struct xlb_ads_client *c, enum xlb_xds_type type, const char *version,
                        const char *error)
{
    struct ads_nack_record *n = &c->nacks[c->next_nack];
    free(n->version);
    free(n->error);
    n->at_ms = xlb_now_ms();
    n->type = type;
    n->version = strdup(version);
    n->error = strdup(error);
    c->next_nack = (c->next_nack + 1) % XLB_ADS_NACK_HISTORY;
    if (c->n_nacks < XLB_ADS_NACK_HISTORY)
        c->n_nacks++;
    struct ads_type_state *t = &c->types[type];
    free(t->last_error);
    t->last_error = strdup(error);
    t->last_nack_ms = n->at_ms;
    t->nacks++;
}

int ads_handle_response(struct xlb_ads_client *c, struct ads_attempt *a, const uint8_t *msg,
                        size_t len)
{
    Envoy__Service__Discovery__V3__DiscoveryResponse *resp =
        envoy__service__discovery__v3__discovery_response__unpack(NULL, len, msg);
    if (resp == NULL)
        return -1;
    int type = xlb_xds_type_by_url(resp->type_url);
    if (type < 0) {
        XLB_LOG(WARNING, XDS, "response of unknown type %s ignored", resp->type_url);
        envoy__service__discovery__v3__discovery_response__free_unpacked(resp, NULL);
        return 0;
    }
    struct ads_type_state *t = &c->types[type];
    free(a->nonce[type]);
    a->nonce[type] = strdup(resp->nonce);

    struct xlb_errors errs = {0};
    char **seen = calloc(resp->n_resources + 1, sizeof(char *));
    size_t n_seen = 0;
    for (size_t i = 0; seen != NULL && i < resp->n_resources; i++)
        apply_resource(c, type, i, resp->resources[i], resp->version_info, seen, &n_seen, &errs);
    apply_deletions(c, type, seen, n_seen);
    free(seen);

    if (errs.n + errs.dropped > 0) {
        char *error = xlb_errors_join(&errs, 0);
        XLB_LOG(WARNING, XDS, "NACK %s version %s: %s", xlb_xds_type_name[type], resp->version_info,
                error ? error : "?");
        record_nack(c, type, resp->version_info, error ? error : "out of memory");
        ads_send_request(c, a, type, error ? error : "out of memory");
        free(error);
    } else {
        free(t->version);
        t->version = strdup(resp->version_info);
        t->last_ack_ms = xlb_now_ms();
        t->acks++;
        ads_send_request(c, a, type, NULL);
    }
    xlb_errors_free(&errs);
    envoy__service__discovery__v3__discovery_response__free_unpacked(resp, NULL);
    c->changed(c->arg);
    return 0;
}
