/* LDS validation (control/xds/listener_config.h): one test per rule. */
#include "xv_test.h"

#include <string.h>

#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb-c.h"
#include "listener_config.h"
#include "xlb_const.h"

static int validate(const char *json, struct xlb_listener_config *cfg, struct xlb_errors *errs)
{
    ProtobufCMessage *msg = xv_json(&envoy__config__listener__v3__listener__descriptor, json);
    int rc = xlb_validate_listener((Envoy__Config__Listener__V3__Listener *)msg, cfg, errs);
    protobuf_c_message_free_unpacked(msg, NULL);
    return rc;
}

static void valid(const char *json, struct xlb_listener_config *cfg)
{
    struct xlb_errors errs = {0};
    int rc = validate(json, cfg, &errs);
    xv_expect_none(&errs);
    assert_int_equal(rc, 0);
}

static void expect_nack(const char *json, const char *line)
{
    struct xlb_listener_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate(json, &cfg, &errs), -1);
    assert_null(cfg.name);
    xv_expect_line(&errs, line);
}

#define HCM_TYPE                                                                                   \
    "\"@type\":\"type.googleapis.com/"                                                             \
    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\""
#define L(hcm) "{\"name\":\"svc\",\"api_listener\":{\"api_listener\":{" HCM_TYPE hcm "}}}"
#define RDS    ",\"rds\":{\"config_source\":{\"ads\":{}},\"route_config_name\":\"routes\"}"
#define ROUTER                                                                                     \
    "{\"name\":\"router\",\"typed_config\":{\"@type\":\"type.googleapis.com/"                      \
    "envoy.extensions.filters.http.router.v3.Router\"}}"
#define FILTERS(list) ",\"http_filters\":[" list "]"
#define SESSION(cfg)                                                                               \
    "{\"name\":\"ssa\",\"typed_config\":{\"@type\":\"type.googleapis.com/"                         \
    "envoy.extensions.filters.http.stateful_session.v3.StatefulSession\"" cfg "}}"
#define COOKIE(c)                                                                                  \
    ",\"session_state\":{\"name\":\"envoy.http.stateful_session.cookie\",\"typed_config\":{\"@"    \
    "type\":\"type.googleapis.com/"                                                                \
    "envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState\"" c "}}"

static void rds_with_defaults(void **state)
{
    struct xlb_listener_config cfg;
    valid(L(RDS FILTERS(ROUTER)), &cfg);
    assert_string_equal(cfg.name, "svc");
    assert_string_equal(cfg.rds_name, "routes");
    assert_null(cfg.inline_routes);
    assert_int_equal(cfg.n_filters, 1);
    assert_string_equal(cfg.filters[0].name, "router");
    assert_int_equal(cfg.filters[0].kind, XLB_HTTP_FILTER_ROUTER);
    assert_false(cfg.has_max_stream_duration);
    xlb_listener_config_free(&cfg);
}

static void rds_config_source_self(void **state)
{
    struct xlb_listener_config cfg;
    valid(
        L(",\"rds\":{\"config_source\":{\"self\":{}},\"route_config_name\":\"x\"}" FILTERS(ROUTER)),
        &cfg);
    assert_string_equal(cfg.rds_name, "x");
    xlb_listener_config_free(&cfg);
}

static void rds_config_source_required(void **state)
{
    expect_nack(L(",\"rds\":{\"route_config_name\":\"x\"}" FILTERS(ROUTER)),
                "listener \"svc\": rds.config_source: field not present");
}

static void rds_config_source_must_be_ads_or_self(void **state)
{
    expect_nack(L(",\"rds\":{\"config_source\":{},\"route_config_name\":\"x\"}" FILTERS(ROUTER)),
                "listener \"svc\": rds.config_source: ConfigSource is not ads or self");
}

static void inline_route_config(void **state)
{
    struct xlb_listener_config cfg;
    valid(L(",\"route_config\":{\"name\":\"in\",\"virtual_hosts\":[{\"domains\":[\"*\"],"
            "\"routes\":[{\"match\":{\"prefix\":\"\"},\"route\":{\"cluster\":\"c\"}}]}]}" FILTERS(
                ROUTER)),
          &cfg);
    assert_null(cfg.rds_name);
    assert_non_null(cfg.inline_routes);
    assert_string_equal(cfg.inline_routes->name, "in");
    assert_string_equal(cfg.inline_routes->vhosts[0].routes[0].cluster, "c");
    xlb_listener_config_free(&cfg);
}

