/*
 * gRFC A56 priority policy decision logic; the rules are listed in priority_policy.h. Children
 * are indexed by priority; the whole state is one array, so the choice is a plain scan.
 */
#include "priority_policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NO_TIMER    UINT64_MAX
#define NO_PRIORITY UINT32_MAX

struct child {
    /* Started: the last state reported. Unstarted: the caller's report, kept for the start. */
    enum xlb_child_state state;
    bool started;
    /* A56's "reported READY or IDLE more recently than TRANSIENT_FAILURE". */
    bool seen_ready_or_idle_since_tf;
    bool timer_running;
    uint64_t timer_due_ms;
};

struct xlb_priority_policy {
    struct child *children;
    uint32_t n;
    uint32_t cap;
    uint32_t chosen;
};

static bool state_valid(enum xlb_child_state s)
{
    return s == XLB_CHILD_IDLE || s == XLB_CHILD_CONNECTING || s == XLB_CHILD_READY ||
           s == XLB_CHILD_TRANSIENT_FAILURE;
}

static void start_timer(struct child *c, uint64_t now_ms)
{
    c->timer_running = true;
    /* Saturate below NO_TIMER so a clock near its end still yields a real deadline. */
    c->timer_due_ms = now_ms >= NO_TIMER - 1 - XLB_PRIORITY_FAILOVER_MS
                          ? NO_TIMER - 1
                          : now_ms + XLB_PRIORITY_FAILOVER_MS;
}

/* A started child reports state s at now_ms. */
static void child_report(struct child *c, enum xlb_child_state s, uint64_t now_ms)
{
    enum xlb_child_state prev = c->state;
    c->state = s;
    switch (s) {
    case XLB_CHILD_READY:
    case XLB_CHILD_IDLE:
        /* Connected (or usable on demand): no failover needed; a later CONNECTING is a
         * reconnect of a working child and deserves a fresh timer. */
        c->seen_ready_or_idle_since_tf = true;
        c->timer_running = false;
        break;
    case XLB_CHILD_TRANSIENT_FAILURE:
        /* Failed: fail over now rather than wait, and remember the failure so that its
         * own retries (TF -> CONNECTING) do not hold the policy back again. */
        c->seen_ready_or_idle_since_tf = false;
        c->timer_running = false;
        break;
    case XLB_CHILD_CONNECTING:
        /* Only a transition counts: the caller repeats every state on every update. The
         * timer cannot be running here unless prev was CONNECTING, since every other
         * state cancels it; the check keeps a running deadline from being pushed back. */
        if (prev != XLB_CHILD_CONNECTING && c->seen_ready_or_idle_since_tf && !c->timer_running)
            start_timer(c, now_ms);
        break;
    }
}

/* A56 CreateChild: the child starts CONNECTING with its failover timer running, then its
 * first report (the caller's state for this index) is applied as a transition from there. */
static void child_start(struct child *c, uint64_t now_ms)
{
    enum xlb_child_state first = c->state;
    c->started = true;
    c->state = XLB_CHILD_CONNECTING;
    c->seen_ready_or_idle_since_tf = true; /* nothing has failed yet */
    start_timer(c, now_ms);
    child_report(c, first, now_ms);
}

/* A56 ChoosePriority. Idempotent: with the same child states it yields the same choice. */
static void choose(struct xlb_priority_policy *pp, uint64_t now_ms)
{
    if (pp->n == 0) {
        pp->chosen = NO_PRIORITY;
        return;
    }
    for (uint32_t p = 0; p < pp->n; p++) {
        struct child *c = &pp->children[p];
        if (!c->started)
            child_start(c, now_ms);
        /* A56 deactivates the lower priorities here; they stay started (see the header). */
        if (c->state == XLB_CHILD_READY || c->state == XLB_CHILD_IDLE) {
            pp->chosen = p;
            return;
        }
        /* Still within its time to connect: wait on it, start nothing lower. */
        if (c->timer_running) {
            pp->chosen = p;
            return;
        }
    }
    /* Every child is started and none is usable or within its timer. */
    for (uint32_t p = 0; p < pp->n; p++) {
        if (pp->children[p].state == XLB_CHILD_CONNECTING) {
            pp->chosen = p;
            return;
        }
    }
    pp->chosen = pp->n - 1;
}

