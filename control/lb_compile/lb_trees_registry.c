/* The leaf clusters the LB trees keep between compiles, by name, and their variants. */
#include "lb_trees_internal.h"

#include <stdlib.h>
#include <string.h>

struct xlb_lb_trees *xlb_lb_trees_create(struct xlb_load_slots *load_slots,
                                         const struct xlb_lb_grace *grace,
                                         const struct xlb_worker_load *loads, unsigned n_workers,
                                         uint64_t seed)
{
    struct xlb_lb_trees *st = calloc(1, sizeof(*st));
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

void lb_trees_entry_free(struct xlb_lb_trees *st, struct cluster_entry *e)
{
    if (e->compiled != NULL)
        for (uint32_t i = 0; i < e->compiled->n_endpoints; i++)
            xlb_endpoint_slots_release(&st->slots, e->compiled->endpoints[i].slot);
    xlb_lb_cluster_release(e->compiled);
    xlb_outlier_free(e->outlier);
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

void xlb_lb_trees_free(struct xlb_lb_trees *st)
{
    if (st == NULL)
        return;
    for (size_t v = 0; v < st->n_vips; v++)
        xlb_lb_vip_release(st->vips[v].compiled);
    free(st->vips);
    while (st->clusters != NULL) {
        struct cluster_entry *next = st->clusters->next;
        lb_trees_entry_free(st, st->clusters);
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

struct cluster_entry *lb_trees_first_named(const struct xlb_lb_trees *st, const char *name)
{
    return xlb_name_index_find(&st->by_name, name);
}

struct cluster_entry *lb_trees_find_variant(const struct xlb_lb_trees *st, const char *name,
                                            const char *policy_from)
{
    for (struct cluster_entry *e = lb_trees_first_named(st, name); e != NULL; e = e->next_variant)
        if (same_policy_from(e->policy_from, policy_from))
            return e;
    return NULL;
}

struct cluster_entry *lb_trees_find_entry(const struct xlb_lb_trees *st, const char *name)
{
    return lb_trees_find_variant(st, name, NULL);
}

struct cluster_entry *lb_trees_entry_of(const struct xlb_lb_trees *st,
                                        const struct xlb_lb_cluster *c)
{
    return lb_trees_find_variant(st, c->name, c->policy_from);
}

/* Takes e out of its name's variant chain (and the index, when it was the last of its name). */
void lb_trees_forget_name(struct xlb_lb_trees *st, struct cluster_entry *e)
{
    struct cluster_entry *first = lb_trees_first_named(st, e->name);
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

struct cluster_entry *lb_trees_entry_for(struct xlb_lb_trees *st, const char *name,
                                         const char *policy_from)
{
    struct cluster_entry *e = lb_trees_find_variant(st, name, policy_from);
    if (e != NULL)
        return e;
    struct cluster_entry *first = lb_trees_first_named(st, name);
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
    xlb_rng_seed(&e->outlier_rng, st->seed ^ (uint64_t)(uintptr_t)e);
    e->next_variant = first;
    e->next = st->clusters;
    st->clusters = e;
    return e;
}

/* A name's own entry, or when only aggregate-policy variants exist, its first variant. */
static bool first_of_name(const struct xlb_lb_trees *st, const struct cluster_entry *e)
{
    if (e->policy_from == NULL)
        return true;
    return lb_trees_find_entry(st, e->name) == NULL && lb_trees_first_named(st, e->name) == e;
}

struct xlb_lb_vip *xlb_lb_trees_vip(const struct xlb_lb_trees *st, size_t v)
{
    return v < st->n_vips ? st->vips[v].compiled : NULL;
}

const struct xlb_lb_cluster *xlb_lb_trees_cluster(const struct xlb_lb_trees *st, const char *name)
{
    const struct cluster_entry *e = lb_trees_find_entry(st, name);
    return e != NULL ? e->compiled : NULL;
}

void xlb_lb_trees_each_cluster(const struct xlb_lb_trees *st,
                               void (*fn)(const struct xlb_lb_cluster *c, void *arg), void *arg)
{
    for (const struct cluster_entry *e = st != NULL ? st->clusters : NULL; e != NULL; e = e->next)
        if (e->compiled != NULL && first_of_name(st, e))
            fn(e->compiled, arg);
}

uint32_t xlb_lb_trees_cluster_slot(const struct xlb_lb_trees *st, const char *name)
{
    return st != NULL ? xlb_cluster_slots_find(&st->cluster_slots, name) : XLB_LB_NO_SLOT;
}

void xlb_lb_trees_set_aggregate_compat(struct xlb_lb_trees *st, bool on)
{
    st->aggregate_compat = on;
}

void xlb_lb_trees_set_bootstrap(struct xlb_lb_trees *st, const struct xlb_bootstrap *b)
{
    st->bootstrap = b;
}

void xlb_lb_trees_tls_files_changed(struct xlb_lb_trees *st)
{
    bool any = false;
    for (struct cluster_entry *e = st->clusters; e != NULL; e = e->next)
        if (e->compiled != NULL && e->compiled->upstream_tls != NULL) {
            e->fingerprint = 0; /* compiled again when its VIPs' trees are rebuilt */
            any = true;
        }
    for (size_t v = 0; any && v < st->n_vips; v++)
        st->vips[v].fingerprint = 0;
}
