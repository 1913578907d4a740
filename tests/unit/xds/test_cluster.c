/* CDS validation (control/xds/cluster_config.h): one test per rule. */
#include "xv_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_config.h"
#include "xlb_override_map.h"

typedef Envoy__Config__Cluster__V3__Cluster Cluster;

static Cluster *cluster_json(const char *json)
{
    return (Cluster *)xv_json(&envoy__config__cluster__v3__cluster__descriptor, json);
}

static int validate(const char *json, struct xlb_cluster_config *cfg, struct xlb_errors *errs)
{
    Cluster *msg = cluster_json(json);
    int rc = xlb_validate_cluster(msg, cfg, errs);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    return rc;
}

static void valid(const char *json, struct xlb_cluster_config *cfg)
{
    struct xlb_errors errs = {0};
    int rc = validate(json, cfg, &errs);
    xv_expect_none(&errs);
    assert_int_equal(rc, 0);
}

static void expect_nack(const char *json, const char *line)
{
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate(json, &cfg, &errs), -1);
    assert_null(cfg.name);
    xv_expect_line(&errs, line);
}

#define EDS_HEAD                                                                                   \
    "{\"name\":\"backend\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}}"
#define EDS(rest) EDS_HEAD rest "}"

static void eds_with_defaults(void **state)
{
    struct xlb_cluster_config cfg;
    valid(EDS(""), &cfg);
    assert_string_equal(cfg.name, "backend");
    assert_int_equal(cfg.type, XLB_CLUSTER_EDS);
    assert_string_equal(cfg.eds_service_name, "");
    assert_null(cfg.dns_host);
    assert_int_equal(cfg.n_aggregate_clusters, 0);
    assert_int_equal(cfg.lb_policy, XLB_LB_ROUND_ROBIN);
    assert_int_equal(cfg.ring_hash.min_ring_size, 1024);
    assert_int_equal(cfg.ring_hash.max_ring_size, 8388608);
    assert_false(cfg.lrs_enabled);
    assert_int_equal(cfg.max_requests, 1024);
    assert_false(cfg.outlier.enabled);
    assert_int_equal(cfg.override_host_status, XLB_OVERRIDE_STATUS_DEFAULT);
    assert_int_equal(cfg.idle_timeout.seconds, 3600);
    assert_int_equal(cfg.idle_timeout.nanos, 0);
    xlb_cluster_config_free(&cfg);
}

static void eds_with_every_option(void **state)
{
    struct xlb_cluster_config cfg;
    valid("{\"name\":\"b\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"self\":{}},"
          "\"service_name\":\"svc-eds\"},\"lrs_server\":{\"self\":{}},"
          "\"circuit_breakers\":{\"thresholds\":[{\"priority\":\"HIGH\",\"max_requests\":5},"
          "{\"max_requests\":77},{\"max_requests\":99}]},"
          "\"common_lb_config\":{\"override_host_status\":{\"statuses\":[\"DRAINING\","
          "\"UNHEALTHY\",\"HEALTHY\"]}},"
          "\"typed_extension_protocol_options\":{\"envoy.extensions.upstreams.http.v3."
          "HttpProtocolOptions\":{\"@type\":\"type.googleapis.com/envoy.extensions.upstreams."
          "http.v3.HttpProtocolOptions\",\"common_http_protocol_options\":{\"idle_timeout\":"
          "\"90.5s\"}}}}",
          &cfg);
    assert_string_equal(cfg.eds_service_name, "svc-eds");
    assert_true(cfg.lrs_enabled);
    assert_int_equal(cfg.max_requests, 77);
    assert_int_equal(cfg.override_host_status,
                     XLB_HEALTH_BIT(XLB_HEALTH_DRAINING) | XLB_HEALTH_BIT(XLB_HEALTH_HEALTHY));
    assert_int_equal(cfg.idle_timeout.seconds, 90);
    assert_int_equal(cfg.idle_timeout.nanos, 500000000);
    xlb_cluster_config_free(&cfg);
}

