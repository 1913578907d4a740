/*
 * Stalled workers, seen from the control plane. A worker reports a quiescent state to RCU once
 * per poll loop and stamps the TSC of that report in its stats (last_quiescent_tsc). A worker
 * whose stamp is older than the limit is stalled: it holds back the reclaim of every snapshot
 * retired since, and it serves none of its queues. The control plane checks from its event
 * loop; each episode is logged once when it starts and once when it ends, and counted.
 */
#ifndef XLB_STALL_H
#define XLB_STALL_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_counters.h"
#include "xlb_limits.h"

struct xlb_stall_watch {
    unsigned limit_ms;
    uint64_t limit_tsc;
    /* When watching began: the age of a worker that has never reported is counted from here. */
    uint64_t since_tsc;
    unsigned n_stalled;
    bool stalled[XLB_MAX_WORKERS];
    uint64_t episodes[XLB_MAX_WORKERS]; /* stalls seen per worker, ever */
};

/* Start watching at now_tsc: a worker is stalled after limit_ms without a report. */
void xlb_stall_watch_init(struct xlb_stall_watch *watch, unsigned limit_ms, uint64_t tsc_hz,
                          uint64_t now_tsc);

/* Compare every worker's last report with now_tsc; returns how many workers are stalled. */
unsigned xlb_stall_watch_check(struct xlb_stall_watch *watch, const struct xlb_worker_stats *stats,
                               unsigned n_workers, uint64_t now_tsc);

#endif
