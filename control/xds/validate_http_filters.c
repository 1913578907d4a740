/*
 * HttpConnectionManager.http_filters as gRPC reads them (A39): unique non-empty names, a config
 * for each, unsupported types refused unless the filter is optional, and the router last.
 */
#include <stdlib.h>
#include <string.h>

#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb-c.h"
#include "http_filters.h"
#include "validate_listener_internal.h"

typedef Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpFilter HttpFilter;

static bool name_seen_before(HttpFilter *const *filters, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(filters[j]->name, filters[i]->name) == 0)
            return true;
    return false;
}

/* Returns 1 when the filter was kept in *out, 0 when skipped, -1 on an error. */
static int read_filter(struct xv_ctx *ctx, const char *path, const HttpFilter *f,
                       struct xlb_http_filter *out)
{
    char tpath[XV_PATH_MAX];
    xv_key(tpath, path, "typed_config");
    if (f->config_type_case !=
            ENVOY__EXTENSIONS__FILTERS__NETWORK__HTTP_CONNECTION_MANAGER__V3__HTTP_FILTER__CONFIG_TYPE_TYPED_CONFIG ||
        f->typed_config == NULL) {
        if (f->is_optional)
            return 0;
        xv_error(ctx, tpath, "field not present");
        return -1;
    }
    struct xv_extension ext;
    if (!xv_extension_read(ctx, tpath, f->typed_config, &ext))
        return -1;
    int kept = -1;
    if (strcmp(ext.type, XV_ROUTER_TYPE) == 0) {
        /* gRPC parses the router's config only in protobuf form, never as a TypedStruct. */
        if (ext.any == NULL)
            xv_error(ctx, tpath, "could not parse router filter config");
        else {
            out->kind = XLB_HTTP_FILTER_ROUTER;
            kept = 1;
        }
    } else if (strcmp(ext.type, XV_SESSION_TYPE) == 0) {
        out->kind = XLB_HTTP_FILTER_STATEFUL_SESSION;
        kept = xv_stateful_session_any(ctx, tpath, &ext, &out->session) ? 1 : -1;
    } else if (f->is_optional) {
        kept = 0;
    } else {
        xv_error(ctx, tpath, "unsupported filter type \"%.96s\"", ext.type);
    }
    xv_extension_release(&ext);
    if (kept == 1) {
        out->name = xv_strdup(ctx, path, f->name);
        if (out->name == NULL)
            kept = -1;
    }
    return kept;
}

/* gRPC requires the terminal filter (the router) last and nowhere else. */
static void check_router_last(struct xv_ctx *ctx, const struct xlb_http_filter *kept,
                              const size_t *index, size_t n)
{
    for (size_t k = 0; k + 1 < n; k++) {
        if (kept[k].kind == XLB_HTTP_FILTER_ROUTER) {
            char path[XV_PATH_MAX];
            xv_idx(path, "http_filters", index[k]);
            xv_error(ctx, path, "the router must be the last filter");
        }
    }
    if (n == 0 || kept[n - 1].kind != XLB_HTTP_FILTER_ROUTER)
        xv_error(ctx, "http_filters", "the last filter must be the router");
}

bool xv_http_filters(struct xv_ctx *ctx, HttpFilter *const *filters, size_t n,
                     struct xlb_listener_config *out)
{
    if (n == 0) {
        xv_error(ctx, "http_filters", "expected at least one HTTP filter");
        return false;
    }
    unsigned errors_before = ctx->n_errors;
    out->filters = xv_calloc(ctx, "http_filters", n, sizeof(*out->filters));
    size_t *index = xv_calloc(ctx, "http_filters", n, sizeof(*index));
    if (out->filters == NULL || index == NULL) {
        free(index);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char path[XV_PATH_MAX], npath[XV_PATH_MAX];
        xv_idx(path, "http_filters", i);
        xv_key(npath, path, "name");
        if (filters[i]->name[0] == '\0')
            xv_error(ctx, npath, "must be non-empty");
        else if (name_seen_before(filters, i))
            xv_error(ctx, npath, "duplicate HTTP filter name \"%.96s\"", filters[i]->name);
        struct xlb_http_filter *slot = &out->filters[out->n_filters];
        int kept = read_filter(ctx, path, filters[i], slot);
        if (kept == 1)
            index[out->n_filters++] = i;
        else
            xv_http_filter_free(slot);
    }
    check_router_last(ctx, out->filters, index, out->n_filters);
    free(index);
    return ctx->n_errors == errors_before;
}

void xv_http_filter_free(struct xlb_http_filter *filter)
{
    free(filter->name);
    xlb_stateful_session_free(&filter->session);
    memset(filter, 0, sizeof(*filter));
}
