/*
 * The worker's connectivity memory behind xlb_lb_connectivity.h, shared by its two users in
 * lib/lb: xlb_lb_connectivity.c (states, counts, failover timers) and xlb_lb_pick_ready.c (the
 * pick over READY endpoints). Not for callers outside lib/lb.
 *
 * A pick must not count a priority's READY endpoints by scanning them, so counts per
 * (cluster slot, priority) and per locality are cached and recounted only when some state of
 * this worker changed since (the epoch) or the cluster was recompiled (its generation):
 * connections change state far less often than RPCs are picked.
 */
#ifndef XLB_LB_CONNECTIVITY_STATE_H
#define XLB_LB_CONNECTIVITY_STATE_H

#include "xlb_lb.h"
#include "xlb_lb_connectivity.h"

/* Priorities per cluster with cached counts and a failover timer; the rest are counted on
 * every pick and fail over at once (EDS rarely has more than a handful). */
#define XLB_CONN_PRIORITIES 8u

struct xlb_conn_counts {
    uint32_t ready;            /* READY endpoints among the normal pick's candidates */
    uint32_t waiting;          /* IDLE or CONNECTING ones: the priority may still come up */
    bool every_locality_ready; /* each locality with a candidate has a READY one */
};

struct xlb_conn_priority {
    struct xlb_conn_counts counts;
    bool timer_running;        /* A56 failover timer */
    bool given_up;             /* all TRANSIENT_FAILURE or the timer fired: skipped until READY */
    uint64_t waiting_since_ms; /* when the timer started */
};

struct xlb_conn_cluster {
    uint64_t generation; /* of the compiled cluster the counts are for; 0: none */
    uint32_t epoch;      /* the worker's state epoch they were counted at */
    struct xlb_conn_priority priorities[XLB_CONN_PRIORITIES];
};

struct xlb_lb_connectivity {
    uint32_t epoch;                              /* bumped by every state change */
    uint8_t state[XLB_ENDPOINT_SLOTS];           /* enum xlb_connectivity per endpoint slot */
    uint32_t locality_ready[XLB_LOCALITY_SLOTS]; /* by locality load slot, with its cluster's */
    struct xlb_conn_cluster clusters[XLB_CLUSTER_SLOTS];
};

static inline enum xlb_connectivity xlb_conn_state(const struct xlb_lb_connectivity *conn,
                                                   uint32_t slot)
{
    return slot < XLB_ENDPOINT_SLOTS ? (enum xlb_connectivity)conn->state[slot] : XLB_CONN_IDLE;
}

/* The counts of priority p of c, recounted first when stale. */
struct xlb_conn_counts xlb_conn_priority_counts(struct xlb_lb_connectivity *conn,
                                                const struct xlb_lb_cluster *c, uint32_t p);

/* READY endpoints of locality l of priority p (after xlb_conn_priority_counts for c). */
uint32_t xlb_conn_locality_ready(const struct xlb_lb_connectivity *conn,
                                 const struct xlb_lb_cluster *c, uint32_t p, uint32_t l);

/* Whether the cached counts of priority p of c are current (xlb_conn_priority_counts made
 * them so, unless c cannot be cached). */
bool xlb_conn_counts_current(const struct xlb_lb_connectivity *conn, const struct xlb_lb_cluster *c,
                             uint32_t p);

/* The failover timer of (c, p); NULL for priorities past XLB_CONN_PRIORITIES or no slot. */
struct xlb_conn_priority *xlb_conn_timer(struct xlb_lb_connectivity *conn,
                                         const struct xlb_lb_cluster *c, uint32_t p);

/*
 * The normal pick with connectivity (contract items 3 and 4): the A56 priority over READY
 * endpoints, then the locality and round robin, or the ring, among READY endpoints only.
 * XLB_LB_PICKED with *index set, XLB_LB_QUEUE naming the priority that waits, or
 * XLB_LB_NO_ENDPOINT.
 */
enum xlb_lb_outcome xlb_lb_pick_ready(const struct xlb_lb_cluster *c, uint64_t hash, bool hashed,
                                      uint64_t now_ms, struct xlb_lb_worker *w,
                                      struct xlb_lb_trace *trace, uint32_t *index);

/*
 * A75's priority over an aggregate's leaves with connectivity: the first leaf whose A56 choice
 * (above) finds a READY priority or one within its failover timer; else the first with a
 * priority still connecting; else the last leaf.
 */
uint32_t xlb_lb_ready_leaf(const struct xlb_lb_target *target, struct xlb_lb_worker *w,
                           uint64_t now_ms);

#endif