static void empty_override_host_status_is_empty(void **state)
{
    struct xlb_cluster_config cfg;
    valid(EDS(",\"common_lb_config\":{\"override_host_status\":{}}"), &cfg);
    assert_int_equal(cfg.override_host_status, 0);
    xlb_cluster_config_free(&cfg);
}

static void http_protocol_options_without_idle_timeout(void **state)
{
    struct xlb_cluster_config cfg;
    valid(EDS(",\"typed_extension_protocol_options\":{\"envoy.extensions.upstreams.http.v3."
              "HttpProtocolOptions\":{\"@type\":\"type.googleapis.com/envoy.extensions.upstreams."
              "http.v3.HttpProtocolOptions\"}}"),
          &cfg);
    assert_int_equal(cfg.idle_timeout.seconds, 3600);
    xlb_cluster_config_free(&cfg);
}

static void eds_cluster_config_required(void **state)
{
    expect_nack("{\"name\":\"b\",\"type\":\"EDS\"}",
                "cluster \"b\": eds_cluster_config: field not present");
}

static void eds_config_required(void **state)
{
    expect_nack("{\"name\":\"b\",\"type\":\"EDS\",\"eds_cluster_config\":{}}",
                "cluster \"b\": eds_cluster_config.eds_config: field not present");
}

static void eds_config_must_be_ads_or_self(void **state)
{
    expect_nack("{\"name\":\"b\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{}}}",
                "cluster \"b\": eds_cluster_config.eds_config: ConfigSource is not ads or self");
}

static void static_type_rejected(void **state)
{
    expect_nack("{\"name\":\"b\",\"type\":\"STATIC\"}",
                "cluster \"b\": type: STATIC is not supported");
}

static void missing_type_is_static(void **state)
{
    expect_nack("{\"name\":\"b\"}", "cluster \"b\": type: STATIC is not supported");
}

static void original_dst_rejected(void **state)
{
    expect_nack("{\"name\":\"b\",\"type\":\"ORIGINAL_DST\"}",
                "cluster \"b\": type: ORIGINAL_DST is not supported");
}

#define DNS(eps)                                                                                   \
    "{\"name\":\"d\",\"type\":\"LOGICAL_DNS\",\"load_assignment\":{\"endpoints\":[" eps "]}}"
#define DNS_EP(sa) "{\"lb_endpoints\":[{\"endpoint\":{\"address\":{\"socket_address\":" sa "}}}]}"

static void logical_dns_valid(void **state)
{
    struct xlb_cluster_config cfg;
    valid(DNS(DNS_EP("{\"address\":\"backend.example\",\"port_value\":8443}")), &cfg);
    assert_int_equal(cfg.type, XLB_CLUSTER_LOGICAL_DNS);
    assert_string_equal(cfg.dns_host, "backend.example");
    assert_int_equal(cfg.dns_port, 8443);
    assert_null(cfg.eds_service_name);
    xlb_cluster_config_free(&cfg);
}

static void logical_dns_load_assignment_required(void **state)
{
    expect_nack("{\"name\":\"d\",\"type\":\"LOGICAL_DNS\"}",
                "cluster \"d\": load_assignment: field not present");
}

static void logical_dns_one_locality(void **state)
{
    expect_nack(DNS(DNS_EP("{\"address\":\"a\",\"port_value\":1}") "," DNS_EP(
                    "{\"address\":\"b\",\"port_value\":1}")),
                "cluster \"d\": load_assignment.endpoints: must contain exactly one locality for "
                "LOGICAL_DNS cluster, found 2");
}

static void logical_dns_one_endpoint(void **state)
{
    expect_nack(DNS("{\"lb_endpoints\":[]}"),
                "cluster \"d\": load_assignment.endpoints[0].lb_endpoints: must contain exactly "
                "one endpoint for LOGICAL_DNS cluster, found 0");
}

