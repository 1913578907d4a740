/* The accepted JSON forms: well-known types, enums, 64-bit integers, bytes, oneofs, maps. */
#include "pj_test.h"

#include <stdio.h>
#include <string.h>

#include "envoy/config/cluster/v3/cluster.pb-c.h"
#include "envoy/config/core/v3/base.pb-c.h"
#include "envoy/config/endpoint/v3/load_report.pb-c.h"
#include "envoy/config/route/v3/route.pb-c.h"
#include "envoy/type/v3/range.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/wrappers.pb-c.h"
#include "xlb_const.h"

#define OUTLIER (&envoy__config__cluster__v3__outlier_detection__descriptor)
#define CLUSTER (&envoy__config__cluster__v3__cluster__descriptor)
#define ANY     (&google__protobuf__any__descriptor)
#define RANGE   (&envoy__type__v3__int64_range__descriptor)

typedef Envoy__Config__Cluster__V3__OutlierDetection OutlierDetection;
typedef Envoy__Config__Cluster__V3__Cluster Cluster;

static void check_duration(const char *text, int64_t seconds, int32_t nanos, const char *printed)
{
    char in[128], out[128];
    snprintf(in, sizeof(in), "{\"interval\": \"%s\"}", text);
    snprintf(out, sizeof(out), "{\"interval\": \"%s\"}", printed);
    OutlierDetection *od = (OutlierDetection *)read_ok(OUTLIER, in);
    assert_non_null(od->interval);
    assert_int_equal(od->interval->seconds, seconds);
    assert_int_equal(od->interval->nanos, nanos);
    protobuf_c_message_free_unpacked(&od->base, NULL);
    expect_round_trip(OUTLIER, in, out);
}

static void test_duration(void **state)
{
    check_duration("1.5s", 1, 500000000, "1.500s");
    check_duration("0.000000001s", 0, 1, "0.000000001s");
    check_duration("-2s", -2, 0, "-2s");
    check_duration("-0.5s", 0, -500000000, "-0.500s");
    check_duration("3.0001s", 3, 100000, "3.000100s");
    check_duration("0s", 0, 0, "0s");
    check_duration("315576000000.999999999s", 315576000000LL, 999999999, "315576000000.999999999s");
}

static void test_wrappers_in_fields(void **state)
{
    OutlierDetection *od = (OutlierDetection *)read_ok(
        OUTLIER, "{\"consecutive_5xx\": 7, \"enforcing_success_rate\": \"0\","
                 " \"always_eject_one_host\": false}");
    assert_int_equal(od->consecutive_5xx->value, 7);
    assert_non_null(od->enforcing_success_rate);
    assert_int_equal(od->enforcing_success_rate->value, 0);
    assert_non_null(od->always_eject_one_host);
    assert_null(od->max_ejection_percent);
    /* A wrapper's zero is a value that was set, so it is printed. */
    expect_print(&od->base, "{\"consecutive_5xx\": 7, \"enforcing_success_rate\": 0,"
                            " \"always_eject_one_host\": false}");
    protobuf_c_message_free_unpacked(&od->base, NULL);
}

/* Every wrapper, and Duration, as the special form inside an Any's "value". */
static void test_wrappers_in_any(void **state)
{
    static const char *const cases[][2] = {
        {"DoubleValue", "1.25"},        {"FloatValue", "0.1"},
        {"Int64Value", "\"-42\""},      {"UInt64Value", "\"18446744073709551615\""},
        {"Int32Value", "-7"},           {"UInt32Value", "4294967295"},
        {"BoolValue", "true"},          {"StringValue", "\"hi\""},
        {"BytesValue", "\"aGVsbG8=\""}, {"Duration", "\"0.010s\""},
        {"DoubleValue", "\"NaN\""},     {"FloatValue", "\"-Infinity\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text),
                 "{\"@type\": \"type.googleapis.com/google.protobuf.%s\", \"value\": %s}",
                 cases[i][0], cases[i][1]);
        expect_round_trip(ANY, text, text);
    }
    /* Integers also arrive as strings and 64-bit ones leave as strings. */
    expect_round_trip(ANY,
                      "{\"@type\": \"type.googleapis.com/google.protobuf.Int64Value\","
                      " \"value\": 12}",
                      "{\"@type\": \"type.googleapis.com/google.protobuf.Int64Value\","
                      " \"value\": \"12\"}");
}

static void test_struct(void **state)
{
    const char *node = "{\"id\": \"xlb-1\", \"metadata\": {\"TRAFFICDIRECTOR_NETWORK_NAME\":"
                       " \"default\", \"n\": 1.5, \"yes\": true, \"none\": null, \"list\":"
                       " [1, \"two\", [3], {\"four\": 4}, null], \"empty\": {}}}";
    expect_round_trip(&envoy__config__core__v3__node__descriptor, node, node);

    const char *typed_struct = "{\"@type\": \"type.googleapis.com/xds.type.v3.TypedStruct\","
                               " \"type_url\": \"type.googleapis.com/my.Policy\","
                               " \"value\": {\"weight\": 3, \"names\": [\"a\"]}}";
    expect_round_trip(ANY, typed_struct, typed_struct);

    const char *value = "{\"@type\": \"type.googleapis.com/google.protobuf.Value\","
                        " \"value\": [null, {\"a\": []}]}";
    expect_round_trip(ANY, value, value);
    const char *empty = "{\"@type\": \"type.googleapis.com/google.protobuf.Empty\"}";
    expect_round_trip(ANY, empty, empty);
}

