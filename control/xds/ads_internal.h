/* Private to the ADS client's files. */
#ifndef XLB_ADS_INTERNAL_H
#define XLB_ADS_INTERNAL_H

#include "ads_client.h"
#include "grpc_backoff.h"

#define ADS_PATH "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"

struct ads_type_state {
    char *version; /* last ACKed version_info ("" before any); kept across streams */
    char **names;  /* names subscribed, sorted */
    size_t n_names;
    uint64_t last_ack_ms, last_nack_ms;
    uint64_t acks, nacks; /* sent since start, for metrics */
    char *last_error;
};

struct ads_nack_record {
    uint64_t at_ms;
    enum xlb_xds_type type;
    char *version, *error;
};

/* One connection attempt to one server, with its ADS call. */
struct ads_attempt {
    struct xlb_ads_client *client;
    unsigned server;
    struct xlb_grpc_channel *channel;
    struct xlb_grpc_stream *stream;
    bool got_response;
    bool node_sent;           /* the node goes in the first request of each stream */
    bool sent[XLB_XDS_TYPES]; /* a request of this type went out on this stream */
    /* The nonce of the last response of each type on this stream. Nonces name responses of one
     * stream only, so a new stream starts without any (its first requests carry an empty
     * response_nonce) while the versions, which name configurations, are kept. */
    char *nonce[XLB_XDS_TYPES];
    struct ads_attempt *next_dead; /* waiting to be freed outside channel callbacks */
};

/* Retrying one higher-priority server while on a fallback. */
struct ads_probe {
    struct xlb_ads_client *client;
    unsigned server;
    struct ads_attempt *attempt; /* in progress, or NULL */
    uint64_t timer;              /* before the next attempt, or 0 */
    struct xlb_grpc_backoff backoff;
};

/* A does-not-exist timer of one resource. */
struct ads_timer {
    struct xlb_ads_client *client;
    enum xlb_xds_type type;
    char *name;
    uint64_t id;
    struct ads_timer *next;
};

struct xlb_ads_client {
    struct xlb_loop *loop;
    struct xlb_xds_cache *cache;
    struct xlb_ads_config config;
    xlb_ads_changed_cb changed;
    void *arg;

    struct ads_attempt *current; /* the stream resources come from */
    unsigned server;             /* index of current's server */
    struct ads_attempt *dead;    /* finished attempts, freed by reap_timer */
    uint64_t reap_timer;
    struct xlb_grpc_backoff backoff; /* current's reconnections */
    uint64_t retry_timer;
    uint64_t next_retry_ms;
    /* While on a fallback (A71): every higher-priority server i < server is retried, each with
     * its own backoff, as gRPC keeps a channel to each; the first to answer becomes current. */
    struct ads_probe probes[XLB_ADS_MAX_SERVERS];
    char *last_error;

    struct ads_type_state types[XLB_XDS_TYPES];
    struct ads_timer *timers;
    struct ads_nack_record nacks[XLB_ADS_NACK_HISTORY];
    unsigned n_nacks, next_nack;
};

/* ads_request.c */
int ads_send_request(struct xlb_ads_client *c, struct ads_attempt *a, enum xlb_xds_type type,
                     const char *error);
bool ads_subscription_changed(const struct xlb_ads_client *c, enum xlb_xds_type type);
void ads_take_subscription(struct xlb_ads_client *c, enum xlb_xds_type type);
void ads_free_names(struct ads_type_state *t);

/* ads_response.c */
/* 0, or -1 when the message is not a DiscoveryResponse at all (the stream must end). */
int ads_handle_response(struct xlb_ads_client *c, struct ads_attempt *a, const uint8_t *msg,
                        size_t len);
void ads_start_timers(struct xlb_ads_client *c, enum xlb_xds_type type, bool new_stream);
void ads_cancel_timer(struct xlb_ads_client *c, enum xlb_xds_type type, const char *name);
void ads_cancel_all_timers(struct xlb_ads_client *c);

#endif