static void logical_dns_no_resolver_name(void **state)
{
    expect_nack(DNS(DNS_EP("{\"address\":\"a\",\"port_value\":1,\"resolver_name\":\"r\"}")),
                "cluster \"d\": load_assignment.endpoints[0].lb_endpoints[0].endpoint.address."
                "socket_address.resolver_name: LOGICAL_DNS clusters must NOT have a custom "
                "resolver name set");
}

static void logical_dns_port_required(void **state)
{
    expect_nack(DNS(DNS_EP("{\"address\":\"a\"}")),
                "cluster \"d\": load_assignment.endpoints[0].lb_endpoints[0].endpoint.address."
                "socket_address.port_value: field not present");
}

#define AGG(cfg)                                                                                   \
    "{\"name\":\"agg\",\"cluster_type\":{\"name\":\"envoy.clusters.aggregate\",\"typed_"           \
    "config\":" cfg "}}"
#define AGG_TYPE                                                                                   \
    "\"@type\":\"type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig\""

static void aggregate_valid(void **state)
{
    struct xlb_cluster_config cfg;
    valid(AGG("{" AGG_TYPE ",\"clusters\":[\"primary\",\"fallback\"]}"), &cfg);
    assert_int_equal(cfg.type, XLB_CLUSTER_AGGREGATE);
    assert_int_equal(cfg.n_aggregate_clusters, 2);
    assert_string_equal(cfg.aggregate_clusters[0], "primary");
    assert_string_equal(cfg.aggregate_clusters[1], "fallback");
    xlb_cluster_config_free(&cfg);
}

static void aggregate_clusters_non_empty(void **state)
{
    expect_nack(AGG("{" AGG_TYPE "}"),
                "cluster \"agg\": cluster_type.typed_config.value.clusters: must be non-empty");
}

static void aggregate_typed_config_required(void **state)
{
    expect_nack("{\"name\":\"agg\",\"cluster_type\":{\"name\":\"envoy.clusters.aggregate\"}}",
                "cluster \"agg\": cluster_type.typed_config: field not present");
}

static void custom_cluster_type_unknown(void **state)
{
    expect_nack(AGG("{\"@type\":\"type.googleapis.com/envoy.extensions.filters.http.router.v3."
                    "Router\"}"),
                "cluster \"agg\": cluster_type.typed_config.type_url: unknown cluster_type "
                "extension \"envoy.extensions.filters.http.router.v3.Router\"");
}

static void lb_policy_unsupported(void **state)
{
    expect_nack(EDS(",\"lb_policy\":\"LEAST_REQUEST\""),
                "cluster \"backend\": lb_policy: LEAST_REQUEST is not supported");
}

static void ring_hash_defaults(void **state)
{
    struct xlb_cluster_config cfg;
    valid(EDS(",\"lb_policy\":\"RING_HASH\""), &cfg);
    assert_int_equal(cfg.lb_policy, XLB_LB_RING_HASH);
    assert_int_equal(cfg.ring_hash.min_ring_size, 1024);
    assert_int_equal(cfg.ring_hash.max_ring_size, 8388608);
    assert_int_equal(cfg.ring_hash.ring_size_cap, XLB_RING_HASH_DEFAULT_CAP);
    xlb_cluster_config_free(&cfg);
}

static void ring_hash_sizes(void **state)
{
    struct xlb_cluster_config cfg;
    valid(EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"minimum_ring_size\":10,"
              "\"maximum_ring_size\":20}"),
          &cfg);
    assert_int_equal(cfg.ring_hash.min_ring_size, 10);
    assert_int_equal(cfg.ring_hash.max_ring_size, 20);
    xlb_cluster_config_free(&cfg);
}

static void ring_hash_min_zero(void **state)
{
    expect_nack(
        EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"minimum_ring_size\":0}"),
        "cluster \"backend\": ring_hash_lb_config.minimum_ring_size: 0 is not in "
        "1..8388608");
}

static void ring_hash_max_too_large(void **state)
{
    expect_nack(EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"maximum_ring_size\":"
                    "8388609}"),
                "cluster \"backend\": ring_hash_lb_config.maximum_ring_size: 8388609 is not in "
                "1..8388608");
}

