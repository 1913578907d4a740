/*
 * RDS validation, typed_per_filter_config (control/xds/validate_filter_override.c): overrides of
 * virtual hosts, routes and weighted clusters (A39), of which only StatefulSessionPerRoute
 * (A55, A61) is understood, optionally wrapped in FilterConfig. One test per rule.
 */
#include "route_test.h"

#include <stdlib.h>

#define PER_ROUTE                                                                                  \
    "\"@type\":\"type.googleapis.com/"                                                             \
    "envoy.extensions.filters.http.stateful_session.v3.StatefulSessionPerRoute\""
#define COOKIE_STATE                                                                               \
    "\"@type\":\"type.googleapis.com/"                                                             \
    "envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState\""
#define TPFC(entries) ",\"typed_per_filter_config\":{" entries "}"

static void per_route_session_disabled_and_override(void **state)
{
    struct xlb_route_config cfg;
    rt_valid("{\"name\":\"r\",\"virtual_hosts\":[{\"domains\":[\"*\"]" TPFC(
                 "\"ssa\":{" PER_ROUTE
                 ",\"disabled\":true}") ",\"routes\":[{\"match\":{\"prefix\":"
                                        "\"\"}," TO_C TPFC("\"ssa\":{" PER_ROUTE
                                                           ",\"stateful_session\":{"
                                                           "\"session_state\":{\"name\":\"c\","
                                                           "\"typed_config\":{" COOKIE_STATE
                                                           ",\"cookie\":{\"name\":\"s\",\"ttl\":"
                                                           "\"60s\",\"path\":\"/p\"}}}}}") "}]}]}",
             &cfg);
    const struct xlb_virtual_host *vh = &cfg.vhosts[0];
    assert_int_equal(vh->overrides.n, 1);
    assert_string_equal(vh->overrides.items[0].filter_name, "ssa");
    assert_int_equal(vh->overrides.items[0].kind, XLB_SESSION_OVERRIDE_DISABLED);
    const struct xlb_filter_override *o = &vh->routes[0].overrides.items[0];
    assert_int_equal(vh->routes[0].overrides.n, 1);
    assert_int_equal(o->kind, XLB_SESSION_OVERRIDE_CONFIG);
    assert_true(o->session.enabled);
    assert_string_equal(o->session.cookie.name, "s");
    assert_string_equal(o->session.cookie.path, "/p");
    assert_true(o->session.cookie.has_ttl);
    assert_int_equal(o->session.cookie.ttl.seconds, 60);
    xlb_route_config_free(&cfg);
}

static void per_route_on_weighted_cluster(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r = rt_one_route(
        RC(R("{\"prefix\":\"\"}", "\"route\":{\"weighted_clusters\":{\"clusters\":[{\"name\":\"a\","
                                  "\"weight\":1" TPFC("\"ssa\":{" PER_ROUTE "}") "}]}}")),
        &cfg);
    assert_int_equal(r->weighted[0].overrides.n, 1);
    assert_int_equal(r->weighted[0].overrides.items[0].kind, XLB_SESSION_OVERRIDE_CONFIG);
    assert_false(r->weighted[0].overrides.items[0].session.enabled);
    xlb_route_config_free(&cfg);
}

