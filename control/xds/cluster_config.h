/*
 * A validated Cluster (CDS) as a gRPC client reads it: A27 (EDS, lb_policy, lrs_server, circuit
 * breakers), A37 (LOGICAL_DNS and aggregate clusters), A42 (ring hash), A50 (outlier
 * detection), A55/A60 (override_host_status), A75 (idle_timeout), A52 (load_balancing_policy).
 */
#ifndef XLB_XDS_CLUSTER_CONFIG_H
#define XLB_XDS_CLUSTER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envoy/config/cluster/v3/cluster.pb-c.h"
#include "json_read.h"
#include "xds_types.h"
#include "xlb_limits.h"
#include "xlb_ring_hash.h"
#include "xlb_tls_client.h"
#include "xlb_wrr.h"

enum xlb_cluster_type {
    XLB_CLUSTER_EDS,
    XLB_CLUSTER_LOGICAL_DNS,
    XLB_CLUSTER_AGGREGATE,
};

enum xlb_lb_policy {
    XLB_LB_ROUND_ROBIN, /* wrr_locality over round_robin */
    XLB_LB_RING_HASH,
    XLB_LB_MAGLEV,        /* an xlb extension: gRPC clients refuse it (lb-algorithms.md) */
    XLB_LB_LEAST_REQUEST, /* A48, per locality (under wrr_locality) */
    XLB_LB_PICK_FIRST,    /* A62, per priority over its flattened address list */
    XLB_LB_WRR,           /* A58 client_side_weighted_round_robin, per locality */
};

/* "round_robin", "ring_hash", "maglev", "least_request", "pick_first",
 * "weighted_round_robin" (xlbctl clusters). */
static inline const char *xlb_lb_policy_name(enum xlb_lb_policy policy)
{
    return policy == XLB_LB_RING_HASH       ? "ring_hash"
           : policy == XLB_LB_MAGLEV        ? "maglev"
           : policy == XLB_LB_LEAST_REQUEST ? "least_request"
           : policy == XLB_LB_PICK_FIRST    ? "pick_first"
           : policy == XLB_LB_WRR           ? "weighted_round_robin"
                                            : "round_robin";
}

/* Envoy's bound on MaglevLbConfig.table_size, which must be prime. */
#define XLB_MAGLEV_TABLE_SIZE_MAX 5000011u

#define XLB_CIRCUIT_BREAKER_DEFAULT_MAX_REQUESTS 1024u
#define XLB_IDLE_TIMEOUT_DEFAULT_SECONDS         3600 /* A75 */

/* A50's config; `enabled` is false when the Cluster has no outlier_detection (a no-op). */
struct xlb_outlier_detection {
    bool enabled;
    struct xlb_duration interval;           /* default 10 s */
    struct xlb_duration base_ejection_time; /* default 30 s */
    struct xlb_duration max_ejection_time;  /* default 300 s */
    uint32_t max_ejection_percent;          /* default 10, at most 100 */
    bool success_rate_enabled;              /* off when enforcing_success_rate is 0 */
    struct {
        uint32_t stdev_factor;           /* default 1900 */
        uint32_t enforcement_percentage; /* enforcing_success_rate, default 100 */
        uint32_t minimum_hosts;          /* default 5 */
        uint32_t request_volume;         /* default 100 */
    } success_rate;
    bool failure_percentage_enabled; /* on only when enforcing_failure_percentage > 0 */
    struct {
        uint32_t threshold;              /* default 85, at most 100 */
        uint32_t enforcement_percentage; /* enforcing_failure_percentage */
        uint32_t minimum_hosts;          /* default 5 */
        uint32_t request_volume;         /* default 50 */
    } failure_percentage;
};

/* A29: transport_socket with an UpstreamTlsContext; enabled false: cleartext. The instances
 * are the bootstrap's certificate_providers; the SAN matchers' values are owned. */
struct xlb_upstream_tls {
    bool enabled;
    char *ca_instance;   /* required */
    char *cert_instance; /* a client certificate (mTLS), NULL: none */
    uint32_t n_sans;
    struct xlb_san_matcher sans[XLB_TLS_MAX_SAN_MATCHERS];
};

void xlb_upstream_tls_free(struct xlb_upstream_tls *tls);

struct xlb_bootstrap;

struct xlb_cluster_config {
    char *name;
    enum xlb_cluster_type type;
    char *eds_service_name; /* EDS: "" when unset (EDS is then asked for the cluster name) */
    char *dns_host;         /* LOGICAL_DNS */
    uint16_t dns_port;
    char **aggregate_clusters; /* AGGREGATE: in priority order, at least one */
    size_t n_aggregate_clusters;
    enum xlb_lb_policy lb_policy;
    struct xlb_ring_hash_config ring_hash; /* RING_HASH; ring_size_cap: the client default */
    uint32_t maglev_table_size;            /* MAGLEV: a prime, or 0 for the automatic size */
    uint32_t choice_count;                 /* LEAST_REQUEST: 2..10 (A48) */
    bool shuffle_address_list;             /* PICK_FIRST (A62) */
    struct xlb_wrr_config wrr;             /* WRR (A58) */
    bool lrs_enabled;                      /* lrs_server is `self` */
    uint32_t max_requests;                 /* circuit breaker, DEFAULT priority */
    struct xlb_outlier_detection outlier;
    uint32_t override_host_status; /* XLB_HEALTH_BIT mask; XLB_OVERRIDE_STATUS_DEFAULT */
    struct xlb_duration idle_timeout;
    struct xlb_upstream_tls upstream_tls;
    /* A17 client-side health checking of the stream mode's subchannels: the service name of
     * the first health_checks entry that is a grpc_health_check ("" checks the server as a
     * whole), NULL: none. */
    char *health_check_service;
};

/*
 * Validate a Cluster. Returns 0 with *out filled (free with xlb_cluster_config_free), or -1
 * with one line per problem appended to errs and *out left empty.
 */
int xlb_validate_cluster(const Envoy__Config__Cluster__V3__Cluster *msg,
                         struct xlb_cluster_config *out, struct xlb_errors *errs);
/* The same, with the certificate provider instances a transport_socket may name (A29: an
 * unknown one is NACKed); the plain form accepts any name. */
int xlb_validate_cluster_with(const Envoy__Config__Cluster__V3__Cluster *msg,
                              const struct xlb_bootstrap *bootstrap, struct xlb_cluster_config *out,
                              struct xlb_errors *errs);

void xlb_cluster_config_free(struct xlb_cluster_config *config);

#endif