static void ring_hash_min_above_max(void **state)
{
    expect_nack(EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"minimum_ring_size\":"
                    "2000,\"maximum_ring_size\":1000}"),
                "cluster \"backend\": ring_hash_lb_config: minimum_ring_size 2000 is greater than "
                "maximum_ring_size 1000");
}

static void ring_hash_function_xx_only(void **state)
{
    expect_nack(EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"hash_function\":"
                    "\"MURMUR_HASH_2\"}"),
                "cluster \"backend\": ring_hash_lb_config.hash_function: invalid hash function 1 "
                "(must be XX_HASH)");
}

static void lrs_server_must_be_self(void **state)
{
    expect_nack(EDS(",\"lrs_server\":{\"ads\":{}}"),
                "cluster \"backend\": lrs_server: ConfigSource is not self");
}

static void outlier_detection_defaults(void **state)
{
    struct xlb_cluster_config cfg;
    valid(EDS(",\"outlier_detection\":{}"), &cfg);
    const struct xlb_outlier_detection *od = &cfg.outlier;
    assert_true(od->enabled);
    assert_int_equal(od->interval.seconds, 10);
    assert_int_equal(od->base_ejection_time.seconds, 30);
    assert_int_equal(od->max_ejection_time.seconds, 300);
    assert_int_equal(od->max_ejection_percent, 10);
    assert_true(od->success_rate_enabled);
    assert_int_equal(od->success_rate.stdev_factor, 1900);
    assert_int_equal(od->success_rate.enforcement_percentage, 100);
    assert_int_equal(od->success_rate.minimum_hosts, 5);
    assert_int_equal(od->success_rate.request_volume, 100);
    assert_false(od->failure_percentage_enabled);
    xlb_cluster_config_free(&cfg);
}

static void outlier_detection_all_fields(void **state)
{
    struct xlb_cluster_config cfg;
    valid(EDS(",\"outlier_detection\":{\"interval\":\"1s\",\"base_ejection_time\":\"2s\","
              "\"max_ejection_time\":\"3.5s\",\"max_ejection_percent\":100,"
              "\"enforcing_success_rate\":0,\"success_rate_stdev_factor\":1,"
              "\"enforcing_failure_percentage\":40,\"failure_percentage_threshold\":90,"
              "\"failure_percentage_minimum_hosts\":2,\"failure_percentage_request_volume\":3,"
              "\"consecutive_5xx\":9}"),
          &cfg);
    const struct xlb_outlier_detection *od = &cfg.outlier;
    assert_int_equal(od->interval.seconds, 1);
    assert_int_equal(od->base_ejection_time.seconds, 2);
    assert_int_equal(od->max_ejection_time.seconds, 3);
    assert_int_equal(od->max_ejection_time.nanos, 500000000);
    assert_int_equal(od->max_ejection_percent, 100);
    assert_false(od->success_rate_enabled);
    assert_true(od->failure_percentage_enabled);
    assert_int_equal(od->failure_percentage.enforcement_percentage, 40);
    assert_int_equal(od->failure_percentage.threshold, 90);
    assert_int_equal(od->failure_percentage.minimum_hosts, 2);
    assert_int_equal(od->failure_percentage.request_volume, 3);
    xlb_cluster_config_free(&cfg);
}

static void outlier_failure_percentage_defaults(void **state)
{
    struct xlb_cluster_config cfg;
    valid(EDS(",\"outlier_detection\":{\"enforcing_failure_percentage\":1}"), &cfg);
    assert_true(cfg.outlier.failure_percentage_enabled);
    assert_int_equal(cfg.outlier.failure_percentage.threshold, 85);
    assert_int_equal(cfg.outlier.failure_percentage.minimum_hosts, 5);
    assert_int_equal(cfg.outlier.failure_percentage.request_volume, 50);
    xlb_cluster_config_free(&cfg);
}