static void per_route_cookie_name_required(void **state)
{
    rt_expect_nack(RC("{\"match\":{\"prefix\":\"\"}," TO_C TPFC(
                       "\"ssa\":{" PER_ROUTE ",\"stateful_session\":{\"session_state\":{"
                       "\"typed_config\":{" COOKIE_STATE ",\"cookie\":{}}}}}") "}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].typed_per_filter_config"
                   "[\"ssa\"].stateful_session.session_state.typed_config.cookie.name: field not "
                   "present");
}

static void optional_unknown_override_skipped(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r = rt_one_route(
        RC("{\"match\":{\"prefix\":\"\"}," TO_C TPFC(
            "\"x\":{\"@type\":\"type.googleapis.com/envoy.config.route.v3.FilterConfig\","
            "\"is_optional\":true,\"config\":{\"@type\":\"type.googleapis.com/envoy.config.core."
            "v3.Locality\"}}") "}"),
        &cfg);
    assert_int_equal(r->overrides.n, 0);
    xlb_route_config_free(&cfg);
}

static void unknown_override_rejected(void **state)
{
    rt_expect_nack(
        RC("{\"match\":{\"prefix\":\"\"}," TO_C TPFC(
            "\"x\":{\"@type\":\"type.googleapis.com/envoy.config.core.v3.Locality\"}") "}"),
        "route_configuration \"r\": virtual_hosts[0].routes[0].typed_per_filter_config"
        "[\"x\"]: unsupported filter type \"envoy.config.core.v3.Locality\"");
}

static void router_override_rejected(void **state)
{
    rt_expect_nack(RC("{\"match\":{\"prefix\":\"\"}," TO_C TPFC(
                       "\"router\":{\"@type\":\"type.googleapis.com/envoy.extensions.filters.http."
                       "router.v3.Router\"}") "}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].typed_per_filter_config"
                   "[\"router\"]: router filter does not support config override");
}

static void override_key_required(void **state)
{
    rt_expect_nack(RC("{\"match\":{\"prefix\":\"\"}," TO_C TPFC("\"\":{" PER_ROUTE "}") "}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].typed_per_filter_config"
                   "[\"\"]: filter name must be non-empty");
}

#define TYPED_STRUCT(url)                                                                          \
    "\"@type\":\"type.googleapis.com/xds.type.v3.TypedStruct\",\"type_url\":\"" url "\""
#define FILTER_CONFIG     "\"@type\":\"type.googleapis.com/envoy.config.route.v3.FilterConfig\""
#define ON_ROUTE(entries) RC("{\"match\":{\"prefix\":\"\"}," TO_C TPFC(entries) "}")

static void filter_config_wrapping_per_route(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r = rt_one_route(
        ON_ROUTE("\"ssa\":{" FILTER_CONFIG ",\"config\":{" PER_ROUTE ",\"disabled\":true}}"), &cfg);
    assert_int_equal(r->overrides.n, 1);
    assert_int_equal(r->overrides.items[0].kind, XLB_SESSION_OVERRIDE_DISABLED);
    xlb_route_config_free(&cfg);
}

/* gRPC parses the override only in protobuf form. */
static void per_route_as_typed_struct_rejected(void **state)
{
    rt_expect_nack(ON_ROUTE("\"ssa\":{" TYPED_STRUCT(
                       "type.googleapis.com/envoy.extensions.filters.http.stateful_session.v3."
                       "StatefulSessionPerRoute") "}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].typed_per_filter_config"
                   "[\"ssa\"]: could not parse stateful session filter override config");
}

static void session_filter_config_as_override_rejected(void **state)
{
    rt_expect_nack(ON_ROUTE("\"ssa\":{\"@type\":\"type.googleapis.com/envoy.extensions.filters."
                            "http.stateful_session.v3.StatefulSession\"}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].typed_per_filter_config"
                   "[\"ssa\"]: a stateful session override must be a StatefulSessionPerRoute");
}

static void filter_config_as_typed_struct_rejected(void **state)
{
    rt_expect_nack(
        ON_ROUTE(
            "\"x\":{" TYPED_STRUCT("type.googleapis.com/envoy.config.route.v3.FilterConfig") "}"),
        "route_configuration \"r\": virtual_hosts[0].routes[0].typed_per_filter_config[\"x\"]: "
        "could not parse FilterConfig");
}

static void filter_config_config_required(void **state)
{
    rt_expect_nack(ON_ROUTE("\"x\":{" FILTER_CONFIG ",\"is_optional\":true}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].typed_per_filter_config"
                   "[\"x\"].config: field not present");
}

/* The JSON reader refuses a null map value; the wire gives an entry without one. */
static void override_value_required(void **state)
{
    RouteConfiguration *msg = rt_json(ON_ROUTE("\"x\":{" PER_ROUTE "}"));
    Envoy__Config__Route__V3__Route *route = msg->virtual_hosts[0]->routes[0];
    protobuf_c_message_free_unpacked(&route->typed_per_filter_config[0]->value->base, NULL);
    route->typed_per_filter_config[0]->value = NULL;
    rt_expect_nack_msg(msg, "route_configuration \"r\": virtual_hosts[0].routes[0]."
                            "typed_per_filter_config[\"x\"]: field not present");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(per_route_session_disabled_and_override),
        cmocka_unit_test(per_route_on_weighted_cluster),
        cmocka_unit_test(per_route_cookie_name_required),
        cmocka_unit_test(optional_unknown_override_skipped),
        cmocka_unit_test(unknown_override_rejected),
        cmocka_unit_test(router_override_rejected),
        cmocka_unit_test(override_key_required),
        cmocka_unit_test(filter_config_wrapping_per_route),
        cmocka_unit_test(per_route_as_typed_struct_rejected),
        cmocka_unit_test(session_filter_config_as_override_rejected),
        cmocka_unit_test(filter_config_as_typed_struct_rejected),
        cmocka_unit_test(filter_config_config_required),
        cmocka_unit_test(override_value_required),
    };
    return cmocka_run_group_tests_name("xds_validate_filter_override", tests, NULL, NULL);
}
