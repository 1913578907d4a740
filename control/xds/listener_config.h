/*
 * A validated client-side Listener (LDS): gRPC proposals A27, A39 (HTTP filters), A55/A60
 * (stateful session filter). The listener's api_listener must hold an HttpConnectionManager;
 * its routes come by RDS or inline.
 */
#ifndef XLB_XDS_LISTENER_CONFIG_H
#define XLB_XDS_LISTENER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "envoy/config/listener/v3/listener.pb-c.h"
#include "json_read.h"
#include "route_config.h"
#include "xds_types.h"

enum xlb_http_filter_kind {
    XLB_HTTP_FILTER_ROUTER,           /* always the last one */
    XLB_HTTP_FILTER_STATEFUL_SESSION, /* envoy.extensions.filters.http.stateful_session */
};

struct xlb_http_filter {
    char *name; /* instance name, unique; typed_per_filter_config keys refer to it */
    enum xlb_http_filter_kind kind;
    struct xlb_stateful_session session; /* STATEFUL_SESSION */
};

struct xlb_listener_config {
    char *name;
    char *rds_name;                         /* set when routes come by RDS ... */
    struct xlb_route_config *inline_routes; /* ... or this when they are inline */
    struct xlb_http_filter *filters;        /* optional unsupported filters are left out */
    size_t n_filters;
    bool has_max_stream_duration; /* common_http_protocol_options.max_stream_duration */
    struct xlb_duration max_stream_duration;
};

/*
 * Validate a Listener. Returns 0 with *out filled (free with xlb_listener_config_free), or -1
 * with one line per problem appended to errs and *out left empty.
 */
int xlb_validate_listener(const Envoy__Config__Listener__V3__Listener *msg,
                          struct xlb_listener_config *out, struct xlb_errors *errs);

void xlb_listener_config_free(struct xlb_listener_config *config);

#endif
