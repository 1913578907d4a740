/* Every kind of error, each with its exact "path: reason" line, and the depth limit. */
#include "pj_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envoy/config/cluster/v3/cluster.pb-c.h"
#include "envoy/config/core/v3/base.pb-c.h"
#include "envoy/config/listener/v3/listener.pb-c.h"
#include "envoy/config/route/v3/route.pb-c.h"
#include "envoy/type/v3/range.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/struct.pb-c.h"

#define CLUSTER  (&envoy__config__cluster__v3__cluster__descriptor)
#define LISTENER (&envoy__config__listener__v3__listener__descriptor)
#define MATCH    (&envoy__config__route__v3__route_match__descriptor)
#define ANY      (&google__protobuf__any__descriptor)

static void test_paths_as_documented(void **state)
{
    struct xlb_errors errs = {0};
    cJSON *doc = cJSON_Parse("[{\"outlier_detection\": {\"interval\": \"5x\"}}]");
    assert_null(xlb_proto_json_read(CLUSTER, cJSON_GetArrayItem(doc, 0), "clusters[0]", &errs));
    assert_int_equal(errs.n, 1);
    assert_string_equal(errs.lines[0],
                        "clusters[0].outlier_detection.interval: \"5x\" is not a Duration");
    xlb_errors_free(&errs);
    cJSON_Delete(doc);

    doc = cJSON_Parse("{\"api_listener\": {\"api_listener\":"
                      " {\"@type\": \"type.googleapis.com/foo.Bar\", \"x\": 1}}}");
    assert_null(xlb_proto_json_read(LISTENER, doc, "listeners[1]", &errs));
    assert_int_equal(errs.n, 1);
    assert_string_equal(errs.lines[0], "listeners[1].api_listener.api_listener: unknown @type"
                                       " \"type.googleapis.com/foo.Bar\"");
    xlb_errors_free(&errs);
    cJSON_Delete(doc);
}

static void test_scalar_errors(void **state)
{
    expect_error(LISTENER, "{\"address\": {\"socket_address\": {\"port_value\": 4294967296}}}",
                 "r.address.socket_address.port_value: must be 0..4294967295");
    expect_error(LISTENER, "{\"address\": {\"socket_address\": {\"port_value\": -1}}}",
                 "r.address.socket_address.port_value: must be 0..4294967295");
    expect_error(LISTENER, "{\"address\": {\"socket_address\": {\"port_value\": 80.5}}}",
                 "r.address.socket_address.port_value: must be an integer");
    expect_error(LISTENER, "{\"address\": {\"socket_address\": {\"port_value\": \"8O\"}}}",
                 "r.address.socket_address.port_value: \"8O\" is not an integer");
    expect_error(LISTENER, "{\"address\": {\"socket_address\": {\"port_value\": true}}}",
                 "r.address.socket_address.port_value: must be an integer");
    expect_error(&envoy__type__v3__int64_range__descriptor, "{\"start\": 1e17}",
                 "r.start: is beyond 2^53: write it as a decimal string");
    expect_error(&envoy__type__v3__int64_range__descriptor, "{\"end\": \"9223372036854775808\"}",
                 "r.end: must be -9223372036854775808..9223372036854775807");
    expect_error(CLUSTER,
                 "{\"ring_hash_lb_config\": {\"minimum_ring_size\": \"18446744073709551616\"}}",
                 "r.ring_hash_lb_config.minimum_ring_size: must be 0..18446744073709551615");
    expect_error(CLUSTER, "{\"name\": 5}", "r.name: must be a string");
    expect_error(MATCH, "{\"headers\": [{\"invert_match\": \"yes\"}]}",
                 "r.headers[0].invert_match: must be true or false");
    expect_error(
        CLUSTER, "{\"lb_policy\": \"FASTEST\"}",
        "r.lb_policy: \"FASTEST\" is not a value of envoy.config.cluster.v3.Cluster.LbPolicy");
    expect_error(CLUSTER, "{\"lb_policy\": [2]}",
                 "r.lb_policy: must be a envoy.config.cluster.v3.Cluster.LbPolicy name or number");
    expect_error(ANY, "{\"@type\": \"t/google.protobuf.BytesValue\", \"value\": \"a\"}",
                 "r.value: \"a\" is not base64");
    expect_error(ANY, "{\"@type\": \"t/google.protobuf.BytesValue\", \"value\": \"a=b=\"}",
                 "r.value: \"a=b=\" is not base64");
    expect_error(ANY, "{\"@type\": \"t/google.protobuf.DoubleValue\", \"value\": \"1.5x\"}",
                 "r.value: \"1.5x\" is not a number");
    expect_error(ANY, "{\"@type\": \"t/google.protobuf.DoubleValue\", \"value\": \"inf\"}",
                 "r.value: \"inf\" is not a number");
    expect_error(ANY, "{\"@type\": \"t/google.protobuf.FloatValue\", \"value\": 1e39}",
                 "r.value: is out of range for a float");
}