static void test_enums(void **state)
{
    Cluster *c = (Cluster *)read_ok(CLUSTER, "{\"lb_policy\": \"RING_HASH\", \"type\": 3}");
    assert_int_equal(c->lb_policy, ENVOY__CONFIG__CLUSTER__V3__CLUSTER__LB_POLICY__RING_HASH);
    assert_int_equal(c->cluster_discovery_type_case,
                     ENVOY__CONFIG__CLUSTER__V3__CLUSTER__CLUSTER_DISCOVERY_TYPE_TYPE);
    assert_int_equal(c->type, ENVOY__CONFIG__CLUSTER__V3__CLUSTER__DISCOVERY_TYPE__EDS);
    expect_print(&c->base, "{\"type\": \"EDS\", \"lb_policy\": \"RING_HASH\"}");
    protobuf_c_message_free_unpacked(&c->base, NULL);
    /* proto3 enums are open: a number without a name survives and prints as a number. */
    expect_round_trip(CLUSTER, "{\"lb_policy\": 42}", "{\"lb_policy\": 42}");
    /* The default value of a non-oneof enum is not printed; in a oneof it is. */
    expect_round_trip(CLUSTER, "{\"lb_policy\": \"ROUND_ROBIN\", \"type\": \"STATIC\"}",
                      "{\"type\": \"STATIC\"}");
}

static void test_int64(void **state)
{
    Envoy__Type__V3__Int64Range *range = (Envoy__Type__V3__Int64Range *)read_ok(
        RANGE, "{\"start\": \"-9223372036854775808\", \"end\": 9007199254740992}");
    assert_true(range->start == INT64_MIN);
    assert_int_equal(range->end, 9007199254740992LL);
    expect_print(&range->base,
                 "{\"start\": \"-9223372036854775808\", \"end\": \"9007199254740992\"}");
    protobuf_c_message_free_unpacked(&range->base, NULL);
    expect_round_trip(CLUSTER,
                      "{\"ring_hash_lb_config\": {\"minimum_ring_size\": \"18446744073709551615\","
                      " \"maximum_ring_size\": 1e3}}",
                      "{\"ring_hash_lb_config\": {\"minimum_ring_size\": \"18446744073709551615\","
                      " \"maximum_ring_size\": \"1000\"}}");
    const char *stats = "{\"cluster_name\": \"c\", \"total_dropped_requests\": \"12\","
                        " \"upstream_locality_stats\": [{\"total_issued_requests\": \"5\","
                        " \"load_metric_stats\": [{\"metric_name\": \"cpu\","
                        " \"total_metric_value\": 0.25}], \"priority\": 1}]}";
    expect_round_trip(&envoy__config__endpoint__v3__cluster_stats__descriptor, stats, stats);
}

static void test_bytes(void **state)
{
    static const char *const forms[] = {"aGk=", "aGk", "aGk="};
    for (size_t i = 0; i < 3; i++) {
        char text[128];
        snprintf(text, sizeof(text),
                 "{\"@type\": \"t/google.protobuf.BytesValue\", \"value\": \"%s\"}", forms[i]);
        Google__Protobuf__Any *any = (Google__Protobuf__Any *)read_ok(ANY, text);
        Google__Protobuf__BytesValue *bytes = (Google__Protobuf__BytesValue *)unpack_any(
            &any->base, &google__protobuf__bytes_value__descriptor);
        assert_int_equal(bytes->value.len, 2);
        assert_memory_equal(bytes->value.data, "hi", 2);
        protobuf_c_message_free_unpacked(&bytes->base, NULL);
        protobuf_c_message_free_unpacked(&any->base, NULL);
    }
    /* URL-safe input is accepted; output uses the standard alphabet with padding. */
    expect_round_trip(ANY, "{\"@type\": \"t/google.protobuf.BytesValue\", \"value\": \"-_8\"}",
                      "{\"@type\": \"t/google.protobuf.BytesValue\", \"value\": \"+/8=\"}");
    expect_round_trip(ANY, "{\"@type\": \"t/google.protobuf.BytesValue\", \"value\": \"\"}",
                      "{\"@type\": \"t/google.protobuf.BytesValue\", \"value\": \"\"}");
    /* An Any itself: raw type_url/value fields when the type is unknown. */
    Google__Protobuf__Any any;
    google__protobuf__any__init(&any);
    any.type_url = XLB_STR("type.googleapis.com/foo.Bar");
    any.value.data = XLB_UNCONST("\x08\x01");
    any.value.len = 2;
    expect_print(&any.base, "{\"@type\": \"type.googleapis.com/foo.Bar\", \"value\": \"CAE=\"}");
    /* A known type whose bytes do not unpack prints the same way. */
    any.type_url = XLB_STR("type.googleapis.com/envoy.config.cluster.v3.Cluster");
    any.value.data = XLB_UNCONST("\x0a\x05x");
    any.value.len = 3;
    expect_print(&any.base, "{\"@type\": \"type.googleapis.com/envoy.config.cluster.v3.Cluster\","
                            " \"value\": \"CgV4\"}");
}

