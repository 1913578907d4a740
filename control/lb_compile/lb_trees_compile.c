/* Compiling leaf clusters and VIP trees after a dependency-manager update. */
#include "bootstrap.h"
#include "lb_trees_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_compile.h"
#include "vip_compile.h"
#include "xlb_log.h"

struct slot_args {
    struct xlb_lb_trees *st;
    const char *cluster;
};

static uint32_t locality_slot(void *arg, uint32_t priority, const struct xlb_eds_locality *l)
{
    struct slot_args *a = arg;
    return xlb_load_slots_locality(a->st->load_slots, a->cluster, priority, l->region, l->zone,
                                   l->sub_zone);
}

static uint32_t drop_slot(void *arg, const char *category)
{
    struct slot_args *a = arg;
    return xlb_load_slots_drop(a->st->load_slots, a->cluster, category);
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

static int carry_over(struct xlb_lb_trees *st, struct cluster_entry *e,
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
            out->ok[i] = lb_trees_endpoint_counter(st, out->slots[i],
                                                   offsetof(struct xlb_endpoint_load, succeeded));
            out->failed[i] = lb_trees_endpoint_counter(st, out->slots[i],
                                                       offsetof(struct xlb_endpoint_load, failed));
            out->session[i] = lb_trees_endpoint_counter(
                st, out->slots[i], offsetof(struct xlb_endpoint_load, session_picks));
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
        xlb_outlier_free(e->outlier);
        e->outlier = NULL;
        memset(e->ejected, 0, n * sizeof(bool));
        return;
    }
    if (e->outlier == NULL && (e->outlier = xlb_outlier_create(&e->outlier_rng)) == NULL)
        return;
    struct xlb_outlier_key *keys = calloc(n + 1, sizeof(*keys));
    if (keys == NULL)
        return;
    for (uint32_t i = 0; i < n; i++) {
        keys[i].addr = where[i].addr;
        keys[i].port = where[i].port;
    }
    xlb_outlier_set_endpoints(e->outlier, keys, n);
    xlb_outlier_set_config(e->outlier, &config->outlier, now_ms);
    free(keys);
    const uint64_t *bits = xlb_outlier_ejected_bitmap(e->outlier);
    for (uint32_t i = 0; i < n; i++)
        e->ejected[i] = (bits[i / 64] >> (i % 64)) & 1;
}

/* The leaf's config, or for a compatibility variant a copy with the aggregate's policy. */
static struct xlb_cluster_config leaf_config(const struct xlb_dm_cluster *leaf,
                                             const struct xlb_cluster_config *policy)
{
    struct xlb_cluster_config c = *leaf->value;
    if (policy != NULL) {
        c.lb_policy = policy->lb_policy;
        c.ring_hash = policy->ring_hash;
        c.maglev_table_size = policy->maglev_table_size;
        c.choice_count = policy->choice_count;
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
    h = h * 31 + policy->choice_count;
    h = h * 31 + policy->shuffle_address_list;
    return h * 31 + policy->ring_hash.max_ring_size;
}

/* A29: the cluster's TLS client context from its certificate provider instances' files; NULL
 * with err when one cannot be read (the cluster then keeps its previous compile). */
static SSL_CTX *upstream_tls(const struct xlb_lb_trees *st, const struct xlb_upstream_tls *u,
                             char *err, size_t errlen)
{
    const struct xlb_cert_provider_config *ca =
        st->bootstrap != NULL ? xlb_bootstrap_cert_provider(st->bootstrap, u->ca_instance) : NULL;
    const struct xlb_cert_provider_config *cert =
        st->bootstrap != NULL && u->cert_instance != NULL
            ? xlb_bootstrap_cert_provider(st->bootstrap, u->cert_instance)
            : NULL;
    if (ca == NULL || ca->ca_certificate_file == NULL) {
        snprintf(err, errlen, "certificate provider instance %s has no ca_certificate_file",
                 u->ca_instance);
        return NULL;
    }
    if (u->cert_instance != NULL && (cert == NULL || cert->certificate_file == NULL)) {
        snprintf(err, errlen, "certificate provider instance %s has no certificate_file",
                 u->cert_instance);
        return NULL;
    }
    struct xlb_tls_client_config cfg = {
        .ca_certificate_file = ca->ca_certificate_file,
        .certificate_file = cert != NULL ? cert->certificate_file : NULL,
        .private_key_file = cert != NULL ? cert->private_key_file : NULL,
        .sans = u->sans,
        .n_sans = u->n_sans,
    };
    return xlb_tls_client_create(&cfg, err, errlen);
}

/* (Re)compile a leaf from its dependency-manager entry; false when it failed (logged). */
bool lb_trees_compile_leaf(struct xlb_lb_trees *st, struct cluster_entry *e,
                           const struct xlb_dm_cluster *leaf,
                           const struct xlb_cluster_config *policy, bool inputs_changed)
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
    char err[384];
    if (config.upstream_tls.enabled)
        in.upstream_tls = upstream_tls(st, &config.upstream_tls, err, sizeof(err));
    bool ok = (!config.upstream_tls.enabled || in.upstream_tls != NULL) &&
              xlb_cluster_compile(&in, &c, err, sizeof(err)) == 0;
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
    struct xlb_lb_trees *st = arg;
    if (leaf->state != XLB_DM_READY || leaf->value == NULL ||
        leaf->value->type == XLB_CLUSTER_AGGREGATE)
        return NULL;
    struct cluster_entry *e = lb_trees_entry_for(st, leaf->name, policy ? policy->name : NULL);
    if (e == NULL)
        return NULL;
    e->referenced = true;
    if (e->compiled == NULL || e->fingerprint != variant_fingerprint(leaf, policy))
        lb_trees_compile_leaf(st, e, leaf, policy, true);
    xlb_lb_cluster_hold(e->compiled);
    return e->compiled;
}

/* Whether a compiled VIP still uses every leaf's current compile. */
bool lb_trees_vip_current(const struct xlb_lb_trees *st, const struct xlb_lb_vip *v)
{
    for (uint32_t t = 0; t < v->n_targets; t++)
        for (uint32_t l = 0; l < v->targets[t].n_leaves; l++) {
            const struct cluster_entry *e = lb_trees_entry_of(st, v->targets[t].leaves[l]);
            if (e == NULL || e->compiled != v->targets[t].leaves[l])
                return false;
        }
    return true;
}

static void mark_referenced(struct xlb_lb_trees *st, const struct xlb_lb_vip *v)
{
    for (uint32_t t = 0; v != NULL && t < v->n_targets; t++)
        for (uint32_t l = 0; l < v->targets[t].n_leaves; l++) {
            struct cluster_entry *e = lb_trees_entry_of(st, v->targets[t].leaves[l]);
            if (e != NULL)
                e->referenced = true;
        }
}

/* Clusters no current tree uses go, and their endpoint slots with them (after a grace). */
static void sweep(struct xlb_lb_trees *st)
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
        lb_trees_forget_name(st, e);
        lb_trees_entry_free(st, e);
    }
}

bool lb_trees_rebuild_vip(struct xlb_lb_trees *st, size_t v, const struct xlb_dm_vip *vip)
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

static int remember_vips(struct xlb_lb_trees *st, const size_t *dm_index, size_t n_vips)
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

bool xlb_lb_trees_update(struct xlb_lb_trees *st, const struct xlb_dm *dm, const size_t *dm_index,
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
            lb_trees_vip_current(st, entry->compiled))
            continue;
        changed |= lb_trees_rebuild_vip(st, v, vip);
    }
    sweep(st);
    return changed;
}