static void outlier_max_ejection_percent_above_100(void **state)
{
    expect_nack(
        EDS(",\"outlier_detection\":{\"max_ejection_percent\":101}"),
        "cluster \"backend\": outlier_detection.max_ejection_percent: 101 is not in 0..100");
}

static void outlier_enforcing_success_rate_above_100(void **state)
{
    expect_nack(EDS(",\"outlier_detection\":{\"enforcing_success_rate\":150}"),
                "cluster \"backend\": outlier_detection.enforcing_success_rate: 150 is not in "
                "0..100");
}

static void outlier_enforcing_failure_percentage_above_100(void **state)
{
    expect_nack(EDS(",\"outlier_detection\":{\"enforcing_failure_percentage\":101}"),
                "cluster \"backend\": outlier_detection.enforcing_failure_percentage: 101 is not "
                "in 0..100");
}

static void outlier_failure_threshold_above_100(void **state)
{
    expect_nack(EDS(",\"outlier_detection\":{\"enforcing_failure_percentage\":5,"
                    "\"failure_percentage_threshold\":200}"),
                "cluster \"backend\": outlier_detection.failure_percentage_threshold: 200 is not "
                "in 0..100");
}

static void outlier_threshold_ignored_when_disabled(void **state)
{
    struct xlb_cluster_config cfg;
    valid(EDS(",\"outlier_detection\":{\"failure_percentage_threshold\":200}"), &cfg);
    assert_false(cfg.outlier.failure_percentage_enabled);
    xlb_cluster_config_free(&cfg);
}

static void outlier_negative_interval(void **state)
{
    expect_nack(EDS(",\"outlier_detection\":{\"interval\":\"-1s\"}"),
                "cluster \"backend\": outlier_detection.interval.seconds: -1 is not in "
                "0..315576000000");
}

/* The JSON reader refuses such a Duration; the wire does not, so the message is edited. */
static void outlier_max_ejection_time_too_long(void **state)
{
    Cluster *msg = cluster_json(EDS(",\"outlier_detection\":{\"max_ejection_time\":\"1s\"}"));
    msg->outlier_detection->max_ejection_time->seconds = INT64_C(315576000001);
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_validate_cluster(msg, &cfg, &errs), -1);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    xv_expect_line(&errs, "cluster \"backend\": outlier_detection.max_ejection_time.seconds: "
                          "315576000001 is not in 0..315576000000");
}

static void idle_timeout_invalid(void **state)
{
    expect_nack(EDS(",\"typed_extension_protocol_options\":{\"envoy.extensions.upstreams.http.v3."
                    "HttpProtocolOptions\":{\"@type\":\"type.googleapis.com/envoy.extensions."
                    "upstreams.http.v3.HttpProtocolOptions\",\"common_http_protocol_options\":{"
                    "\"idle_timeout\":\"-5s\"}}}"),
                "cluster \"backend\": typed_extension_protocol_options[\"envoy.extensions."
                "upstreams.http.v3.HttpProtocolOptions\"].common_http_protocol_options."
                "idle_timeout.seconds: -5 is not in 0..315576000000");
}

static void http_protocol_options_wrong_type(void **state)
{
    expect_nack(EDS(",\"typed_extension_protocol_options\":{\"envoy.extensions.upstreams.http.v3."
                    "HttpProtocolOptions\":{\"@type\":\"type.googleapis.com/envoy.config.core.v3."
                    "HttpProtocolOptions\"}}"),
                "cluster \"backend\": typed_extension_protocol_options[\"envoy.extensions."
                "upstreams.http.v3.HttpProtocolOptions\"]: unsupported type \"envoy.config.core."
                "v3.HttpProtocolOptions\"");
}

/* load_balancing_policy: its extensions are not in proto/, so the Anys are built by hand. */

#define RR_URL                                                                                     \
    "type.googleapis.com/envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin"
#define RH_URL "type.googleapis.com/envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash"
#define WRR_URL                                                                                    \
    "type.googleapis.com/envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality"
