#include "lb_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_compile.h"
#include "cluster_slots.h"
#include "endpoint_slots.h"
#include "outlier_detector.h"
#include "priority_policy.h"
#include "vip_compile.h"
#include "xlb_log.h"

/* Everything xlb keeps about one leaf cluster between compiles. */
struct cluster_entry {
    char *name;
    char *policy_from;    /* aggregate backward compatibility: the aggregate whose lb_policy the
                           * leaf uses (a variant of the leaf of its own), else NULL */
    uint64_t fingerprint; /* of the inputs last compiled (leaf, and policy when a variant) */
    uint64_t leaf_fingerprint;       /* the leaf's dependency-manager fingerprint then */
    struct xlb_lb_cluster *compiled; /* our reference; NULL before the first compile */
    uint32_t cluster_slot;
    uint32_t n;    /* endpoints of the last compile */
    bool *ejected; /* per endpoint: what outlier detection decided */
    uint64_t *last_ok, *last_failed, *last_session, *last_use_ms;
    uint64_t idle_timeout_ms;
    struct xlb_outlier_detector *od;
    struct xlb_rng od_rng;
    struct xlb_priority_policy *priority;
    bool referenced;                    /* by some VIP's current tree (sweep) */
    struct cluster_entry *next;         /* every entry, newest first */
    struct cluster_entry *next_variant; /* the next entry of this name, in `next` order */
};

struct vip_entry {
    struct xlb_lb_vip *compiled;
    uint64_t fingerprint;
    uint64_t routes_fingerprint; /* the compiled tree's routing part was built from */
};

struct xlb_lb_state {
    struct xlb_load_slots *load_slots;
    struct xlb_endpoint_slots slots;
    struct cluster_entry *clusters;
    /* name -> the first entry of that name in `clusters`, head of its `next_variant` chain:
     * lookups by name are O(1), not a scan of every cluster (thousands, for every leaf). */
    struct xlb_name_index by_name;
    struct vip_entry *vips;
    size_t n_vips;
    const struct xlb_dm *dm;
    size_t *dm_index;
    const struct xlb_worker_load *loads;
    unsigned n_workers;
    uint64_t seed;
    uint64_t now_ms;
    bool aggregate_compat;
    struct xlb_cluster_slots cluster_slots;
};

struct xlb_lb_state *xlb_lb_state_create(struct xlb_load_slots *load_slots,
                                         const struct xlb_lb_grace *grace,
                                         const struct xlb_worker_load *loads, unsigned n_workers,
                                         uint64_t seed)
{
    struct xlb_lb_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return NULL;
    st->loads = loads;
    st->n_workers = n_workers;
    st->load_slots = load_slots;
    st->seed = seed;
    xlb_name_index_init(&st->by_name);
    xlb_cluster_slots_init(&st->cluster_slots);
    xlb_endpoint_slots_init(&st->slots, grace);
    return st;
}

static void entry_free(struct xlb_lb_state *st, struct cluster_entry *e)
{
    if (e->compiled != NULL)
        for (uint32_t i = 0; i < e->compiled->n_endpoints; i++)
            xlb_endpoint_slots_release(&st->slots, e->compiled->endpoints[i].slot);
    xlb_lb_cluster_release(e->compiled);
    xlb_od_free(e->od);
    xlb_priority_policy_free(e->priority);
    free(e->ejected);
    free(e->last_ok);
    free(e->last_failed);
    free(e->last_session);
    free(e->last_use_ms);
    free(e->name);
    free(e->policy_from);
    free(e);
}

void xlb_lb_state_free(struct xlb_lb_state *st)
{
    if (st == NULL)
        return;
    for (size_t v = 0; v < st->n_vips; v++)
        xlb_lb_vip_release(st->vips[v].compiled);
    free(st->vips);
    while (st->clusters != NULL) {
        struct cluster_entry *next = st->clusters->next;
        entry_free(st, st->clusters);
        st->clusters = next;
    }
    xlb_name_index_free(&st->by_name);
    xlb_cluster_slots_free(&st->cluster_slots);
    xlb_endpoint_slots_free(&st->slots);
    free(st->dm_index);
    free(st);
}