static void inline_route_config_validated(void **state)
{
    expect_nack(
        L(",\"route_config\":{\"virtual_hosts\":[{\"domains\":[\"a*b\"]}]}" FILTERS(ROUTER)),
        "listener \"svc\": route_config.virtual_hosts[0].domains[0]: invalid domain "
        "pattern \"a*b\"");
}

static void routes_required(void **state)
{
    expect_nack(L(FILTERS(ROUTER)), "listener \"svc\": neither route_config nor rds fields are "
                                    "present");
}

static void api_listener_required(void **state)
{
    expect_nack("{\"name\":\"svc\"}", "listener \"svc\": api_listener: field not present");
}

static void api_listener_any_required(void **state)
{
    expect_nack("{\"name\":\"svc\",\"api_listener\":{}}",
                "listener \"svc\": api_listener.api_listener: field not present");
}

static void api_listener_must_be_hcm(void **state)
{
    expect_nack("{\"name\":\"svc\",\"api_listener\":{\"api_listener\":{\"@type\":\"type."
                "googleapis.com/envoy.extensions.filters.http.router.v3.Router\"}}}",
                "listener \"svc\": api_listener.api_listener: unsupported type \"envoy.extensions."
                "filters.http.router.v3.Router\"");
}

static void filters_required(void **state)
{
    expect_nack(L(RDS), "listener \"svc\": http_filters: expected at least one HTTP filter");
}

static void router_must_be_last(void **state)
{
    expect_nack(
        L(RDS FILTERS(ROUTER ",{\"name\":\"router2\",\"typed_config\":{\"@type\":\"type."
                             "googleapis.com/envoy.extensions.filters.http.router.v3.Router\"}}")),
        "listener \"svc\": http_filters[0]: the router must be the last filter");
}

static void last_filter_must_be_router(void **state)
{
    expect_nack(L(RDS FILTERS(SESSION(""))),
                "listener \"svc\": http_filters: the last filter must be the router");
}

static void filter_names_unique(void **state)
{
    expect_nack(L(RDS FILTERS("{\"name\":\"router\",\"typed_config\":{\"@type\":\"type.googleapis."
                              "com/envoy.extensions.filters.http.stateful_session.v3."
                              "StatefulSession\"}}," ROUTER)),
                "listener \"svc\": http_filters[1].name: duplicate HTTP filter name \"router\"");
}

static void filter_name_required(void **state)
{
    expect_nack(L(RDS FILTERS("{\"typed_config\":{\"@type\":\"type.googleapis.com/envoy."
                              "extensions.filters.http.router.v3.Router\"}}")),
                "listener \"svc\": http_filters[0].name: must be non-empty");
}

static void filter_config_required(void **state)
{
    expect_nack(L(RDS FILTERS("{\"name\":\"x\"}," ROUTER)),
                "listener \"svc\": http_filters[0].typed_config: field not present");
}

static void unsupported_filter_rejected(void **state)
{
    expect_nack(L(RDS FILTERS("{\"name\":\"x\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
                              "envoy.config.core.v3.Locality\"}}," ROUTER)),
                "listener \"svc\": http_filters[0].typed_config: unsupported filter type "
                "\"envoy.config.core.v3.Locality\"");
}

static void optional_filters_skipped(void **state)
{
    struct xlb_listener_config cfg;
    valid(L(RDS FILTERS("{\"name\":\"x\",\"is_optional\":true,\"typed_config\":{\"@type\":\"type."
                        "googleapis.com/envoy.config.core.v3.Locality\"}},"
                        "{\"name\":\"y\",\"is_optional\":true}," ROUTER)),
          &cfg);
    assert_int_equal(cfg.n_filters, 1);
    assert_string_equal(cfg.filters[0].name, "router");
    xlb_listener_config_free(&cfg);
}

static void typed_struct_unknown_filter(void **state)
{
    expect_nack(L(RDS FILTERS("{\"name\":\"x\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
                              "xds.type.v3.TypedStruct\",\"type_url\":\"type.googleapis.com/"
                              "custom.Filter\",\"value\":{\"a\":1}}}," ROUTER)),
                "listener \"svc\": http_filters[0].typed_config: unsupported filter type "
                "\"custom.Filter\"");
}

static void typed_struct_optional_filter_skipped(void **state)
{
    struct xlb_listener_config cfg;
    valid(L(RDS FILTERS("{\"name\":\"x\",\"is_optional\":true,\"typed_config\":{\"@type\":"
                        "\"type.googleapis.com/udpa.type.v1.TypedStruct\",\"type_url\":"
                        "\"type.googleapis.com/custom.Filter\"}}," ROUTER)),
          &cfg);
    assert_int_equal(cfg.n_filters, 1);
    xlb_listener_config_free(&cfg);
}

