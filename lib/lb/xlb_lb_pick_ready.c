/*
 * The normal pick of a leaf cluster over its worker's subchannels (the L7 stream mode): a
 * proxyless gRPC client's priority (A56), weighted_target and round_robin, or ring hash (A42),
 * each considering READY endpoints only; or pick first (A62), which waits for the endpoint it
 * holds while that one connects.
 */
#include "xlb_lb_connectivity_state.h"

static bool ready_at(const struct xlb_lb_connectivity *conn, const struct xlb_lb_cluster *c,
                     uint32_t index)
{
    return xlb_slot_usable(c->usable, index) &&
           xlb_conn_state(conn, c->endpoints[index].slot) == XLB_CONN_READY;
}

/* A priority not READY is waited for until its timer fires; the timer starts when it is first
 * needed (this pick), as A56 starts it when the priority's child is created. */
static bool still_waiting(struct xlb_conn_priority *t, uint64_t now_ms)
{
    if (t == NULL || t->given_up)
        return false;
    if (!t->timer_running) {
        t->timer_running = true;
        t->waiting_since_ms = now_ms;
    }
    if (now_ms - t->waiting_since_ms < XLB_PRIORITY_FAILOVER_MS)
        return true;
    t->timer_running = false;
    t->given_up = true;
    return false;
}

/*
 * A56 per worker: the first priority with a READY endpoint; one still connecting within its
 * timer makes the RPC wait on it. When every priority has failed or timed out, the highest
 * one still connecting is waited on if `last_resort` (A56 chooses it too); none:
 * XLB_PICK_NONE.
 */
static uint32_t choose_priority(struct xlb_lb_connectivity *conn, const struct xlb_lb_cluster *c,
                                uint64_t now_ms, bool last_resort, bool *queue)
{
    uint32_t connecting = XLB_PICK_NONE;
    *queue = false;
    for (uint32_t p = 0; p < c->n_priorities; p++) {
        if (c->priorities[p].n_usable == 0)
            continue; /* nothing healthy: TRANSIENT_FAILURE whatever its connections do */
        struct xlb_conn_counts n = xlb_conn_priority_counts(conn, c, p);
        struct xlb_conn_priority *t = xlb_conn_timer(conn, c, p);
        if (n.ready > 0) {
            if (t != NULL)
                t->timer_running = t->given_up = false;
            return p;
        }
        if (n.waiting == 0) {
            if (t != NULL) { /* failed: skipped until READY, whatever it does meanwhile */
                t->timer_running = false;
                t->given_up = true;
            }
            continue;
        }
        if (connecting == XLB_PICK_NONE)
            connecting = p;
        if (still_waiting(t, now_ms)) {
            *queue = true;
            return p;
        }
    }
    if (!last_resort)
        return XLB_PICK_NONE;
    *queue = connecting != XLB_PICK_NONE;
    return connecting;
}

uint32_t xlb_lb_ready_leaf(const struct xlb_lb_target *target, struct xlb_lb_worker *w,
                           uint64_t now_ms)
{
    bool queue;
    for (uint32_t l = 0; l < target->n_leaves; l++)
        if (choose_priority(w->connectivity, target->leaves[l], now_ms, false, &queue) !=
            XLB_PICK_NONE)
            return l;
    /* Every leaf failed or timed out: the first one still connecting, as for priorities. */
    for (uint32_t l = 0; l < target->n_leaves; l++)
        if (choose_priority(w->connectivity, target->leaves[l], now_ms, true, &queue) !=
            XLB_PICK_NONE)
            return l;
    return target->n_leaves - 1;
}

/* Table draws before the linear pass: a few redraws keep the shares exact (each is a draw
 * conditioned on landing on a locality with a READY endpoint) and usually succeed. */
#define LOCALITY_REDRAWS 4

/*
 * A weighted draw among the localities with a READY endpoint: the table's draw when every
 * locality has one (the common case, known from the cached counts) or when it lands on one,
 * else a linear draw over those, which keeps the shares exact.
 */