static bool same_policy_from(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static struct cluster_entry *first_named(const struct xlb_lb_state *st, const char *name)
{
    return xlb_name_index_find(&st->by_name, name);
}

static struct cluster_entry *find_variant(const struct xlb_lb_state *st, const char *name,
                                          const char *policy_from)
{
    for (struct cluster_entry *e = first_named(st, name); e != NULL; e = e->next_variant)
        if (same_policy_from(e->policy_from, policy_from))
            return e;
    return NULL;
}

static struct cluster_entry *find_entry(const struct xlb_lb_state *st, const char *name)
{
    return find_variant(st, name, NULL);
}

static struct cluster_entry *entry_of(const struct xlb_lb_state *st, const struct xlb_lb_cluster *c)
{
    return find_variant(st, c->name, c->policy_from);
}

/* Takes e out of its name's variant chain (and the index, when it was the last of its name). */
static void forget_name(struct xlb_lb_state *st, struct cluster_entry *e)
{
    struct cluster_entry *first = first_named(st, e->name);
    if (first != e) {
        for (struct cluster_entry *p = first; p != NULL; p = p->next_variant)
            if (p->next_variant == e) {
                p->next_variant = e->next_variant;
                return;
            }
        return;
    }
    /* The next variant's own copy of the name becomes the key: e's is about to be freed.
     * Replacing an existing entry of the index never fails. */
    if (e->next_variant != NULL)
        xlb_name_index_set(&st->by_name, e->next_variant->name, e->next_variant);
    else
        xlb_name_index_remove(&st->by_name, e->name);
}

static struct cluster_entry *entry_for(struct xlb_lb_state *st, const char *name,
                                       const char *policy_from)
{
    struct cluster_entry *e = find_variant(st, name, policy_from);
    if (e != NULL)
        return e;
    struct cluster_entry *first = first_named(st, name);
    e = calloc(1, sizeof(*e));
    /* The newest entry heads both lists, so a name's variants keep the order of `clusters`. */
    if (e == NULL || (e->name = strdup(name)) == NULL ||
        (policy_from != NULL && (e->policy_from = strdup(policy_from)) == NULL) ||
        (e->priority = xlb_priority_policy_create()) == NULL ||
        xlb_name_index_set(&st->by_name, e->name, e) != 0) {
        if (e != NULL) {
            xlb_priority_policy_free(e->priority);
            free(e->name);
            free(e->policy_from);
            free(e);
        }
        return NULL;
    }
    e->cluster_slot = xlb_cluster_slots_get(&st->cluster_slots, name);
    xlb_rng_seed(&e->od_rng, st->seed ^ (uint64_t)(uintptr_t)e);
    e->next_variant = first;
    e->next = st->clusters;
    st->clusters = e;
    return e;
}

static uint64_t sum_endpoint(const struct xlb_worker_load *loads, unsigned n, uint32_t slot,
                             size_t field);

/* ---- compiling one leaf ---- */

struct slot_args {
    struct xlb_lb_state *st;
    const char *cluster;
};

static uint32_t locality_slot(void *arg, uint32_t priority, const struct xlb_eds_locality *l)
{
    struct slot_args *a = arg;
    int slot = xlb_load_slots_locality(a->st->load_slots, a->cluster, priority, l->region, l->zone,
                                       l->sub_zone);
    return slot < 0 ? XLB_LB_NO_SLOT : (uint32_t)slot;
}

static uint32_t drop_slot(void *arg, const char *category)
{
    struct slot_args *a = arg;
    int slot = xlb_load_slots_drop(a->st->load_slots, a->cluster, category);
    return slot < 0 ? XLB_LB_NO_SLOT : (uint32_t)slot;
}

/* Endpoint identity for outlier detection and slot reuse: the first address. */
static void endpoint_addresses(const struct xlb_endpoint_config *eds, struct xlb_host_port *out)
{
    uint32_t i = 0;
    for (size_t p = 0; eds != NULL && p < eds->n_priorities; p++)
        for (size_t l = 0; l < eds->priorities[p].n_localities; l++)
            for (size_t e = 0; e < eds->priorities[p].localities[l].n_endpoints; e++)
                out[i++] = eds->priorities[p].localities[l].endpoints[e].addresses[0];
}

/* Per-endpoint arrays of the entry, carried over by address from the previous compile. */
struct carried {
    uint32_t *slots;
    bool *ejected;
    uint64_t *ok, *failed, *session, *use_ms;
};

static void carried_free(struct carried *c)
{
    free(c->slots);
    free(c->ejected);
    free(c->ok);
    free(c->failed);
    free(c->session);
    free(c->use_ms);
}

/* One counter of an endpoint slot, summed over the workers (0 without counters or slot). */
static uint64_t endpoint_counter(const struct xlb_lb_state *st, uint32_t slot, size_t field)
{
    if (st->loads == NULL || slot == XLB_LB_NO_SLOT)
        return 0;
    return sum_endpoint(st->loads, st->n_workers, slot, field);
}

static int carry_over(struct xlb_lb_state *st, struct cluster_entry *e,
                      const struct xlb_host_port *where, uint32_t n, struct carried *out)
{
    out->slots = calloc(n + 1, sizeof(uint32_t));
    out->ejected = calloc(n + 1, sizeof(bool));
    out->ok = calloc(n + 1, sizeof(uint64_t));
    out->failed = calloc(n + 1, sizeof(uint64_t));
    out->session = calloc(n + 1, sizeof(uint64_t));
    out->use_ms = calloc(n + 1, sizeof(uint64_t));
    if (!out->slots || !out->ejected || !out->ok || !out->failed || !out->session || !out->use_ms) {
        carried_free(out);
        return -ENOMEM;
    }
    const struct xlb_lb_cluster *old = e->compiled;
    for (uint32_t i = 0; i < n; i++) {
        const struct xlb_override_bucket *b =
            old && old->override ? xlb_override_map_find(old->override, &where[i]) : NULL;
        if (b != NULL && old->endpoints[b->slot].slot != XLB_LB_NO_SLOT) {
            uint32_t j = b->slot;
            out->slots[i] = xlb_endpoint_slots_hold(&st->slots, old->endpoints[j].slot);
            out->ejected[i] = e->ejected[j];
            out->ok[i] = e->last_ok[j];
            out->failed[i] = e->last_failed[j];
            out->session[i] = e->last_session[j];
            out->use_ms[i] = e->last_use_ms[j];
        } else {
            out->slots[i] = xlb_endpoint_slots_take(&st->slots);
            out->use_ms[i] = st->now_ms;
            /* A reused slot's counters go on from where its last endpoint left them: that
             * is this endpoint's baseline. */
            out->ok[i] =
                endpoint_counter(st, out->slots[i], offsetof(struct xlb_endpoint_load, succeeded));
            out->failed[i] =
                endpoint_counter(st, out->slots[i], offsetof(struct xlb_endpoint_load, failed));
            out->session[i] = endpoint_counter(st, out->slots[i],
                                               offsetof(struct xlb_endpoint_load, session_picks));
            xlb_endpoint_slots_set_base(&st->slots, out->slots[i], out->ok[i], out->failed[i]);
        }
    }
    return 0;
}

static void priority_states(const struct xlb_lb_cluster *c, enum xlb_child_state *states)
{
    /* A packet LB connects per flow: a priority with a usable endpoint is READY (gRPC's IDLE
     * and READY alike), one without is TRANSIENT_FAILURE. See docs/lb-algorithms.md. */
    for (uint32_t p = 0; p < c->n_priorities; p++)
        states[p] =
            xlb_cluster_priority_usable(c, p) ? XLB_CHILD_READY : XLB_CHILD_TRANSIENT_FAILURE;
}

/* Run A56 over the fresh compile and make its choice the cluster's. */
static void choose_priority(struct cluster_entry *e, struct xlb_lb_cluster *c, uint64_t now_ms)
{
    enum xlb_child_state states[c->n_priorities + 1];
    priority_states(c, states);
    if (xlb_priority_policy_update(e->priority, states, c->n_priorities, now_ms) != 0)
        return; /* out of memory: keep the compiler's first usable priority */
    uint32_t chosen = xlb_priority_policy_chosen(e->priority);
    /* The choice is where normal picks go; one without a usable endpoint takes none. */
    c->chosen_priority = xlb_cluster_priority_usable(c, chosen) ? chosen : XLB_PICK_NONE;
}

static void outlier_reset(struct cluster_entry *e, const struct xlb_cluster_config *config,
                          const struct xlb_host_port *where, uint32_t n, uint64_t now_ms)
{
    if (!config->outlier.enabled) {
        xlb_od_free(e->od);
        e->od = NULL;
        memset(e->ejected, 0, n * sizeof(bool));
        return;
    }
    if (e->od == NULL && (e->od = xlb_od_create(&e->od_rng)) == NULL)
        return;
    struct xlb_od_key *keys = calloc(n + 1, sizeof(*keys));
    if (keys == NULL)
        return;
    for (uint32_t i = 0; i < n; i++) {
        keys[i].addr = where[i].addr;
        keys[i].port = where[i].port;
    }
    xlb_od_set_endpoints(e->od, keys, n);
    xlb_od_set_config(e->od, &config->outlier, now_ms);
    free(keys);
    const uint64_t *bits = xlb_od_ejected_bitmap(e->od);
    for (uint32_t i = 0; i < n; i++)
        e->ejected[i] = (bits[i / 64] >> (i % 64)) & 1;
}

/* (Re)compile a leaf from its dependency-manager entry; false when it failed (logged). */
/* The leaf's config, or for a compatibility variant a copy with the aggregate's policy. */
static struct xlb_cluster_config leaf_config(const struct xlb_dm_cluster *leaf,
                                             const struct xlb_cluster_config *policy)
{
    struct xlb_cluster_config c = *leaf->value;
    if (policy != NULL) {
        c.lb_policy = policy->lb_policy;
        c.ring_hash = policy->ring_hash;
        c.maglev_table_size = policy->maglev_table_size;
    }
    return c;
}

static uint64_t variant_fingerprint(const struct xlb_dm_cluster *leaf,
                                    const struct xlb_cluster_config *policy)
{
    if (policy == NULL)
        return leaf->fingerprint;
    uint64_t h = leaf->fingerprint ^ UINT64_C(0x9e3779b97f4a7c15);
    h = h * 31 + policy->lb_policy;
    h = h * 31 + policy->ring_hash.min_ring_size;
    h = h * 31 + policy->maglev_table_size;
    return h * 31 + policy->ring_hash.max_ring_size;
}

static bool compile_leaf(struct xlb_lb_state *st, struct cluster_entry *e,
                         const struct xlb_dm_cluster *leaf, const struct xlb_cluster_config *policy,
                         bool inputs_changed)
{
    struct xlb_cluster_config config = leaf_config(leaf, policy);
    uint32_t n = xlb_cluster_compile_count(leaf->endpoints);
    struct xlb_host_port *where = calloc(n + 1, sizeof(*where));
    struct carried kept = {0};
    if (where == NULL ||
        carry_over(st, e, (endpoint_addresses(leaf->endpoints, where), where), n, &kept) != 0) {
        free(where);
        XLB_LOG(ERR, LB, "cluster %s: out of memory", e->name);
        return false;
    }
    /* Swap the per-endpoint state in, then let outlier detection see the new endpoint set. */
    struct carried old = {NULL,           e->ejected,      e->last_ok,
                          e->last_failed, e->last_session, e->last_use_ms};
    e->ejected = kept.ejected;
    e->last_ok = kept.ok;
    e->last_failed = kept.failed;
    e->last_session = kept.session;
    e->last_use_ms = kept.use_ms;
    if (inputs_changed)
        outlier_reset(e, leaf->value, where, n, st->now_ms);
    e->idle_timeout_ms = (uint64_t)leaf->value->idle_timeout.seconds * 1000 +
                         leaf->value->idle_timeout.nanos / 1000000;

    struct slot_args args = {st, e->name};
    struct xlb_cluster_compile_input in = {
        .name = e->name,
        .config = &config,
        .endpoints = leaf->endpoints,
        .endpoint_slots = kept.slots,
        .ejected = e->ejected,
        .cluster_slot = e->cluster_slot,
        .locality_slot = locality_slot,
        .drop_slot = drop_slot,
        .arg = &args,
    };
    struct xlb_lb_cluster *c;
    char err[128];
    bool ok = xlb_cluster_compile(&in, &c, err, sizeof(err)) == 0;
    if (ok) {
        choose_priority(e, c, st->now_ms);
        c->fingerprint = variant_fingerprint(leaf, policy);
        c->policy_from = e->policy_from != NULL ? strdup(e->policy_from) : NULL;
        if (e->compiled != NULL)
            for (uint32_t i = 0; i < e->compiled->n_endpoints; i++)
                xlb_endpoint_slots_release(&st->slots, e->compiled->endpoints[i].slot);
        xlb_lb_cluster_release(e->compiled);
        e->compiled = c;
        e->n = n;
        e->fingerprint = c->fingerprint;
        e->leaf_fingerprint = leaf->fingerprint;
    } else {
        XLB_LOG(ERR, LB, "cluster %s: cannot compile: %s", e->name, err);
        for (uint32_t i = 0; i < n; i++)
            xlb_endpoint_slots_release(&st->slots, kept.slots[i]);
    }
    free(kept.slots);
    free(where);
    carried_free(ok ? &old
                    : &(struct carried){NULL, kept.ejected, kept.ok, kept.failed, kept.session,
                                        kept.use_ms});
    if (!ok) {
        e->ejected = old.ejected;
        e->last_ok = old.ok;
        e->last_failed = old.failed;
        e->last_session = old.session;
        e->last_use_ms = old.use_ms;
    }
    return ok;
}

static struct xlb_lb_cluster *resolve_leaf(void *arg, const struct xlb_dm_cluster *leaf,
                                           const struct xlb_cluster_config *policy)
{
    struct xlb_lb_state *st = arg;
    if (leaf->state != XLB_DM_READY || leaf->value == NULL ||
        leaf->value->type == XLB_CLUSTER_AGGREGATE)
        return NULL;
    struct cluster_entry *e = entry_for(st, leaf->name, policy ? policy->name : NULL);
    if (e == NULL)
        return NULL;
    e->referenced = true;
    if (e->compiled == NULL || e->fingerprint != variant_fingerprint(leaf, policy))
        compile_leaf(st, e, leaf, policy, true);
    xlb_lb_cluster_hold(e->compiled);
    return e->compiled;
}

/* Whether a compiled VIP still uses every leaf's current compile. */
static bool vip_current(const struct xlb_lb_state *st, const struct xlb_lb_vip *v)
{
    for (uint32_t t = 0; t < v->n_targets; t++)
        for (uint32_t l = 0; l < v->targets[t].n_leaves; l++) {
            const struct cluster_entry *e = entry_of(st, v->targets[t].leaves[l]);
            if (e == NULL || e->compiled != v->targets[t].leaves[l])
                return false;
        }
    return true;
}

static void mark_referenced(struct xlb_lb_state *st, const struct xlb_lb_vip *v)
{
    for (uint32_t t = 0; v != NULL && t < v->n_targets; t++)
        for (uint32_t l = 0; l < v->targets[t].n_leaves; l++) {
            struct cluster_entry *e = entry_of(st, v->targets[t].leaves[l]);
            if (e != NULL)
                e->referenced = true;
        }
}

/* Clusters no current tree uses go, and their endpoint slots with them (after a grace). */
static void sweep(struct xlb_lb_state *st)
{
    for (struct cluster_entry *e = st->clusters; e != NULL; e = e->next)
        e->referenced = false;
    for (size_t v = 0; v < st->n_vips; v++)
        mark_referenced(st, st->vips[v].compiled);
    struct cluster_entry **link = &st->clusters;
    while (*link != NULL) {
        struct cluster_entry *e = *link;
        if (e->referenced) {
            link = &e->next;
            continue;
        }
        *link = e->next;
        forget_name(st, e);
        entry_free(st, e);
    }
}

static bool rebuild_vip(struct xlb_lb_state *st, size_t v, const struct xlb_dm_vip *vip)
{
    struct vip_entry *entry = &st->vips[v];
    /* A change below the routes (a cluster's) keeps the routes, regexes and all. */
    struct xlb_lb_vip *routing_of =
        entry->compiled != NULL && entry->routes_fingerprint == vip->routes_fingerprint
            ? entry->compiled
            : NULL;
    struct xlb_lb_vip *compiled;
    char err[256];
    if (xlb_vip_compile(vip, st->aggregate_compat, resolve_leaf, st, routing_of, &compiled, err,
                        sizeof(err)) != 0) {
        XLB_LOG(ERR, LB, "VIP %s: cannot compile: %s", vip->target, err);
        return false;
    }
    xlb_lb_vip_release(entry->compiled);
    entry->compiled = compiled;
    entry->fingerprint = vip->fingerprint;
    entry->routes_fingerprint = vip->routes_fingerprint;
    return true;
}

static int remember_vips(struct xlb_lb_state *st, const size_t *dm_index, size_t n_vips)
{
    if (n_vips == st->n_vips && st->dm_index != NULL &&
        memcmp(dm_index, st->dm_index, n_vips * sizeof(size_t)) == 0)
        return 0;
    size_t *copy = calloc(n_vips + 1, sizeof(size_t));
    struct vip_entry *vips = calloc(n_vips + 1, sizeof(*vips));
    if (copy == NULL || vips == NULL) {
        free(copy);
        free(vips);
        return -ENOMEM;
    }
    memcpy(copy, dm_index, n_vips * sizeof(size_t));
    /* A reload may reorder VIPs: trees are rebuilt for all of them. */
    for (size_t v = 0; v < st->n_vips; v++)
        xlb_lb_vip_release(st->vips[v].compiled);
    free(st->vips);
    free(st->dm_index);
    st->vips = vips;
    st->dm_index = copy;
    st->n_vips = n_vips;
    return 1;
}

bool xlb_lb_state_update(struct xlb_lb_state *st, const struct xlb_dm *dm, const size_t *dm_index,
                         size_t n_vips, uint64_t now_ms)
{
    st->now_ms = now_ms;
    st->dm = dm;
    int reset = remember_vips(st, dm_index, n_vips);
    if (reset < 0)
        return false;
    bool changed = reset > 0;
    for (size_t v = 0; v < n_vips; v++) {
        const struct xlb_dm_vip *vip = &dm->vips[dm_index[v]];
        struct vip_entry *entry = &st->vips[v];
        if (vip->state != XLB_DM_READY)
            continue; /* keep serving the last complete configuration */
        if (entry->compiled != NULL && entry->fingerprint == vip->fingerprint &&
            vip_current(st, entry->compiled))
            continue;
        changed |= rebuild_vip(st, v, vip);
    }
    sweep(st);
    return changed;
}

/* ---- periodic work ---- */

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
        if (e->od != NULL && (ok | failed) != 0)
            xlb_od_add_calls(e->od, i, ok, failed);
    }
}

