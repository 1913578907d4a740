#include "vip_compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_policy_compile.h"
#include "listener_config.h"
#include "route_compile.h"

/* A route's cluster name -> its leaves: the cluster itself, or an aggregate's leaf list. */
static int resolve_target(const struct xlb_dm_vip *vip, const char *name, bool compat,
                          xlb_leaf_resolver resolve, void *arg, struct xlb_lb_target *t)
{
    t->name = strdup(name);
    if (t->name == NULL)
        return -ENOMEM;
    const struct xlb_dm_cluster *c = xlb_dm_vip_cluster(vip, name);
    if (c == NULL || c->state != XLB_DM_READY || c->value == NULL)
        return 0; /* not ready: picks for it fail, as gRPC fails RPCs to an errored cluster */
    bool aggregate = c->value->type == XLB_CLUSTER_AGGREGATE;
    size_t n = aggregate ? c->n_leaves : 1;
    t->leaves = calloc(n + 1, sizeof(*t->leaves));
    if (t->leaves == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const struct xlb_dm_cluster *leaf = aggregate ? &vip->clusters[c->leaves[i]] : c;
        struct xlb_lb_cluster *compiled = resolve(arg, leaf, aggregate && compat ? c->value : NULL);
        if (compiled != NULL)
            t->leaves[t->n_leaves++] = compiled;
    }
    t->ready = t->n_leaves > 0;
    t->session_any_leaf = aggregate && compat;
    return 0;
}

/* Hash policies per route, in the route table's order (virtual hosts, then their routes). */
static int compile_hash_policies(const struct xlb_route_config *rc, struct xlb_lb_vip *v, char *err,
                                 size_t err_len)
{
    uint32_t n_routes = v->routes->n_routes, n_policies = 0;
    for (size_t h = 0; h < rc->n_vhosts; h++)
        for (size_t r = 0; r < rc->vhosts[h].n_routes; r++)
            n_policies += (uint32_t)rc->vhosts[h].routes[r].n_hash_policies;
    v->route_first_hash = calloc(n_routes + 1, sizeof(uint32_t));
    v->route_n_hash = calloc(n_routes + 1, sizeof(uint32_t));
    v->hash_policies = calloc(n_policies + 1, sizeof(*v->hash_policies));
    if (v->route_first_hash == NULL || v->route_n_hash == NULL || v->hash_policies == NULL)
        return -ENOMEM;
    uint32_t route = 0;
    for (size_t h = 0; h < rc->n_vhosts; h++)
        for (size_t r = 0; r < rc->vhosts[h].n_routes && route < n_routes; r++, route++) {
            const struct xlb_route *in = &rc->vhosts[h].routes[r];
            v->route_first_hash[route] = v->n_hash_policies;
            for (size_t p = 0; p < in->n_hash_policies; p++) {
                int rc_copy = xlb_hash_policy_compile(
                    &in->hash_policies[p], &v->hash_policies[v->n_hash_policies++], err, err_len);
                if (rc_copy != 0)
                    return rc_copy;
                v->route_n_hash[route]++;
            }
        }
    return 0;
}

/* A39: the override of filter `name` at one level (entry, route or virtual host), or NULL. */
static const struct xlb_filter_override *find_override(const struct xlb_filter_overrides *o,
                                                       const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->items[i].filter_name, name) == 0)
            return &o->items[i];
    return NULL;
}

/* A39, the most specific wins: the weighted cluster entry's override (entry NULL: none), the
 * route's, the virtual host's, else the listener's filter config. NULL: disabled. */
static const struct xlb_stateful_session *
effective_session(const struct xlb_http_filter *filter, const struct xlb_virtual_host *vh,
                  const struct xlb_route *route, const struct xlb_weighted_cluster *entry)
{
    const struct xlb_filter_override *o =
        entry != NULL ? find_override(&entry->overrides, filter->name) : NULL;
    if (o == NULL)
        o = find_override(&route->overrides, filter->name);
    if (o == NULL)
        o = find_override(&vh->overrides, filter->name);
    if (o == NULL)
        return &filter->session;
    return o->kind == XLB_SESSION_OVERRIDE_CONFIG ? &o->session : NULL;
}

