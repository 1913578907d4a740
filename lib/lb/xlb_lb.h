/*
 * The compiled load-balancing tree (gRPC A75) that workers and `xlbctl simulate` pick from.
 *
 * The control plane (control/lb_compile) compiles each cluster a VIP reaches into one immutable
 * struct xlb_lb_cluster: flat arrays in which every decision that depends only on config, on
 * EDS health or on outlier ejections is already taken. A pick is then
 *
 *     route (A28) -> target (a leaf cluster, or an aggregate's leaves in priority order)
 *       -> drop overloads -> circuit breaker -> override host (A55/A60)
 *       -> chosen priority (A56) -> weighted locality (alias table) -> round robin,
 *          or ring hash (A42) over the chosen priority in place of the last two
 *
 * with no allocation, no lock and no system call, and a bounded number of steps.
 *
 * Ownership: compiled clusters are shared by every VIP and every snapshot that uses them and
 * are reference counted on the control plane only (snapshots are freed on the control plane,
 * after the RCU grace period). Workers never touch a reference count.
 */
#ifndef XLB_LB_H
#define XLB_LB_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_host_port.h"
#include "xlb_least_request.h"
#include "xlb_limits.h"
#include "xlb_load.h"
#include "xlb_maglev.h"
#include "xlb_override_map.h"
#include "xlb_pick.h"
#include "xlb_ring_hash.h"
#include "xlb_rng.h"
#include "xlb_route.h"
#include "xlb_rr.h"
#include "xlb_pick_first.h"
#include "xlb_wchoice.h"
#include "xlb_wrr.h"

/* Stable endpoint slots: an index into per-worker endpoint counters and the usable bitmap. */
#define XLB_ENDPOINT_SLOTS XLB_ENDPOINT_LOAD_SLOTS
/* Stable cluster slots: circuit-breaker counters. */
#define XLB_CLUSTER_SLOTS XLB_CLUSTER_LOAD_SLOTS
/* Longest session cookie value a pick decodes; longer ones are ignored (no override). */
#define XLB_LB_COOKIE_MAX 512u
/* "Not counted": the slot tables were full when the item was compiled. */
#define XLB_LB_NO_SLOT UINT32_MAX

/* One endpoint of a cluster, across all its priorities; in EDS order. */
struct xlb_lb_endpoint {
    struct xlb_host_port where; /* the first address: its identity (slots, sessions) */
    uint32_t slot;              /* stable endpoint slot */
    uint32_t weight;            /* load_balancing_weight */
    uint16_t priority;
    uint16_t locality;   /* index within its priority */
    uint8_t health;      /* enum xlb_health_status */
    bool ejected;        /* outlier detection (A50), at compile time */
    uint8_t n_addresses; /* A61: where, then n_addresses - 1 in the cluster's more_addresses */
};

struct xlb_lb_locality {
    struct xlb_rr *rr; /* endpoint indexes of its usable, non-draining endpoints, or NULL */
    struct xlb_least_request *lr; /* LEAST_REQUEST: the same endpoints and their weights */
    uint32_t load_slot;           /* xlb_worker_load.localities index, also the rr cursor index */
    uint32_t weight;
    char *name; /* "region/zone/sub_zone" */
};

struct xlb_lb_priority {
    uint32_t n_localities;
    struct xlb_lb_locality *localities;
    struct xlb_wchoice *locality_choice; /* over localities with a usable endpoint; or NULL */
    struct xlb_ring_hash *ring; /* RING_HASH: endpoint indexes of its non-draining endpoints */
    struct xlb_maglev *maglev;  /* MAGLEV: the same, in a Maglev table */
    struct xlb_pick_first *pick_first; /* PICK_FIRST: its usable endpoints, in list order */
    uint32_t n_usable;
};

struct xlb_lb_drop {
    uint64_t threshold; /* drop when a 32-bit draw is below: ppm scaled to 2^32 */
    uint32_t load_slot; /* xlb_worker_load.drops index */
    char *category;
};

enum xlb_lb_policy_kind {
    XLB_LB_POLICY_ROUND_ROBIN,
    XLB_LB_POLICY_RING_HASH,
    XLB_LB_POLICY_MAGLEV,
    XLB_LB_POLICY_LEAST_REQUEST, /* A48: locality as round robin, then least request in it */
    XLB_LB_POLICY_PICK_FIRST,    /* A62: the first usable endpoint of the priority, sticky */
    /* A58: locality as round robin, then weighted round robin from ORCA load reports in it
     * (stream mode; elsewhere no report arrives and it is round robin). */
    XLB_LB_POLICY_WRR,
};

