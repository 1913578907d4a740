/*
 * The gRFC A56 priority_experimental policy's decision logic: which priority's picker is used,
 * when each child is started and when its failover timer runs. Pure logic: no I/O, no global
 * state and no timers of its own. The caller owns the clock (every entry point takes now_ms),
 * reports each priority's connectivity state with xlb_priority_policy_update and calls
 * xlb_priority_policy_poll when xlb_priority_policy_next_timer_ms is due.
 *
 * Priorities are array indices: 0 is the highest priority, n - 1 the lowest. A56 names its
 * children so that a child can move between priorities; here a child is its index, so a child
 * whose index is dropped (n shrinks) is forgotten, and one that comes back starts afresh.
 *
 * The rules, as A56 gives them:
 *
 * - Lazy start. A child is started only when the choice reaches its priority, so while
 *   priority p is usable nothing below it is started. A started child stays started (A56
 *   deactivates rather than destroys it, so flapping priorities do not churn connections).
 *   A56's 15-minute deactivation timer is the caller's business and not modelled: a child
 *   stays started until n drops it.
 *
 * - Failover timer (XLB_PRIORITY_FAILOVER_MS). Started when the child is started, which
 *   gives it that long to connect before lower priorities are tried. Cancelled when the child
 *   reports READY, IDLE or TRANSIENT_FAILURE. Restarted when the child moves to CONNECTING
 *   from another state only if it has reported READY or IDLE more recently than
 *   TRANSIENT_FAILURE: a child cycling TRANSIENT_FAILURE -> CONNECTING -> TRANSIENT_FAILURE
 *   must not hold the policy back for another 10 s each time (the fix A56 records), while a
 *   child that was working (or IDLE, like ring_hash at startup) gets a fresh 10 s to reconnect.
 *   Repeated CONNECTING reports are duplicates and change nothing. When the timer fires the
 *   child keeps its CONNECTING state; the choice is simply run again and moves past it.
 *   Deactivation does not cancel a running timer (neither A56 nor C-core does).
 *
 * - The choice, run after every update (once, after all states in it are applied, so it never
 *   sees a half-applied update) and whenever a failover timer fires:
 *     1. n == 0: no priority; the policy reports TRANSIENT_FAILURE.
 *     2. From priority 0 upward, starting each child reached: the first child that is READY
 *        or IDLE is chosen (IDLE is usable: picking from it makes it connect). If instead
 *        its failover timer runs, it is chosen too: it is still trying, so its picker (which
 *        queues) is used and nothing lower is started yet. Otherwise go on to the next.
 *     3. No child usable or trying (every child is now started): the highest priority in
 *        CONNECTING is chosen, so RPCs wait on the one most likely to come up.
 *     4. None CONNECTING either: the lowest priority (index n - 1, the last started) is
 *        chosen and its own picker is used, so RPCs fail with that child's
 *        TRANSIENT_FAILURE status; A56 synthesizes no picker of its own.
 *   The policy reports the chosen child's state (xlb_priority_policy_state).
 *
 * A child started during a choice takes the state the caller last reported for its index as
 * its first report, right after being started (a child may report synchronously when it is
 * created). Until then the caller's report for an unstarted index is only remembered.
 */
#ifndef XLB_PRIORITY_POLICY_H
#define XLB_PRIORITY_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* A56's child failover timeout. */
#define XLB_PRIORITY_FAILOVER_MS 10000u /* as lib/lb/xlb_lb_connectivity.h says */

enum xlb_child_state {
    XLB_CHILD_IDLE,
    XLB_CHILD_CONNECTING,
    XLB_CHILD_READY,
    XLB_CHILD_TRANSIENT_FAILURE,
};

struct xlb_priority_policy;

/* A policy with no priorities (chosen UINT32_MAX); NULL on ENOMEM. */
struct xlb_priority_policy *xlb_priority_policy_create(void);

/* NULL is ignored. */
void xlb_priority_policy_free(struct xlb_priority_policy *pp);

/*
 * Report the current state of every priority (index = priority). n may change between calls:
 * children beyond n are dropped, new indices start unstarted. Failover timers due at or before
 * now_ms fire first (in time order), then the states are applied and the choice runs once at
 * now_ms. Returns 0, -ENOMEM (nothing changed) or -EINVAL (pp NULL, states NULL with n > 0, or
 * a state outside the enum; nothing changed).
 */
int xlb_priority_policy_update(struct xlb_priority_policy *pp, const enum xlb_child_state *states,
                               uint32_t n, uint64_t now_ms);

/*
 * Fire the failover timers due at or before now_ms, in time order, re-running the choice at
 * each due time (so a child started by a late poll gets its timer from when it would have
 * started). True when the chosen priority differs from the one before the call.
 */
bool xlb_priority_policy_poll(struct xlb_priority_policy *pp, uint64_t now_ms);

/* When the next failover timer is due, or UINT64_MAX if none is running. */
uint64_t xlb_priority_policy_next_timer_ms(const struct xlb_priority_policy *pp);

/* The priority whose picker is used now, or UINT32_MAX when there is none (n == 0). */
uint32_t xlb_priority_policy_chosen(const struct xlb_priority_policy *pp);

/* The aggregate state the policy reports: the chosen child's, TRANSIENT_FAILURE if none. */
enum xlb_child_state xlb_priority_policy_state(const struct xlb_priority_policy *pp);

/* Whether priority p (< n) has been started; false beyond n. */
bool xlb_priority_policy_started(const struct xlb_priority_policy *pp, uint32_t p);

/* Whether priority p's failover timer runs; false beyond n or when p is not started. */
bool xlb_priority_policy_timer_running(const struct xlb_priority_policy *pp, uint32_t p);

#endif
