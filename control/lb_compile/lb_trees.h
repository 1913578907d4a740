/*
 * The control plane's load-balancing state: the compiled tree of every VIP (lib/lb), rebuilt
 * cluster by cluster as the xDS dependency manager's results change, plus the state that is
 * not config and changes the tree: outlier detection (A50, fed by the workers' per-endpoint
 * counters), the A56 priority choice, and idle-timeout draining (A75).
 *
 * Stable endpoint slots: an endpoint keeps its slot (its per-worker counters) for as long as its
 * cluster lists it; a removed endpoint's slot is reused only after an RCU grace period, so no
 * worker still counting on an older snapshot can write into a newcomer's counters.
 */
#ifndef XLB_LB_TREES_H
#define XLB_LB_TREES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "dependency_manager.h"
#include "load_slots.h"
#include "xlb_lb.h"
#include "xlb_lb_connectivity.h"

/* The grace-period hooks (rte_rcu_qsbr_start / rte_rcu_qsbr_check in xlbd). */
struct xlb_lb_grace {
    uint64_t (*start)(void *arg);
    bool (*over)(void *arg, uint64_t token);
    void *arg;
};

struct xlb_lb_trees;

/* loads: the workers' counters (n_workers copies), read for outlier detection, idle draining
 * and the baseline of a reused endpoint slot; NULL when there are none. */
struct xlb_lb_trees *xlb_lb_trees_create(struct xlb_load_slots *load_slots,
                                         const struct xlb_lb_grace *grace,
                                         const struct xlb_worker_load *loads, unsigned n_workers,
                                         uint64_t seed);
void xlb_lb_trees_free(struct xlb_lb_trees *st);

/*
 * Recompile what changed after a dependency-manager update. dm_index[v] is VIP v's entry in
 * dm->vips. A VIP that is not READY keeps its last compiled tree (or none). Returns true when
 * some VIP's tree changed (publish a new snapshot); compile failures are logged and keep the
 * previous tree.
 */
bool xlb_lb_trees_update(struct xlb_lb_trees *st, const struct xlb_dm *dm, const size_t *dm_index,
                         size_t n_vips, uint64_t now_ms);

/*
 * Periodic work: feed outlier detection with the per-interval counter deltas, run its sweeps
 * and the A56 failover timers, track session use for idle-timeout draining. Returns true when
 * a tree changed (an ejection, an un-ejection, a new chosen priority).
 */
bool xlb_lb_trees_tick(struct xlb_lb_trees *st, uint64_t now_ms);

/*
 * Restore the aggregate-cluster behaviour before gRPC A75 (what gRPC's
 * GRPC_XDS_AGGREGATE_CLUSTER_BACKWARD_COMPAT does): the aggregate's lb_policy applies to its
 * leaves and a session may pin any leaf's endpoint. Set before the first update.
 */
void xlb_lb_trees_set_aggregate_compat(struct xlb_lb_trees *st, bool on);
/* The bootstrap whose certificate_providers clusters' upstream TLS reads (A29). */
struct xlb_bootstrap;
void xlb_lb_trees_set_bootstrap(struct xlb_lb_trees *st, const struct xlb_bootstrap *b);
/* The certificate provider files changed: the clusters with upstream TLS compile again, with
 * the files read anew, at the next update. */
void xlb_lb_trees_tls_files_changed(struct xlb_lb_trees *st);

/* VIP v's compiled tree, or NULL. The snapshot builder takes its own reference. */
struct xlb_lb_vip *xlb_lb_trees_vip(const struct xlb_lb_trees *st, size_t v);

/* A cluster's circuit-breaker counter slot, or XLB_LB_NO_SLOT (for LRS). */
uint32_t xlb_lb_trees_cluster_slot(const struct xlb_lb_trees *st, const char *name);

/* For xlbctl: a cluster's compiled view, or NULL when no VIP's tree holds it. */
const struct xlb_lb_cluster *xlb_lb_trees_cluster(const struct xlb_lb_trees *st, const char *name);

/* Per-endpoint state for `xlbctl endpoints`: adds usable, ejected, ejected_until_ms,
 * multiplier, drained, successes/failures to each endpoint object (matched by index). */
void xlb_lb_trees_describe_endpoints(const struct xlb_lb_trees *st, const char *cluster,
                                     uint64_t now_ms, cJSON *list);

/* An endpoint slot's connect (L4) or call (L7) outcomes, summed over the workers, since its
 * endpoint took the slot: a reused slot is read against the baseline it was taken with. */
struct xlb_lb_endpoint_counts {
    uint64_t succeeded, failed;
};
struct xlb_lb_endpoint_counts xlb_lb_trees_endpoint_counts(const struct xlb_lb_trees *st,
                                                           uint32_t slot);

/* An endpoint slot's subchannel state over the workers (L7 stream mode): READY when any worker
 * has it READY, else CONNECTING when any has, else TRANSIENT_FAILURE when any has, else IDLE
 * (also without counters or slot). */
enum xlb_connectivity xlb_lb_trees_endpoint_connectivity(const struct xlb_lb_trees *st,
                                                         uint32_t slot);
/* A61: the index of the endpoint's address the first worker with a READY subchannel to it
 * connected to, -1 when none is READY (L7 stream mode). */
int xlb_lb_trees_endpoint_connected_address(const struct xlb_lb_trees *st, uint32_t slot);

/* Calls fn for each compiled leaf cluster some VIP's tree holds, once per name (with
 * aggregate_cluster_backward_compat, a leaf only reached through aggregates is shown by its
 * first variant), in no particular order. */
void xlb_lb_trees_each_cluster(const struct xlb_lb_trees *st,
                               void (*fn)(const struct xlb_lb_cluster *c, void *arg), void *arg);

/* Cluster summary for `xlbctl clusters`: chosen priority, usable, ejected and READY counts. */
void xlb_lb_trees_describe_cluster(const struct xlb_lb_trees *st, const char *cluster,
                                   cJSON *object);

#endif