/* Whether a cluster picks by the request's hash alone (ring hash or Maglev). */
static inline bool xlb_lb_policy_hashes(uint8_t policy)
{
    return policy == XLB_LB_POLICY_RING_HASH || policy == XLB_LB_POLICY_MAGLEV;
}

struct xlb_lb_cluster {
    char *name;
    uint32_t cluster_slot; /* circuit-breaker counters */
    uint8_t policy;        /* enum xlb_lb_policy_kind */
    uint32_t max_requests; /* circuit breaker; 0 = unlimited */
    /* A56: the priority new picks go to, or XLB_PICK_NONE when no priority can take one. */
    uint32_t chosen_priority;
    uint32_t n_priorities;
    struct xlb_lb_priority *priorities;
    uint32_t n_drops;
    struct xlb_lb_drop *drops;
    struct xlb_override_map *override; /* every endpoint of every priority; NULL when none */
    uint32_t override_status;          /* XLB_HEALTH_BIT mask (A55/A60) */
    uint32_t n_endpoints;
    struct xlb_lb_endpoint *endpoints;
    /* A61: endpoint i's additional addresses (at most XLB_MAX_ENDPOINT_ADDRESSES - 1) from
     * [i * (XLB_MAX_ENDPOINT_ADDRESSES - 1)]; NULL when no endpoint has one. Out of the
     * endpoints array: a pick never reads them, only a connection being made does. */
    struct xlb_host_port *more_addresses;
    /* Bit i: endpoint i may take a request now (not ejected, not failing); ring hash walks
     * past the others (A42) and a session to one falls back to the normal pick (A55). */
    uint64_t *usable;
    char *policy_from;    /* aggregate backward compatibility: lb_policy of this aggregate */
    uint64_t fingerprint; /* of the inputs it was compiled from (control plane) */
    /* Unique per compile, never 0 (xlb_lb_cluster_generation): a worker's cached READY counts
     * (lib/lb/xlb_lb_connectivity_state.h) know which compile they were counted for. */
    uint64_t generation;
    /* A29: the TLS client context of its subchannels (lib/tls/xlb_tls_client.h), NULL:
     * cleartext. Owned: one SSL_CTX reference, dropped with the cluster. */
    struct ssl_ctx_st *upstream_tls;
    /* A17: the service name its subchannels watch with grpc.health.v1.Health ("" the whole
     * server), NULL: no health checking. Owned. */
    char *health_service;
    struct xlb_wrr_config wrr; /* WRR: A58's periods and penalty */
    uint32_t refs;             /* control plane only */
};

/* A61: how many addresses a connection to it may try (an endpoint made other than by the
 * compiler, a test's, has where alone). */
static inline uint32_t xlb_lb_endpoint_n_addresses(const struct xlb_lb_endpoint *e)
{
    return e->n_addresses > 1 ? e->n_addresses : 1u;
}

/* A61: address k (0: where) of endpoint i of c, k < its n_addresses. */
static inline const struct xlb_host_port *xlb_lb_endpoint_address(const struct xlb_lb_cluster *c,
                                                                  uint32_t i, uint32_t k)
{
    return k == 0 ? &c->endpoints[i].where
                  : &c->more_addresses[i * (XLB_MAX_ENDPOINT_ADDRESSES - 1) + k - 1];
}

/* Ring hash request hash policies of one route (A42). */
enum xlb_lb_hash_kind {
    XLB_LB_HASH_HEADER,
    XLB_LB_HASH_CHANNEL_ID,
};

struct xlb_lb_hash_policy {
    uint8_t kind; /* enum xlb_lb_hash_kind */
    bool terminal;
    char *header; /* lower-case */
    uint32_t header_len;
    pcre2_code *re; /* regex_rewrite pattern, or NULL */
    char *substitution;
    uint32_t substitution_len;
};

/* What a route's cluster name resolves to: one leaf, or an aggregate's leaves in order. */
struct xlb_lb_target {
    char *name;
    bool ready; /* false: the cluster is missing or in error; picks fail */
    /* Aggregate backward compatibility (pre-A75): a session pins an endpoint of any leaf. */
    bool session_any_leaf;
    uint32_t n_leaves;
    struct xlb_lb_cluster **leaves; /* references held */
};

/* A session cookie's attributes (A55): the filter applies to requests whose path matches `path`
 * (RFC 6265 5.1.4; NULL: every path), and its Set-Cookie carries them. */
