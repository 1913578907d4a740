/*
 * The LRS client's parts that need neither a network nor a loop, so that unit tests can drive
 * them with a fake stats source and a virtual clock: reading a LoadStatsResponse, packing the
 * first request, and building reports as deltas against the last reported baseline.
 */
#ifndef XLB_LRS_INTERNAL_H
#define XLB_LRS_INTERNAL_H

#include <protobuf-c/protobuf-c.h>

#include "lrs_client.h"

/* ---- lrs_response.c: what the server asks for ---- */

struct xlb_lrs_settings {
    bool send_all;
    char **clusters; /* sorted, unique, no empty names; unused when send_all */
    size_t n_clusters;
    uint64_t interval_ms; /* at least the minimum */
    bool clamped;         /* the server's interval was raised to the minimum */
};

/* Read a LoadStatsResponse. 0 with *out filled (free with xlb_lrs_settings_free), or -1 with
 * the reason in why and *out untouched. */
int xlb_lrs_response_parse(const uint8_t *msg, size_t len, uint64_t min_interval_ms,
                           struct xlb_lrs_settings *out, char *why, size_t why_len);
void xlb_lrs_settings_free(struct xlb_lrs_settings *settings);
/* True when the settings name the cluster (always, with send_all). */
bool xlb_lrs_settings_wants(const struct xlb_lrs_settings *settings, const char *cluster);

/* Pack a message into a fresh buffer (free it); 0 or -1. */
int xlb_lrs_pack(const ProtobufCMessage *msg, uint8_t **buf, size_t *len);
/* The first LoadStatsRequest of a stream: the node, with XLB_LRS_FEATURE_SEND_ALL added when
 * it is not among its client features, and no stats. */
int xlb_lrs_initial_request(const Envoy__Config__Core__V3__Node *node, uint8_t **buf, size_t *len);

/* ---- lrs_baseline.c: what was last reported, per cluster ---- */

struct xlb_lrs_locality_mark {
    char *region, *zone, *sub_zone;
    uint32_t priority;
    uint64_t issued, successful, errors; /* cumulative values as reported */
};

struct xlb_lrs_drop_mark {
    char *category;
    uint64_t dropped;
};

struct xlb_lrs_cluster_mark {
    char *name;
    char *service_name;
    uint64_t reported_ms; /* when it was reported */
    struct xlb_lrs_locality_mark *localities;
    size_t n_localities;
    struct xlb_lrs_drop_mark *drops;
    size_t n_drops;
    uint64_t uncategorized_drops;
};

/* Cluster marks sorted by name, and the time reports count from for a cluster never
 * reported. */
struct xlb_lrs_baseline {
    struct xlb_lrs_cluster_mark *clusters;
    size_t n_clusters, cap;
    uint64_t start_ms;
};

void xlb_lrs_baseline_init(struct xlb_lrs_baseline *b, uint64_t start_ms);
void xlb_lrs_baseline_free(struct xlb_lrs_baseline *b);
const struct xlb_lrs_cluster_mark *xlb_lrs_baseline_find(const struct xlb_lrs_baseline *b,
                                                         const char *name);
/* Forget the clusters not among names (the source no longer lists them). */
void xlb_lrs_baseline_prune(struct xlb_lrs_baseline *b, const char *const *names, size_t n);
/* Make room for n more clusters, so that the puts of a commit cannot fail; 0 or -1. */
int xlb_lrs_baseline_reserve(struct xlb_lrs_baseline *b, size_t n);
/* Take over mark (its contents, which must be heap-owned), replacing any mark of that name;
 * the room must have been reserved. */
void xlb_lrs_baseline_put(struct xlb_lrs_baseline *b, struct xlb_lrs_cluster_mark *mark);
void xlb_lrs_cluster_mark_free(struct xlb_lrs_cluster_mark *mark);

/* ---- lrs_report.c: one LoadStatsRequest of deltas ---- */

struct xlb_lrs_delta; /* per cluster: the figures of one report */

struct xlb_lrs_report {
    uint8_t *buf; /* the packed LoadStatsRequest */
    size_t len;
    size_t n_clusters;                  /* ClusterStats in it (0: nothing to send) */
    struct xlb_lrs_cluster_mark *marks; /* the baseline once committed, one per cluster */
    struct xlb_lrs_delta *deltas;
};

/*
 * Build the report due at now_ms for the clusters the settings and the source agree on. The
 * baseline is pruned of clusters the source dropped, and otherwise left alone: commit the
 * report once it is queued, or discard it; change nothing in between. 0, or -1 when memory ran
 * out.
 */
int xlb_lrs_report_build(struct xlb_lrs_baseline *b, const struct xlb_lrs_source *source,
                         const struct xlb_lrs_settings *settings, uint64_t now_ms,
                         struct xlb_lrs_report *out);
/* Advance the baseline to what the report said (room was reserved by the build, so this
 * cannot fail), and free the report. */
void xlb_lrs_report_commit(struct xlb_lrs_baseline *b, struct xlb_lrs_report *report);
void xlb_lrs_report_discard(struct xlb_lrs_report *report);

/* Delta of a cumulative counter; a counter below its baseline restarted from zero. */
static inline uint64_t xlb_lrs_delta(uint64_t now, uint64_t last)
{
    return now >= last ? now - last : now;
}

#endif