static uint32_t ready_locality(const struct xlb_lb_connectivity *conn,
                               const struct xlb_lb_cluster *c, uint32_t p, struct xlb_rng *rng)
{
    const struct xlb_lb_priority *prio = &c->priorities[p];
    uint32_t l;
    if (xlb_conn_counts_current(conn, c, p) &&
        conn->clusters[c->cluster_slot].priorities[p].counts.every_locality_ready)
        return xlb_wchoice_pick(prio->locality_choice, rng);
    for (uint32_t draw = 0; draw < LOCALITY_REDRAWS; draw++) {
        l = xlb_wchoice_pick(prio->locality_choice, rng);
        if (l != XLB_PICK_NONE && xlb_conn_locality_ready(conn, c, p, l) > 0)
            return l;
    }
    uint64_t total = 0;
    uint32_t first = XLB_PICK_NONE;
    for (l = 0; l < prio->n_localities; l++)
        if (xlb_conn_locality_ready(conn, c, p, l) > 0) {
            total += prio->localities[l].weight;
            first = first == XLB_PICK_NONE ? l : first;
        }
    if (total == 0)
        return first;
    uint64_t draw = xlb_rng_next(rng) % total;
    for (l = 0; l < prio->n_localities; l++) {
        if (xlb_conn_locality_ready(conn, c, p, l) == 0)
            continue;
        if (draw < prio->localities[l].weight)
            return l;
        draw -= prio->localities[l].weight;
    }
    return first;
}

/* round_robin over the locality's READY endpoints: at most one lap of its array. */
static uint32_t ready_round_robin(const struct xlb_lb_connectivity *conn,
                                  const struct xlb_lb_cluster *c, const struct xlb_lb_locality *l,
                                  struct xlb_lb_worker *w)
{
    if (l->rr == NULL)
        return XLB_PICK_NONE;
    struct xlb_rr_cursor *cursor = &w->cursors[l->load_slot % XLB_LOCALITY_SLOTS];
    for (uint32_t tries = 0; tries < l->rr->n_slots; tries++) {
        uint32_t index = l->rr->slots[xlb_rr_cursor_take(cursor, l->rr->n_slots)];
        if (ready_at(conn, c, index))
            return index;
    }
    return XLB_PICK_NONE;
}

/* A58: this worker's weight of the endpoint at `index`; -1 when it is not READY. */
static float wrr_weight_at(const struct xlb_lb_connectivity *conn, const struct xlb_lb_cluster *c,
                           uint32_t index, struct xlb_lb_worker *w, uint64_t now_ms)
{
    if (!ready_at(conn, c, index))
        return -1;
    uint32_t slot = c->endpoints[index].slot;
    return slot < XLB_ENDPOINT_SLOTS
               ? xlb_wrr_weight_get(&w->load->endpoints[slot].weight, &c->wrr, now_ms)
               : 0;
}

/* The shares of a locality's READY endpoints from their weights now (two passes, no memory). */
static void wrr_rebuild(const struct xlb_lb_connectivity *conn, const struct xlb_lb_cluster *c,
                        const struct xlb_rr *rr, struct xlb_lb_worker *w, uint64_t now_ms)
{
    struct xlb_wrr_round round = {0};
    for (uint32_t i = 0; i < rr->n_slots; i++)
        xlb_wrr_round_add(&round, wrr_weight_at(conn, c, rr->slots[i], w, now_ms));
    for (uint32_t i = 0; i < rr->n_slots; i++) {
        uint32_t slot = c->endpoints[rr->slots[i]].slot;
        if (slot < XLB_ENDPOINT_SLOTS)
            w->load->endpoints[slot].weight.scaled =
                xlb_wrr_share(&round, wrr_weight_at(conn, c, rr->slots[i], w, now_ms));
    }
}

/*
 * Weighted round robin (A58) over the locality's READY endpoints: the shares are computed
 * again every update period, when the cluster is recompiled and when a subchannel changes
 * state (gRPC builds a new picker then); the stride scheduler takes an endpoint within
 * XLB_WRR_MAX_ROUNDS rounds. Without per-worker counters (simulate) it is round robin.
 */
