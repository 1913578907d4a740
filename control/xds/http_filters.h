/*
 * The HTTP filters xlb knows (A39 registry): type names and the stateful session parsers that
 * both the listener (filter config) and the route configuration (per-route override) use.
 * Internal to control/xds.
 */
#ifndef XLB_XDS_HTTP_FILTERS_H
#define XLB_XDS_HTTP_FILTERS_H

#include "validate_internal.h"

#define XV_ROUTER_TYPE  "envoy.extensions.filters.http.router.v3.Router"
#define XV_SESSION_TYPE "envoy.extensions.filters.http.stateful_session.v3.StatefulSession"
#define XV_SESSION_PER_ROUTE_TYPE                                                                  \
    "envoy.extensions.filters.http.stateful_session.v3.StatefulSessionPerRoute"
#define XV_COOKIE_STATE_TYPE                                                                       \
    "envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState"

struct Envoy__Extensions__Filters__Http__StatefulSession__V3__StatefulSession;

/* A StatefulSession message (A55/A60): session_state must be a CookieBasedSessionState. */
bool xv_stateful_session(
    struct xv_ctx *ctx, const char *path,
    const struct Envoy__Extensions__Filters__Http__StatefulSession__V3__StatefulSession *msg,
    struct xlb_stateful_session *out);

/* A filter config in protobuf form of the given type; a TypedStruct is refused as gRPC does. */
bool xv_stateful_session_any(struct xv_ctx *ctx, const char *path, const struct xv_extension *ext,
                             struct xlb_stateful_session *out);

#endif