/* One compiled cookie from session s: *name stays NULL when the filter does nothing. */
static int compile_cookie(const struct xlb_stateful_session *s, char **name,
                          struct xlb_lb_cookie_attrs *a)
{
    if (s == NULL || !s->enabled)
        return 0;
    if ((*name = strdup(s->cookie.name)) == NULL)
        return -ENOMEM;
    if (s->cookie.path != NULL && s->cookie.path[0] != '\0' &&
        (a->path = strdup(s->cookie.path)) == NULL)
        return -ENOMEM;
    a->has_max_age = s->cookie.has_ttl;
    a->max_age_s = s->cookie.has_ttl ? (uint32_t)s->cookie.ttl.seconds : 0;
    return 0;
}

/* Whether an entry of the route overrides the filter: then each entry gets its own cookie. */
static bool entries_override(const struct xlb_http_filter *filter, const struct xlb_route *route)
{
    for (size_t i = 0; route->action == XLB_ROUTE_WEIGHTED_CLUSTERS && i < route->n_weighted; i++)
        if (find_override(&route->weighted[i].overrides, filter->name) != NULL)
            return true;
    return false;
}

/* The per-entry cookies (see struct xlb_lb_vip), sized by a first walk over the routes. */
static int allocate_entry_cookies(const struct xlb_http_filter *filter,
                                  const struct xlb_route_config *rc, struct xlb_lb_vip *v)
{
    uint32_t n = 0;
    for (size_t h = 0; h < rc->n_vhosts; h++)
        for (size_t r = 0; r < rc->vhosts[h].n_routes; r++)
            if (entries_override(filter, &rc->vhosts[h].routes[r]))
                n += (uint32_t)rc->vhosts[h].routes[r].n_weighted;
    if (n == 0)
        return 0; /* the fast path: one route cookie per route */
    v->route_first_entry = malloc((v->routes->n_routes + 1) * sizeof(uint32_t));
    v->entry_cookie = calloc(n, sizeof(char *));
    v->entry_cookie_attrs = calloc(n, sizeof(*v->entry_cookie_attrs));
    if (v->route_first_entry == NULL || v->entry_cookie == NULL || v->entry_cookie_attrs == NULL)
        return -ENOMEM;
    for (uint32_t r = 0; r <= v->routes->n_routes; r++)
        v->route_first_entry[r] = XLB_ROUTE_NONE;
    return 0;
}

/* A route's cookie, and its entries' when one of them overrides the filter. */
static int compile_route_cookies(const struct xlb_http_filter *filter,
                                 const struct xlb_virtual_host *vh, const struct xlb_route *route,
                                 uint32_t index, struct xlb_lb_vip *v)
{
    int rc = compile_cookie(effective_session(filter, vh, route, NULL), &v->route_cookie[index],
                            &v->route_cookie_attrs[index]);
    if (rc != 0 || v->route_first_entry == NULL || !entries_override(filter, route))
        return rc;
    v->route_first_entry[index] = v->n_entry_cookies;
    for (size_t e = 0; rc == 0 && e < route->n_weighted; e++) {
        uint32_t at = v->n_entry_cookies++;
        rc = compile_cookie(effective_session(filter, vh, route, &route->weighted[e]),
                            &v->entry_cookie[at], &v->entry_cookie_attrs[at]);
    }
    return rc;
}

/* A55: each route's session cookie, from the listener's stateful session filter with the A39
 * overrides of its virtual host, the route and the route's weighted cluster entries. */
