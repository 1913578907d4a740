/* Shared between the cluster validator's files. Internal to control/xds. */
#ifndef XLB_XDS_VALIDATE_CLUSTER_INTERNAL_H
#define XLB_XDS_VALIDATE_CLUSTER_INTERNAL_H

#include "bootstrap.h"
#include "cluster_config.h"
#include "validate_internal.h"

/* lb_policy / ring_hash_lb_config, or load_balancing_policy when present (A42, A52). */
bool xv_cluster_lb(struct xv_ctx *ctx, const Envoy__Config__Cluster__V3__Cluster *msg,
                   struct xlb_cluster_config *out);

/* The load_balancing_policy list: the first policy xlb supports wins. */
bool xv_lb_policy_list(struct xv_ctx *ctx, const char *path,
                       const Envoy__Config__Cluster__V3__LoadBalancingPolicy *list, unsigned depth,
                       struct xlb_cluster_config *out);

/* outlier_detection (A50). */
bool xv_outlier_detection(struct xv_ctx *ctx, const Envoy__Config__Cluster__V3__Cluster *msg,
                          struct xlb_outlier_detection *out);

/* Ring sizes as A42 bounds them; shared by ring_hash_lb_config and the RingHash policy. */
bool xv_ring_sizes(struct xv_ctx *ctx, const char *path, bool has_min, uint64_t min, bool has_max,
                   uint64_t max, struct xlb_ring_hash_config *out);

/* transport_socket (A29): an UpstreamTlsContext naming certificate provider instances. */
bool xv_transport_socket(struct xv_ctx *ctx, const Envoy__Config__Cluster__V3__Cluster *c,
                         struct xlb_upstream_tls *out);

#endif
