/*
 * Happy eyeballs over an endpoint's addresses (gRPC A61 and A62): a subchannel to an endpoint
 * with several addresses (Endpoint.address, then additional_addresses) is a race of attempts,
 * one subchannel each. The first attempt, to the first address xlb can reach, is listed as the
 * endpoint's subchannel (the head) and holds the race (lib/lb/xlb_eyeballs.h decides); the
 * next address is tried when the latest attempt fails, or when none has connected within
 * 250 ms, as an unlisted subchannel naming the head. The first TCP connection up wins: it
 * takes the head's place on the endpoint's list, the others are reset. The endpoint is
 * CONNECTING throughout, and TRANSIENT_FAILURE (with its backoff, stream_sub.c) only once
 * every attempt has failed. Addresses of a family xlb has no SNAT address or no route for are
 * not tried.
 *
 * RPCs wait for READY (the pick queues them while the endpoint is CONNECTING), so an attempt
 * carries none and abandoning one loses nothing.
 */
#include "stream_conn.h"

static uint32_t index_of(const struct xlb_stream_sub *s)
{
    return (uint32_t)(s - s->side.w->subs);
}

static struct xlb_stream_sub *head_of(struct xlb_stream_sub *s)
{
    return s->head == XLB_STREAM_NONE ? s : &s->side.w->subs[s->head];
}

/* The timer entry naming `from` (XLB_STREAM_NONE: a free one) names `to` now; false when
 * there is none. */
static bool timer_swap(struct xlb_stream_worker *w, uint32_t from, uint32_t to)
{
    if (from != XLB_STREAM_NONE && w->eyeball_timers_armed == 0)
        return false;
    for (uint32_t i = 0; i < XLB_STREAM_EYEBALL_TIMERS; i++)
        if (w->eyeball_timers[i] == from) {
            w->eyeball_timers[i] = to;
            if (from == XLB_STREAM_NONE)
                w->eyeball_timers_armed++;
            if (to == XLB_STREAM_NONE)
                w->eyeball_timers_armed--;
            return true;
        }
    return false;
}

/* The head's timer as its race says: armed while an address waits for its delay. */
static void timer_update(struct xlb_stream_sub *h)
{
    struct xlb_stream_worker *w = h->side.w;
    uint32_t me = index_of(h);
    bool armed = false;
    for (uint32_t i = 0; i < XLB_STREAM_EYEBALL_TIMERS && !armed && w->eyeball_timers_armed; i++)
        armed = w->eyeball_timers[i] == me;
    if (h->eyeballs.due_ms != 0 && !armed)
        timer_swap(w, XLB_STREAM_NONE, me); /* none free: the next starts on a failure only */
    else if (h->eyeballs.due_ms == 0 && armed)
        timer_swap(w, me, XLB_STREAM_NONE);
}

/* Address k's attempt for the head (and the next ones, while an attempt cannot be made). */
static void start(struct xlb_stream_sub *h, uint32_t k)
{
    struct xlb_stream_worker *w = h->side.w;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    for (uint32_t n = 0; k != XLB_EYEBALLS_NONE && n < XLB_MAX_ENDPOINT_ADDRESSES; n++) {
        struct xlb_stream_sub *r =
            w->snap != NULL ? xlb_stream_sub_attempt(w, w->snap, &h->endpoint, &h->addrs, k) : NULL;
        if (r != NULL) {
            r->head = index_of(h);
            h->attempts[k] = index_of(r);
            w->ctx->stats->events[XLB_EVENT_STREAM_ADDRESS_ATTEMPTS]++;
            break;
        }
        k = xlb_eyeballs_failed(&h->eyeballs, k, now);
    }
    timer_update(h);
}

/* s takes the head's place: the race, the timer, the list entry. */
static void move_head(struct xlb_stream_sub *old, struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = old->side.w;
    s->eyeballs = old->eyeballs;
    memcpy(s->attempts, old->attempts, sizeof(s->attempts));
    s->head = XLB_STREAM_NONE;
    for (uint32_t k = 0; k < XLB_MAX_ENDPOINT_ADDRESSES; k++) {
        if (s->attempts[k] != XLB_STREAM_NONE && s->attempts[k] != index_of(s))
            w->subs[s->attempts[k]].head = index_of(s);
        old->attempts[k] = XLB_STREAM_NONE;
    }
    old->head = XLB_STREAM_NONE;
    old->eyeballs.due_ms = 0;
    timer_swap(w, index_of(old), index_of(s));
    xlb_stream_sub_replace(old, s);
}

