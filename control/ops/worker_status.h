/*
 * One worker's state as every operator surface shows it, gathered once from the workers'
 * shared stats and rendered three ways: the control socket's `status` (commands.c), DPDK
 * telemetry's /xlb/workers (telemetry.c) and the Prometheus worker families (metrics.c).
 *
 * busy_percent is an integer, busy cycles x 100 / (busy + idle cycles), rounded down, 0 before
 * the first loop: DPDK 22.11's telemetry dictionaries hold no floating-point values, so one
 * integer is what all surfaces can show alike (docs/operations.md).
 */
#ifndef XLB_WORKER_STATUS_H
#define XLB_WORKER_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_shared.h"

struct xlb_worker_status {
    unsigned worker, lcore;
    struct xlb_worker_stats counters; /* a copy, read once (single writer, aligned values) */
    bool quiesced;                    /* the worker has reported a quiescent state */
    double last_quiescent_ms_ago;     /* when quiesced */
    uint64_t busy_percent;
    bool stalled;            /* silent to RCU for longer than xlb.worker_stall_ms */
    uint64_t stall_episodes; /* times it has been, ever */
};

/* Worker w's status; lcores[w] is its lcore. */
void xlb_worker_status_gather(const struct xlb_shared *shared, const unsigned *lcores, unsigned w,
                              struct xlb_worker_status *out);

#endif
