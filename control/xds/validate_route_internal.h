/* Shared between the route configuration validator's files. Internal to control/xds. */
#ifndef XLB_XDS_VALIDATE_ROUTE_INTERNAL_H
#define XLB_XDS_VALIDATE_ROUTE_INTERNAL_H

#include "envoy/config/route/v3/route.pb-c.h"
#include "envoy/config/route/v3/route_components.pb-c.h"
#include "route_config.h"
#include "validate_internal.h"

/* The whole RouteConfiguration; path is "" for RDS and "route_config" inline in a listener. */
bool xv_route_config(struct xv_ctx *ctx, const char *path,
                     const Envoy__Config__Route__V3__RouteConfiguration *msg,
                     struct xlb_route_config *out);

/*
 * A route's match. Returns 1 when usable, 0 when gRPC ignores the route (query_parameters, a
 * path that can never match a gRPC method), -1 on an error.
 */
int xv_route_match(struct xv_ctx *ctx, const char *path,
                   const Envoy__Config__Route__V3__RouteMatch *msg, struct xlb_route_match *out);
void xv_route_match_free(struct xlb_route_match *match);

/* RouteConfiguration.cluster_specifier_plugins, by name (validate_route_plugins.c). */
struct xv_cs_plugin {
    char *name;
    bool skipped; /* optional and of an unsupported type: routes naming it are ignored */
};

struct xv_cs_plugins {
    struct xv_cs_plugin *items;
    size_t n;
};

enum xv_cs_plugin_use {
    XV_PLUGIN_UNKNOWN,  /* no plugin of that name: the route NACKs */
    XV_PLUGIN_SKIPPED,  /* optional and unsupported: gRPC ignores the route */
    XV_PLUGIN_IN_ERROR, /* its definition was NACKed already */
};

bool xv_cs_plugins_read(struct xv_ctx *ctx, const char *path,
                        const Envoy__Config__Route__V3__RouteConfiguration *msg,
                        struct xv_cs_plugins *out);
enum xv_cs_plugin_use xv_cs_plugins_lookup(const struct xv_cs_plugins *plugins, const char *name);
void xv_cs_plugins_free(struct xv_cs_plugins *plugins);

/* A RouteAction. Returns 1, 0 when gRPC ignores the route, -1 on an error. */
int xv_route_action(struct xv_ctx *ctx, const char *path, const struct xv_cs_plugins *plugins,
                    const Envoy__Config__Route__V3__RouteAction *msg, struct xlb_route *out);

/* One typed_per_filter_config entry. Returns 1 when kept in *out, 0 when skipped, -1. */
int xv_filter_override(struct xv_ctx *ctx, const char *path, const char *key,
                       const Google__Protobuf__Any *any, struct xlb_filter_override *out);
void xv_filter_overrides_free(struct xlb_filter_overrides *overrides);

/*
 * Reads every entry of a typed_per_filter_config map. The three map entry types protoc-c
 * generates differ only by name, so the caller passes keys and values pulled out of them.
 */
bool xv_filter_override_map(struct xv_ctx *ctx, const char *path, size_t n,
                            const char *(*key_at)(const void *map, size_t i),
                            const Google__Protobuf__Any *(*value_at)(const void *map, size_t i),
                            const void *map, struct xlb_filter_overrides *out);

#endif