struct xlb_lb_cookie_attrs {
    char *path;
    bool has_max_age;
    uint32_t max_age_s; /* the cookie's ttl, whole seconds */
};

struct xlb_lb_vip {
    struct xlb_route_table *routes; /* L7; NULL for an L4 VIP (target 0 always) */
    uint32_t n_targets;             /* = routes->n_clusters for L7, 1 for L4 */
    struct xlb_lb_target *targets;
    /* Per route (L7): its hash policies, a slice of hash_policies. */
    uint32_t *route_first_hash, *route_n_hash;
    struct xlb_lb_hash_policy *hash_policies;
    uint32_t n_hash_policies;
    /* Per route (L7): the session cookie's name when stateful session affinity applies to
     * it (A55, with A39 per-route overrides resolved), else NULL; and its attributes. */
    char **route_cookie;
    struct xlb_lb_cookie_attrs *route_cookie_attrs;
    /* A39's most specific level, the weighted cluster entry. Per route (L7): the index in
     * entry_cookie of its first weighted entry when an entry of the route overrides the
     * filter, else XLB_ROUTE_NONE (the route's cookie above applies whichever entry was
     * drawn). Then entry_cookie and entry_cookie_attrs hold each of its entries' effective
     * cookie, as route_cookie does for a route; an entry without an override inherits the
     * route's. All NULL when no entry of the VIP overrides the filter. */
    uint32_t *route_first_entry;
    char **entry_cookie;
    struct xlb_lb_cookie_attrs *entry_cookie_attrs;
    uint32_t n_entry_cookies;
    uint32_t refs; /* control plane only */
    /* Control plane only. The routing part above (routes, hash policies, cookies) depends on
     * the listener and route configuration alone, so successive trees of a VIP share it while
     * those stay the same: an endpoint change in one cluster must not recompile every route
     * and regex. This counts the trees sharing it; the last one frees it. NULL: not shared,
     * this tree owns it alone. */
    uint32_t *routing_refs;
};

/* The session cookie (A55) of an RPC that `route` sent to weighted entry `entry`
 * (XLB_ROUTE_NONE: the route does not tell its entries apart): its name, NULL when the filter
 * does nothing for it, and its attributes in *attrs. vip->route_cookie must be set. */
static inline const char *xlb_lb_session_cookie(const struct xlb_lb_vip *vip, uint32_t route,
                                                uint32_t entry,
                                                const struct xlb_lb_cookie_attrs **attrs)
{
    uint32_t first =
        vip->route_first_entry != NULL ? vip->route_first_entry[route] : XLB_ROUTE_NONE;
    if (first != XLB_ROUTE_NONE && entry != XLB_ROUTE_NONE) {
        *attrs = &vip->entry_cookie_attrs[first + entry];
        return vip->entry_cookie[first + entry];
    }
    *attrs = vip->route_cookie_attrs != NULL ? &vip->route_cookie_attrs[route] : NULL;
    return vip->route_cookie[route];
}

/* ---- worker side ---- */

struct xlb_lb_connectivity; /* xlb_lb_connectivity.h */

/*
 * Everything a pick needs besides the snapshot, owned by one lcore (or by one simulate run).
 * load NULL makes a dry run: nothing is counted (simulate).
 */
/* A worker's in-flight counts as a least-request pick over cluster c's endpoint indexes reads
 * them: its own counters only (A48: each worker is one channel); `sums` (simulate: per
 * endpoint slot, summed over workers) instead when given. */
static inline struct xlb_in_flight_view xlb_lb_in_flight_view(const struct xlb_lb_cluster *c,
                                                              const struct xlb_worker_load *load,
                                                              const uint32_t *sums)
{
    if (sums != NULL)
        return (struct xlb_in_flight_view){.counts = sums,
                                           .count_stride = sizeof(uint32_t),
                                           .n_counts = XLB_ENDPOINT_SLOTS,
                                           .keys = &c->endpoints[0].slot,
                                           .key_stride = sizeof(struct xlb_lb_endpoint),
                                           .n_keys = c->n_endpoints};
    return (struct xlb_in_flight_view){
        .counts = load != NULL ? &load->endpoints[0].in_flight : NULL,
        .count_stride = sizeof(struct xlb_endpoint_load),
        .n_counts = load != NULL ? XLB_ENDPOINT_SLOTS : 0,
        .keys = &c->endpoints[0].slot,
        .key_stride = sizeof(struct xlb_lb_endpoint),
        .n_keys = c->n_endpoints,
    };
}