/* An attempt that lost: reset, its close no failure. */
static void abandon(struct xlb_stream_sub *a)
{
    a->head = XLB_STREAM_NONE;
    a->abandoned = true;
    a->side.w->ctx->stats->events[XLB_EVENT_STREAM_ATTEMPTS_ABANDONED]++;
    xlb_stream_abort(&a->side);
}

void xlb_stream_eyeballs_begun(struct xlb_stream_sub *s)
{
    timer_update(s);
}

void xlb_stream_eyeballs_connected(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    if (s->abandoned || s->connected)
        return;
    s->connected = true;
    struct xlb_stream_sub *h = head_of(s);
    uint32_t others = xlb_eyeballs_connected(&h->eyeballs, s->address);
    timer_update(h);
    h->attempts[s->address] = XLB_STREAM_NONE;
    if (h != s)
        move_head(h, s); /* h, if still in progress, is among the others */
    for (uint32_t k = 0; k < XLB_MAX_ENDPOINT_ADDRESSES; k++) {
        uint32_t a = s->attempts[k];
        s->attempts[k] = XLB_STREAM_NONE;
        if (a != XLB_STREAM_NONE && (others & (1u << k)) && a != index_of(s))
            abandon(&w->subs[a]);
    }
}

bool xlb_stream_eyeballs_closed(struct xlb_stream_sub *s)
{
    if (s->abandoned)
        return true;
    if (s->connected)
        return false;
    struct xlb_stream_worker *w = s->side.w;
    struct xlb_stream_sub *h = head_of(s);
    h->attempts[s->address] = XLB_STREAM_NONE;
    uint32_t k = xlb_eyeballs_failed(&h->eyeballs, s->address, xlb_stream_now_ms(w->ctx));
    if (k != XLB_EYEBALLS_NONE)
        start(h, k); /* the latest attempt failed: the next address at once */
    else
        timer_update(h);
    if (h != s) {
        s->head = XLB_STREAM_NONE;
        return true;
    }
    /* The head failed: the earliest attempt still in progress takes its place. */
    for (uint32_t a = 0; a < XLB_MAX_ENDPOINT_ADDRESSES; a++)
        if (s->attempts[a] != XLB_STREAM_NONE) {
            move_head(s, &w->subs[s->attempts[a]]);
            return true;
        }
    timer_swap(w, index_of(s), XLB_STREAM_NONE);
    return false;
}

void xlb_stream_eyeballs_stop(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    if (s->head != XLB_STREAM_NONE) { /* a racer: its head forgets it */
        struct xlb_stream_sub *h = &w->subs[s->head];
        if (h->attempts[s->address] == index_of(s)) {
            h->attempts[s->address] = XLB_STREAM_NONE;
            h->eyeballs.live &= (uint8_t) ~(1u << s->address);
        }
        abandon(s);
        return;
    }
    timer_swap(w, index_of(s), XLB_STREAM_NONE);
    s->eyeballs.due_ms = 0;
    for (uint32_t k = 0; k < XLB_MAX_ENDPOINT_ADDRESSES; k++) {
        uint32_t a = s->attempts[k];
        s->attempts[k] = XLB_STREAM_NONE;
        if (a != XLB_STREAM_NONE && a != index_of(s))
            abandon(&w->subs[a]);
    }
}

void xlb_stream_eyeballs_poll(struct xlb_stream_worker *w)
{
    if (w->eyeball_timers_armed == 0)
        return; /* the common case: no endpoint between two addresses */
    uint64_t now = xlb_stream_now_ms(w->ctx);
    for (uint32_t i = 0; i < XLB_STREAM_EYEBALL_TIMERS; i++) {
        uint32_t me = w->eyeball_timers[i];
        if (me == XLB_STREAM_NONE)
            continue;
        struct xlb_stream_sub *h = &w->subs[me];
        if (!h->side.link.in_use || h->eyeballs.due_ms == 0) {
            w->eyeball_timers[i] = XLB_STREAM_NONE;
            w->eyeball_timers_armed--;
            continue;
        }
        if (now >= h->eyeballs.due_ms)
            start(h, xlb_eyeballs_due(&h->eyeballs, now));
    }
}
