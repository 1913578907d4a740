/* See capacity_watch.h. */
#include "capacity_watch.h"

#include <inttypes.h>
#include <stdio.h>

bool xlb_capacity_watch_check(struct xlb_capacity_watch *w, const struct xlb_worker_stats *stats,
                              unsigned n, char *line, size_t len)
{
    uint64_t refused = 0;
    size_t at = 0;
    unsigned full = 0;
    if (len == 0)
        return false;
    line[0] = '\0';
    for (unsigned i = 0; i < n && i < XLB_MAX_WORKERS; i++) {
        const struct xlb_worker_stats *s = &stats[i];
        uint64_t now = s->events[XLB_EVENT_L7_POOL_FULL];
        refused += now - w->refused[i];
        w->refused[i] = now;
        if (s->l7_capacity == 0 ||
            s->l7_in_use * 100 < s->l7_capacity * XLB_CAPACITY_NEARLY_FULL_PCT)
            continue;
        if (at < len)
            at += (size_t)snprintf(
                line + at, len - at, "%sworker %u %" PRIu64 "/%" PRIu64 " (high water %" PRIu64 ")",
                full++ ? ", " : "", i, s->l7_in_use, s->l7_capacity, s->l7_high_water);
    }
    if (full == 0 && refused == 0)
        return false;
    if (full == 0 && at < len)
        at += (size_t)snprintf(line + at, len - at, "no worker");
    if (at < len)
        snprintf(line + at, len - at,
                 " at %d %% or more; %" PRIu64 " connections refused (events.l7_pool_full)",
                 XLB_CAPACITY_NEARLY_FULL_PCT, refused);
    return true;
}
