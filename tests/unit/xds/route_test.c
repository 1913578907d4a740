/* See route_test.h. */
#include "route_test.h"

RouteConfiguration *rt_json(const char *json)
{
    return (RouteConfiguration *)xv_json(&envoy__config__route__v3__route_configuration__descriptor,
                                         json);
}

int rt_validate(const char *json, struct xlb_route_config *cfg, struct xlb_errors *errs)
{
    RouteConfiguration *msg = rt_json(json);
    int rc = xlb_validate_route_config(msg, cfg, errs);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    return rc;
}

void rt_valid(const char *json, struct xlb_route_config *cfg)
{
    struct xlb_errors errs = {0};
    int rc = rt_validate(json, cfg, &errs);
    xv_expect_none(&errs);
    assert_int_equal(rc, 0);
}

void rt_expect_nack(const char *json, const char *line)
{
    rt_expect_nack_msg(rt_json(json), line);
}

void rt_expect_nack_msg(RouteConfiguration *msg, const char *line)
{
    struct xlb_route_config cfg;
    struct xlb_errors errs = {0};
    int rc = xlb_validate_route_config(msg, &cfg, &errs);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    assert_int_equal(rc, -1);
    assert_null(cfg.name);
    xv_expect_line(&errs, line);
}

const struct xlb_route *rt_one_route(const char *json, struct xlb_route_config *cfg)
{
    rt_valid(json, cfg);
    assert_int_equal(cfg->n_vhosts, 1);
    assert_int_equal(cfg->vhosts[0].n_routes, 1);
    return &cfg->vhosts[0].routes[0];
}