struct xlb_lb_worker {
    struct xlb_rng rng;
    struct xlb_route_scratch *scratch;
    pcre2_match_data *hash_match;     /* regex_rewrite of hash policies */
    pcre2_match_context *hash_limits; /* XLB_ROUTE_MATCH_LIMIT */
    struct xlb_rr_cursor cursors[XLB_LOCALITY_SLOTS];
    /* A62: the endpoint each pick-first cluster (by cluster slot) sticks to on this lcore. */
    struct xlb_pick_first_state pick_first[XLB_CLUSTER_SLOTS];
    /* A58: each WRR locality's scheduler on this lcore, by locality slot as the cursors. */
    struct xlb_wrr_sched wrr[XLB_LOCALITY_SLOTS];
    struct xlb_worker_load *load;        /* this lcore's counters, or NULL */
    const struct xlb_worker_load *loads; /* every worker's (circuit breaker), or NULL */
    unsigned n_workers;
    /* Its subchannels' states (xlb_lb_connectivity_init), or NULL: then picks with
     * connectivity are picks without, as before. */
    struct xlb_lb_connectivity *connectivity;
    /* xlbctl simulate only (NULL on workers): in flight per endpoint slot summed over workers,
     * and where the least-request picks leave their candidates. */
    const uint32_t *in_flight_sums;
    struct xlb_least_request_trace *least_request_trace;
    /* xlbctl simulate only: per endpoint slot, the WRR share the workers' schedulers use now
     * (their mean), so that picks without connectivity weigh as the stream mode does. */
    const uint32_t *wrr_shares;
};

/* A62: the lcore's sticky state for pick-first cluster c; `none` (a throwaway) when c has no
 * cluster slot (the slot tables were full): then every pick starts from the list's head. */
static inline struct xlb_pick_first_state *
xlb_lb_pick_first_state(const struct xlb_lb_cluster *c, struct xlb_lb_worker *w,
                        struct xlb_pick_first_state *none)
{
    return c->cluster_slot < XLB_CLUSTER_SLOTS ? &w->pick_first[c->cluster_slot] : none;
}

/* The session cookie's content (A55/A60), already decoded; n_addresses 0 when none. */
struct xlb_lb_session {
    uint32_t n_addresses;
    struct xlb_host_port addresses[XLB_HOST_PORT_LIST_MAX];
    const char *cluster; /* A60: the cluster the session was pinned in; NULL for any */
    uint32_t cluster_len;
};

struct xlb_lb_request {
    const struct xlb_route_request *http; /* L7 request; ignored for L4 VIPs */
    uint64_t connection_id;               /* A42 channel-id hash input; L4: the flow hash */
    /* A decoded session, or NULL: then an L7 pick reads the route's session cookie from the
     * request's "cookie" fields itself. */
    const struct xlb_lb_session *session;
    /* The stream mode's picks over subchannels (xlb_lb_connectivity.h): only READY endpoints
     * are picked, priorities fail over as A56 says, and the pick may queue. false: every usable
     * endpoint as before (L4, splice, simulate). */
    bool connectivity;
    uint64_t now_ms; /* the caller's clock for A56's failover timers, with connectivity */
};

enum xlb_lb_outcome {
    XLB_LB_PICKED,
    XLB_LB_NO_ROUTE,       /* no virtual host or route matched */
    XLB_LB_NON_FORWARDING, /* matched a non-forwarding or unsupported action */
    XLB_LB_NOT_READY,      /* the route's cluster is missing or in error */
    XLB_LB_DROPPED,        /* a drop overload category (trace.drop_category) */
    XLB_LB_CIRCUIT_OPEN,   /* max_requests in flight */
    XLB_LB_NO_ENDPOINT,    /* no priority has a usable endpoint */
    /* With connectivity only: the chosen priority (trace.cluster, trace.priority) or the
     * session's endpoint (also trace.endpoint, trace.slot) has no READY connection yet. */
    XLB_LB_QUEUE,
};

enum xlb_lb_override_outcome {
    XLB_LB_OVERRIDE_NONE,          /* no session cookie */
    XLB_LB_OVERRIDE_USED,          /* the cookie's endpoint took the pick */
    XLB_LB_OVERRIDE_OTHER_CLUSTER, /* A60: the cookie names another cluster */
    XLB_LB_OVERRIDE_UNKNOWN,       /* no endpoint of the cluster has the cookie's addresses */
    XLB_LB_OVERRIDE_STATUS,        /* its health status is not in override_host_status */
    XLB_LB_OVERRIDE_UNUSABLE,      /* ejected or failing */
};

