/*
 * Cluster resolution of the dependency manager: one cluster, its EDS assignment, and for an
 * aggregate cluster its whole graph, flattened into a priority list of leaf clusters (A37,
 * A75), as C-core's XdsDependencyManager does it:
 *   - a child still awaited keeps the aggregate (and so the VIP) warming;
 *   - a child that does not exist or is otherwise unusable is left out; an aggregate left
 *     with no leaf at all is in error;
 *   - duplicates keep their first position (depth first, in priority order).
 * Graph problems are errors of every aggregate whose graph contains them: a cycle, and more
 * than XLB_DM_MAX_AGGREGATE_DEPTH levels below a cluster (the cluster itself counted).
 */
#include "dependency_walk.h"

#include <stdlib.h>
#include <string.h>

static size_t find_cluster(const struct xlb_dm_vip *vip, const char *name)
{
    const struct xlb_dm_cluster *c = xlb_dm_vip_cluster(vip, name);
    return c != NULL ? (size_t)(c - vip->clusters) : SIZE_MAX;
}

/* Appends an entry for res; SIZE_MAX when out of memory. */
static size_t append_cluster(struct dm_walk *w, const struct xlb_xds_resource *res)
{
    struct xlb_dm_vip *vip = w->vip;
    if (vip->n_clusters == w->cap_clusters) {
        size_t cap = w->cap_clusters ? 2 * w->cap_clusters : 8;
        struct xlb_dm_cluster *clusters = realloc(vip->clusters, cap * sizeof(*clusters));
        if (clusters != NULL)
            vip->clusters = clusters;
        struct dm_node *nodes = clusters ? realloc(w->nodes, cap * sizeof(*nodes)) : NULL;
        if (nodes == NULL) {
            w->oom = true;
            return SIZE_MAX;
        }
        w->nodes = nodes;
        w->cap_clusters = cap;
    }
    size_t i = vip->n_clusters;
    if (xlb_name_index_set(&vip->by_name, res->name, (void *)(uintptr_t)(i + 1)) != 0) {
        w->oom = true;
        return SIZE_MAX;
    }
    vip->n_clusters++;
    memset(&vip->clusters[i], 0, sizeof(vip->clusters[i]));
    memset(&w->nodes[i], 0, sizeof(w->nodes[i]));
    vip->clusters[i].name = res->name;
    vip->clusters[i].cds = res;
    vip->clusters[i].state = XLB_DM_READY;
    w->nodes[i].height = 1;
    return i;
}

static void await(struct xlb_dm_cluster *c, const struct xlb_xds_resource *res)
{
    c->state = XLB_DM_WARMING;
    c->awaited = res;
}

/* The CDS resource holds no value: awaited, or a local error of this cluster (A74). */
static void resolve_without_value(struct dm_walk *w, size_t idx)
{
    struct xlb_dm_cluster *c = &w->vip->clusters[idx];
    if (c->cds->state == XLB_RES_REQUESTED) {
        await(c, c->cds);
        return;
    }
    c->state = XLB_DM_ERROR;
    c->error = dm_unusable_reason(w, c->cds);
}

/* An EDS cluster needs its assignment; one that does not exist leaves it without endpoints. */
static void resolve_eds(struct dm_walk *w, size_t idx)
{
    struct xlb_dm_cluster *c = &w->vip->clusters[idx];
    const char *service = c->value->eds_service_name;
    const char *eds_name = service != NULL && service[0] != '\0' ? service : c->name;
    struct xlb_xds_resource *eds = dm_watch(w, XLB_XDS_EDS, eds_name);
    if (eds == NULL)
        return;
    c->eds = eds;
    if (eds->has_value)
        c->endpoints = &eds->value.endpoints;
    else if (eds->state == XLB_RES_REQUESTED)
        await(c, eds);
    else
        c->note = dm_unusable_reason(w, eds);
}

