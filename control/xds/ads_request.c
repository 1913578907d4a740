/* DiscoveryRequests: what is subscribed per type, and the messages that say so, ACK or NACK. */
#include <stdlib.h>
#include <string.h>

#include "ads_internal.h"
#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "xlb_const.h"

#define STATUS_INVALID_ARGUMENT 3 /* google.rpc.Code for a NACK's error_detail */

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names the cache wants watched for a type, sorted; *n set. */
static char **watched_names(const struct xlb_ads_client *c, enum xlb_xds_type type, size_t *n)
{
    size_t count = 0;
    for (const struct xlb_xds_resource *r = c->cache->list[type]; r != NULL; r = r->next)
        count += r->watched;
    char **names = calloc(count + 1, sizeof(char *));
    *n = 0;
    if (names == NULL)
        return NULL;
    for (const struct xlb_xds_resource *r = c->cache->list[type]; r != NULL; r = r->next)
        if (r->watched)
            names[(*n)++] = r->name; /* borrowed: the cache outlives the comparison */
    qsort(names, *n, sizeof(char *), compare_names);
    return names;
}

bool ads_subscription_changed(const struct xlb_ads_client *c, enum xlb_xds_type type)
{
    const struct ads_type_state *t = &c->types[type];
    size_t n;
    char **names = watched_names(c, type, &n);
    bool changed = names == NULL || n != t->n_names;
    for (size_t i = 0; !changed && i < n; i++)
        changed = strcmp(names[i], t->names[i]) != 0;
    free(names);
    return changed;
}

void ads_free_names(struct ads_type_state *t)
{
    for (size_t i = 0; i < t->n_names; i++)
        free(t->names[i]);
    free(t->names);
    t->names = NULL;
    t->n_names = 0;
}

void ads_take_subscription(struct xlb_ads_client *c, enum xlb_xds_type type)
{
    struct ads_type_state *t = &c->types[type];
    size_t n;
    char **names = watched_names(c, type, &n);
    ads_free_names(t);
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        names[i] = strdup(names[i]); /* owned from here on */
    t->names = names;
    t->n_names = n;
}

int ads_send_request(struct xlb_ads_client *c, struct ads_attempt *a, enum xlb_xds_type type,
                     const char *error)
{
    struct ads_type_state *t = &c->types[type];
    Envoy__Service__Discovery__V3__DiscoveryRequest req;
    envoy__service__discovery__v3__discovery_request__init(&req);
    Google__Rpc__Status status;
    google__rpc__status__init(&status);
    /* protobuf-c's fields are not const; packing only reads them. */
    req.type_url = XLB_UNCONST(xlb_xds_type_url[type]);
    req.version_info = XLB_UNCONST(t->version ? t->version : "");
    req.response_nonce = XLB_UNCONST(a->nonce[type] ? a->nonce[type] : "");
    req.n_resource_names = t->n_names;
    req.resource_names = t->names;
    if (!a->node_sent)
        req.node = XLB_UNCONST(c->config.node);
    if (error != NULL) {
        status.code = STATUS_INVALID_ARGUMENT;
        status.message = XLB_UNCONST(error);
        req.error_detail = &status;
    }
    size_t len = protobuf_c_message_get_packed_size(&req.base);
    uint8_t *buf = malloc(len ? len : 1);
    if (buf == NULL)
        return -1;
    protobuf_c_message_pack(&req.base, buf);
    int rc = xlb_grpc_stream_send(a->stream, buf, len);
    free(buf);
    if (rc == 0) {
        a->node_sent = true;
        a->sent[type] = true;
    }
    return rc;
}
