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
#include "xlb_stall.h"

/* Retired snapshots the defer queue holds at most. DPDK sizes its ring to size + 1 rounded up
 * to a power of two, one slot of which stays empty: 2^n - 1 is exactly what it holds. With
 * workers that report, reclaim on every enqueue keeps it at one or two. */
#define XLB_RETIRED_QUEUE_SIZE 127
/* Retired snapshots the defer queue could not take, because a stalled worker keeps it full:
 * publishing never waits for the workers, so they wait here, each with the grace-period token
 * taken when it was retired, and the event loop frees them once that period is over. With this
 * list full as well, publishing refuses (the workers keep the current snapshot), which bounds
 * the memory a stalled worker can hold to this many snapshots plus the queue's. */
#define XLB_RETIRED_OVERFLOW_SIZE 64

struct xlb_retired_overflow {
    struct {
        struct xlb_snapshot *snap;
        uint64_t token;
    } entries[XLB_RETIRED_OVERFLOW_SIZE];
    unsigned head, count; /* a FIFO: tokens grow from head on */
    uint64_t overflowed;  /* snapshots that had to wait here, ever */
    uint64_t refused;     /* publishes refused because it was full, ever */
};

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
    /* Control plane only: retired snapshots waiting outside the defer queue, and the watch
     * over workers that stopped reporting quiescent states. */
    struct xlb_retired_overflow overflow;
    struct xlb_stall_watch stall;
    /* Tests only: worker w stops reporting quiescent states (and serving) while
     * test_stall[w] is set; xlbd toggles it on SIGUSR1 when started with XLB_TEST_STALL=w
     * (control_plane.c), and never otherwise. */
    volatile bool test_stall[XLB_MAX_WORKERS];
    /* Set by the control plane on SIGTERM while stream-mode clients are connected: the workers
     * send their HTTP/2 clients GOAWAY and let the RPCs in flight finish; stop follows. */
    volatile bool drain;
    /* Set by the control plane to stop the workers. */
    volatile bool stop;
};

struct xlb_shared *xlb_shared_create(unsigned n_workers);
/* Call only after every worker has returned. Frees the current snapshot too. */
void xlb_shared_destroy(struct xlb_shared *shared);

/* Control plane: make snap current and retire the previous one. Never waits for the workers.
 * 0 on success (snap is theirs now); -EBUSY when retired snapshots already fill the memory they
 * may hold (a stalled worker): nothing changes and snap remains the caller's. */
int xlb_snapshot_publish(struct xlb_shared *shared, struct xlb_snapshot *snap);
/* Control plane: whether xlb_snapshot_publish would accept a snapshot now. */
bool xlb_snapshot_can_publish(const struct xlb_shared *shared);
/* Control plane: free retired snapshots no worker can still see, without waiting; returns how
 * many retired snapshots remain. */
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
