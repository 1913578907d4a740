/* Helpers shared by the RDS validation tests (test_route.c, test_filter_override.c). */
#ifndef XLB_ROUTE_TEST_H
#define XLB_ROUTE_TEST_H

#include "route_config.h"
#include "xv_test.h"

typedef Envoy__Config__Route__V3__RouteConfiguration RouteConfiguration;

/* One virtual host "*" holding the given routes. */
#define RC(routes)                                                                                 \
    "{\"name\":\"r\",\"virtual_hosts\":[{\"name\":\"vh\",\"domains\":[\"*\"],\"routes\":[" routes  \
    "]}]}"
#define TO_C             "\"route\":{\"cluster\":\"c\"}"
#define R(match, action) "{\"match\":" match "," action "}"
#define ANY_ROUTE        R("{\"prefix\":\"\"}", TO_C)

RouteConfiguration *rt_json(const char *json);
/* Validates the JSON route configuration; the message is freed. */
int rt_validate(const char *json, struct xlb_route_config *cfg, struct xlb_errors *errs);
/* The JSON must be valid; cfg holds it (free with xlb_route_config_free). */
void rt_valid(const char *json, struct xlb_route_config *cfg);
/* The JSON must be NACKed with exactly this line. */
void rt_expect_nack(const char *json, const char *line);
/* The message (edited by the test) must be NACKed with exactly this line; it is freed. */
void rt_expect_nack_msg(RouteConfiguration *msg, const char *line);
/* The only route of the only virtual host, which must be valid. */
const struct xlb_route *rt_one_route(const char *json, struct xlb_route_config *cfg);

#endif