/* The current dependency-manager entry of a leaf (and, for a compatibility variant, the
 * aggregate's config in *policy), when it is still what was compiled. */
static const struct xlb_dm_cluster *current_leaf(const struct xlb_lb_state *st,
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
static bool tick_cluster(struct xlb_lb_state *st, struct cluster_entry *e,
                         const struct xlb_worker_load *loads, unsigned n_workers, uint64_t now_ms)
{
    feed_counters(e, loads, n_workers, now_ms);
    bool recompile = false;
    if (e->od != NULL && xlb_od_poll(e->od, now_ms)) {
        const struct xlb_od_changes *ch = xlb_od_changes(e->od);
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
    return leaf != NULL && compile_leaf(st, e, leaf, policy, false);
}

bool xlb_lb_state_tick(struct xlb_lb_state *st, uint64_t now_ms)
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
        if (st->vips[v].compiled != NULL && !vip_current(st, st->vips[v].compiled) &&
            vip->state == XLB_DM_READY)
            changed |= rebuild_vip(st, v, vip);
    }
    return changed;
}

struct xlb_lb_vip *xlb_lb_state_vip(const struct xlb_lb_state *st, size_t v)
{
    return v < st->n_vips ? st->vips[v].compiled : NULL;
}

const struct xlb_lb_cluster *xlb_lb_state_cluster(const struct xlb_lb_state *st, const char *name)
{
    const struct cluster_entry *e = find_entry(st, name);
    return e != NULL ? e->compiled : NULL;
}