static void typed_struct_router_rejected(void **state)
{
    expect_nack(L(RDS FILTERS("{\"name\":\"r\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
                              "xds.type.v3.TypedStruct\",\"type_url\":\"type.googleapis.com/envoy."
                              "extensions.filters.http.router.v3.Router\"}}," ROUTER)),
                "listener \"svc\": http_filters[0].typed_config: could not parse router filter "
                "config");
}

/* gRPC parses the stateful session filter's config only in protobuf form. */
static void typed_struct_session_filter_rejected(void **state)
{
    expect_nack(L(RDS FILTERS("{\"name\":\"ssa\",\"typed_config\":{\"@type\":\"type.googleapis."
                              "com/udpa.type.v1.TypedStruct\",\"type_url\":\"type.googleapis.com/"
                              "envoy.extensions.filters.http.stateful_session.v3.StatefulSession\"}"
                              "}," ROUTER)),
                "listener \"svc\": http_filters[0].typed_config: could not parse stateful "
                "session filter config");
}

static void session_filter_cookie(void **state)
{
    struct xlb_listener_config cfg;
    valid(L(RDS FILTERS(SESSION(COOKIE(",\"cookie\":{\"name\":\"grpc-session\",\"ttl\":\"120s\","
                                       "\"path\":\"/pkg.Svc\"}")) "," ROUTER)),
          &cfg);
    assert_int_equal(cfg.n_filters, 2);
    const struct xlb_http_filter *f = &cfg.filters[0];
    assert_string_equal(f->name, "ssa");
    assert_int_equal(f->kind, XLB_HTTP_FILTER_STATEFUL_SESSION);
    assert_true(f->session.enabled);
    assert_string_equal(f->session.cookie.name, "grpc-session");
    assert_string_equal(f->session.cookie.path, "/pkg.Svc");
    assert_true(f->session.cookie.has_ttl);
    assert_int_equal(f->session.cookie.ttl.seconds, 120);
    xlb_listener_config_free(&cfg);
}

static void session_filter_defaults(void **state)
{
    struct xlb_listener_config cfg;
    valid(L(RDS FILTERS(SESSION(
              COOKIE(",\"cookie\":{\"name\":\"s\"}")) ","
                                                      "{\"name\":\"ssa2\",\"typed_config\":{\"@"
                                                      "type\":\"type.googleapis.com/"
                                                      "envoy.extensions.filters.http.stateful_"
                                                      "session.v3.StatefulSession\"}}"
                                                      "," ROUTER)),
          &cfg);
    assert_string_equal(cfg.filters[0].session.cookie.path, "");
    assert_false(cfg.filters[0].session.cookie.has_ttl);
    xlb_listener_config_free(&cfg);
}

static void session_filter_without_state_is_noop(void **state)
{
    struct xlb_listener_config cfg;
    valid(L(RDS FILTERS(SESSION("") "," ROUTER)), &cfg);
    assert_int_equal(cfg.filters[0].kind, XLB_HTTP_FILTER_STATEFUL_SESSION);
    assert_false(cfg.filters[0].session.enabled);
    assert_null(cfg.filters[0].session.cookie.name);
    xlb_listener_config_free(&cfg);
}

static void session_cookie_name_required(void **state)
{
    expect_nack(L(RDS FILTERS(SESSION(COOKIE(",\"cookie\":{\"ttl\":\"1s\"}")) "," ROUTER)),
                "listener \"svc\": http_filters[0].typed_config.session_state.typed_config."
                "cookie.name: field not present");
}

static void session_cookie_required(void **state)
{
    expect_nack(L(RDS FILTERS(SESSION(COOKIE("")) "," ROUTER)),
                "listener \"svc\": http_filters[0].typed_config.session_state.typed_config."
                "cookie: field not present");
}

static void session_cookie_ttl_valid(void **state)
{
    expect_nack(
        L(RDS FILTERS(SESSION(COOKIE(",\"cookie\":{\"name\":\"s\",\"ttl\":\"-3s\"}")) "," ROUTER)),
        "listener \"svc\": http_filters[0].typed_config.session_state.typed_config."
        "cookie.ttl.seconds: -3 is not in 0..315576000000");
}

static void session_state_type_must_be_cookie(void **state)
{
    expect_nack(L(RDS FILTERS(SESSION(",\"session_state\":{\"name\":\"h\",\"typed_config\":{"
                                      "\"@type\":\"type.googleapis.com/envoy.config.core.v3."
                                      "Locality\"}}") "," ROUTER)),
                "listener \"svc\": http_filters[0].typed_config.session_state.typed_config: "
                "unsupported session state type \"envoy.config.core.v3.Locality\"");
}

