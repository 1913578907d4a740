/* EDS validation (control/xds/endpoint_config.h): one test per rule. */
#include "xv_test.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint_config.h"

static int validate(const char *json, struct xlb_endpoint_config *cfg, struct xlb_errors *errs)
{
    ProtobufCMessage *msg =
        xv_json(&envoy__config__endpoint__v3__cluster_load_assignment__descriptor, json);
    int rc = xlb_validate_endpoints((Envoy__Config__Endpoint__V3__ClusterLoadAssignment *)msg, cfg,
                                    errs);
    protobuf_c_message_free_unpacked(msg, NULL);
    return rc;
}

static void expect_nack(const char *json, const char *line)
{
    struct xlb_endpoint_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate(json, &cfg, &errs), -1);
    assert_null(cfg.cluster_name);
    xv_expect_line(&errs, line);
}

#define EP(addr, port)                                                                             \
    "{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"" addr                          \
    "\",\"port_value\":" #port "}}}}"

static void expect_addr(const struct xlb_host_port *hp, const char *text)
{
    char buf[XLB_HOST_PORT_STRLEN];
    xlb_host_port_format(hp, buf, sizeof(buf));
    assert_string_equal(buf, text);
}

static void valid_with_defaults(void **state)
{
    struct xlb_endpoint_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(
        validate(
            "{\"cluster_name\":\"svc\",\"endpoints\":["
            "{\"locality\":{\"region\":\"r\",\"zone\":\"z\",\"sub_zone\":\"s\"},"
            "\"load_balancing_weight\":3,\"lb_endpoints\":[" EP(
                "10.0.0.1",
                80) ","
                    "{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"2001:db8::1\","
                    "\"port_value\":443}},\"additional_addresses\":[{\"address\":{\"socket_"
                    "address\":"
                    "{\"address\":\"10.0.0.2\",\"port_value\":443}}}]},"
                    "\"health_status\":\"DRAINING\",\"load_balancing_weight\":7}]},"
                    "{\"locality\":{\"zone\":\"b\"},\"load_balancing_weight\":1,\"priority\":1,"
                    "\"lb_endpoints\":[" EP("10.0.1.1", 8080) "]}]}",
            &cfg, &errs),
        0);
    xv_expect_none(&errs);
    assert_string_equal(cfg.cluster_name, "svc");
    assert_int_equal(cfg.n_priorities, 2);
    assert_int_equal(cfg.n_drops, 0);
    const struct xlb_eds_priority *p0 = &cfg.priorities[0];
    assert_int_equal(p0->n_localities, 1);
    const struct xlb_eds_locality *l = &p0->localities[0];
    assert_string_equal(l->region, "r");
    assert_string_equal(l->zone, "z");
    assert_string_equal(l->sub_zone, "s");
    assert_int_equal(l->weight, 3);
    assert_int_equal(l->n_endpoints, 2);
    assert_int_equal(l->endpoints[0].n_addresses, 1);
    expect_addr(&l->endpoints[0].addresses[0], "10.0.0.1:80");
    assert_int_equal(l->endpoints[0].health, XLB_HEALTH_UNKNOWN);
    assert_int_equal(l->endpoints[0].weight, 1);
    assert_int_equal(l->endpoints[1].n_addresses, 2);
    expect_addr(&l->endpoints[1].addresses[0], "[2001:db8::1]:443");
    expect_addr(&l->endpoints[1].addresses[1], "10.0.0.2:443");
    assert_int_equal(l->endpoints[1].health, XLB_HEALTH_DRAINING);
    assert_int_equal(l->endpoints[1].weight, 7);
    const struct xlb_eds_locality *l1 = &cfg.priorities[1].localities[0];
    assert_string_equal(l1->region, "");
    assert_string_equal(l1->zone, "b");
    expect_addr(&l1->endpoints[0].addresses[0], "10.0.1.1:8080");
    xlb_endpoint_config_free(&cfg);
}

static void empty_resource_is_valid(void **state)
{
    struct xlb_endpoint_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate("{\"cluster_name\":\"svc\"}", &cfg, &errs), 0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.n_priorities, 0);
    xlb_endpoint_config_free(&cfg);
}