/* The decision, for the caller and for simulate's trace. */
struct xlb_lb_trace {
    uint8_t outcome;                      /* enum xlb_lb_outcome */
    uint8_t override;                     /* enum xlb_lb_override_outcome */
    bool hashed;                          /* ring hash: the hash came from a policy (else random) */
    uint32_t vhost, route;                /* XLB_ROUTE_NONE when not applicable */
    uint32_t target;                      /* index into vip->targets, or XLB_ROUTE_NONE */
    const struct xlb_lb_cluster *cluster; /* the leaf that decided; NULL before that */
    uint32_t priority, locality;          /* XLB_PICK_NONE when not applicable */
    uint32_t endpoint;                    /* index into cluster->endpoints, XLB_PICK_NONE if none */
    uint32_t slot;
    uint64_t hash;
    const char *drop_category;
    uint32_t entry; /* the weighted cluster entry drawn when the route tells them apart (A39) */
    const char *session_cookie; /* the session cookie name for the route (or its entry drawn),
                                 * NULL when none applies */
    const struct xlb_lb_cookie_attrs *session_attrs; /* its attributes, with session_cookie */
};

/*
 * Pick an endpoint for one request on a VIP. Returns trace->outcome; on
 * XLB_LB_PICKED trace->cluster/endpoint/slot name the endpoint. When w->load is set, the pick
 * is counted: locality `issued`, drop categories, and the cluster's requests in flight.
 */
enum xlb_lb_outcome xlb_lb_pick(const struct xlb_lb_vip *vip, const struct xlb_lb_request *request,
                                struct xlb_lb_worker *w, struct xlb_lb_trace *trace);

/*
 * The leaf-cluster part of the pick (A75: cluster impl -> override host -> priority), from
 * drop overloads on. session NULL: no override (none given, or it names another cluster).
 */
enum xlb_lb_outcome xlb_lb_pick_cluster(const struct xlb_lb_cluster *c,
                                        const struct xlb_lb_session *session, uint64_t hash,
                                        bool hashed, struct xlb_lb_worker *w,
                                        struct xlb_lb_trace *trace);

/* The request hash of A42 for a route's policies; *hashed false when none produced one. */
uint64_t xlb_lb_request_hash(const struct xlb_lb_vip *vip, uint32_t route,
                             const struct xlb_lb_request *request, struct xlb_lb_worker *w,
                             bool *hashed);

/* Requests in flight on a cluster: the sum over workers of started minus finished. */
uint64_t xlb_lb_in_flight(const struct xlb_lb_worker *w, uint32_t cluster_slot);

/* ---- control plane ---- */

/* Initialise a worker (or simulate) state: seeded rng, random round-robin starts. */
int xlb_lb_worker_init(struct xlb_lb_worker *w, uint64_t seed, struct xlb_worker_load *load,
                       const struct xlb_worker_load *loads, unsigned n_workers);
void xlb_lb_worker_fini(struct xlb_lb_worker *w);

/* Reference counting (control plane only); release frees at zero. NULL is a no-op. */
/* A fresh xlb_lb_cluster.generation (control plane, at each compile). */
uint64_t xlb_lb_cluster_generation(void);
void xlb_lb_cluster_hold(struct xlb_lb_cluster *c);
void xlb_lb_cluster_release(struct xlb_lb_cluster *c);
void xlb_lb_vip_hold(struct xlb_lb_vip *v);
void xlb_lb_vip_release(struct xlb_lb_vip *v);

const char *xlb_lb_outcome_name(enum xlb_lb_outcome outcome);
const char *xlb_lb_override_name(enum xlb_lb_override_outcome outcome);

/*
 * Decode a session cookie's value (A55/A60): base64 of "ip:port[,ip:port...]" optionally
 * followed by ";cluster". The cluster name points into `scratch` (at least len bytes).
 * Returns 0, or -EINVAL for anything malformed (then the request goes without override).
 */
/* The value of cookie `name` in the request's "cookie" fields ("a=1; b=2"), or NULL. */
const char *xlb_lb_find_cookie(const struct xlb_route_request *http, const char *name,
                               uint32_t *len);

/* RFC 6265 5.1.4: whether a request path matches a cookie path. */
bool xlb_lb_cookie_path_match(const char *request_path, uint32_t request_len,
                              const char *cookie_path);

int xlb_lb_session_decode(const char *value, uint32_t len, char *scratch, uint32_t scratch_len,
                          struct xlb_lb_session *out);

#endif
