/* The LB trees' periodic work: worker counters, outlier detection, A56 failover timers. */
#include "lb_trees_internal.h"

#include "xlb_log.h"

static uint64_t sum_endpoint(const struct xlb_worker_load *loads, unsigned n, uint32_t slot,
                             size_t field)
{
    uint64_t total = 0;
    for (unsigned w = 0; w < n; w++) {
        const uint64_t *v = (const uint64_t *)((const char *)&loads[w].endpoints[slot] + field);
        total += __atomic_load_n(v, __ATOMIC_RELAXED);
    }
    return total;
}

/* Preference when workers differ: the state a client would be best served by. */
static unsigned connectivity_rank(uint8_t s)
{
    switch (s) {
    case XLB_CONN_READY:
        return 3;
    case XLB_CONN_CONNECTING:
        return 2;
    case XLB_CONN_TRANSIENT_FAILURE:
        return 1;
    default:
        return 0;
    }
}

enum xlb_connectivity xlb_lb_trees_endpoint_connectivity(const struct xlb_lb_trees *st,
                                                         uint32_t slot)
{
    uint8_t best = XLB_CONN_IDLE;
    if (st->loads == NULL || slot >= XLB_ENDPOINT_SLOTS)
        return XLB_CONN_IDLE;
    for (unsigned w = 0; w < st->n_workers; w++) {
        uint8_t s = __atomic_load_n(&st->loads[w].endpoints[slot].connectivity, __ATOMIC_RELAXED);
        if (connectivity_rank(s) > connectivity_rank(best))
            best = s;
    }
    return (enum xlb_connectivity)best;
}

int xlb_lb_trees_endpoint_connected_address(const struct xlb_lb_trees *st, uint32_t slot)
{
    if (st->loads == NULL || slot >= XLB_ENDPOINT_SLOTS)
        return -1;
    for (unsigned w = 0; w < st->n_workers; w++) {
        uint8_t a =
            __atomic_load_n(&st->loads[w].endpoints[slot].connected_address, __ATOMIC_RELAXED);
        if (a != 0)
            return a - 1;
    }
    return -1;
}

/* One counter of an endpoint slot, summed over the workers (0 without counters or slot). */
uint64_t lb_trees_endpoint_counter(const struct xlb_lb_trees *st, uint32_t slot, size_t field)
{
    if (st->loads == NULL || slot == XLB_LB_NO_SLOT)
        return 0;
    return sum_endpoint(st->loads, st->n_workers, slot, field);
}

/* Interval delta of one monotonic counter. */
static uint64_t delta(uint64_t *last, uint64_t now)
{
    uint64_t d = now < *last ? 0 : now - *last;
    *last = now;
    return d;
}

static void feed_counters(struct cluster_entry *e, const struct xlb_worker_load *loads,
                          unsigned n_workers, uint64_t now_ms)
{
    const struct xlb_lb_cluster *c = e->compiled;
    for (uint32_t i = 0; i < c->n_endpoints; i++) {
        uint32_t slot = c->endpoints[i].slot;
        if (slot == XLB_LB_NO_SLOT || loads == NULL)
            continue;
        uint64_t ok =
            delta(&e->last_ok[i], sum_endpoint(loads, n_workers, slot,
                                               offsetof(struct xlb_endpoint_load, succeeded)));
        uint64_t failed =
            delta(&e->last_failed[i],
                  sum_endpoint(loads, n_workers, slot, offsetof(struct xlb_endpoint_load, failed)));
        if (delta(&e->last_session[i],
                  sum_endpoint(loads, n_workers, slot,
                               offsetof(struct xlb_endpoint_load, session_picks))) > 0)
            e->last_use_ms[i] = now_ms;
        if (e->outlier != NULL && (ok | failed) != 0)
            xlb_outlier_add_calls(e->outlier, i, ok, failed);
    }
}

/* The current dependency-manager entry of a leaf (and, for a compatibility variant, the
 * aggregate's config in *policy), when it is still what was compiled. */