static void session_state_typed_config_required(void **state)
{
    expect_nack(L(RDS FILTERS(SESSION(",\"session_state\":{\"name\":\"h\"}") "," ROUTER)),
                "listener \"svc\": http_filters[0].typed_config.session_state.typed_config: "
                "field not present");
}

static void max_stream_duration(void **state)
{
    struct xlb_listener_config cfg;
    valid(L(RDS FILTERS(ROUTER) ",\"common_http_protocol_options\":{\"max_stream_duration\":"
                                "\"30s\"}"),
          &cfg);
    assert_true(cfg.has_max_stream_duration);
    assert_int_equal(cfg.max_stream_duration.seconds, 30);
    xlb_listener_config_free(&cfg);
}

/*
 * The JSON reader refuses out-of-range Durations, but the wire carries any two integers: the
 * HttpConnectionManager is rebuilt here with nanos -1.
 */
static void max_stream_duration_invalid(void **state)
{
    Google__Protobuf__Duration d;
    google__protobuf__duration__init(&d);
    d.seconds = 1;
    d.nanos = -1;
    Envoy__Config__Core__V3__HttpProtocolOptions opts;
    envoy__config__core__v3__http_protocol_options__init(&opts);
    opts.max_stream_duration = &d;
    ProtobufCMessage *hcm = xv_json(
        &envoy__extensions__filters__network__http_connection_manager__v3__http_connection_manager__descriptor,
        "{\"rds\":{\"config_source\":{\"ads\":{}}},\"http_filters\":[" ROUTER "]}");
    ((Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpConnectionManager *)hcm)
        ->common_http_protocol_options = &opts;
    uint8_t wire[512];
    size_t len = protobuf_c_message_pack(hcm, wire);
    ((Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpConnectionManager *)hcm)
        ->common_http_protocol_options = NULL;
    protobuf_c_message_free_unpacked(hcm, NULL);

    Google__Protobuf__Any any;
    google__protobuf__any__init(&any);
    any.type_url =
        XLB_STR("type.googleapis.com/envoy.extensions.filters.network.http_connection_manager."
                "v3.HttpConnectionManager");
    any.value.data = wire;
    any.value.len = len;
    Envoy__Config__Listener__V3__ApiListener api;
    envoy__config__listener__v3__api_listener__init(&api);
    api.api_listener = &any;
    Envoy__Config__Listener__V3__Listener listener;
    envoy__config__listener__v3__listener__init(&listener);
    listener.name = XLB_STR("svc");
    listener.api_listener = &api;
    struct xlb_listener_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_validate_listener(&listener, &cfg, &errs), -1);
    xv_expect_line(&errs,
                   "listener \"svc\": common_http_protocol_options.max_stream_duration.nanos: "
                   "-1 is not in 0..999999999");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rds_with_defaults),
        cmocka_unit_test(rds_config_source_self),
        cmocka_unit_test(rds_config_source_required),
        cmocka_unit_test(rds_config_source_must_be_ads_or_self),
        cmocka_unit_test(inline_route_config),
        cmocka_unit_test(inline_route_config_validated),
        cmocka_unit_test(routes_required),
        cmocka_unit_test(api_listener_required),
        cmocka_unit_test(api_listener_any_required),
        cmocka_unit_test(api_listener_must_be_hcm),
        cmocka_unit_test(filters_required),
        cmocka_unit_test(router_must_be_last),
        cmocka_unit_test(last_filter_must_be_router),
        cmocka_unit_test(filter_names_unique),
        cmocka_unit_test(filter_name_required),
        cmocka_unit_test(filter_config_required),
        cmocka_unit_test(unsupported_filter_rejected),
        cmocka_unit_test(optional_filters_skipped),
        cmocka_unit_test(typed_struct_unknown_filter),
        cmocka_unit_test(typed_struct_optional_filter_skipped),
        cmocka_unit_test(typed_struct_router_rejected),
        cmocka_unit_test(typed_struct_session_filter_rejected),
        cmocka_unit_test(session_filter_cookie),
        cmocka_unit_test(session_filter_defaults),
        cmocka_unit_test(session_filter_without_state_is_noop),
        cmocka_unit_test(session_cookie_name_required),
        cmocka_unit_test(session_cookie_required),
        cmocka_unit_test(session_cookie_ttl_valid),
        cmocka_unit_test(session_state_type_must_be_cookie),
        cmocka_unit_test(session_state_typed_config_required),
        cmocka_unit_test(max_stream_duration),
        cmocka_unit_test(max_stream_duration_invalid),
    };
    return cmocka_run_group_tests_name("xds_validate_listener", tests, NULL, NULL);
}
