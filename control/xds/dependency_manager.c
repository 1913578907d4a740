/*
 * The dependency manager's VIP level (see dependency_manager.h): listener and route
 * configuration, the clusters routes name, the VIP's state, and the watch set. Cluster graphs
 * are resolved in dependency_clusters.c.
 */
#include "dependency_manager.h"

#include <stdlib.h>
#include <string.h>

#include "dependency_walk.h"

void xlb_dm_init(struct xlb_dm *dm, struct xlb_xds_cache *cache)
{
    memset(dm, 0, sizeof(*dm));
    dm->cache = cache;
}

static void free_result(struct xlb_dm_vip *vip)
{
    for (size_t i = 0; i < vip->n_clusters; i++) {
        free(vip->clusters[i].leaves);
        free(vip->clusters[i].error);
        free(vip->clusters[i].note);
    }
    free(vip->clusters);
    xlb_name_index_free(&vip->by_name);
    free(vip->reason);
    vip->clusters = NULL;
    vip->n_clusters = 0;
    vip->reason = NULL;
}

void xlb_dm_free(struct xlb_dm *dm)
{
    for (size_t i = 0; i < dm->n_vips; i++) {
        free_result(&dm->vips[i]);
        free(dm->vips[i].target);
    }
    free(dm->vips);
    dm->vips = NULL;
    dm->n_vips = 0;
}

int xlb_dm_add_vip(struct xlb_dm *dm, enum xlb_dm_vip_kind kind, const char *target)
{
    struct xlb_dm_vip *vips = realloc(dm->vips, (dm->n_vips + 1) * sizeof(*vips));
    if (vips == NULL)
        return -1;
    dm->vips = vips;
    struct xlb_dm_vip *vip = &vips[dm->n_vips];
    memset(vip, 0, sizeof(*vip));
    xlb_name_index_init(&vip->by_name);
    if ((vip->target = strdup(target)) == NULL)
        return -1;
    vip->kind = kind;
    vip->state = XLB_DM_WARMING;
    return (int)dm->n_vips++;
}

const struct xlb_dm_cluster *xlb_dm_vip_cluster(const struct xlb_dm_vip *vip, const char *name)
{
    uintptr_t at = (uintptr_t)xlb_name_index_find(&vip->by_name, name);
    return at != 0 ? &vip->clusters[at - 1] : NULL;
}

const char *xlb_dm_state_name(enum xlb_dm_state state)
{
    switch (state) {
    case XLB_DM_WARMING:
        return "WARMING";
    case XLB_DM_READY:
        return "READY";
    default:
        return "ERROR";
    }
}

static void wait_for(struct dm_walk *w, const struct xlb_xds_resource *res)
{
    w->vip->state = XLB_DM_WARMING;
    w->vip->reason = dm_printf(w, "waiting for %s \"%s\"", xlb_xds_type_name[res->type], res->name);
}

/* Whether the listener or route resource holds a value; if not, the VIP waits or fails. */
static bool usable(struct dm_walk *w, const struct xlb_xds_resource *res)
{
    w->inputs = dm_hash_resource(w->inputs, res);
    if (res->has_value)
        return true;
    if (res->state == XLB_RES_REQUESTED) {
        wait_for(w, res);
    } else {
        w->vip->state = XLB_DM_ERROR;
        w->vip->reason = dm_unusable_reason(w, res);
    }
    return false;
}

/* Every cluster any route of any virtual host names; non-forwarding routes name none. */
static void resolve_route_clusters(struct dm_walk *w, const struct xlb_route_config *routes)
{
    for (size_t v = 0; v < routes->n_vhosts && !w->oom; v++) {
        const struct xlb_virtual_host *vhost = &routes->vhosts[v];
        for (size_t r = 0; r < vhost->n_routes && !w->oom; r++) {
            const struct xlb_route *route = &vhost->routes[r];
            if (route->action == XLB_ROUTE_CLUSTER)
                dm_resolve_cluster(w, route->cluster, true);
            else if (route->action == XLB_ROUTE_WEIGHTED_CLUSTERS)
                for (size_t i = 0; i < route->n_weighted && !w->oom; i++)
                    dm_resolve_cluster(w, route->weighted[i].name, true);
        }
    }
}