static void locality_without_weight_is_ignored(void **state)
{
    struct xlb_endpoint_config cfg;
    struct xlb_errors errs = {0};
    /* Weight 0 and no weight: both left out, even with a broken endpoint inside. */
    assert_int_equal(
        validate("{\"cluster_name\":\"c\",\"endpoints\":["
                 "{\"locality\":{\"zone\":\"a\"},\"lb_endpoints\":[" EP(
                     "bad", 0) "]},"
                               "{\"locality\":{\"zone\":\"b\"},\"load_balancing_weight\":0},"
                               "{\"locality\":{\"zone\":\"c\"},\"load_balancing_weight\":2,"
                               "\"lb_endpoints\":[" EP("10.0.0.1", 80) "]}]}",
                 &cfg, &errs),
        0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.n_priorities, 1);
    assert_int_equal(cfg.priorities[0].n_localities, 1);
    assert_string_equal(cfg.priorities[0].localities[0].zone, "c");
    xlb_endpoint_config_free(&cfg);
}

static void unhealthy_endpoints_are_ignored(void **state)
{
    struct xlb_endpoint_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(
        validate("{\"cluster_name\":\"c\",\"endpoints\":[{\"locality\":{},"
                 "\"load_balancing_weight\":1,\"lb_endpoints\":["
                 "{\"health_status\":\"UNHEALTHY\",\"endpoint\":{\"address\":{\"socket_address\":"
                 "{\"address\":\"10.0.0.1\",\"port_value\":80}}}},"
                 "{\"health_status\":\"TIMEOUT\",\"endpoint\":{\"address\":{\"socket_address\":"
                 "{\"address\":\"10.0.0.1\",\"port_value\":80}}}},"
                 "{\"health_status\":\"DEGRADED\"},"
                 "{\"health_status\":\"HEALTHY\",\"endpoint\":{\"address\":{\"socket_address\":"
                 "{\"address\":\"10.0.0.1\",\"port_value\":80}}}}]}]}",
                 &cfg, &errs),
        0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.priorities[0].localities[0].n_endpoints, 1);
    assert_int_equal(cfg.priorities[0].localities[0].endpoints[0].health, XLB_HEALTH_HEALTHY);
    xlb_endpoint_config_free(&cfg);
}

static void locality_field_required(void **state)
{
    expect_nack("{\"cluster_name\":\"c\",\"endpoints\":[{\"load_balancing_weight\":1}]}",
                "cluster_load_assignment \"c\": endpoints[0].locality: field not present");
}

static void duplicate_locality_in_priority(void **state)
{
    expect_nack("{\"cluster_name\":\"c\",\"endpoints\":["
                "{\"locality\":{\"zone\":\"a\"},\"load_balancing_weight\":1},"
                "{\"locality\":{\"zone\":\"b\"},\"load_balancing_weight\":1},"
                "{\"locality\":{\"zone\":\"a\"},\"load_balancing_weight\":1}]}",
                "cluster_load_assignment \"c\": endpoints[2].locality: duplicate locality "
                "{region=\"\", zone=\"a\", sub_zone=\"\"} in priority 0");
}

static void same_locality_in_two_priorities_is_valid(void **state)
{
    struct xlb_endpoint_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate("{\"cluster_name\":\"c\",\"endpoints\":["
                              "{\"locality\":{\"zone\":\"a\"},\"load_balancing_weight\":1},"
                              "{\"locality\":{\"zone\":\"a\"},\"load_balancing_weight\":1,"
                              "\"priority\":1}]}",
                              &cfg, &errs),
                     0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.n_priorities, 2);
    xlb_endpoint_config_free(&cfg);
}

static void priorities_must_be_contiguous(void **state)
{
    expect_nack("{\"cluster_name\":\"c\",\"endpoints\":["
                "{\"locality\":{\"zone\":\"a\"},\"load_balancing_weight\":1},"
                "{\"locality\":{\"zone\":\"b\"},\"load_balancing_weight\":1,\"priority\":2}]}",
                "cluster_load_assignment \"c\": endpoints: priority 1 has no localities "
                "(priorities must be contiguous from 0)");
}

