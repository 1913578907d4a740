/* Happy eyeballs decisions (xlb_eyeballs.h). */
#include "xlb_eyeballs.h"

/* The first address after `after` that may be tried, or XLB_EYEBALLS_NONE. */
static uint32_t next_usable(const struct xlb_eyeballs *eb, uint32_t after)
{
    for (uint32_t k = after == XLB_EYEBALLS_NONE ? 0 : after + 1; k < eb->n; k++)
        if (eb->usable & (1u << k))
            return k;
    return XLB_EYEBALLS_NONE;
}

/* Address k starts now; the timer is armed when another is left after it. */
static uint32_t start(struct xlb_eyeballs *eb, uint32_t k, uint64_t now_ms)
{
    if (k == XLB_EYEBALLS_NONE) {
        eb->due_ms = 0;
        return k;
    }
    eb->live |= (uint8_t)(1u << k);
    eb->last = (uint8_t)k;
    /* now_ms + the delay is never 0, which means no timer. */
    eb->due_ms = next_usable(eb, k) != XLB_EYEBALLS_NONE ? now_ms + XLB_EYEBALLS_DELAY_MS : 0;
    return k;
}

uint32_t xlb_eyeballs_begin(struct xlb_eyeballs *eb, uint32_t n, uint32_t usable, uint64_t now_ms)
{
    if (n > XLB_EYEBALLS_MAX)
        n = XLB_EYEBALLS_MAX;
    *eb = (struct xlb_eyeballs){
        .n = (uint8_t)n,
        .usable = (uint8_t)(usable & ((1u << n) - 1u)),
        .last = XLB_EYEBALLS_NONE,
        .won = XLB_EYEBALLS_NONE,
    };
    return start(eb, next_usable(eb, XLB_EYEBALLS_NONE), now_ms);
}

uint32_t xlb_eyeballs_due(struct xlb_eyeballs *eb, uint64_t now_ms)
{
    if (eb->due_ms == 0 || now_ms < eb->due_ms || eb->won != XLB_EYEBALLS_NONE)
        return XLB_EYEBALLS_NONE;
    return start(eb, next_usable(eb, eb->last), now_ms);
}

uint32_t xlb_eyeballs_failed(struct xlb_eyeballs *eb, uint32_t k, uint64_t now_ms)
{
    if (k >= eb->n || !(eb->live & (1u << k)))
        return XLB_EYEBALLS_NONE;
    eb->live &= (uint8_t) ~(1u << k);
    /* An older attempt failing leaves the latest its delay; the latest failing starts the
     * next at once (a refused connection need not wait 250 ms for the next address). */
    if (k != eb->last || eb->won != XLB_EYEBALLS_NONE)
        return XLB_EYEBALLS_NONE;
    return start(eb, next_usable(eb, k), now_ms);
}

uint32_t xlb_eyeballs_connected(struct xlb_eyeballs *eb, uint32_t k)
{
    if (k >= eb->n)
        return 0;
    eb->won = (uint8_t)k;
    eb->live &= (uint8_t) ~(1u << k);
    eb->due_ms = 0;
    uint32_t others = eb->live;
    eb->live = 0;
    return others;
}
