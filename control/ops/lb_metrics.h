/*
 * The load-balancing part of the metrics: per cluster, per locality, per drop category and per
 * endpoint, as plain values. Gathering (lb_metrics_gather.c) reads the compiled trees and the
 * workers' load counters; rendering (lb_metrics.c) turns the values into Prometheus families
 * and needs nothing else, so tests feed it known values.
 *
 * Counters are sums over the workers. In L4 mode a request is a connection: a pick starts it,
 * the end of its flow finishes it, and the backend's SYN-ACK (success) or its RST or silence
 * (failure) is the endpoint's result.
 */
#ifndef XLB_LB_METRICS_H
#define XLB_LB_METRICS_H

#include <stdint.h>

#include "text_buffer.h"
#include "xlb_host_port.h"

#define XLB_LBM_NO_PRIORITY UINT32_MAX

struct xlb_lbm_locality {
    const char *name; /* "region/zone/sub_zone" */
    uint32_t priority;
    uint32_t weight;
    uint64_t started; /* picks that chose an endpoint of this locality */
};

struct xlb_lbm_drop {
    const char *category;
    uint64_t dropped;
};

struct xlb_lbm_endpoint {
    char address[XLB_HOST_PORT_STRLEN];
    uint32_t locality; /* index into the cluster's localities */
    uint8_t health;    /* enum xlb_health_status */
    uint8_t ejected;   /* by outlier detection */
    uint64_t succeeded, failed;
    uint8_t connectivity; /* enum xlb_connectivity over the workers (L7 stream mode) */
};

struct xlb_lbm_cluster {
    const char *name;
    uint64_t started, finished, circuit_dropped;
    uint32_t chosen_priority; /* XLB_LBM_NO_PRIORITY: none can take a request */
    uint32_t n_localities, n_drops, n_endpoints;
    struct xlb_lbm_locality *localities;
    struct xlb_lbm_drop *drops;
    struct xlb_lbm_endpoint *endpoints;
};

struct xlb_lb_metrics {
    uint32_t n_clusters;
    struct xlb_lbm_cluster *clusters; /* sorted by name */
};

struct xlb_lb_trees;
struct xlb_worker_load;

/*
 * Every cluster some VIP's tree holds, with its counters summed over n_workers copies of
 * loads (NULL: zeros). Strings point into the LB state: use the result before that changes
 * (under the control plane's lock). 0, or -1 when memory ran out (out is then empty).
 */
int xlb_lb_metrics_gather(const struct xlb_lb_trees *st, const struct xlb_worker_load *loads,
                          unsigned n_workers, struct xlb_lb_metrics *out);
void xlb_lb_metrics_free(struct xlb_lb_metrics *m);

/*
 * The cluster, locality, drop-overload and endpoint families. At most max_endpoints endpoints
 * (in cluster order, then EDS order) get series of their own; each cluster's endpoints beyond
 * that are folded into one endpoint="other" (locality "other"), whose counters are their sums
 * and whose xlb_endpoint_ejected counts them. Localities are capped the same way (their own
 * max_endpoints), folded into priority="other", locality="other". Returns how many endpoints
 * were folded.
 */
uint32_t xlb_lb_metrics_render(const struct xlb_lb_metrics *m, uint32_t max_endpoints,
                               struct xlb_text *text);

/* "unknown", "healthy", "draining", ... for an xlb_health_status value. */
const char *xlb_lbm_health_name(uint8_t health);

#endif