static bool push_path(struct dm_walk *w, size_t idx)
{
    if (w->n_path == w->cap_path) {
        size_t cap = w->cap_path ? 2 * w->cap_path : 16;
        size_t *path = realloc(w->path, cap * sizeof(*path));
        if (path == NULL) {
            w->oom = true;
            return false;
        }
        w->path = path;
        w->cap_path = cap;
    }
    w->path[w->n_path++] = idx;
    w->nodes[idx].on_path = true;
    return true;
}

static void pop_path(struct dm_walk *w)
{
    w->nodes[w->path[--w->n_path]].on_path = false;
}

static void set_problem(struct dm_node *node, char *problem)
{
    if (node->graph_problem == NULL)
        node->graph_problem = problem;
    else
        free(problem);
}

/* idx names `child`, which is on the path: the cycle runs from child down to idx and back. */
static void note_cycle(struct dm_walk *w, size_t idx, size_t child)
{
    size_t from = w->n_path;
    while (from > 0 && w->path[from - 1] != child)
        from--;
    size_t len = sizeof("has a cycle: ");
    for (size_t i = from - 1; i < w->n_path; i++)
        len += strlen(w->vip->clusters[w->path[i]].name) + 4;
    len += strlen(w->vip->clusters[child].name);
    char *text = malloc(len);
    if (text == NULL) {
        w->oom = true;
        return;
    }
    strcpy(text, "has a cycle: ");
    for (size_t i = from - 1; i < w->n_path; i++) {
        strcat(text, w->vip->clusters[w->path[i]].name);
        strcat(text, " -> ");
    }
    strcat(text, w->vip->clusters[child].name);
    set_problem(&w->nodes[idx], text);
}

static bool add_leaf(struct dm_walk *w, struct xlb_dm_cluster *c, size_t leaf)
{
    for (size_t i = 0; i < c->n_leaves; i++)
        if (c->leaves[i] == leaf)
            return true;
    size_t *leaves = realloc(c->leaves, (c->n_leaves + 1) * sizeof(*leaves));
    if (leaves == NULL) {
        w->oom = true;
        return false;
    }
    c->leaves = leaves;
    c->leaves[c->n_leaves++] = leaf;
    return true;
}

/* A usable child contributes itself, or its own leaves when it is an aggregate. */
static void add_child_leaves(struct dm_walk *w, size_t idx, size_t child)
{
    struct xlb_dm_cluster *c = &w->vip->clusters[idx];
    const struct xlb_dm_cluster *cc = &w->vip->clusters[child];
    if (cc->value->type != XLB_CLUSTER_AGGREGATE) {
        add_leaf(w, c, child);
        return;
    }
    for (size_t i = 0; i < cc->n_leaves; i++)
        if (!add_leaf(w, c, cc->leaves[i]))
            return;
}

/* One child of aggregate idx; returns the levels of the child's graph. */
static unsigned resolve_child(struct dm_walk *w, size_t idx, const char *name)
{
    size_t child = find_cluster(w->vip, name);
    if (child != SIZE_MAX && w->nodes[child].on_path) {
        note_cycle(w, idx, child);
        w->nodes[idx].children =
            dm_hash_resource(w->nodes[idx].children, w->vip->clusters[child].cds);
        return 0;
    }
    child = dm_resolve_cluster(w, name, false);
    if (child == SIZE_MAX)
        return 0;
    struct dm_node *node = &w->nodes[child];
    struct xlb_dm_cluster *c = &w->vip->clusters[idx];
    const struct xlb_dm_cluster *cc = &w->vip->clusters[child];
    w->nodes[idx].children = dm_hash_u64(w->nodes[idx].children, cc->fingerprint);
    if (node->graph_problem != NULL)
        set_problem(&w->nodes[idx], dm_printf(w, "%s", node->graph_problem));
    else if (cc->state == XLB_DM_WARMING && c->awaited == NULL)
        c->awaited = cc->awaited;
    else if (cc->state == XLB_DM_READY)
        add_child_leaves(w, idx, child);
    return node->height;
}

