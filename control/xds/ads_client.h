/*
 * The ADS client: one state-of-the-world StreamAggregatedResources call to the current xDS
 * server, as a proxyless gRPC client runs it (A27, A46, A57, A71):
 *
 * - subscribes to exactly the resources the cache marks `watched`, per type, and re-subscribes
 *   when that set changes;
 * - tracks the version per type and the nonce per type and stream (a new stream's first
 *   requests carry none); ACKs valid responses; NACKs a response with any invalid resource
 *   (previous version, new nonce, an error_detail naming each resource and rule) while still
 *   applying its valid resources (A46); ignores resources it did not ask for;
 * - treats LDS/CDS resources missing from a response as deleted (unless the server was given
 *   ignore_resource_deletion), and starts A57's 15 s does-not-exist timer for each resource
 *   once its request is sent on a connected stream (on a new stream only for resources not
 *   cached);
 * - reopens a stream that ended after a response at once (A57: no failure); after a failed
 *   connection, or a stream that ended before any response, falls back to the next server in
 *   `xds_servers` order at once while some watched resource is not cached, else retries the same
 *   server with gRPC's backoff; while on a fallback, retries every higher-priority server (each
 *   on its own backoff) and returns to the first that delivers a response (A71);
 * - unwraps resources sent in an envoy.service.discovery.v3.Resource (resource-in-sotw).
 */
#ifndef XLB_ADS_CLIENT_H
#define XLB_ADS_CLIENT_H

#include <cjson/cJSON.h>

#include "envoy/config/core/v3/base.pb-c.h"
#include "event_loop.h"
#include "grpc_channel.h"
#include "xds_cache.h"

#define XLB_ADS_DOES_NOT_EXIST_MS 15000 /* A57 */
#define XLB_ADS_MAX_SERVERS       8
#define XLB_ADS_NACK_HISTORY      16

struct xlb_ads_server {
    struct xlb_grpc_target target;
    char uri[300];
    bool ignore_resource_deletion;
};

struct xlb_ads_config {
    unsigned n_servers;
    struct xlb_ads_server servers[XLB_ADS_MAX_SERVERS];
    const Envoy__Config__Core__V3__Node *node; /* sent in the first request of each stream */
    uint64_t does_not_exist_ms;                /* 0: XLB_ADS_DOES_NOT_EXIST_MS */
    uint64_t backoff_seed;
    /* Optional: the current server's channel is ready (ch), or is about to go away (NULL).
     * LRS (lrs_server: self) runs on it. Called from channel callbacks: do not destroy it. */
    void (*on_channel)(struct xlb_grpc_channel *ch, void *arg);
};

struct xlb_ads_client;

/* Called after the cache changed (a response was applied or a resource timed out). */
typedef void (*xlb_ads_changed_cb)(void *arg);

struct xlb_ads_client *xlb_ads_client_create(struct xlb_loop *loop, struct xlb_xds_cache *cache,
                                             const struct xlb_ads_config *config,
                                             xlb_ads_changed_cb changed, void *arg);
void xlb_ads_client_destroy(struct xlb_ads_client *client);

/* The cache's `watched` flags changed: subscribe accordingly. */
void xlb_ads_client_update_watches(struct xlb_ads_client *client);

/* For `xlbctl xds`: servers, stream state, backoff (retry_in_s), the higher-priority servers
 * being retried (probing), per-type version/nonce/ACK/NACK, and the NACK history. */
cJSON *xlb_ads_client_status(const struct xlb_ads_client *client);

/* For metrics: the server in use, whether its stream is open and has answered, and the
 * ACKs and NACKs sent per resource type since start. */
struct xlb_ads_counters {
    const char *server;
    bool connected;
    uint64_t acks[XLB_XDS_TYPES], nacks[XLB_XDS_TYPES];
};
void xlb_ads_client_counters(const struct xlb_ads_client *client, struct xlb_ads_counters *out);

#endif