#define PF_URL                                                                                     \
    "type.googleapis.com/envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst"

struct policy_list {
    Envoy__Config__Cluster__V3__LoadBalancingPolicy list;
    Envoy__Config__Cluster__V3__LoadBalancingPolicy__Policy policy[3];
    Envoy__Config__Cluster__V3__LoadBalancingPolicy__Policy *ptrs[3];
    Envoy__Config__Core__V3__TypedExtensionConfig tec[3];
    Google__Protobuf__Any any[3];
};

static void policy_list_init(struct policy_list *p, size_t n, const char *const *urls,
                             const ProtobufCBinaryData *values)
{
    envoy__config__cluster__v3__load_balancing_policy__init(&p->list);
    p->list.n_policies = n;
    p->list.policies = p->ptrs;
    for (size_t i = 0; i < n; i++) {
        envoy__config__cluster__v3__load_balancing_policy__policy__init(&p->policy[i]);
        envoy__config__core__v3__typed_extension_config__init(&p->tec[i]);
        google__protobuf__any__init(&p->any[i]);
        p->any[i].type_url = (char *)urls[i];
        p->any[i].value = values[i];
        p->tec[i].typed_config = &p->any[i];
        p->policy[i].typed_extension_config = &p->tec[i];
        p->ptrs[i] = &p->policy[i];
    }
}

static int validate_with_policies(struct policy_list *p, struct xlb_cluster_config *cfg,
                                  struct xlb_errors *errs)
{
    Cluster *msg = cluster_json(EDS(""));
    msg->load_balancing_policy = &p->list;
    int rc = xlb_validate_cluster(msg, cfg, errs);
    msg->load_balancing_policy = NULL;
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    return rc;
}

static void lb_policy_field_ring_hash(void **state)
{
    /* hash_function XX_HASH, minimum_ring_size 10, maximum_ring_size 20 */
    static uint8_t rh[] = {0x08, 0x01, 0x12, 0x02, 0x08, 0x0a, 0x1a, 0x02, 0x08, 0x14};
    const char *urls[] = {PF_URL, RH_URL};
    ProtobufCBinaryData values[] = {{0, NULL}, {sizeof(rh), rh}};
    struct policy_list p;
    policy_list_init(&p, 2, urls, values);
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_with_policies(&p, &cfg, &errs), 0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.lb_policy, XLB_LB_RING_HASH);
    assert_int_equal(cfg.ring_hash.min_ring_size, 10);
    assert_int_equal(cfg.ring_hash.max_ring_size, 20);
    xlb_cluster_config_free(&cfg);
}

static void lb_policy_field_ring_hash_invalid(void **state)
{
    static uint8_t rh[] = {0x12, 0x02, 0x08, 0x00}; /* minimum_ring_size 0 */
    const char *urls[] = {RH_URL};
    ProtobufCBinaryData values[] = {{sizeof(rh), rh}};
    struct policy_list p;
    policy_list_init(&p, 1, urls, values);
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_with_policies(&p, &cfg, &errs), -1);
    xv_expect_line(&errs, "cluster \"backend\": load_balancing_policy.policies[0]."
                          "typed_extension_config.typed_config.value.minimum_ring_size: 0 is not "
                          "in 1..8388608");
}

static void lb_policy_field_wrr_locality_round_robin(void **state)
{
    const char *inner_urls[] = {RR_URL};
    ProtobufCBinaryData none[] = {{0, NULL}};
    struct policy_list inner;
    policy_list_init(&inner, 1, inner_urls, none);
    uint8_t packed[256];
    size_t len = protobuf_c_message_pack(&inner.list.base, packed + 2);
    assert_true(len < 128);
    packed[0] = 0x0a; /* WrrLocality.endpoint_picking_policy, length-delimited */
    packed[1] = (uint8_t)len;
    const char *urls[] = {WRR_URL};
    ProtobufCBinaryData values[] = {{len + 2, packed}};
    struct policy_list p;
    policy_list_init(&p, 1, urls, values);
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_with_policies(&p, &cfg, &errs), 0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.lb_policy, XLB_LB_ROUND_ROBIN);
    xlb_cluster_config_free(&cfg);
}