static void priority_emptied_by_ignored_localities(void **state)
{
    expect_nack("{\"cluster_name\":\"c\",\"endpoints\":["
                "{\"locality\":{\"zone\":\"a\"},\"priority\":0},"
                "{\"locality\":{\"zone\":\"b\"},\"load_balancing_weight\":1,\"priority\":1}]}",
                "cluster_load_assignment \"c\": endpoints: priority 0 has no localities "
                "(priorities must be contiguous from 0)");
}

static void huge_priority_is_a_gap(void **state)
{
    expect_nack("{\"cluster_name\":\"c\",\"endpoints\":["
                "{\"locality\":{\"zone\":\"a\"},\"load_balancing_weight\":1,"
                "\"priority\":4294967295}]}",
                "cluster_load_assignment \"c\": endpoints: priority 0 has no localities "
                "(priorities must be contiguous from 0)");
}

#define LOC1(eps)                                                                                  \
    "{\"cluster_name\":\"c\",\"endpoints\":[{\"locality\":{},\"load_balancing_weight\":1,\"lb_"    \
    "endpoints\":[" eps "]}]}"

static void address_must_be_ip_literal(void **state)
{
    expect_nack(LOC1(EP("backend.example", 80)),
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints[0].endpoint.address."
                "socket_address.address: \"backend.example\" is not an IPv4 or IPv6 address");
}

static void port_zero_rejected(void **state)
{
    expect_nack(LOC1(EP("10.0.0.1", 0)),
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints[0].endpoint.address."
                "socket_address.port_value: 0 is not in 1..65535");
}

static void port_above_65535_rejected(void **state)
{
    expect_nack(LOC1(EP("10.0.0.1", 65536)),
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints[0].endpoint.address."
                "socket_address.port_value: 65536 is not in 1..65535");
}

static void socket_address_required(void **state)
{
    expect_nack(LOC1("{\"endpoint\":{\"address\":{}}}"),
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints[0].endpoint.address."
                "socket_address: field not present");
}

static void address_required(void **state)
{
    expect_nack(LOC1("{\"endpoint\":{}}"),
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints[0].endpoint.address: "
                "field not present");
}

static void endpoint_required(void **state)
{
    expect_nack(LOC1("{\"load_balancing_weight\":1}"),
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints[0].endpoint: "
                "field not present");
}

static void additional_address_validated(void **state)
{
    expect_nack(LOC1("{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"10.0.0.1\","
                     "\"port_value\":80}},\"additional_addresses\":[{\"address\":{"
                     "\"socket_address\":{\"address\":\"::1\"}}}]}}"),
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints[0].endpoint."
                "additional_addresses[0].address.socket_address.port_value: field not present");
}

static void endpoint_weight_zero_rejected(void **state)
{
    expect_nack(LOC1("{\"load_balancing_weight\":0,\"endpoint\":{\"address\":{\"socket_address\":"
                     "{\"address\":\"10.0.0.1\",\"port_value\":80}}}}"),
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints[0]."
                "load_balancing_weight: must be greater than 0");
}

static void endpoint_weight_sum_overflow(void **state)
{
    expect_nack(LOC1("{\"load_balancing_weight\":4294967295,\"endpoint\":{\"address\":{"
                     "\"socket_address\":{\"address\":\"10.0.0.1\",\"port_value\":80}}}},"
                     "{\"load_balancing_weight\":1,\"endpoint\":{\"address\":{"
                     "\"socket_address\":{\"address\":\"10.0.0.2\",\"port_value\":80}}}}"),
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints: sum of endpoint "
                "weights 4294967296 exceeds uint32 max");
}

static void locality_weight_sum_overflow(void **state)
{
    expect_nack("{\"cluster_name\":\"c\",\"endpoints\":["
                "{\"locality\":{\"zone\":\"a\"},\"load_balancing_weight\":4294967295},"
                "{\"locality\":{\"zone\":\"b\"},\"load_balancing_weight\":1}]}",
                "cluster_load_assignment \"c\": endpoints: sum of locality weights for priority 0 "
                "exceeds uint32 max");
}

