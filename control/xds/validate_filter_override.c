/*
 * typed_per_filter_config entries of virtual hosts, routes and weighted clusters (A39), of
 * which xlb understands the stateful session override StatefulSessionPerRoute (A55, A61). An
 * entry may be wrapped in FilterConfig, whose is_optional lets unknown overrides be skipped.
 */
#include <stdlib.h>
#include <string.h>

#include "envoy/config/route/v3/route_components.pb-c.h"
#include "envoy/extensions/filters/http/stateful_session/v3/stateful_session.pb-c.h"
#include "http_filters.h"
#include "validate_route_internal.h"

#define XV_FILTER_CONFIG_TYPE "envoy.config.route.v3.FilterConfig"

typedef Envoy__Extensions__Filters__Http__StatefulSession__V3__StatefulSessionPerRoute PerRoute;

static bool read_per_route(struct xv_ctx *ctx, const char *path, const struct xv_extension *ext,
                           struct xlb_filter_override *out)
{
    if (ext->any == NULL) {
        xv_error(ctx, path, "could not parse stateful session filter override config");
        return false;
    }
    PerRoute *pr = (PerRoute *)xv_unpack(
        ctx, path, ext->any,
        &envoy__extensions__filters__http__stateful_session__v3__stateful_session_per_route__descriptor,
        "stateful session filter override config");
    if (pr == NULL)
        return false;
    bool ok = true;
    if (pr->override_case ==
            ENVOY__EXTENSIONS__FILTERS__HTTP__STATEFUL_SESSION__V3__STATEFUL_SESSION_PER_ROUTE__OVERRIDE_DISABLED &&
        pr->disabled) {
        out->kind = XLB_SESSION_OVERRIDE_DISABLED;
    } else {
        /* Neither disabled nor a config: gRPC installs a filter that does nothing. */
        out->kind = XLB_SESSION_OVERRIDE_CONFIG;
        if (pr->override_case ==
            ENVOY__EXTENSIONS__FILTERS__HTTP__STATEFUL_SESSION__V3__STATEFUL_SESSION_PER_ROUTE__OVERRIDE_STATEFUL_SESSION) {
            char child[XV_PATH_MAX];
            xv_key(child, path, "stateful_session");
            ok = xv_stateful_session(ctx, child, pr->stateful_session, &out->session);
        }
    }
    protobuf_c_message_free_unpacked(&pr->base, NULL);
    return ok;
}

/* Returns 1 when kept, 0 when skipped, -1 on an error; ext is the innermost extension. */
static int read_override(struct xv_ctx *ctx, const char *path, const struct xv_extension *ext,
                         bool optional, struct xlb_filter_override *out)
{
    if (strcmp(ext->type, XV_SESSION_PER_ROUTE_TYPE) == 0)
        return read_per_route(ctx, path, ext, out) ? 1 : -1;
    if (strcmp(ext->type, XV_ROUTER_TYPE) == 0) {
        xv_error(ctx, path, "router filter does not support config override");
        return -1;
    }
    if (strcmp(ext->type, XV_SESSION_TYPE) == 0) {
        xv_error(ctx, path, "a stateful session override must be a StatefulSessionPerRoute");
        return -1;
    }
    if (optional)
        return 0;
    xv_error(ctx, path, "unsupported filter type \"%.96s\"", ext->type);
    return -1;
}

/* Unwraps FilterConfig { config, is_optional } and reads what it holds. */
static int read_wrapped(struct xv_ctx *ctx, const char *path, const struct xv_extension *outer,
                        struct xlb_filter_override *out)
{
    if (outer->any == NULL) {
        xv_error(ctx, path, "could not parse FilterConfig");
        return -1;
    }
    Envoy__Config__Route__V3__FilterConfig *fc =
        (Envoy__Config__Route__V3__FilterConfig *)xv_unpack(
            ctx, path, outer->any, &envoy__config__route__v3__filter_config__descriptor,
            "FilterConfig");
    if (fc == NULL)
        return -1;
    char cpath[XV_PATH_MAX];
    xv_key(cpath, path, "config");
    int kept = -1;
    struct xv_extension inner;
    if (fc->config == NULL)
        xv_error(ctx, cpath, "field not present");
    else if (xv_extension_read(ctx, cpath, fc->config, &inner)) {
        kept = read_override(ctx, cpath, &inner, fc->is_optional, out);
        xv_extension_release(&inner);
    }
    protobuf_c_message_free_unpacked(&fc->base, NULL);
    return kept;
}

int xv_filter_override(struct xv_ctx *ctx, const char *path, const char *key,
                       const Google__Protobuf__Any *any, struct xlb_filter_override *out)
{
    memset(out, 0, sizeof(*out));
    if (key[0] == '\0') {
        xv_error(ctx, path, "filter name must be non-empty");
        return -1;
    }
    if (any == NULL) {
        xv_error(ctx, path, "field not present");
        return -1;
    }
    struct xv_extension ext;
    if (!xv_extension_read(ctx, path, any, &ext))
        return -1;
    int kept = strcmp(ext.type, XV_FILTER_CONFIG_TYPE) == 0
                   ? read_wrapped(ctx, path, &ext, out)
                   : read_override(ctx, path, &ext, false, out);
    xv_extension_release(&ext);
    if (kept == 1) {
        out->filter_name = xv_strdup(ctx, path, key);
        if (out->filter_name == NULL)
            kept = -1;
    }
    if (kept != 1)
        xlb_stateful_session_free(&out->session);
    return kept;
}

bool xv_filter_override_map(struct xv_ctx *ctx, const char *path, size_t n,
                            const char *(*key_at)(const void *map, size_t i),
                            const Google__Protobuf__Any *(*value_at)(const void *map, size_t i),
                            const void *map, struct xlb_filter_overrides *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return true;
    out->items = xv_calloc(ctx, path, n, sizeof(*out->items));
    if (out->items == NULL)
        return false;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        char epath[XV_PATH_MAX];
        const char *key = key_at(map, i);
        xv_map(epath, path, key);
        int kept = xv_filter_override(ctx, epath, key != NULL ? key : "", value_at(map, i),
                                      &out->items[out->n]);
        if (kept == 1)
            out->n++;
        ok = ok && kept >= 0;
    }
    return ok;
}

void xv_filter_overrides_free(struct xlb_filter_overrides *overrides)
{
    for (size_t i = 0; i < overrides->n; i++) {
        free(overrides->items[i].filter_name);
        xlb_stateful_session_free(&overrides->items[i].session);
    }
    free(overrides->items);
    memset(overrides, 0, sizeof(*overrides));
}
