/*
 * Route matching on the workers, as gRPC proposal A28 defines it: pick the virtual host for the
 * request's :authority, then the first route of that host whose path matcher, every header
 * matcher and runtime fraction all match, then the cluster of its action.
 *
 * Worker-safe: no allocation, no lock, no system call, and bounded work per call. The state a
 * match needs lives in a struct xlb_route_scratch that the control plane creates once per
 * worker (xlb_route_scratch_create) and hands to that worker; a worker never shares its scratch.
 * Randomness (runtime fractions, weighted clusters) comes from the caller's per-lcore rng.
 */
#ifndef XLB_ROUTE_H
#define XLB_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xlb_rng.h"
#include "xlb_route_table.h"

/* No virtual host / no cluster. */
#define XLB_ROUTE_NONE UINT32_MAX

/*
 * PCRE2 limits for one regex match (pcre2_set_match_limit, pcre2_set_depth_limit). RE2 runs in
 * linear time; PCRE2 backtracks, so these bound the work of a hostile pattern/subject pair. A
 * match that hits a limit counts as "no match". The depth limit applies to the interpreter
 * only; the JIT honours the match limit.
 */
#define XLB_ROUTE_MATCH_LIMIT 100000u
#define XLB_ROUTE_DEPTH_LIMIT 1000u

/*
 * Longest joined value of a repeated header (values joined with ','). A longer one cannot be
 * built without allocating, so its matcher fails regardless of invert_match (the route is not
 * chosen); HTTP/2 header lists are bounded well below this in practice.
 */
#define XLB_ROUTE_JOIN_MAX 8192u

/* Per-worker state; opaque. */
struct xlb_route_scratch;

/* Control plane only: allocate one scratch per worker. NULL when out of memory. */
struct xlb_route_scratch *xlb_route_scratch_create(void);
void xlb_route_scratch_free(struct xlb_route_scratch *scratch);

/* One request field as HPACK decoded it: lower-case name, value, neither NUL-terminated. */
struct xlb_route_field {
    const char *name;
    const char *value;
    uint32_t name_len;
    uint32_t value_len;
};

/* The request: pseudo-headers apart, regular header fields in arrival order. */
struct xlb_route_request {
    const char *path; /* :path */
    uint32_t path_len;
    const char *authority; /* :authority */
    uint32_t authority_len;
    const struct xlb_route_field *fields;
    uint32_t n_fields;
};

enum xlb_route_verdict {
    XLB_ROUTE_RESULT_CLUSTER,        /* forward to result.cluster */
    XLB_ROUTE_RESULT_NO_ROUTE,       /* no route matched: gRPC fails the RPC UNAVAILABLE */
    XLB_ROUTE_RESULT_NON_FORWARDING, /* matched a non_forwarding_action route */
    XLB_ROUTE_RESULT_UNSUPPORTED,    /* matched a route whose action gRPC does not support */
};

struct xlb_route_result {
    enum xlb_route_verdict verdict;
    uint32_t route;   /* index into table->routes, XLB_ROUTE_NONE for NO_ROUTE */
    uint32_t cluster; /* CLUSTER only, else XLB_ROUTE_NONE */
    /* The weighted cluster entry drawn (its index in the route's weighted_clusters), when the
     * route's entries carry filter overrides (A39); else XLB_ROUTE_NONE. */
    uint32_t entry;
};

/*
 * The virtual host for authority, XLB_ROUTE_NONE when none matches. Exact patterns beat suffix
 * wildcards ("*.foo.com"), which beat prefix wildcards ("foo.*"), which beat "*"; within a kind
 * the longest pattern wins, and on a tie the earlier virtual host. Case-insensitive (ASCII); the
 * authority is compared as given, port included, exactly as gRPC compares its target's name.
 * A wildcard stands for one character or more.
 */
uint32_t xlb_route_select_vhost(const struct xlb_route_table *table, const char *authority,
                                uint32_t authority_len);

/*
 * Match request against the routes of virtual host vhost (from xlb_route_select_vhost) and fill
 * *result; returns result->verdict. Weighted clusters and runtime fractions draw from rng.
 */
enum xlb_route_verdict xlb_route_match(const struct xlb_route_table *table, uint32_t vhost,
                                       const struct xlb_route_request *request, struct xlb_rng *rng,
                                       struct xlb_route_scratch *scratch,
                                       struct xlb_route_result *result);

/*
 * Whether route `route` may send a request to cluster index `cluster`: its cluster, or one of
 * its weighted clusters (A60: a session cookie naming one of them picks it).
 */
bool xlb_route_reaches(const struct xlb_route_table *table, uint32_t route, uint32_t cluster);

#endif