void xlb_lb_state_describe_cluster(const struct xlb_lb_state *st, const char *name, cJSON *o)
{
    const struct cluster_entry *e = find_entry(st, name);
    if (e == NULL || e->compiled == NULL)
        return;
    const struct xlb_lb_cluster *c = e->compiled;
    uint32_t usable = 0, ejected = 0;
    for (uint32_t p = 0; p < c->n_priorities; p++)
        usable += c->priorities[p].n_usable;
    for (uint32_t i = 0; i < c->n_endpoints; i++)
        ejected += c->endpoints[i].ejected;
    if (c->chosen_priority != XLB_PICK_NONE)
        cJSON_AddNumberToObject(o, "chosen_priority", c->chosen_priority);
    else
        cJSON_AddStringToObject(o, "chosen_priority", "none");
    cJSON_AddNumberToObject(o, "usable", usable);
    cJSON_AddNumberToObject(o, "ejected", ejected);
    cJSON_AddNumberToObject(o, "drop_categories", c->n_drops);
}

void xlb_lb_state_describe_endpoints(const struct xlb_lb_state *st, const char *name,
                                     uint64_t now_ms, cJSON *list)
{
    const struct cluster_entry *e = find_entry(st, name);
    if (e == NULL || e->compiled == NULL)
        return;
    const struct xlb_lb_cluster *c = e->compiled;
    uint32_t i = 0;
    cJSON *item;
    cJSON_ArrayForEach(item, list) {
        if (i >= c->n_endpoints)
            break;
        const struct xlb_lb_endpoint *ep = &c->endpoints[i];
        bool draining = ep->health == XLB_HEALTH_DRAINING;
        cJSON_AddBoolToObject(item, "usable", !ep->ejected && !draining);
        cJSON_AddBoolToObject(item, "ejected", ep->ejected);
        struct xlb_od_endpoint_info info;
        if (e->od != NULL && xlb_od_endpoint_info(e->od, i, &info) == 0) {
            if (info.ejected)
                cJSON_AddNumberToObject(
                    item, "ejected_for_ms",
                    info.ejected_until_ms > now_ms ? (double)(info.ejected_until_ms - now_ms) : 0);
            cJSON_AddNumberToObject(item, "multiplier", info.multiplier);
        }
        /* A75: a draining endpoint no session has used for idle_timeout is drained. */
        if (draining)
            cJSON_AddBoolToObject(item, "drained",
                                  now_ms - e->last_use_ms[i] >= e->idle_timeout_ms);
        struct xlb_lb_endpoint_counts counts = xlb_lb_state_endpoint_counts(st, ep->slot);
        cJSON_AddNumberToObject(item, "succeeded", (double)counts.succeeded);
        cJSON_AddNumberToObject(item, "failed", (double)counts.failed);
        i++;
    }
}