static void duplicate_address_across_localities(void **state)
{
    expect_nack("{\"cluster_name\":\"c\",\"endpoints\":["
                "{\"locality\":{\"zone\":\"a\"},\"load_balancing_weight\":1,"
                "\"lb_endpoints\":[" EP(
                    "10.0.0.1",
                    80) "]},"
                        "{\"locality\":{\"zone\":\"b\"},\"load_balancing_weight\":1,\"priority\":1,"
                        "\"lb_endpoints\":[" EP("10.0.0.2", 80) "," EP("10.0.0.1", 80) "]}]}",
                "cluster_load_assignment \"c\": endpoints[1]: duplicate endpoint address "
                "\"10.0.0.1:80\"");
}

static void duplicate_additional_address(void **state)
{
    expect_nack(
        LOC1(EP("2001:db8::5",
                80) ","
                    "{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"10.0.0.1\","
                    "\"port_value\":80}},\"additional_addresses\":[{\"address\":{"
                    "\"socket_address\":{\"address\":\"2001:db8::5\",\"port_value\":80}}}]}}"),
        "cluster_load_assignment \"c\": endpoints[0]: duplicate endpoint address "
        "\"[2001:db8::5]:80\"");
}

static void drop_overloads_in_ppm(void **state)
{
    struct xlb_endpoint_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(
        validate("{\"cluster_name\":\"c\",\"policy\":{\"drop_overloads\":["
                 "{\"category\":\"lb\",\"drop_percentage\":{\"numerator\":3}},"
                 "{\"category\":\"x\",\"drop_percentage\":{\"numerator\":25,"
                 "\"denominator\":\"TEN_THOUSAND\"}},"
                 "{\"category\":\"y\",\"drop_percentage\":{\"numerator\":7,"
                 "\"denominator\":\"MILLION\"}},"
                 "{\"category\":\"z\",\"drop_percentage\":{\"numerator\":4000000000}}]}}",
                 &cfg, &errs),
        0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.n_drops, 4);
    assert_string_equal(cfg.drops[0].category, "lb");
    assert_int_equal(cfg.drops[0].parts_per_million, 30000);
    assert_int_equal(cfg.drops[1].parts_per_million, 2500);
    assert_int_equal(cfg.drops[2].parts_per_million, 7);
    assert_int_equal(cfg.drops[3].parts_per_million, 1000000); /* capped, no wrap */
    xlb_endpoint_config_free(&cfg);
}

static void drop_percentage_required(void **state)
{
    expect_nack("{\"cluster_name\":\"c\",\"policy\":{\"drop_overloads\":[{\"category\":\"a\"}]}}",
                "cluster_load_assignment \"c\": policy.drop_overloads[0].drop_percentage: "
                "field not present");
}

static void drop_denominator_unknown(void **state)
{
    expect_nack("{\"cluster_name\":\"c\",\"policy\":{\"drop_overloads\":[{\"category\":\"a\","
                "\"drop_percentage\":{\"numerator\":1,\"denominator\":7}}]}}",
                "cluster_load_assignment \"c\": policy.drop_overloads[0].drop_percentage."
                "denominator: unknown denominator type 7");
}

/* An endpoint with "envoy.lb" metadata: {"hash_key": VALUE} (VALUE as JSON text). */
#define EP_KEYED(addr, value)                                                                      \
    "{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"" addr                          \
    "\",\"port_value\":80}}},\"metadata\":{\"filter_metadata\":{\"envoy.lb\":{\"hash_key\":" value \
    "}}}}"

static const char *const keyed_assignment =
    "{\"cluster_name\":\"c\",\"endpoints\":[{\"locality\":{\"zone\":\"a\"},"
    "\"load_balancing_weight\":1,\"lb_endpoints\":[" EP_KEYED("10.0.0.1", "\"pod-0\"") "," EP_KEYED(
        "10.0.0.2", "7") "," EP_KEYED("10.0.0.3",
                                      "\"\"") ","
                                              "{\"endpoint\":{\"address\":{\"socket_address\":{"
                                              "\"address\":\"10.0.0.4\",\"port_value\":80}}},"
                                              "\"metadata\":{\"filter_metadata\":{\"other\":{"
                                              "\"hash_key\":\"x\"}}}}]}]}";

