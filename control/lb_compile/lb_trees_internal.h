/*
 * Internals of the LB trees (lb_trees.h), shared by its parts:
 *   lb_trees_registry.c  the leaf clusters xlb keeps between compiles, by name, and their
 *                        aggregate-policy variants (aggregate_cluster_backward_compat);
 *   lb_trees_compile.c   compiling leaves and VIP trees after a dependency-manager update;
 *   lb_trees_tick.c      the periodic work: worker counters, outlier detection, A56 timers;
 *   lb_trees_describe.c  the JSON views for xlbctl clusters and endpoints.
 */
#ifndef XLB_LB_TREES_INTERNAL_H
#define XLB_LB_TREES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_slots.h"
#include "endpoint_slots.h"
#include "lb_trees.h"
#include "name_index.h"
#include "outlier_detector.h"
#include "priority_policy.h"
#include "xlb_rng.h"

/* Everything xlb keeps about one leaf cluster between compiles. */
struct cluster_entry {
    char *name;
    char *policy_from;    /* aggregate backward compatibility: the aggregate whose lb_policy the
                           * leaf uses (a variant of the leaf of its own), else NULL */
    uint64_t fingerprint; /* of the inputs last compiled (leaf, and policy when a variant) */
    uint64_t leaf_fingerprint;       /* the leaf's dependency-manager fingerprint then */
    struct xlb_lb_cluster *compiled; /* our reference; NULL before the first compile */
    uint32_t cluster_slot;
    uint32_t n;    /* endpoints of the last compile */
    bool *ejected; /* per endpoint: what outlier detection decided */
    uint64_t *last_ok, *last_failed, *last_session, *last_use_ms;
    uint64_t idle_timeout_ms;
    struct xlb_outlier_detector *outlier;
    struct xlb_rng outlier_rng;
    struct xlb_priority_policy *priority;
    bool referenced;                    /* by some VIP's current tree (sweep) */
    struct cluster_entry *next;         /* every entry, newest first */
    struct cluster_entry *next_variant; /* the next entry of this name, in `next` order */
};

struct vip_entry {
    struct xlb_lb_vip *compiled;
    uint64_t fingerprint;
    uint64_t routes_fingerprint; /* the compiled tree's routing part was built from */
};

struct xlb_lb_trees {
    struct xlb_load_slots *load_slots;
    struct xlb_endpoint_slots slots;
    struct cluster_entry *clusters;
    /* name -> the first entry of that name in `clusters`, head of its `next_variant` chain:
     * lookups by name are O(1), not a scan of every cluster (thousands, for every leaf). */
    struct xlb_name_index by_name;
    struct vip_entry *vips;
    size_t n_vips;
    const struct xlb_dm *dm;
    size_t *dm_index;
    const struct xlb_worker_load *loads;
    unsigned n_workers;
    uint64_t seed;
    uint64_t now_ms;
    bool aggregate_compat;
    /* Where a cluster's transport_socket finds its certificate provider files (A29). */
    const struct xlb_bootstrap *bootstrap;
    struct xlb_cluster_slots cluster_slots;
};

/* lb_trees_registry.c */
struct cluster_entry *lb_trees_entry_for(struct xlb_lb_trees *st, const char *name,
                                         const char *policy_from);
struct cluster_entry *lb_trees_find_variant(const struct xlb_lb_trees *st, const char *name,
                                            const char *policy_from);
struct cluster_entry *lb_trees_find_entry(const struct xlb_lb_trees *st, const char *name);
struct cluster_entry *lb_trees_entry_of(const struct xlb_lb_trees *st,
                                        const struct xlb_lb_cluster *c);
struct cluster_entry *lb_trees_first_named(const struct xlb_lb_trees *st, const char *name);
void lb_trees_forget_name(struct xlb_lb_trees *st, struct cluster_entry *e);
void lb_trees_entry_free(struct xlb_lb_trees *st, struct cluster_entry *e);

/* lb_trees_compile.c */
bool lb_trees_compile_leaf(struct xlb_lb_trees *st, struct cluster_entry *e,
                           const struct xlb_dm_cluster *leaf,
                           const struct xlb_cluster_config *policy, bool inputs_changed);
bool lb_trees_vip_current(const struct xlb_lb_trees *st, const struct xlb_lb_vip *v);
bool lb_trees_rebuild_vip(struct xlb_lb_trees *st, size_t v, const struct xlb_dm_vip *vip);

/* lb_trees_tick.c: one counter of an endpoint slot, summed over the workers (0 without
 * counters or slot). */
uint64_t lb_trees_endpoint_counter(const struct xlb_lb_trees *st, uint32_t slot, size_t field);

#endif