static const struct xlb_dm_cluster *current_leaf(const struct xlb_lb_trees *st,
                                                 const struct cluster_entry *e,
                                                 const struct xlb_cluster_config **policy)
{
    for (size_t v = 0; st->dm != NULL && v < st->n_vips; v++) {
        const struct xlb_dm_vip *vip = &st->dm->vips[st->dm_index[v]];
        const struct xlb_dm_cluster *c = xlb_dm_vip_cluster(vip, e->name);
        if (c == NULL || c->state != XLB_DM_READY || c->value == NULL ||
            c->fingerprint != e->leaf_fingerprint)
            continue;
        *policy = NULL;
        if (e->policy_from != NULL) {
            const struct xlb_dm_cluster *agg = xlb_dm_vip_cluster(vip, e->policy_from);
            if (agg == NULL || agg->value == NULL)
                continue;
            *policy = agg->value;
        }
        return c;
    }
    return NULL;
}

/* Outlier detection and A56 timers for one cluster; true when it was recompiled. */
static bool tick_cluster(struct xlb_lb_trees *st, struct cluster_entry *e,
                         const struct xlb_worker_load *loads, unsigned n_workers, uint64_t now_ms)
{
    feed_counters(e, loads, n_workers, now_ms);
    bool recompile = false;
    if (e->outlier != NULL && xlb_outlier_poll(e->outlier, now_ms)) {
        const struct xlb_outlier_changes *ch = xlb_outlier_changes(e->outlier);
        for (uint32_t i = 0; i < ch->n_ejected; i++)
            e->ejected[ch->ejected[i]] = true;
        for (uint32_t i = 0; i < ch->n_unejected; i++)
            e->ejected[ch->unejected[i]] = false;
        if (ch->n_ejected + ch->n_unejected > 0) {
            XLB_LOG(NOTICE, LB, "cluster %s: outlier detection ejected %u, un-ejected %u", e->name,
                    ch->n_ejected, ch->n_unejected);
            recompile = true;
        }
    }
    uint32_t before = xlb_priority_policy_chosen(e->priority);
    if (xlb_priority_policy_poll(e->priority, now_ms) &&
        xlb_priority_policy_chosen(e->priority) != before)
        recompile = true;
    if (!recompile)
        return false;
    const struct xlb_cluster_config *policy = NULL;
    const struct xlb_dm_cluster *leaf = current_leaf(st, e, &policy);
    return leaf != NULL && lb_trees_compile_leaf(st, e, leaf, policy, false);
}

bool xlb_lb_trees_tick(struct xlb_lb_trees *st, uint64_t now_ms)
{
    const struct xlb_worker_load *loads = st->loads;
    unsigned n_workers = st->n_workers;
    st->now_ms = now_ms;
    xlb_endpoint_slots_recycle(&st->slots);
    bool recompiled = false;
    for (struct cluster_entry *e = st->clusters; e != NULL; e = e->next)
        if (e->compiled != NULL)
            recompiled |= tick_cluster(st, e, loads, n_workers, now_ms);
    if (!recompiled || st->dm == NULL)
        return false;
    bool changed = false;
    for (size_t v = 0; v < st->n_vips; v++) {
        const struct xlb_dm_vip *vip = &st->dm->vips[st->dm_index[v]];
        if (st->vips[v].compiled != NULL && !lb_trees_vip_current(st, st->vips[v].compiled) &&
            vip->state == XLB_DM_READY)
            changed |= lb_trees_rebuild_vip(st, v, vip);
    }
    return changed;
}

struct xlb_lb_endpoint_counts xlb_lb_trees_endpoint_counts(const struct xlb_lb_trees *st,
                                                           uint32_t slot)
{
    struct xlb_slot_base base = xlb_endpoint_slots_base(&st->slots, slot);
    uint64_t ok =
        lb_trees_endpoint_counter(st, slot, offsetof(struct xlb_endpoint_load, succeeded));
    uint64_t failed =
        lb_trees_endpoint_counter(st, slot, offsetof(struct xlb_endpoint_load, failed));
    return (struct xlb_lb_endpoint_counts){
        .succeeded = ok > base.succeeded ? ok - base.succeeded : 0,
        .failed = failed > base.failed ? failed - base.failed : 0,
    };
}
