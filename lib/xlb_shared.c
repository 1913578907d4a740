#include "xlb_shared.h"

#include <errno.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "xlb_log.h"
#include "xlb_msg.h"

/* Each defer-queue element is one retired snapshot pointer. */
static void free_retired(void *arg, void *elements, unsigned int n)
{
    struct xlb_snapshot **snaps = elements;
    for (unsigned i = 0; i < n; i++)
        xlb_snapshot_free(snaps[i]);
}

static int create_rings(struct xlb_shared *shared)
{
    char name[RTE_RING_NAMESIZE];
    for (unsigned w = 0; w < shared->n_workers; w++) {
        snprintf(name, sizeof(name), "xlb_to_ctl_%u", w);
        shared->to_control[w] = xlb_msg_ring_create(name, SOCKET_ID_ANY);
        snprintf(name, sizeof(name), "xlb_to_wrk_%u", w);
        shared->to_worker[w] = xlb_msg_ring_create(name, SOCKET_ID_ANY);
        snprintf(name, sizeof(name), "xlb_redirect_%u", w);
        shared->redirect[w] =
            rte_ring_create(name, XLB_REDIRECT_RING_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
        if (shared->to_control[w] == NULL || shared->to_worker[w] == NULL ||
            shared->redirect[w] == NULL)
            return -1;
    }
    return 0;
}

struct xlb_shared *xlb_shared_create(unsigned n_workers)
{
    if (n_workers == 0 || n_workers > XLB_MAX_WORKERS)
        return NULL;
    struct xlb_shared *shared = rte_zmalloc("xlb_shared", sizeof(*shared), 0);
    if (shared == NULL)
        return NULL;
    shared->n_workers = n_workers;
    shared->stats = rte_zmalloc("xlb_worker_stats", sizeof(*shared->stats) * n_workers, 0);
    shared->load = rte_zmalloc("xlb_worker_load", sizeof(*shared->load) * n_workers, 0);
    size_t qsbr_size = rte_rcu_qsbr_get_memsize(n_workers);
    shared->qsbr = rte_zmalloc("xlb_qsbr", qsbr_size, RTE_CACHE_LINE_SIZE);
    if (shared->stats == NULL || shared->load == NULL || shared->qsbr == NULL ||
        rte_rcu_qsbr_init(shared->qsbr, n_workers) != 0)
        goto fail;

    struct rte_rcu_qsbr_dq_parameters params = {
        .name = "xlb_retired",
        .flags = RTE_RCU_QSBR_DQ_MT_UNSAFE, /* only the control thread enqueues and reclaims */
        .size = XLB_RETIRED_QUEUE_SIZE,
        .esize = sizeof(struct xlb_snapshot *),
        .trigger_reclaim_limit = 0, /* try to reclaim on every enqueue */
        .max_reclaim_size = XLB_RETIRED_QUEUE_SIZE,
        .free_fn = free_retired,
        .v = shared->qsbr,
    };
    shared->retired = rte_rcu_qsbr_dq_create(&params);
    if (shared->retired == NULL || create_rings(shared) != 0)
        goto fail;
    xlb_stall_watch_init(&shared->stall, XLB_DEFAULT_WORKER_STALL_MS, rte_get_tsc_hz(),
                         rte_rdtsc());
    return shared;
fail:
    XLB_LOG(ERR, SNAPSHOT, "cannot create shared state: %s", rte_strerror(rte_errno));
    xlb_shared_destroy(shared);
    return NULL;
}

void xlb_shared_destroy(struct xlb_shared *shared)
{
    if (shared == NULL)
        return;
    if (shared->retired != NULL)
        rte_rcu_qsbr_dq_delete(shared->retired);
    /* The workers have returned: nothing can see the waiting snapshots any more. */
    struct xlb_retired_overflow *o = &shared->overflow;
    for (; o->count > 0; o->count--, o->head = (o->head + 1) % XLB_RETIRED_OVERFLOW_SIZE)
        xlb_snapshot_free(o->entries[o->head].snap);
    xlb_snapshot_free(shared->current);
    for (unsigned w = 0; w < shared->n_workers; w++) {
        rte_ring_free(shared->to_control[w]);
        rte_ring_free(shared->to_worker[w]);
        struct rte_mbuf *m;
        while (shared->redirect[w] != NULL &&
               rte_ring_dequeue(shared->redirect[w], (void **)&m) == 0)
            rte_pktmbuf_free(m);
        rte_ring_free(shared->redirect[w]);
    }
    rte_free(shared->qsbr);
    rte_free(shared->load);
    rte_free(shared->stats);
    rte_free(shared);
}

bool xlb_snapshot_can_publish(const struct xlb_shared *shared)
{
    return shared->overflow.count < XLB_RETIRED_OVERFLOW_SIZE;
}

/* Once snapshots wait outside the queue, the next ones join them rather than try the queue,
 * which logs each failed enqueue: the list stays in token order and the log quiet. */
static void retire(struct xlb_shared *shared, struct xlb_snapshot *old)
{
    struct xlb_retired_overflow *o = &shared->overflow;
    if (o->count == 0 && rte_rcu_qsbr_dq_enqueue(shared->retired, &old) == 0)
        return;
    unsigned tail = (o->head + o->count) % XLB_RETIRED_OVERFLOW_SIZE;
    o->entries[tail].snap = old;
    o->entries[tail].token = rte_rcu_qsbr_start(shared->qsbr);
    o->count++;
    o->overflowed++;
}

int xlb_snapshot_publish(struct xlb_shared *shared, struct xlb_snapshot *snap)
{
    if (!xlb_snapshot_can_publish(shared)) {
        shared->overflow.refused++;
        return -EBUSY;
    }
    struct xlb_snapshot *old = shared->current;
    __atomic_store_n(&shared->current, snap, __ATOMIC_RELEASE);
    if (old != NULL)
        retire(shared, old);
    return 0;
}

/* Free waiting snapshots from the oldest on, while their grace period is over. */
static void reclaim_overflow(struct xlb_shared *shared)
{
    struct xlb_retired_overflow *o = &shared->overflow;
    while (o->count > 0 &&
           rte_rcu_qsbr_check(shared->qsbr, o->entries[o->head].token, false) == 1) {
        xlb_snapshot_free(o->entries[o->head].snap);
        o->entries[o->head].snap = NULL;
        o->head = (o->head + 1) % XLB_RETIRED_OVERFLOW_SIZE;
        o->count--;
    }
}

unsigned xlb_snapshot_reclaim(struct xlb_shared *shared)
{
    unsigned freed = 0, pending = 0, available = 0;
    rte_rcu_qsbr_dq_reclaim(shared->retired, XLB_RETIRED_QUEUE_SIZE, &freed, &pending, &available);
    reclaim_overflow(shared);
    return pending + shared->overflow.count;
}
