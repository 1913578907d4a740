/*
 * A millisecond timer wheel, one per worker: arming, re-arming and cancelling are O(1), and a
 * poll fires at most a given number of timers, so a worker's work per poll stays bounded however
 * many connections expire at once (the rest fire at the next poll, a millisecond late).
 *
 * Why a wheel of its own: the TCP endpoint re-arms a timer on nearly every segment (RTO, delayed
 * ACK), so a heap's O(log n) or rte_timer's locking per call would cost more than the segment.
 * A deadline beyond one turn of the wheel sits in its slot and is skipped until its turn comes.
 */
#ifndef XLB_TCP_TIMER_WHEEL_H
#define XLB_TCP_TIMER_WHEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XLB_TCP_WHEEL_SLOTS 1024u /* a power of two: one turn is 1,024 ms */

struct xlb_tcp_timer {
    struct xlb_tcp_timer *next, **pprev; /* pprev NULL: not armed */
    uint64_t expiry_ms;
};

struct xlb_tcp_wheel {
    uint64_t done_ms; /* every slot up to this millisecond has been fired */
    uint32_t armed;
    struct xlb_tcp_timer *slot[XLB_TCP_WHEEL_SLOTS];
};

void xlb_tcp_wheel_init(struct xlb_tcp_wheel *w, uint64_t now_ms);
/* (Re-)arm t for expiry_ms; a deadline in the past fires at the next poll. */
void xlb_tcp_wheel_arm(struct xlb_tcp_wheel *w, struct xlb_tcp_timer *t, uint64_t expiry_ms);
void xlb_tcp_wheel_cancel(struct xlb_tcp_wheel *w, struct xlb_tcp_timer *t);
static inline bool xlb_tcp_timer_armed(const struct xlb_tcp_timer *t)
{
    return t->pprev != NULL;
}

/*
 * Take the next expired timer (expiry <= now_ms), disarmed, or NULL when none is left. The caller
 * bounds the number it takes per poll; the others stay for the next call.
 */
struct xlb_tcp_timer *xlb_tcp_wheel_expired(struct xlb_tcp_wheel *w, uint64_t now_ms);

#endif
