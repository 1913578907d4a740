/* See xlb_stall.h. */
#include "xlb_stall.h"

#include <string.h>

#include "xlb_log.h"

void xlb_stall_watch_init(struct xlb_stall_watch *watch, unsigned limit_ms, uint64_t tsc_hz,
                          uint64_t now_tsc)
{
    memset(watch, 0, sizeof(*watch));
    watch->limit_ms = limit_ms;
    watch->limit_tsc = (uint64_t)limit_ms * tsc_hz / 1000;
    watch->since_tsc = now_tsc;
}

/* The TSC of the worker's last report, or when watching began if it has never reported. */
static uint64_t last_report(const struct xlb_stall_watch *watch, const struct xlb_worker_stats *s)
{
    uint64_t last = __atomic_load_n(&s->last_quiescent_tsc, __ATOMIC_RELAXED);
    return last > watch->since_tsc ? last : watch->since_tsc;
}

unsigned xlb_stall_watch_check(struct xlb_stall_watch *watch, const struct xlb_worker_stats *stats,
                               unsigned n_workers, uint64_t now_tsc)
{
    unsigned n_stalled = 0;
    for (unsigned w = 0; w < n_workers && w < XLB_MAX_WORKERS; w++) {
        uint64_t last = last_report(watch, &stats[w]);
        uint64_t age = now_tsc > last ? now_tsc - last : 0;
        bool stalled = age > watch->limit_tsc;
        if (stalled && !watch->stalled[w]) {
            watch->episodes[w]++;
            XLB_LOG(WARNING, WORKER,
                    "worker %u stalled: no quiescent state reported for over %u ms; retired "
                    "snapshots wait for it",
                    w, watch->limit_ms);
        } else if (!stalled && watch->stalled[w]) {
            XLB_LOG(NOTICE, WORKER, "worker %u reports quiescent states again", w);
        }
        watch->stalled[w] = stalled;
        n_stalled += stalled;
    }
    watch->n_stalled = n_stalled;
    return n_stalled;
}
