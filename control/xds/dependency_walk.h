/*
 * Internals of the dependency manager (dependency_manager.h): the state of one evaluation of
 * one VIP, shared by the listener/route part (dependency_manager.c) and the cluster graph part
 * (dependency_clusters.c). Out of memory sets `oom` and makes every step return early; the caller
 * then throws the half-built result away.
 */
#ifndef XLB_DEPENDENCY_WALK_H
#define XLB_DEPENDENCY_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dependency_manager.h"

/* The resources some VIP needs, gathered over one xlb_dm_update (duplicates allowed). */
struct dm_watch_list {
    struct xlb_xds_resource **items;
    size_t n, cap;
};

/* Per-cluster bookkeeping of a walk, parallel to vip->clusters. */
struct dm_node {
    bool on_path;        /* on the current depth-first path: meeting it again is a cycle */
    unsigned height;     /* levels of its aggregate graph, itself included */
    char *graph_problem; /* a cycle or excess depth inside its graph; spreads to parents */
    uint64_t children;   /* hash of what its aggregate children were computed from */
};

struct dm_walk {
    struct xlb_xds_cache *cache;
    struct dm_watch_list *watch;
    struct xlb_dm_vip *vip; /* the result being built */
    size_t cap_clusters;
    struct dm_node *nodes;
    size_t *path; /* indexes of the clusters on the depth-first path */
    size_t n_path, cap_path;
    uint64_t inputs; /* hash of the listener and route resources used */
    bool oom;
};

/* The resource (created REQUESTED when missing), recorded as watched; NULL when out of memory. */
struct xlb_xds_resource *dm_watch(struct dm_walk *w, enum xlb_xds_type type, const char *name);

/* A formatted, malloc'ed string; NULL (and w->oom) when out of memory. */
char *dm_printf(struct dm_walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Why a resource without a value cannot be used: does not exist, or its NACK reason. */
char *dm_unusable_reason(struct dm_walk *w, const struct xlb_xds_resource *res);

/* 64-bit FNV-1a steps, for fingerprints. */
uint64_t dm_hash_bytes(uint64_t h, const void *data, size_t len);
uint64_t dm_hash_u64(uint64_t h, uint64_t v);
uint64_t dm_hash_str(uint64_t h, const char *s); /* NULL hashes differently from "" */
uint64_t dm_hash_resource(uint64_t h, const struct xlb_xds_resource *res);
#define DM_HASH_SEED 0xcbf29ce484222325ull

/*
 * Resolves the cluster `name` and everything below it into the VIP's cluster list, at most
 * once per walk. Returns its index, or SIZE_MAX when out of memory.
 */
size_t dm_resolve_cluster(struct dm_walk *w, const char *name, bool from_route);

#endif
