/* Shared between the listener validator's files. Internal to control/xds. */
#ifndef XLB_XDS_VALIDATE_LISTENER_INTERNAL_H
#define XLB_XDS_VALIDATE_LISTENER_INTERNAL_H

#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb-c.h"
#include "listener_config.h"
#include "validate_internal.h"

/* http_filters (A39) into out->filters; false when any error was added. */
bool xv_http_filters(
    struct xv_ctx *ctx,
    Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpFilter *const *filters,
    size_t n, struct xlb_listener_config *out);

void xv_http_filter_free(struct xlb_http_filter *filter);

#endif