/* A76: a string hash_key under "envoy.lb" is the endpoint's; a number, an empty string or
 * another filter's key is no key (the address places it), as gRPC reads them. */
static void hash_key_from_metadata(void **state)
{
    struct xlb_endpoint_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate(keyed_assignment, &cfg, &errs), 0);
    xv_expect_none(&errs);
    const struct xlb_eds_locality *l = &cfg.priorities[0].localities[0];
    assert_int_equal(l->n_endpoints, 4);
    assert_string_equal(l->endpoints[0].hash_key, "pod-0");
    assert_null(l->endpoints[1].hash_key);
    assert_null(l->endpoints[2].hash_key);
    assert_null(l->endpoints[3].hash_key);
    xlb_endpoint_config_free(&cfg);
}

/* gRPC's way back: GRPC_XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT=true ignores the keys. */
static void hash_key_backward_compat(void **state)
{
    struct xlb_endpoint_config cfg;
    struct xlb_errors errs = {0};
    setenv("GRPC_XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT", "TRUE", 1);
    int rc = validate(keyed_assignment, &cfg, &errs);
    unsetenv("GRPC_XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT");
    assert_int_equal(rc, 0);
    assert_null(cfg.priorities[0].localities[0].endpoints[0].hash_key);
    xlb_endpoint_config_free(&cfg);
}

static void hash_key_too_long_rejected(void **state)
{
    char key[300], json[1024];
    memset(key, 'k', 256);
    key[256] = '\0';
    snprintf(json, sizeof(json),
             "{\"cluster_name\":\"c\",\"endpoints\":[{\"locality\":{\"zone\":\"a\"},"
             "\"load_balancing_weight\":1,\"lb_endpoints\":[" EP_KEYED("10.0.0.1", "\"%s\"") "]}]}",
             key);
    expect_nack(json,
                "cluster_load_assignment \"c\": endpoints[0].lb_endpoints[0].metadata."
                "filter_metadata[envoy.lb].hash_key: 256 bytes: xlb places keys of at most 255 "
                "bytes on its rings");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_with_defaults),
        cmocka_unit_test(empty_resource_is_valid),
        cmocka_unit_test(locality_without_weight_is_ignored),
        cmocka_unit_test(unhealthy_endpoints_are_ignored),
        cmocka_unit_test(locality_field_required),
        cmocka_unit_test(duplicate_locality_in_priority),
        cmocka_unit_test(same_locality_in_two_priorities_is_valid),
        cmocka_unit_test(priorities_must_be_contiguous),
        cmocka_unit_test(priority_emptied_by_ignored_localities),
        cmocka_unit_test(huge_priority_is_a_gap),
        cmocka_unit_test(address_must_be_ip_literal),
        cmocka_unit_test(port_zero_rejected),
        cmocka_unit_test(port_above_65535_rejected),
        cmocka_unit_test(socket_address_required),
        cmocka_unit_test(address_required),
        cmocka_unit_test(endpoint_required),
        cmocka_unit_test(additional_address_validated),
        cmocka_unit_test(endpoint_weight_zero_rejected),
        cmocka_unit_test(endpoint_weight_sum_overflow),
        cmocka_unit_test(locality_weight_sum_overflow),
        cmocka_unit_test(duplicate_address_across_localities),
        cmocka_unit_test(duplicate_additional_address),
        cmocka_unit_test(drop_overloads_in_ppm),
        cmocka_unit_test(drop_percentage_required),
        cmocka_unit_test(drop_denominator_unknown),
        cmocka_unit_test(hash_key_from_metadata),
        cmocka_unit_test(hash_key_backward_compat),
        cmocka_unit_test(hash_key_too_long_rejected),
    };
    return cmocka_run_group_tests_name("xds_validate_endpoint", tests, NULL, NULL);
}