static void lb_policy_field_none_supported(void **state)
{
    const char *urls[] = {PF_URL};
    ProtobufCBinaryData values[] = {{0, NULL}};
    struct policy_list p;
    policy_list_init(&p, 1, urls, values);
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_with_policies(&p, &cfg, &errs), -1);
    xv_expect_line(&errs, "cluster \"backend\": load_balancing_policy: no supported load "
                          "balancing policy config found");
}

static void long_name_cut_in_errors(void **state)
{
    char json[512], name[201];
    memset(name, 'n', 200);
    name[200] = '\0';
    snprintf(json, sizeof(json), "{\"name\":\"%s\"}", name);
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate(json, &cfg, &errs), -1);
    assert_int_equal(errs.n, 1);
    assert_non_null(strstr(errs.lines[0], "nnn...\": type: STATIC is not supported"));
    xlb_errors_free(&errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eds_with_defaults),
        cmocka_unit_test(eds_with_every_option),
        cmocka_unit_test(empty_override_host_status_is_empty),
        cmocka_unit_test(http_protocol_options_without_idle_timeout),
        cmocka_unit_test(eds_cluster_config_required),
        cmocka_unit_test(eds_config_required),
        cmocka_unit_test(eds_config_must_be_ads_or_self),
        cmocka_unit_test(static_type_rejected),
        cmocka_unit_test(missing_type_is_static),
        cmocka_unit_test(original_dst_rejected),
        cmocka_unit_test(logical_dns_valid),
        cmocka_unit_test(logical_dns_load_assignment_required),
        cmocka_unit_test(logical_dns_one_locality),
        cmocka_unit_test(logical_dns_one_endpoint),
        cmocka_unit_test(logical_dns_no_resolver_name),
        cmocka_unit_test(logical_dns_port_required),
        cmocka_unit_test(aggregate_valid),
        cmocka_unit_test(aggregate_clusters_non_empty),
        cmocka_unit_test(aggregate_typed_config_required),
        cmocka_unit_test(custom_cluster_type_unknown),
        cmocka_unit_test(lb_policy_unsupported),
        cmocka_unit_test(ring_hash_defaults),
        cmocka_unit_test(ring_hash_sizes),
        cmocka_unit_test(ring_hash_min_zero),
        cmocka_unit_test(ring_hash_max_too_large),
        cmocka_unit_test(ring_hash_min_above_max),
        cmocka_unit_test(ring_hash_function_xx_only),
        cmocka_unit_test(lrs_server_must_be_self),
        cmocka_unit_test(outlier_detection_defaults),
        cmocka_unit_test(outlier_detection_all_fields),
        cmocka_unit_test(outlier_failure_percentage_defaults),
        cmocka_unit_test(outlier_max_ejection_percent_above_100),
        cmocka_unit_test(outlier_enforcing_success_rate_above_100),
        cmocka_unit_test(outlier_enforcing_failure_percentage_above_100),
        cmocka_unit_test(outlier_failure_threshold_above_100),
        cmocka_unit_test(outlier_threshold_ignored_when_disabled),
        cmocka_unit_test(outlier_negative_interval),
        cmocka_unit_test(outlier_max_ejection_time_too_long),
        cmocka_unit_test(idle_timeout_invalid),
        cmocka_unit_test(http_protocol_options_wrong_type),
        cmocka_unit_test(lb_policy_field_ring_hash),
        cmocka_unit_test(lb_policy_field_ring_hash_invalid),
        cmocka_unit_test(lb_policy_field_wrr_locality_round_robin),
        cmocka_unit_test(lb_policy_field_none_supported),
        cmocka_unit_test(long_name_cut_in_errors),
    };
    return cmocka_run_group_tests_name("xds_validate_cluster", tests, NULL, NULL);
}