static uint32_t ready_wrr(const struct xlb_lb_connectivity *conn, const struct xlb_lb_cluster *c,
                          const struct xlb_lb_locality *l, struct xlb_lb_worker *w, uint64_t now_ms)
{
    if (l->rr == NULL || w->load == NULL)
        return ready_round_robin(conn, c, l, w);
    const struct xlb_rr *rr = l->rr;
    struct xlb_wrr_sched *s = &w->wrr[l->load_slot % XLB_LOCALITY_SLOTS];
    if (s->generation != c->generation) {
        s->generation = c->generation;
        s->seq = (uint32_t)xlb_rng_next(&w->rng); /* as round robin starts at random */
        s->built = false;
    }
    if (!s->built || s->epoch != conn->epoch || now_ms - s->built_ms >= c->wrr.update_ms) {
        wrr_rebuild(conn, c, rr, w, now_ms);
        s->built = true;
        s->built_ms = now_ms;
        s->epoch = conn->epoch;
    }
    uint32_t n = rr->n_slots;
    for (uint32_t step = 0; step < n * XLB_WRR_MAX_ROUNDS; step++) {
        uint32_t seq = s->seq++;
        uint32_t at = seq % n, index = rr->slots[at], slot = c->endpoints[index].slot;
        uint32_t share =
            slot < XLB_ENDPOINT_SLOTS ? w->load->endpoints[slot].weight.scaled : XLB_WRR_SCALE;
        if (ready_at(conn, c, index) && xlb_wrr_takes(share, at, n, seq))
            return index;
    }
    return ready_round_robin(conn, c, l, w);
}

/*
 * Least request (A48) over the locality's READY endpoints: the drawn candidates that are not
 * READY are skipped, as the pick skips unusable ones; when no draw was READY, the first READY
 * one from a random index (at most one lap).
 */
static uint32_t ready_least_request(const struct xlb_lb_connectivity *conn,
                                    const struct xlb_lb_cluster *c, const struct xlb_lb_locality *l,
                                    struct xlb_lb_worker *w)
{
    const struct xlb_least_request *lr = l->lr;
    if (lr == NULL || lr->n_slots == 0)
        return XLB_PICK_NONE;
    struct xlb_in_flight_view view = xlb_lb_in_flight_view(c, w->load, w->in_flight_sums);
    uint32_t best = XLB_PICK_NONE, best_load = 0;
    for (uint32_t draw = 0; draw < lr->choice_count; draw++) {
        uint32_t at = xlb_rng_below(&w->rng, lr->n_slots);
        if (!ready_at(conn, c, lr->slots[at]))
            continue;
        uint32_t load = xlb_least_request_in_flight(&view, lr->slots[at]);
        if (best == XLB_PICK_NONE || xlb_least_request_less_loaded(lr, at, load, best, best_load)) {
            best = at;
            best_load = load;
        }
    }
    if (best != XLB_PICK_NONE)
        return lr->slots[best];
    uint32_t at = xlb_rng_below(&w->rng, lr->n_slots);
    for (uint32_t step = 0; step < lr->n_slots; step++, at = at + 1 == lr->n_slots ? 0 : at + 1)
        if (ready_at(conn, c, lr->slots[at]))
            return lr->slots[at];
    return XLB_PICK_NONE;
}

/* A62 over subchannels: an endpoint is passed over only in TRANSIENT_FAILURE (or ejected);
 * one still IDLE or CONNECTING is waited for rather than skipped for a READY one behind it. */
struct pick_first_ctx {
    const struct xlb_lb_connectivity *conn;
    const struct xlb_lb_cluster *c;
};

static bool not_failing_at(const void *arg, uint32_t index)
{
    const struct pick_first_ctx *ctx = arg;
    return xlb_slot_usable(ctx->c->usable, index) &&
           xlb_conn_state(ctx->conn, ctx->c->endpoints[index].slot) != XLB_CONN_TRANSIENT_FAILURE;
}

/*
 * The endpoint pick first holds (or moves on to) in priority p; XLB_LB_QUEUE when it is not
 * READY yet (the trace names it, so that the engine connects it), as a gRPC channel's
 * pick_first queues its RPCs while its subchannel connects.
 */