/* Listener, then its route configuration (RDS or inline), then the clusters. */
static void walk_l7(struct dm_walk *w)
{
    struct xlb_xds_resource *lds = dm_watch(w, XLB_XDS_LDS, w->vip->target);
    if (lds == NULL || !usable(w, lds))
        return;
    w->vip->listener = &lds->value.listener;
    const struct xlb_route_config *routes = w->vip->listener->inline_routes;
    if (routes == NULL) {
        struct xlb_xds_resource *rds = dm_watch(w, XLB_XDS_RDS, w->vip->listener->rds_name);
        if (rds == NULL || !usable(w, rds))
            return;
        routes = &rds->value.route;
    }
    w->vip->routes = routes;
    resolve_route_clusters(w, routes);
}

/* READY unless a cluster the VIP routes to is still warming (a cluster's error is its own). */
static void settle_vip(struct dm_walk *w)
{
    struct xlb_dm_vip *vip = w->vip;
    if (vip->state != XLB_DM_READY)
        return;
    for (size_t i = 0; i < vip->n_clusters; i++) {
        const struct xlb_dm_cluster *c = &vip->clusters[i];
        if (c->from_route && c->state == XLB_DM_WARMING) {
            wait_for(w, c->awaited);
            return;
        }
    }
}

static void set_fingerprint(struct dm_walk *w)
{
    struct xlb_dm_vip *vip = w->vip;
    uint64_t h = dm_hash_u64(w->inputs, vip->state);
    h = dm_hash_str(h, vip->reason);
    for (size_t i = 0; i < vip->n_clusters; i++) {
        h = dm_hash_u64(h, vip->clusters[i].fingerprint);
        h = dm_hash_u64(h, vip->clusters[i].from_route);
    }
    vip->fingerprint = h;
    vip->routes_fingerprint = w->inputs;
}

static void free_walk(struct dm_walk *w)
{
    for (size_t i = 0; i < w->vip->n_clusters; i++)
        free(w->nodes[i].graph_problem);
    free(w->nodes);
    free(w->path);
}

/* Evaluates `vip` into `out` (kind and target shared with vip); -1 when out of memory. */
static int evaluate(struct xlb_dm *dm, struct dm_watch_list *watch, const struct xlb_dm_vip *vip,
                    struct xlb_dm_vip *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = vip->kind;
    out->target = vip->target;
    out->state = XLB_DM_READY;
    xlb_name_index_init(&out->by_name);
    struct dm_walk w = {.cache = dm->cache, .watch = watch, .vip = out};
    w.inputs = dm_hash_str(dm_hash_u64(DM_HASH_SEED, vip->kind), vip->target);
    if (vip->kind == XLB_DM_VIP_L7)
        walk_l7(&w);
    else
        dm_resolve_cluster(&w, vip->target, true);
    if (!w.oom)
        settle_vip(&w);
    free_walk(&w);
    if (w.oom) {
        free_result(out);
        return -1;
    }
    set_fingerprint(&w);
    return 0;
}

static int compare_pointers(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* Exactly the listed resources are watched from now on; those no longer watched are forgotten
 * (xlb_xds_cache_forget): no result refers to them any more, the fresh ones do not name them. */
static void apply_watches(struct xlb_dm *dm, struct dm_watch_list *watch)
{
    if (watch->n > 1)
        qsort(watch->items, watch->n, sizeof(*watch->items), compare_pointers);
    bool changed = false;
    for (int t = 0; t < XLB_XDS_TYPES; t++) {
        for (struct xlb_xds_resource *res = dm->cache->list[t]; res != NULL; res = res->next) {
            bool wanted = watch->n > 0 && bsearch(&res, watch->items, watch->n,
                                                  sizeof(*watch->items), compare_pointers);
            changed |= res->watched != wanted;
            if (res->watched && !wanted)
                xlb_xds_cache_forget(dm->cache, res);
            res->watched = wanted;
        }
    }
    if (changed)
        dm->watch_changes++;
}

int xlb_dm_update(struct xlb_dm *dm)
{
    struct dm_watch_list watch = {0};
    struct xlb_dm_vip *fresh = calloc(dm->n_vips ? dm->n_vips : 1, sizeof(*fresh));
    if (fresh == NULL)
        return -1;
    size_t done = 0;
    while (done < dm->n_vips && evaluate(dm, &watch, &dm->vips[done], &fresh[done]) == 0)
        done++;
    int rc = done == dm->n_vips ? 0 : -1;
    if (rc == 0)
        apply_watches(dm, &watch);
    for (size_t i = 0; i < done; i++) {
        struct xlb_dm_vip *keep = rc == 0 ? &fresh[i] : &dm->vips[i];
        struct xlb_dm_vip *drop = rc == 0 ? &dm->vips[i] : &fresh[i];
        free_result(drop);
        if (rc == 0)
            *drop = *keep;
    }
    free(watch.items);
    free(fresh);
    return rc;
}
