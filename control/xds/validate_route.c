/*
 * RouteConfiguration (RDS, A28): virtual hosts with valid domain patterns, routes with a match
 * and an action, and the cluster specifier plugins routes may name. Routes gRPC ignores are
 * left out of the result; errors NACK the resource.
 */
#include <stdlib.h>
#include <string.h>

#include "validate_route_internal.h"

typedef Envoy__Config__Route__V3__VirtualHost VirtualHost;
typedef Envoy__Config__Route__V3__Route Route;

/* gRPC's domain patterns: exact, "*.suffix", "prefix.*" or "*"; one wildcard, at an end. */
static bool domain_type(const char *pattern, enum xlb_domain_match *type)
{
    size_t len = strlen(pattern);
    const char *star = strchr(pattern, '*');
    if (len == 0)
        return false;
    if (star == NULL) {
        *type = XLB_DOMAIN_EXACT;
        return true;
    }
    if (strchr(star + 1, '*') != NULL)
        return false;
    if (len == 1)
        *type = XLB_DOMAIN_UNIVERSE;
    else if (star == pattern)
        *type = XLB_DOMAIN_SUFFIX;
    else if (star == pattern + len - 1)
        *type = XLB_DOMAIN_PREFIX;
    else
        return false;
    return true;
}

static bool read_domains(struct xv_ctx *ctx, const char *path, const VirtualHost *vh,
                         struct xlb_virtual_host *out)
{
    char dpath[XV_PATH_MAX];
    xv_key(dpath, path, "domains");
    if (vh->n_domains == 0) {
        xv_error(ctx, dpath, "must be non-empty");
        return false;
    }
    out->domains = xv_calloc(ctx, dpath, vh->n_domains, sizeof(*out->domains));
    if (out->domains == NULL)
        return false;
    bool ok = true;
    for (size_t i = 0; i < vh->n_domains; i++) {
        char ipath[XV_PATH_MAX];
        xv_idx(ipath, dpath, i);
        struct xlb_domain *d = &out->domains[out->n_domains];
        if (!domain_type(vh->domains[i], &d->type)) {
            xv_error(ctx, ipath, "invalid domain pattern \"%.96s\"", vh->domains[i]);
            ok = false;
            continue;
        }
        d->pattern = xv_strdup(ctx, ipath, vh->domains[i]);
        if (d->pattern == NULL)
            return false;
        out->n_domains++;
    }
    return ok;
}

static void route_free(struct xlb_route *r)
{
    free(r->name);
    xv_route_match_free(&r->match);
    free(r->cluster);
    for (size_t i = 0; i < r->n_weighted; i++) {
        free(r->weighted[i].name);
        xv_filter_overrides_free(&r->weighted[i].overrides);
    }
    free(r->weighted);
    for (size_t i = 0; i < r->n_hash_policies; i++) {
        free(r->hash_policies[i].header_name);
        free(r->hash_policies[i].regex);
        free(r->hash_policies[i].substitution);
    }
    free(r->hash_policies);
    xv_filter_overrides_free(&r->overrides);
    memset(r, 0, sizeof(*r));
}

static const char *route_key(const void *map, size_t i)
{
    return ((const Route *)map)->typed_per_filter_config[i]->key;
}

static const Google__Protobuf__Any *route_value(const void *map, size_t i)
{
    return ((const Route *)map)->typed_per_filter_config[i]->value;
}

/* What a route does besides forwarding by RouteAction: gRPC keeps such routes. */
static int read_action(struct xv_ctx *ctx, const char *path, const struct xv_cs_plugins *plugins,
                       const Route *r, struct xlb_route *out)
{
    char apath[XV_PATH_MAX];
    switch (r->action_case) {
    case ENVOY__CONFIG__ROUTE__V3__ROUTE__ACTION_ROUTE:
        xv_key(apath, path, "route");
        return xv_route_action(ctx, apath, plugins, r->route, out);
    case ENVOY__CONFIG__ROUTE__V3__ROUTE__ACTION_NON_FORWARDING_ACTION:
        out->action = XLB_ROUTE_NON_FORWARDING;
        return 1;
    default: /* redirect, direct_response, filter_action or none: RPCs fail */
        out->action = XLB_ROUTE_UNSUPPORTED;
        return 1;
    }
}

