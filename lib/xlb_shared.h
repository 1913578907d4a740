/*
 * The meeting point of the two planes: the published snapshot, the RCU state that guards it,
 * the per-worker counters and the message rings. xlbd creates one; the control plane and the
 * workers each receive a pointer to it and touch only their own side of each field.
 */
#ifndef XLB_SHARED_H
#define XLB_SHARED_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "xlb_counters.h"
#include "xlb_limits.h"
#include "xlb_load.h"
#include "xlb_snapshot.h"

struct xlb_shared {
    unsigned n_workers;
    /* Written by control (release), read by workers (acquire). */
    struct xlb_snapshot *current;
    struct rte_rcu_qsbr *qsbr;
    struct rte_rcu_qsbr_dq *retired;
    /* One per worker; each written only by its worker. */
    struct xlb_worker_stats *stats;
    struct xlb_worker_load *load;
    struct rte_ring *to_control[XLB_MAX_WORKERS];
    struct rte_ring *to_worker[XLB_MAX_WORKERS];
    /* Packets for worker w from the others (multi-producer, worker w consumes): a backend's
     * reply that arrived on another worker's queue goes to the worker owning its SNAT port. */
    struct rte_ring *redirect[XLB_MAX_WORKERS];
    /* Whether worker w forwards (has a flow table): set before the workers start. Only the
     * worker touches its table; the control plane asks it by message (FLUSH_ENDPOINT, and
     * FLOWS_DUMP with lib/xlb_flow_dump.h's protocol). */
    bool has_flows[XLB_MAX_WORKERS];
    /* Set by the control plane to stop the workers. */
    volatile bool stop;
};

struct xlb_shared *xlb_shared_create(unsigned n_workers);
/* Call only after every worker has returned. Frees the current snapshot too. */
void xlb_shared_destroy(struct xlb_shared *shared);

/* Control plane: make snap current and retire the previous one; 0 on success. */
int xlb_snapshot_publish(struct xlb_shared *shared, struct xlb_snapshot *snap);
/* Control plane: free retired snapshots no worker can still see; returns how many are pending. */
unsigned xlb_snapshot_reclaim(struct xlb_shared *shared);

/* Workers: the snapshot to use for this burst. */
static inline const struct xlb_snapshot *xlb_snapshot_acquire(const struct xlb_shared *shared)
{
    return __atomic_load_n(&shared->current, __ATOMIC_ACQUIRE);
}

/* Control plane: the snapshot it last published (it is the only writer). */
static inline const struct xlb_snapshot *xlb_snapshot_latest(const struct xlb_shared *shared)
{
    return __atomic_load_n(&shared->current, __ATOMIC_RELAXED);
}

#endif
