/* Per-worker subchannel connectivity (xlb_lb_connectivity.h): states, backoff, cached counts. */
#include <errno.h>
#include <stdlib.h>

#include "xlb_lb_connectivity_state.h"

const char *xlb_connectivity_name(enum xlb_connectivity s)
{
    switch (s) {
    case XLB_CONN_IDLE:
        return "IDLE";
    case XLB_CONN_CONNECTING:
        return "CONNECTING";
    case XLB_CONN_READY:
        return "READY";
    case XLB_CONN_TRANSIENT_FAILURE:
        return "TRANSIENT_FAILURE";
    }
    return "?";
}

void xlb_backoff_reset(struct xlb_backoff *b)
{
    b->current_ms = 0;
}

uint32_t xlb_backoff_next(struct xlb_backoff *b, struct xlb_rng *rng)
{
    uint32_t base = b->current_ms == 0 ? XLB_BACKOFF_INITIAL_MS : b->current_ms;
    /* connection-backoff.md: the next delay is the current one x1.6, capped. */
    uint64_t grown = (uint64_t)base * 8 / 5;
    b->current_ms = grown > XLB_BACKOFF_MAX_MS ? XLB_BACKOFF_MAX_MS : (uint32_t)grown;
    /* Uniform in [0.8 base, 1.2 base]: 2 * 0.2 base wide. */
    uint32_t spread = base / 5;
    return base - spread + xlb_rng_below(rng, 2 * spread + 1);
}

int xlb_lb_connectivity_init(struct xlb_lb_worker *w)
{
    if (w->connectivity != NULL)
        return 0;
    /* calloc: every slot IDLE, no timer running, no counts cached (generation 0). */
    w->connectivity = calloc(1, sizeof(*w->connectivity));
    return w->connectivity != NULL ? 0 : -ENOMEM;
}

void xlb_lb_connectivity_fini(struct xlb_lb_worker *w)
{
    free(w->connectivity);
    w->connectivity = NULL;
}

void xlb_lb_connectivity_set(struct xlb_lb_worker *w, uint32_t endpoint_slot,
                             enum xlb_connectivity s, uint64_t now_ms)
{
    (void)now_ms; /* timers start from picks, which carry their own clock */
    struct xlb_lb_connectivity *conn = w->connectivity;
    if (conn == NULL || endpoint_slot >= XLB_ENDPOINT_SLOTS || conn->state[endpoint_slot] == s)
        return;
    conn->state[endpoint_slot] = (uint8_t)s;
    conn->epoch++;
    /* The control plane reads it for `xlbctl endpoints`; only this worker writes it. */
    if (w->load != NULL) {
        w->load->endpoints[endpoint_slot].connectivity = (uint8_t)s;
        /* A58: a subchannel that becomes READY waits out a new blackout. */
        if (s == XLB_CONN_READY)
            xlb_wrr_weight_ready(&w->load->endpoints[endpoint_slot].weight);
    }
}

enum xlb_connectivity xlb_lb_connectivity_get(const struct xlb_lb_worker *w, uint32_t endpoint_slot)
{
    return w->connectivity != NULL ? xlb_conn_state(w->connectivity, endpoint_slot) : XLB_CONN_IDLE;
}

/* The normal pick's candidates of one locality (usable, not draining: its round-robin array). */
static struct xlb_conn_counts count_locality(const struct xlb_lb_connectivity *conn,
                                             const struct xlb_lb_cluster *c,
                                             const struct xlb_lb_locality *l)
{
    struct xlb_conn_counts n = {0, 0, false};
    for (uint32_t i = 0; l->rr != NULL && i < l->rr->n_slots; i++) {
        enum xlb_connectivity s = xlb_conn_state(conn, c->endpoints[l->rr->slots[i]].slot);
        n.ready += s == XLB_CONN_READY;
        n.waiting += s == XLB_CONN_IDLE || s == XLB_CONN_CONNECTING;
    }
    return n;
}

static struct xlb_conn_counts count_priority(struct xlb_lb_connectivity *conn,
                                             const struct xlb_lb_cluster *c, uint32_t p,
                                             bool keep_localities)
{
    struct xlb_conn_counts total = {0, 0, true};
    const struct xlb_lb_priority *prio = &c->priorities[p];
    for (uint32_t l = 0; l < prio->n_localities; l++) {
        struct xlb_conn_counts n = count_locality(conn, c, &prio->localities[l]);
        uint32_t slot = prio->localities[l].load_slot;
        if (keep_localities && slot < XLB_LOCALITY_SLOTS)
            conn->locality_ready[slot] = n.ready;
        total.ready += n.ready;
        total.waiting += n.waiting;
        if (prio->localities[l].rr != NULL && n.ready == 0)
            total.every_locality_ready = false;
    }
    return total;
}

static struct xlb_conn_cluster *cluster_cache(struct xlb_lb_connectivity *conn,
                                              const struct xlb_lb_cluster *c)
{
    return c->cluster_slot < XLB_CLUSTER_SLOTS ? &conn->clusters[c->cluster_slot] : NULL;
}

struct xlb_conn_counts xlb_conn_priority_counts(struct xlb_lb_connectivity *conn,
                                                const struct xlb_lb_cluster *c, uint32_t p)
{
    struct xlb_conn_cluster *cache = cluster_cache(conn, c);
    if (cache == NULL || p >= XLB_CONN_PRIORITIES || c->generation == 0)
        return count_priority(conn, c, p, false);
    if (cache->generation != c->generation || cache->epoch != conn->epoch) {
        uint32_t n = c->n_priorities < XLB_CONN_PRIORITIES ? c->n_priorities : XLB_CONN_PRIORITIES;
        for (uint32_t q = 0; q < n; q++)
            cache->priorities[q].counts = count_priority(conn, c, q, true);
        cache->generation = c->generation;
        cache->epoch = conn->epoch;
    }
    return cache->priorities[p].counts;
}

bool xlb_conn_counts_current(const struct xlb_lb_connectivity *conn, const struct xlb_lb_cluster *c,
                             uint32_t p)
{
    if (c->cluster_slot >= XLB_CLUSTER_SLOTS || p >= XLB_CONN_PRIORITIES || c->generation == 0)
        return false;
    const struct xlb_conn_cluster *cache = &conn->clusters[c->cluster_slot];
    return cache->generation == c->generation && cache->epoch == conn->epoch;
}

uint32_t xlb_conn_locality_ready(const struct xlb_lb_connectivity *conn,
                                 const struct xlb_lb_cluster *c, uint32_t p, uint32_t l)
{
    const struct xlb_lb_locality *loc = &c->priorities[p].localities[l];
    bool cached = loc->load_slot < XLB_LOCALITY_SLOTS && xlb_conn_counts_current(conn, c, p);
    return cached ? conn->locality_ready[loc->load_slot] : count_locality(conn, c, loc).ready;
}

struct xlb_conn_priority *xlb_conn_timer(struct xlb_lb_connectivity *conn,
                                         const struct xlb_lb_cluster *c, uint32_t p)
{
    struct xlb_conn_cluster *cache = cluster_cache(conn, c);
    return cache != NULL && p < XLB_CONN_PRIORITIES ? &cache->priorities[p] : NULL;
}