/* Returns 1 when kept, 0 when gRPC ignores the route, -1 on an error. */
static int read_route(struct xv_ctx *ctx, const char *path, const struct xv_cs_plugins *plugins,
                      const Route *r, struct xlb_route *out)
{
    char mpath[XV_PATH_MAX], fpath[XV_PATH_MAX];
    xv_key(mpath, path, "match");
    if (r->match == NULL) {
        xv_error(ctx, mpath, "field not present");
        return -1;
    }
    int usable = xv_route_match(ctx, mpath, r->match, &out->match);
    if (usable <= 0)
        return usable;
    int kept = read_action(ctx, path, plugins, r, out);
    if (kept <= 0)
        return kept;
    xv_key(fpath, path, "typed_per_filter_config");
    if (!xv_filter_override_map(ctx, fpath, r->n_typed_per_filter_config, route_key, route_value, r,
                                &out->overrides))
        return -1;
    out->name = xv_strdup(ctx, path, r->name);
    return out->name != NULL ? 1 : -1;
}

static bool read_routes(struct xv_ctx *ctx, const char *path, const struct xv_cs_plugins *plugins,
                        const VirtualHost *vh, struct xlb_virtual_host *out)
{
    char rpath[XV_PATH_MAX];
    xv_key(rpath, path, "routes");
    out->routes = xv_calloc(ctx, rpath, vh->n_routes, sizeof(*out->routes));
    if (out->routes == NULL)
        return false;
    bool ok = true;
    for (size_t i = 0; i < vh->n_routes; i++) {
        char ipath[XV_PATH_MAX];
        xv_idx(ipath, rpath, i);
        struct xlb_route *slot = &out->routes[out->n_routes];
        int kept = read_route(ctx, ipath, plugins, vh->routes[i], slot);
        if (kept == 1)
            out->n_routes++;
        else
            route_free(slot);
        ok = ok && kept >= 0;
    }
    return ok;
}

static const char *vhost_key(const void *map, size_t i)
{
    return ((const VirtualHost *)map)->typed_per_filter_config[i]->key;
}

static const Google__Protobuf__Any *vhost_value(const void *map, size_t i)
{
    return ((const VirtualHost *)map)->typed_per_filter_config[i]->value;
}

static bool read_vhost(struct xv_ctx *ctx, const char *path, const struct xv_cs_plugins *plugins,
                       const VirtualHost *vh, struct xlb_virtual_host *out)
{
    char fpath[XV_PATH_MAX];
    xv_key(fpath, path, "typed_per_filter_config");
    out->name = xv_strdup(ctx, path, vh->name);
    bool ok = out->name != NULL;
    ok = read_domains(ctx, path, vh, out) && ok;
    ok = xv_filter_override_map(ctx, fpath, vh->n_typed_per_filter_config, vhost_key, vhost_value,
                                vh, &out->overrides) &&
         ok;
    ok = read_routes(ctx, path, plugins, vh, out) && ok;
    return ok;
}

bool xv_route_config(struct xv_ctx *ctx, const char *path,
                     const Envoy__Config__Route__V3__RouteConfiguration *msg,
                     struct xlb_route_config *out)
{
    char vpath[XV_PATH_MAX];
    xv_key(vpath, path, "virtual_hosts");
    out->name = xv_strdup(ctx, path, msg->name);
    out->vhosts = xv_calloc(ctx, vpath, msg->n_virtual_hosts, sizeof(*out->vhosts));
    if (out->name == NULL || out->vhosts == NULL)
        return false;
    /* The plugins first: routes refer to them by name. */
    struct xv_cs_plugins plugins;
    bool ok = xv_cs_plugins_read(ctx, path, msg, &plugins);
    for (size_t i = 0; i < msg->n_virtual_hosts; i++) {
        char ipath[XV_PATH_MAX];
        xv_idx(ipath, vpath, i);
        ok = read_vhost(ctx, ipath, &plugins, msg->virtual_hosts[i], &out->vhosts[i]) && ok;
        out->n_vhosts++;
    }
    xv_cs_plugins_free(&plugins);
    return ok;
}

int xlb_validate_route_config(const Envoy__Config__Route__V3__RouteConfiguration *msg,
                              struct xlb_route_config *out, struct xlb_errors *errs)
{
    struct xv_ctx ctx;
    xv_ctx_init(&ctx, errs, "route_configuration", msg->name);
    memset(out, 0, sizeof(*out));
    if (!xv_route_config(&ctx, "", msg, out)) {
        xlb_route_config_free(out);
        return -1;
    }
    return 0;
}

void xlb_route_config_free(struct xlb_route_config *config)
{
    for (size_t i = 0; i < config->n_vhosts; i++) {
        struct xlb_virtual_host *vh = &config->vhosts[i];
        free(vh->name);
        for (size_t j = 0; j < vh->n_domains; j++)
            free(vh->domains[j].pattern);
        free(vh->domains);
        for (size_t j = 0; j < vh->n_routes; j++)
            route_free(&vh->routes[j]);
        free(vh->routes);
        xv_filter_overrides_free(&vh->overrides);
    }
    free(config->vhosts);
    free(config->name);
    memset(config, 0, sizeof(*config));
}