uint64_t xlb_priority_policy_next_timer_ms(const struct xlb_priority_policy *pp)
{
    uint64_t next = NO_TIMER;
    if (pp == NULL)
        return next;
    for (uint32_t p = 0; p < pp->n; p++) {
        const struct child *c = &pp->children[p];
        if (c->started && c->timer_running && c->timer_due_ms < next)
            next = c->timer_due_ms;
    }
    return next;
}

/* Fire due timers in deadline order, each batch at its own due time, so that children the
 * choice starts get deadlines on the virtual clock, not on the (possibly late) poll time.
 * Terminates: each round stops at least one timer, and a timer is only started here when a
 * child is started, which happens at most once per index. */
static void fire_due(struct xlb_priority_policy *pp, uint64_t now_ms)
{
    for (;;) {
        uint64_t due = xlb_priority_policy_next_timer_ms(pp);
        if (due == NO_TIMER || due > now_ms)
            return;
        for (uint32_t p = 0; p < pp->n; p++) {
            struct child *c = &pp->children[p];
            if (c->timer_running && c->timer_due_ms == due)
                c->timer_running = false; /* the child stays CONNECTING */
        }
        choose(pp, due);
    }
}

struct xlb_priority_policy *xlb_priority_policy_create(void)
{
    struct xlb_priority_policy *pp = calloc(1, sizeof(*pp));
    if (pp == NULL)
        return NULL;
    pp->chosen = NO_PRIORITY;
    return pp;
}

void xlb_priority_policy_free(struct xlb_priority_policy *pp)
{
    if (pp == NULL)
        return;
    free(pp->children);
    free(pp);
}

int xlb_priority_policy_update(struct xlb_priority_policy *pp, const enum xlb_child_state *states,
                               uint32_t n, uint64_t now_ms)
{
    if (pp == NULL || (n > 0 && states == NULL))
        return -EINVAL;
    for (uint32_t p = 0; p < n; p++) {
        if (!state_valid(states[p]))
            return -EINVAL;
    }
    /* Grow before changing anything, so -ENOMEM leaves the policy as it was. */
    if (n > pp->cap) {
        struct child *grown = realloc(pp->children, (size_t)n * sizeof(*grown));
        if (grown == NULL)
            return -ENOMEM;
        pp->children = grown;
        pp->cap = n;
    }
    /* Timers that expired before this report fire first, on the old set of children. */
    fire_due(pp, now_ms);
    /* Indices beyond n are dropped; new indices (and dropped ones that come back) start out
     * unstarted, with no history. */
    uint32_t keep = n < pp->n ? n : pp->n;
    if (pp->cap > keep)
        memset(&pp->children[keep], 0, (size_t)(pp->cap - keep) * sizeof(pp->children[0]));
    pp->n = n;
    for (uint32_t p = 0; p < n; p++) {
        struct child *c = &pp->children[p];
        if (c->started)
            child_report(c, states[p], now_ms);
        else
            c->state = states[p];
    }
    /* One choice after the whole update, never on a half-applied one (A56). */
    choose(pp, now_ms);
    return 0;
}

bool xlb_priority_policy_poll(struct xlb_priority_policy *pp, uint64_t now_ms)
{
    if (pp == NULL)
        return false;
    uint32_t before = pp->chosen;
    fire_due(pp, now_ms);
    return pp->chosen != before;
}

uint32_t xlb_priority_policy_chosen(const struct xlb_priority_policy *pp)
{
    return pp == NULL ? NO_PRIORITY : pp->chosen;
}

enum xlb_child_state xlb_priority_policy_state(const struct xlb_priority_policy *pp)
{
    /* A56 reports TRANSIENT_FAILURE for an empty priority list. */
    if (pp == NULL || pp->chosen == NO_PRIORITY)
        return XLB_CHILD_TRANSIENT_FAILURE;
    return pp->children[pp->chosen].state;
}

bool xlb_priority_policy_started(const struct xlb_priority_policy *pp, uint32_t p)
{
    return pp != NULL && p < pp->n && pp->children[p].started;
}

bool xlb_priority_policy_timer_running(const struct xlb_priority_policy *pp, uint32_t p)
{
    return xlb_priority_policy_started(pp, p) && pp->children[p].timer_running;
}
