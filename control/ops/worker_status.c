/* See worker_status.h. */
#include "worker_status.h"

#include <rte_cycles.h>

void xlb_worker_status_gather(const struct xlb_shared *shared, const unsigned *lcores, unsigned w,
                              struct xlb_worker_status *out)
{
    out->worker = w;
    out->lcore = lcores[w];
    out->counters = shared->stats[w];
    uint64_t last = out->counters.last_quiescent_tsc;
    out->quiesced = last != 0;
    out->last_quiescent_ms_ago =
        last != 0 ? (double)(rte_rdtsc() - last) * 1000.0 / (double)rte_get_tsc_hz() : 0;
    out->stalled = shared->stall.stalled[w];
    out->stall_episodes = shared->stall.episodes[w];
    uint64_t busy = out->counters.busy_cycles, idle = out->counters.idle_cycles;
    out->busy_percent = busy + idle ? (uint64_t)((double)busy * 100.0 / (double)(busy + idle)) : 0;
}
