#include "xlb_tcp_timer_wheel.h"

#include <stddef.h>
#include <string.h>

void xlb_tcp_wheel_init(struct xlb_tcp_wheel *w, uint64_t now_ms)
{
    memset(w, 0, sizeof(*w));
    w->done_ms = now_ms;
}

void xlb_tcp_wheel_cancel(struct xlb_tcp_wheel *w, struct xlb_tcp_timer *t)
{
    if (!t->pprev)
        return;
    *t->pprev = t->next;
    if (t->next)
        t->next->pprev = t->pprev;
    t->next = NULL;
    t->pprev = NULL;
    w->armed--;
}

void xlb_tcp_wheel_arm(struct xlb_tcp_wheel *w, struct xlb_tcp_timer *t, uint64_t expiry_ms)
{
    xlb_tcp_wheel_cancel(w, t);
    /* A deadline already passed goes to the first slot not yet fired. */
    if (expiry_ms <= w->done_ms)
        expiry_ms = w->done_ms + 1;
    t->expiry_ms = expiry_ms;
    struct xlb_tcp_timer **head = &w->slot[expiry_ms & (XLB_TCP_WHEEL_SLOTS - 1)];
    t->next = *head;
    if (t->next)
        t->next->pprev = &t->next;
    t->pprev = head;
    *head = t;
    w->armed++;
}

struct xlb_tcp_timer *xlb_tcp_wheel_expired(struct xlb_tcp_wheel *w, uint64_t now_ms)
{
    /* Walk the slots from the first unfired millisecond; after a long pause one turn covers
     * every slot, so at most XLB_TCP_WHEEL_SLOTS slots are visited per call. */
    uint32_t visited = 0;
    while (w->armed && w->done_ms < now_ms && visited <= XLB_TCP_WHEEL_SLOTS) {
        uint64_t ms = w->done_ms + 1;
        for (struct xlb_tcp_timer *t = w->slot[ms & (XLB_TCP_WHEEL_SLOTS - 1)]; t; t = t->next) {
            if (t->expiry_ms <= now_ms) {
                xlb_tcp_wheel_cancel(w, t);
                return t;
            }
        }
        w->done_ms = ms;
        visited++;
    }
    if (!w->armed || visited > XLB_TCP_WHEEL_SLOTS)
        w->done_ms = now_ms;
    return NULL;
}