struct xlb_lb_endpoint_counts xlb_lb_state_endpoint_counts(const struct xlb_lb_state *st,
                                                           uint32_t slot)
{
    struct xlb_slot_base base = xlb_endpoint_slots_base(&st->slots, slot);
    uint64_t ok = endpoint_counter(st, slot, offsetof(struct xlb_endpoint_load, succeeded));
    uint64_t failed = endpoint_counter(st, slot, offsetof(struct xlb_endpoint_load, failed));
    return (struct xlb_lb_endpoint_counts){
        .succeeded = ok > base.succeeded ? ok - base.succeeded : 0,
        .failed = failed > base.failed ? failed - base.failed : 0,
    };
}

/* A name's own entry, or when only aggregate-policy variants exist, its first variant. */
static bool first_of_name(const struct xlb_lb_state *st, const struct cluster_entry *e)
{
    if (e->policy_from == NULL)
        return true;
    return find_entry(st, e->name) == NULL && first_named(st, e->name) == e;
}

void xlb_lb_state_each_cluster(const struct xlb_lb_state *st,
                               void (*fn)(const struct xlb_lb_cluster *c, void *arg), void *arg)
{
    for (const struct cluster_entry *e = st != NULL ? st->clusters : NULL; e != NULL; e = e->next)
        if (e->compiled != NULL && first_of_name(st, e))
            fn(e->compiled, arg);
}

uint32_t xlb_lb_state_cluster_slot(const struct xlb_lb_state *st, const char *name)
{
    return st != NULL ? xlb_cluster_slots_find(&st->cluster_slots, name) : XLB_LB_NO_SLOT;
}

void xlb_lb_state_set_aggregate_compat(struct xlb_lb_state *st, bool on)
{
    st->aggregate_compat = on;
}