static int compile_session_cookies(const struct xlb_dm_vip *vip, struct xlb_lb_vip *v)
{
    const struct xlb_http_filter *filter = NULL;
    for (size_t f = 0; vip->listener != NULL && f < vip->listener->n_filters; f++)
        if (vip->listener->filters[f].kind == XLB_HTTP_FILTER_STATEFUL_SESSION) {
            filter = &vip->listener->filters[f];
            break;
        }
    if (filter == NULL)
        return 0;
    const struct xlb_route_config *rc = vip->routes;
    v->route_cookie = calloc(v->routes->n_routes + 1, sizeof(char *));
    v->route_cookie_attrs = calloc(v->routes->n_routes + 1, sizeof(*v->route_cookie_attrs));
    if (v->route_cookie == NULL || v->route_cookie_attrs == NULL)
        return -ENOMEM;
    int err = allocate_entry_cookies(filter, rc, v);
    uint32_t route = 0;
    for (size_t h = 0; err == 0 && h < rc->n_vhosts; h++)
        for (size_t r = 0; err == 0 && r < rc->vhosts[h].n_routes && route < v->routes->n_routes;
             r++, route++)
            err = compile_route_cookies(filter, &rc->vhosts[h], &rc->vhosts[h].routes[r], route, v);
    return err;
}

static int compile_targets(const struct xlb_dm_vip *vip, struct xlb_lb_vip *v, bool compat,
                           xlb_leaf_resolver resolve, void *arg)
{
    v->n_targets = v->routes ? v->routes->n_clusters : 1;
    v->targets = calloc(v->n_targets + 1, sizeof(*v->targets));
    if (v->targets == NULL)
        return -ENOMEM;
    for (uint32_t t = 0; t < v->n_targets; t++) {
        const char *name = v->routes ? v->routes->cluster_names[t] : vip->target;
        int rc = resolve_target(vip, name, compat, resolve, arg, &v->targets[t]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The routing part of an L7 VIP (see struct xlb_lb_vip): routes, hash policies, cookies. */
static int compile_routing(const struct xlb_dm_vip *vip, struct xlb_lb_vip *v, char *err,
                           size_t err_len)
{
    int rc = vip->routes ? xlb_route_compile(vip->routes, NULL, 0, &v->routes) : -EINVAL;
    if (rc == 0)
        rc = compile_hash_policies(vip->routes, v, err, err_len);
    if (rc == 0)
        rc = compile_session_cookies(vip, v);
    return rc;
}

/* v takes prev's routing part, counted in the reference both now share. */
static int share_routing(struct xlb_lb_vip *prev, struct xlb_lb_vip *v)
{
    if (prev->routing_refs == NULL) {
        prev->routing_refs = malloc(sizeof(*prev->routing_refs));
        if (prev->routing_refs == NULL)
            return -ENOMEM;
        *prev->routing_refs = 1;
    }
    ++*prev->routing_refs;
    v->routing_refs = prev->routing_refs;
    v->routes = prev->routes;
    v->route_first_hash = prev->route_first_hash;
    v->route_n_hash = prev->route_n_hash;
    v->hash_policies = prev->hash_policies;
    v->n_hash_policies = prev->n_hash_policies;
    v->route_cookie = prev->route_cookie;
    v->route_cookie_attrs = prev->route_cookie_attrs;
    v->route_first_entry = prev->route_first_entry;
    v->entry_cookie = prev->entry_cookie;
    v->entry_cookie_attrs = prev->entry_cookie_attrs;
    v->n_entry_cookies = prev->n_entry_cookies;
    return 0;
}

int xlb_vip_compile(const struct xlb_dm_vip *vip, bool aggregate_compat, xlb_leaf_resolver resolve,
                    void *arg, struct xlb_lb_vip *routing_of, struct xlb_lb_vip **out, char *err,
                    size_t err_len)
{
    *out = NULL;
    struct xlb_lb_vip *v = calloc(1, sizeof(*v));
    if (v == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    v->refs = 1;
    snprintf(err, err_len, "out of memory");
    int rc = 0;
    if (vip->kind == XLB_DM_VIP_L7)
        rc = routing_of != NULL ? share_routing(routing_of, v)
                                : compile_routing(vip, v, err, err_len);
    if (rc == 0)
        rc = compile_targets(vip, v, aggregate_compat, resolve, arg);
    if (rc != 0) {
        xlb_lb_vip_release(v);
        return -1;
    }
    *out = v;
    return 0;
}