/* The aggregate's outcome once all its children are resolved. */
static void settle_aggregate(struct dm_walk *w, size_t idx)
{
    struct xlb_dm_cluster *c = &w->vip->clusters[idx];
    struct dm_node *node = &w->nodes[idx];
    if (node->height > XLB_DM_MAX_AGGREGATE_DEPTH)
        set_problem(node, dm_printf(w, "exceeds the depth limit of %d (\"%s\" has %u levels)",
                                    XLB_DM_MAX_AGGREGATE_DEPTH, c->name, node->height));
    if (node->graph_problem != NULL || c->awaited != NULL || c->n_leaves == 0) {
        free(c->leaves);
        c->leaves = NULL;
        c->n_leaves = 0;
    }
    if (node->graph_problem != NULL) {
        c->state = XLB_DM_ERROR;
        c->awaited = NULL;
        c->error = dm_printf(w, "cluster \"%s\": aggregate cluster graph %s", c->name,
                             node->graph_problem);
    } else if (c->awaited != NULL) {
        c->state = XLB_DM_WARMING;
    } else if (c->n_leaves == 0) {
        c->state = XLB_DM_ERROR;
        c->error = dm_printf(w, "aggregate cluster \"%s\" has no usable leaf cluster", c->name);
    }
}

static void resolve_aggregate(struct dm_walk *w, size_t idx)
{
    if (!push_path(w, idx))
        return;
    /* The value lives in the cache, which the walk only adds to: stable across recursion. */
    const struct xlb_cluster_config *config = w->vip->clusters[idx].value;
    unsigned height = 0;
    for (size_t k = 0; k < config->n_aggregate_clusters && !w->oom; k++) {
        unsigned child = resolve_child(w, idx, config->aggregate_clusters[k]);
        if (child > height)
            height = child;
    }
    pop_path(w);
    w->nodes[idx].height = height + 1;
    settle_aggregate(w, idx);
}

static void set_fingerprint(struct dm_walk *w, size_t idx)
{
    struct xlb_dm_cluster *c = &w->vip->clusters[idx];
    uint64_t h = dm_hash_resource(DM_HASH_SEED, c->cds);
    if (c->eds != NULL)
        h = dm_hash_resource(h, c->eds);
    h = dm_hash_u64(h, w->nodes[idx].children);
    h = dm_hash_u64(h, c->state);
    h = dm_hash_str(h, c->error);
    h = dm_hash_str(h, c->note);
    for (size_t i = 0; i < c->n_leaves; i++)
        h = dm_hash_str(h, w->vip->clusters[c->leaves[i]].name);
    c->fingerprint = h;
}

size_t dm_resolve_cluster(struct dm_walk *w, const char *name, bool from_route)
{
    size_t idx = find_cluster(w->vip, name);
    if (idx != SIZE_MAX) {
        w->vip->clusters[idx].from_route |= from_route;
        return idx;
    }
    struct xlb_xds_resource *res = dm_watch(w, XLB_XDS_CDS, name);
    if (res == NULL || (idx = append_cluster(w, res)) == SIZE_MAX)
        return SIZE_MAX;
    struct xlb_dm_cluster *c = &w->vip->clusters[idx];
    c->from_route = from_route;
    if (!res->has_value) {
        resolve_without_value(w, idx);
    } else {
        /* A NACKed resource with a previous value keeps serving that value (A46). */
        c->value = &res->value.cluster;
        if (c->value->type == XLB_CLUSTER_EDS)
            resolve_eds(w, idx);
        else if (c->value->type == XLB_CLUSTER_AGGREGATE)
            resolve_aggregate(w, idx);
    }
    if (w->oom)
        return SIZE_MAX;
    set_fingerprint(w, idx);
    return idx;
}