static enum xlb_lb_outcome ready_pick_first(const struct xlb_lb_cluster *c, uint32_t p,
                                            struct xlb_lb_worker *w, struct xlb_lb_trace *trace,
                                            uint32_t *index)
{
    struct pick_first_ctx ctx = {w->connectivity, c};
    struct xlb_pick_first_state none = {0};
    *index = xlb_pick_first_pick(c->priorities[p].pick_first, xlb_lb_pick_first_state(c, w, &none),
                                 not_failing_at, &ctx);
    if (*index == XLB_PICK_NONE)
        return XLB_LB_NO_ENDPOINT;
    const struct xlb_lb_endpoint *e = &c->endpoints[*index];
    if (xlb_conn_state(w->connectivity, e->slot) == XLB_CONN_READY)
        return XLB_LB_PICKED;
    trace->endpoint = *index;
    trace->slot = e->slot;
    trace->locality = e->locality;
    return XLB_LB_QUEUE;
}

/* A42: the hash's entry, else the first READY one after it in ring (or table) order. */
static uint32_t ready_in_order(const struct xlb_lb_connectivity *conn,
                               const struct xlb_lb_cluster *c, const uint32_t *indexes, uint32_t n,
                               uint32_t at)
{
    for (uint32_t step = 0; step < n; step++) {
        if (ready_at(conn, c, indexes[at]))
            return indexes[at];
        at = at + 1 == n ? 0 : at + 1;
    }
    return XLB_PICK_NONE;
}

static uint32_t ready_by_hash(const struct xlb_lb_connectivity *conn,
                              const struct xlb_lb_cluster *c, const struct xlb_lb_priority *p,
                              uint64_t hash)
{
    if (c->policy == XLB_LB_POLICY_MAGLEV)
        return p->maglev == NULL ? XLB_PICK_NONE
                                 : ready_in_order(conn, c, p->maglev->table, p->maglev->size,
                                                  (uint32_t)(hash % p->maglev->size));
    if (p->ring == NULL || p->ring->n_points == 0)
        return XLB_PICK_NONE;
    return ready_in_order(conn, c, p->ring->slots, p->ring->n_points,
                          xlb_ring_hash_point_for(p->ring, hash));
}

enum xlb_lb_outcome xlb_lb_pick_ready(const struct xlb_lb_cluster *c, uint64_t hash, bool hashed,
                                      uint64_t now_ms, struct xlb_lb_worker *w,
                                      struct xlb_lb_trace *trace, uint32_t *index)
{
    struct xlb_lb_connectivity *conn = w->connectivity;
    bool queue;
    uint32_t p = choose_priority(conn, c, now_ms, true, &queue);
    trace->priority = p;
    if (p == XLB_PICK_NONE)
        return XLB_LB_NO_ENDPOINT;
    if (c->policy == XLB_LB_POLICY_PICK_FIRST) {
        /* Also while the priority waits: the trace then names the one endpoint pick first
         * tries, so that the engine connects it alone, as A62 connects one at a time. */
        enum xlb_lb_outcome outcome = ready_pick_first(c, p, w, trace, index);
        return queue && outcome == XLB_LB_NO_ENDPOINT ? XLB_LB_QUEUE : outcome;
    }
    if (queue)
        return XLB_LB_QUEUE;
    const struct xlb_lb_priority *prio = &c->priorities[p];
    if (xlb_lb_policy_hashes(c->policy)) {
        trace->hashed = hashed;
        trace->hash = hashed ? hash : xlb_rng_next(&w->rng);
        *index = ready_by_hash(conn, c, prio, trace->hash);
    } else {
        uint32_t l = ready_locality(conn, c, p, &w->rng);
        *index = l == XLB_PICK_NONE ? XLB_PICK_NONE
                 : c->policy == XLB_LB_POLICY_LEAST_REQUEST
                     ? ready_least_request(conn, c, &prio->localities[l], w)
                 : c->policy == XLB_LB_POLICY_WRR
                     ? ready_wrr(conn, c, &prio->localities[l], w, now_ms)
                     : ready_round_robin(conn, c, &prio->localities[l], w);
    }
    /* The priority has a READY candidate, so only a bug lands here; say so rather than wait. */
    return *index != XLB_PICK_NONE ? XLB_LB_PICKED : XLB_LB_NO_ENDPOINT;
}