static void test_duration_errors(void **state)
{
    static const char *const bad[] = {"5x",  "1",   "s",   "1.s",           ".5s", "1.0000000001s",
                                      "+1s", " 1s", "1s ", "315576000001s", "--1s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[128], line[128];
        snprintf(text, sizeof(text), "{\"connect_timeout\": \"%s\"}", bad[i]);
        snprintf(line, sizeof(line), "r.connect_timeout: \"%s\" is not a Duration", bad[i]);
        expect_error(CLUSTER, text, line);
    }
    expect_error(CLUSTER, "{\"connect_timeout\": 5}", "r.connect_timeout: 5 is not a Duration");
}

static void test_structure_errors(void **state)
{
    expect_error(CLUSTER, "[]", "r: must be an object");
    expect_error(CLUSTER, "{\"outlier_detection\": 5}", "r.outlier_detection: must be an object");
    expect_error(MATCH, "{\"headers\": {\"name\": \"a\"}}", "r.headers: must be an array");
    expect_error(MATCH, "{\"headers\": [null]}", "r.headers[0]: null is not allowed in a list");
    expect_error(CLUSTER, "{\"typed_extension_protocol_options\": []}",
                 "r.typed_extension_protocol_options: must be an object");
    expect_error(CLUSTER, "{\"typed_extension_protocol_options\": {\"k\": null}}",
                 "r.typed_extension_protocol_options[\"k\"]: null is not allowed as a map value");
    expect_error(CLUSTER, "{\"lb_policy\": \"RANDOM\", \"lbPolicy\": \"RANDOM\"}",
                 "r.lbPolicy: \"lb_policy\" is already set");
    expect_error(MATCH, "{\"prefix\": \"/\", \"path\": \"/a\"}",
                 "r.path: only one of \"prefix\" and \"path\" may be set");
    expect_error(&envoy__config__core__v3__node__descriptor, "{\"metadata\": []}",
                 "r.metadata: must be an object");
}

static void test_any_errors(void **state)
{
    expect_error(ANY, "{\"value\": 1}", "r: \"@type\" must be given as a string");
    expect_error(ANY, "{\"@type\": 7}", "r: \"@type\" must be given as a string");
    expect_error(ANY, "{\"@type\": \"no-slash\"}", "r: unknown @type \"no-slash\"");
    expect_error(ANY, "[]", "r: must be an object");
    /* Errors inside the packed message carry the path of the Any. */
    expect_error(LISTENER,
                 "{\"api_listener\": {\"api_listener\": {\"@type\": \"type.googleapis.com/"
                 "envoy.extensions.filters.network.http_connection_manager.v3."
                 "HttpConnectionManager\", \"http_filters\": [{\"name\": \"s\", \"typed_config\":"
                 " {\"@type\": \"type.googleapis.com/envoy.extensions.filters.http."
                 "stateful_session.v3.StatefulSession\", \"session_state\": {\"typed_config\":"
                 " {\"@type\": \"type.googleapis.com/envoy.extensions.http.stateful_session."
                 "cookie.v3.CookieBasedSessionState\", \"cookie\": {\"ttl\": \"1h\"}}}}}]}}}",
                 "r.api_listener.api_listener.http_filters[0].typed_config.session_state."
                 "typed_config.cookie.ttl: \"1h\" is not a Duration");
}