static void test_oneofs(void **state)
{
    const ProtobufCMessageDescriptor *match = &envoy__config__route__v3__route_match__descriptor;
    /* A oneof member holding its type's default is still set, and printed. */
    expect_round_trip(match, "{\"prefix\": \"\", \"path\": null}", "{\"prefix\": \"\"}");
    expect_round_trip(match, "{\"headers\": [{\"name\": \"a\", \"present_match\": false}]}",
                      "{\"headers\": [{\"name\": \"a\", \"present_match\": false}]}");
    Envoy__Config__Route__V3__RouteMatch *m = (Envoy__Config__Route__V3__RouteMatch *)read_ok(
        match, "{\"safe_regex\": {\"regex\": \"a+\"}}");
    assert_int_equal(m->path_specifier_case,
                     ENVOY__CONFIG__ROUTE__V3__ROUTE_MATCH__PATH_SPECIFIER_SAFE_REGEX);
    assert_string_equal(m->safe_regex->regex, "a+");
    protobuf_c_message_free_unpacked(&m->base, NULL);
}

static void test_maps(void **state)
{
    const char *vh =
        "{\"name\": \"v\", \"typed_per_filter_config\": {"
        "\"a\": {\"@type\": \"t/envoy.config.route.v3.FilterConfig\","
        " \"config\": {\"@type\": \"t/envoy.extensions.filters.http.router.v3.Router\"},"
        " \"is_optional\": true},"
        "\"b\": {}}}";
    expect_round_trip(&envoy__config__route__v3__virtual_host__descriptor, vh, vh);
    Envoy__Config__Route__V3__VirtualHost *v = (Envoy__Config__Route__V3__VirtualHost *)read_ok(
        &envoy__config__route__v3__virtual_host__descriptor, vh);
    assert_int_equal(v->n_typed_per_filter_config, 2);
    assert_string_equal(v->typed_per_filter_config[1]->key, "b");
    assert_string_equal(v->typed_per_filter_config[1]->value->type_url, "");
    protobuf_c_message_free_unpacked(&v->base, NULL);
}

static void test_names_and_unknown_fields(void **state)
{
    Cluster *c = (Cluster *)read_ok(
        CLUSTER, "{\"name\": \"c\", \"lbPolicy\": \"MAGLEV\", \"edsClusterConfig\":"
                 " {\"serviceName\": \"s\", \"futureField\": 1}, \"unknown\": {\"x\": [1, {}]},"
                 " \"@type\": \"ignored\", \"transport_socket\": {\"name\": \"tls\"}}");
    assert_string_equal(c->name, "c");
    assert_int_equal(c->lb_policy, ENVOY__CONFIG__CLUSTER__V3__CLUSTER__LB_POLICY__MAGLEV);
    assert_string_equal(c->eds_cluster_config->service_name, "s");
    protobuf_c_message_free_unpacked(&c->base, NULL);
    /* Fields not in proto/ are skipped even when they would be invalid. */
    expect_round_trip(CLUSTER, "{\"name\": \"c\", \"dns_lookup_family\": \"NOT_AN_ENUM\"}",
                      "{\"name\": \"c\"}");
}

static void test_type_lookup(void **state)
{
    assert_ptr_equal(xlb_proto_type_by_url("type.googleapis.com/envoy.config.cluster.v3.Cluster"),
                     CLUSTER);
    assert_ptr_equal(xlb_proto_type_by_url("example.com/a/b/envoy.config.cluster.v3.Cluster"),
                     CLUSTER);
    assert_ptr_equal(xlb_proto_type_by_url(
                         "type.googleapis.com/envoy.config.cluster.v3.Cluster.RingHashLbConfig"),
                     &envoy__config__cluster__v3__cluster__ring_hash_lb_config__descriptor);
    assert_ptr_equal(xlb_proto_type_by_url("type.googleapis.com/envoy.type.v3.Int64Range"), RANGE);
    assert_null(xlb_proto_type_by_url("envoy.config.cluster.v3.Cluster"));
    assert_null(xlb_proto_type_by_url("type.googleapis.com/foo.Bar"));
    assert_null(xlb_proto_type_by_url(NULL));
}

const struct CMUnitTest forms_tests[] = {
    cmocka_unit_test(test_duration),
    cmocka_unit_test(test_wrappers_in_fields),
    cmocka_unit_test(test_wrappers_in_any),
    cmocka_unit_test(test_struct),
    cmocka_unit_test(test_enums),
    cmocka_unit_test(test_int64),
    cmocka_unit_test(test_bytes),
    cmocka_unit_test(test_oneofs),
    cmocka_unit_test(test_maps),
    cmocka_unit_test(test_names_and_unknown_fields),
    cmocka_unit_test(test_type_lookup),
};
const size_t forms_tests_count = sizeof(forms_tests) / sizeof(forms_tests[0]);
