/*
 * The LRS client: load reporting as a proxyless gRPC client does it (A27), on one
 * StreamLoadStats call of a ready gRPC channel.
 *
 * - The first LoadStatsRequest of a stream carries the node (with the client feature
 *   "envoy.lrs.supports_send_all_clusters" added when missing) and no stats.
 * - Nothing more is sent until the server's first LoadStatsResponse. From then on, every
 *   `load_reporting_interval` (one-shot timeouts re-armed with the interval of the latest
 *   response) one LoadStatsRequest carries a ClusterStats per reported cluster: the clusters
 *   the server named that have load reporting enabled here, or all of those when it sent
 *   `send_all_clusters`. A new response replaces the set and the interval.
 * - Figures come from a stats source the owner implements (below): cumulative counters. The
 *   client keeps, per cluster, the values it last reported and sends the differences, so that
 *   a report is a delta as LRS wants. That baseline lives in the client, not in the stream: it
 *   survives a reconnect, and it advances only once a report has been queued on a stream, so
 *   nothing is lost or counted twice when a stream dies.
 * - `load_report_interval` of a ClusterStats is the time measured since that cluster's
 *   previous report (or since the client was created, for its first one), not the configured
 *   interval.
 * - A malformed LoadStatsResponse (undecodable, negative or absurd interval) is ignored and
 *   logged; the previous settings stay. An interval below the minimum (1 s by default, 0 and a
 *   missing interval included) is raised to it, as gRPC's C core does (its
 *   GRPC_XDS_MIN_CLIENT_LOAD_REPORTING_INTERVAL_MS is 1000): a server asking for reports many
 *   times a second would turn LRS into a load of its own.
 *
 * When the call ends (the server ended it, or the channel closed), timers stop and on_stopped
 * tells the owner, who starts the client again on its next ready channel.
 *
 * Not done: `report_endpoint_granularity` (figures are per locality; the source has none per
 * endpoint) and load_metric_stats (no ORCA figures in a packet load balancer).
 */
#ifndef XLB_LRS_CLIENT_H
#define XLB_LRS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envoy/config/core/v3/base.pb-c.h"
#include "event_loop.h"
#include "grpc_channel.h"

#define XLB_LRS_PATH             "/envoy.service.load_stats.v3.LoadReportingService/StreamLoadStats"
#define XLB_LRS_FEATURE_SEND_ALL "envoy.lrs.supports_send_all_clusters"
#define XLB_LRS_MIN_INTERVAL_MS  1000ull           /* default floor for the server's interval */
#define XLB_LRS_MAX_INTERVAL_MS  (86400ull * 1000) /* above a day: a broken server, ignored */

/*
 * The stats source. All counters are cumulative since the source started counting the
 * cluster (monotonic), except in_progress, a gauge. Strings and arrays handed out stay valid
 * until the next call into the source.
 *
 * Contract on identity: a cluster is known for as long as enabled_clusters lists it, a
 * locality (region, zone, sub_zone, priority) or drop category for as long as cluster_load
 * lists it. Once unlisted, the client forgets the values it last reported for it; if it comes
 * back, its counters must start again from zero. A counter that goes backwards is taken as
 * restarted from zero (its whole value is reported).
 */
struct xlb_lrs_locality_load {
    const char *region, *zone, *sub_zone; /* NULL reads as "" */
    uint32_t priority;
    uint64_t issued;      /* cumulative: calls started (total_issued_requests) */
    uint64_t successful;  /* cumulative: calls finished OK */
    uint64_t errors;      /* cumulative: calls finished otherwise */
    uint64_t in_progress; /* gauge: calls started and not finished now */
};

struct xlb_lrs_drop_load {
    const char *category; /* a drop_overloads category */
    uint64_t dropped;     /* cumulative */
};

struct xlb_lrs_cluster_load {
    const char *service_name; /* EDS service name; NULL or "" when unset */
    const struct xlb_lrs_locality_load *localities;
    size_t n_localities;
    const struct xlb_lrs_drop_load *drops;
    size_t n_drops;
    uint64_t uncategorized_drops; /* cumulative drops outside any category (circuit breaking) */
};

struct xlb_lrs_source {
    /* The clusters with load reporting enabled (lrs_server: self); sets *names to an array. */
    size_t (*enabled_clusters)(void *arg, const char *const **names);
    /* One cluster's load; 0, or -1 when the source does not know it (it is then skipped). */
    int (*cluster_load)(void *arg, const char *cluster, struct xlb_lrs_cluster_load *out);
    void *arg;
};

struct xlb_lrs_client;

struct xlb_lrs_client_config {
    const Envoy__Config__Core__V3__Node *node; /* copied at creation */
    struct xlb_lrs_source source;
    uint64_t (*now_ms)(void); /* monotonic clock for intervals; NULL: xlb_now_ms */
    uint64_t min_interval_ms; /* floor for the server's interval; 0: XLB_LRS_MIN_INTERVAL_MS */
    /* The call ended (reason says why). The client is idle: start it again on a ready channel,
     * or destroy it; do not destroy the channel from here (it may be inside its callback). */
    void (*on_stopped)(struct xlb_lrs_client *client, const char *reason, void *arg);
    /* Optional: a report with n_clusters ClusterStats was queued (the client may be stopped or
     * destroyed from here). */
    void (*on_report)(struct xlb_lrs_client *client, size_t n_clusters, void *arg);
    void *arg;
};

/* NULL when memory runs out or the config lacks a node or a source. */
struct xlb_lrs_client *xlb_lrs_client_create(struct xlb_loop *loop,
                                             const struct xlb_lrs_client_config *config);
/* Stops without calling on_stopped and frees everything. */
void xlb_lrs_client_destroy(struct xlb_lrs_client *client);

/* Open StreamLoadStats on a ready channel and send the node; 0, or -1 (already running, the
 * channel is not ready, or the first message could not be queued). */
int xlb_lrs_client_start(struct xlb_lrs_client *client, struct xlb_grpc_channel *ch);
/* Cancel the call and its timer, without on_stopped. Call it before destroying the channel
 * the client runs on. The baseline is kept for the next start. */
void xlb_lrs_client_stop(struct xlb_lrs_client *client);
bool xlb_lrs_client_running(const struct xlb_lrs_client *client);

/* For status output: the interval in force (0 before the first response) and reports sent. */
uint64_t xlb_lrs_client_interval_ms(const struct xlb_lrs_client *client);
uint64_t xlb_lrs_client_reports(const struct xlb_lrs_client *client);

#endif
