/*
 * The xDS dependency manager (gRPC proposal A74, aggregate clusters as in A37/A75): for every
 * VIP xlb serves it decides which xDS resources must be watched, resolves the chain
 * Listener -> RouteConfiguration -> Clusters (aggregate graphs flattened) -> ClusterLoadAssignments
 * over the resource cache, and says whether the VIP's configuration is complete (READY), still
 * waiting for a resource (WARMING), or unusable (ERROR), and why. Its names carry the prefix
 * xlb_dm_ (dependency manager); its parts are dependency_manager.c (listeners and routes),
 * dependency_clusters.c (cluster graphs) and dependency_walk.c (one evaluation's helpers).
 *
 * Pure logic over struct xlb_xds_cache: no I/O, no timers. The caller (the control plane) runs
 * xlb_dm_update after every cache change, lets the ADS client subscribe to the resources whose
 * `watched` flag is set, and rebuilds the LB tree of VIPs and clusters whose fingerprint moved.
 *
 * Lifetime: every pointer in a result that is documented as pointing "into the cache" (names,
 * resources, listener, routes, cluster and endpoint configs) is valid until the next change of
 * the cache (an update, a does-not-exist, a resource dropped). Strings the manager allocates
 * (reasons, errors, notes) and the leaf arrays are valid until the next xlb_dm_update or
 * xlb_dm_free.
 */
#ifndef XLB_DEPENDENCY_MANAGER_H
#define XLB_DEPENDENCY_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "name_index.h"
#include "xds_cache.h"

/* Levels of an aggregate cluster graph, the root included (A37; C-core's recursion limit). */
#define XLB_DM_MAX_AGGREGATE_DEPTH 16

enum xlb_dm_vip_kind {
    XLB_DM_VIP_L7, /* target is an LDS resource name (the `xds:` target) */
    XLB_DM_VIP_L4, /* target is a cluster name */
};

enum xlb_dm_state {
    XLB_DM_WARMING, /* a resource it needs is REQUESTED and not yet known not to exist */
    XLB_DM_READY,   /* complete: every input present, does-not-exist, or a local error */
    XLB_DM_ERROR,   /* unusable; `reason` / `error` says why */
};

/* One cluster a VIP reaches: named by a route (or the L4 VIP) or under an aggregate cluster. */
struct xlb_dm_cluster {
    const char *name;                       /* into the cache */
    const struct xlb_xds_resource *cds;     /* its CDS resource, into the cache */
    enum xlb_dm_state state;                /* ERROR stays local to this cluster (A74) */
    const struct xlb_cluster_config *value; /* NULL unless the resource holds a value */
    /* EDS clusters: the ClusterLoadAssignment resource and its value; endpoints is NULL when
     * the assignment does not exist or was NACKed without a previous value ("no endpoints",
     * usable but empty). Both NULL for LOGICAL_DNS and AGGREGATE clusters. */
    const struct xlb_xds_resource *eds;
    const struct xlb_endpoint_config *endpoints;
    /* READY aggregate clusters: the leaf clusters in priority order, depth first, the first
     * occurrence of a duplicate kept; indexes into the VIP's `clusters`. */
    size_t *leaves;
    size_t n_leaves;
    const struct xlb_xds_resource *awaited; /* WARMING: the first resource awaited (cache) */
    char *error;                            /* ERROR: e.g. `cluster "c" does not exist` */
    char *note;      /* READY but worth telling operators, e.g. the EDS does not exist; or NULL */
    bool from_route; /* named by a route or the L4 VIP itself, not only under an aggregate */
    /* Changes whenever anything this entry was computed from changes (its CDS and EDS
     * resources, for aggregates every cluster of its graph) or its outcome changes. Compare
     * with the value of the previous xlb_dm_update to rebuild only this cluster. */
    uint64_t fingerprint;
};

struct xlb_dm_vip {
    enum xlb_dm_vip_kind kind;
    char *target; /* LDS name (L7) or cluster name (L4); owned */
    enum xlb_dm_state state;
    char *reason; /* WARMING: `waiting for cluster "c"`; ERROR: why; NULL when READY */
    /* L7 only, into the cache: the listener and its route configuration (the RDS resource's
     * value or the listener's inline one), set as soon as they hold a value. */
    const struct xlb_listener_config *listener;
    const struct xlb_route_config *routes;
    /* Every cluster reached, in depth-first order from the routes' clusters taken in route
     * order (each aggregate followed by its graph); no name twice. */
    struct xlb_dm_cluster *clusters;
    size_t n_clusters;
    /* clusters by name, for xlb_dm_vip_cluster: each value is the cluster's index + 1 (an
     * index, since the array moves while it grows; + 1, since NULL means "no such name"). */
    struct xlb_name_index by_name;
    /* Changes whenever any input of this VIP, or its outcome, changes (see the cluster's). */
    uint64_t fingerprint;
    /* Changes whenever its listener or route configuration resource changes: what the VIP's
     * routes, hash policies and session cookies are compiled from, clusters aside. */
    uint64_t routes_fingerprint;
};

struct xlb_dm {
    struct xlb_xds_cache *cache;
    struct xlb_dm_vip *vips;
    size_t n_vips;
    uint64_t watch_changes; /* bumped when a `watched` flag flips: re-send subscriptions */
};

void xlb_dm_init(struct xlb_dm *dm, struct xlb_xds_cache *cache);
void xlb_dm_free(struct xlb_dm *dm);

/*
 * Adds a VIP (WARMING until the next xlb_dm_update). VIPs come from the bootstrap and live as
 * long as the manager. Returns its index in dm->vips, or -1 when out of memory.
 */
int xlb_dm_add_vip(struct xlb_dm *dm, enum xlb_dm_vip_kind kind, const char *target);

/*
 * Re-evaluates every VIP against the cache: creates missing resources as REQUESTED, sets
 * `watched` on exactly the resources some VIP needs now and clears it on the others. Returns
 * 0, or -1 when out of memory (then neither results nor `watched` flags have changed; retry).
 */
int xlb_dm_update(struct xlb_dm *dm);

/* The VIP's entry for a cluster name, or NULL. */
const struct xlb_dm_cluster *xlb_dm_vip_cluster(const struct xlb_dm_vip *vip, const char *name);

/* "WARMING", "READY", "ERROR". */
const char *xlb_dm_state_name(enum xlb_dm_state state);

#endif
