/*
 * The control plane's watch over the workers' L7 connection pools: each interval it reads the
 * workers' gauges and their `l7_pool_full` refusals (struct xlb_worker_stats) and says, in one
 * log line, which pools are nearly full and how many connections were refused since the last
 * interval. The workers never log; the line comes at most once per interval.
 */
#ifndef XLB_CAPACITY_WATCH_H
#define XLB_CAPACITY_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xlb_counters.h"
#include "xlb_limits.h"

#define XLB_CAPACITY_WATCH_MS        10000 /* the interval */
#define XLB_CAPACITY_NEARLY_FULL_PCT 90    /* a pool this full (in use / capacity) is reported */

struct xlb_capacity_watch {
    uint64_t refused[XLB_MAX_WORKERS]; /* each worker's events.l7_pool_full at the last look */
};

/*
 * Look at n workers' stats: true, with the line to log in line (len bytes), when a pool is at
 * least XLB_CAPACITY_NEARLY_FULL_PCT full or connections were refused since the last look.
 * The refusal counts move on at every look.
 */
bool xlb_capacity_watch_check(struct xlb_capacity_watch *w, const struct xlb_worker_stats *stats,
                              unsigned n, char *line, size_t len);

#endif