static void test_all_errors_in_one_pass(void **state)
{
    struct xlb_errors errs = {0};
    ProtobufCMessage *msg =
        read_text(CLUSTER,
                  "{\"name\": 1, \"lb_policy\": \"X\", \"connect_timeout\": \"1\","
                  " \"circuit_breakers\": {\"thresholds\": [{\"max_requests\": -1}]}}",
                  &errs);
    assert_null(msg);
    assert_int_equal(errs.n, 4);
    assert_string_equal(errs.lines[3],
                        "r.circuit_breakers.thresholds[0].max_requests: must be 0..4294967295");
    xlb_errors_free(&errs);
}

/* {"a":{"a": ... 1}} nested n objects deep, as a Struct. */
static char *nested_objects(unsigned n)
{
    size_t len = (size_t)n * 6 + 1;
    char *text = calloc(len + 1, 1);
    assert_non_null(text);
    for (unsigned i = 0; i < n; i++)
        memcpy(text + i * 5, "{\"a\":", 5);
    text[n * 5] = '1';
    memset(text + n * 5 + 1, '}', n);
    return text;
}

static void test_depth_limit(void **state)
{
    /* The Struct counts as one level and each nested object as a Value plus a Struct. */
    char *ok = nested_objects(31);
    ProtobufCMessage *msg = read_ok(&google__protobuf__struct__descriptor, ok);
    cJSON *printed = xlb_proto_json_print(msg);
    assert_non_null(printed);
    cJSON_Delete(printed);
    protobuf_c_message_free_unpacked(msg, NULL);
    free(ok);

    char *deep = nested_objects(500);
    struct xlb_errors errs = {0};
    assert_null(read_text(&google__protobuf__struct__descriptor, deep, &errs));
    assert_int_equal(errs.n, 1);
    assert_non_null(strstr(errs.lines[0], ": nested deeper than 64 levels"));
    assert_true(strncmp(errs.lines[0], "r[\"a\"][\"a\"]", 10) == 0);
    xlb_errors_free(&errs);
    free(deep);

    /* Any inside Any inside Any ... */
    char any[8192] = "";
    for (int i = 0; i < 70; i++)
        strcat(any, "{\"@type\": \"t/google.protobuf.Any\", \"value\": ");
    strcat(any, "{}");
    for (int i = 0; i < 70; i++)
        strcat(any, "}");
    assert_null(read_text(ANY, any, &errs));
    assert_int_equal(errs.n, 1);
    assert_non_null(strstr(errs.lines[0], "nested deeper than 64 levels"));
    xlb_errors_free(&errs);
}

/* The printer refuses, rather than recurses through, a tree deeper than the limit. */
static void test_print_depth_limit(void **state)
{
    Google__Protobuf__Value values[70];
    Google__Protobuf__ListValue lists[70];
    Google__Protobuf__Value *slots[70];
    for (int i = 0; i < 70; i++) {
        google__protobuf__value__init(&values[i]);
        google__protobuf__list_value__init(&lists[i]);
        values[i].kind_case = GOOGLE__PROTOBUF__VALUE__KIND_LIST_VALUE;
        values[i].list_value = &lists[i];
        if (i + 1 < 70) {
            slots[i] = &values[i + 1];
            lists[i].n_values = 1;
            lists[i].values = &slots[i];
        }
    }
    assert_null(xlb_proto_json_print(&values[0].base));
    cJSON *shallow = xlb_proto_json_print(&values[40].base);
    assert_non_null(shallow);
    cJSON_Delete(shallow);
}

const struct CMUnitTest errors_tests[] = {
    cmocka_unit_test(test_paths_as_documented), cmocka_unit_test(test_scalar_errors),
    cmocka_unit_test(test_duration_errors),     cmocka_unit_test(test_structure_errors),
    cmocka_unit_test(test_any_errors),          cmocka_unit_test(test_all_errors_in_one_pass),
    cmocka_unit_test(test_depth_limit),         cmocka_unit_test(test_print_depth_limit),
};
const size_t errors_tests_count = sizeof(errors_tests) / sizeof(errors_tests[0]);
