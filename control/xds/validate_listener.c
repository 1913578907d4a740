/*
 * Listener (LDS) as a gRPC client reads it (A27, A39): an api_listener holding an
 * HttpConnectionManager whose routes come by RDS (from ADS or the same server) or inline.
 */
#include <stdlib.h>
#include <string.h>

#include "validate_listener_internal.h"
#include "validate_route_internal.h"

#define XV_HCM_TYPE                                                                                \
    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"

typedef Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpConnectionManager Hcm;

static bool read_rds(struct xv_ctx *ctx, const Hcm *hcm, struct xlb_listener_config *out)
{
    const Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__Rds *rds = hcm->rds;
    if (rds->config_source == NULL) {
        xv_error(ctx, "rds.config_source", "field not present");
        return false;
    }
    if (!xv_config_source_ads_or_self(rds->config_source)) {
        xv_error(ctx, "rds.config_source", "ConfigSource is not ads or self");
        return false;
    }
    out->rds_name = xv_strdup(ctx, "rds.route_config_name", rds->route_config_name);
    return out->rds_name != NULL;
}

static bool read_routes(struct xv_ctx *ctx, const Hcm *hcm, struct xlb_listener_config *out)
{
    switch (hcm->route_specifier_case) {
    case ENVOY__EXTENSIONS__FILTERS__NETWORK__HTTP_CONNECTION_MANAGER__V3__HTTP_CONNECTION_MANAGER__ROUTE_SPECIFIER_RDS:
        return read_rds(ctx, hcm, out);
    case ENVOY__EXTENSIONS__FILTERS__NETWORK__HTTP_CONNECTION_MANAGER__V3__HTTP_CONNECTION_MANAGER__ROUTE_SPECIFIER_ROUTE_CONFIG:
        out->inline_routes = xv_calloc(ctx, "route_config", 1, sizeof(*out->inline_routes));
        return out->inline_routes != NULL &&
               xv_route_config(ctx, "route_config", hcm->route_config, out->inline_routes);
    default: /* scoped_routes, or nothing */
        xv_error(ctx, "", "neither route_config nor rds fields are present");
        return false;
    }
}

static bool read_hcm(struct xv_ctx *ctx, const Hcm *hcm, struct xlb_listener_config *out)
{
    bool ok = read_routes(ctx, hcm, out);
    ok = xv_http_filters(ctx, hcm->http_filters, hcm->n_http_filters, out) && ok;
    const Envoy__Config__Core__V3__HttpProtocolOptions *opts = hcm->common_http_protocol_options;
    if (opts != NULL && opts->max_stream_duration != NULL) {
        out->has_max_stream_duration =
            xv_duration(ctx, "common_http_protocol_options.max_stream_duration",
                        opts->max_stream_duration, &out->max_stream_duration);
        ok = ok && out->has_max_stream_duration;
    }
    return ok;
}

/* The HttpConnectionManager inside api_listener, unpacked; NULL after an error. */
static Hcm *unpack_hcm(struct xv_ctx *ctx, const Envoy__Config__Listener__V3__Listener *msg)
{
    if (msg->api_listener == NULL) {
        xv_error(ctx, "api_listener", "field not present");
        return NULL;
    }
    const Google__Protobuf__Any *any = msg->api_listener->api_listener;
    if (any == NULL) {
        xv_error(ctx, "api_listener.api_listener", "field not present");
        return NULL;
    }
    const char *type = xv_any_type(ctx, "api_listener.api_listener", any);
    if (type == NULL)
        return NULL;
    if (strcmp(type, XV_HCM_TYPE) != 0) {
        xv_error(ctx, "api_listener.api_listener", "unsupported type \"%.96s\"", type);
        return NULL;
    }
    return (Hcm *)xv_unpack(
        ctx, "api_listener.api_listener", any,
        &envoy__extensions__filters__network__http_connection_manager__v3__http_connection_manager__descriptor,
        "HttpConnectionManager");
}

int xlb_validate_listener(const Envoy__Config__Listener__V3__Listener *msg,
                          struct xlb_listener_config *out, struct xlb_errors *errs)
{
    struct xv_ctx ctx;
    xv_ctx_init(&ctx, errs, "listener", msg->name);
    memset(out, 0, sizeof(*out));
    Hcm *hcm = unpack_hcm(&ctx, msg);
    if (hcm == NULL)
        return -1;
    out->name = xv_strdup(&ctx, "name", msg->name);
    bool ok = read_hcm(&ctx, hcm, out) && out->name != NULL;
    protobuf_c_message_free_unpacked(&hcm->base, NULL);
    if (!ok) {
        xlb_listener_config_free(out);
        return -1;
    }
    return 0;
}

void xlb_listener_config_free(struct xlb_listener_config *config)
{
    free(config->name);
    free(config->rds_name);
    if (config->inline_routes != NULL) {
        xlb_route_config_free(config->inline_routes);
        free(config->inline_routes);
    }
    for (size_t i = 0; i < config->n_filters; i++)
        xv_http_filter_free(&config->filters[i]);
    free(config->filters);
    memset(config, 0, sizeof(*config));
}
