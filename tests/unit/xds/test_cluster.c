/* CDS validation (control/xds/cluster_config.h): one test per rule. */
#include "cluster_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envoy/extensions/upstreams/http/v3/http_protocol_options.pb-c.h"
#include "xlb_override_map.h"

static void eds_with_defaults(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(""), &cfg);
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

/* Cluster.upstream_config holding HttpProtocolOptions (A75). */
#define HPO_TYPE                                                                                   \
    "\"@type\":\"type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions\""
#define UPSTREAM(typed_config)                                                                     \
    ",\"upstream_config\":{\"name\":\"u\",\"typed_config\":" typed_config "}"

static void eds_with_every_option(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(
        "{\"name\":\"b\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"self\":{}},"
        "\"service_name\":\"svc-eds\"},\"lrs_server\":{\"self\":{}},"
        "\"circuit_breakers\":{\"thresholds\":[{\"priority\":\"HIGH\",\"max_requests\":5},"
        "{\"max_requests\":77},{\"max_requests\":99}]},"
        "\"common_lb_config\":{\"override_host_status\":{\"statuses\":[\"DRAINING\","
        "\"UNHEALTHY\",\"HEALTHY\"]}},"
        "\"upstream_config\":{\"name\":\"http\",\"typed_config\":{" HPO_TYPE
        ",\"common_http_protocol_options\":{\"idle_timeout\":\"90.5s\"}}}}",
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
    ct_valid(EDS(",\"common_lb_config\":{\"override_host_status\":{}}"), &cfg);
    assert_int_equal(cfg.override_host_status, 0);
    xlb_cluster_config_free(&cfg);
}

static void http_protocol_options_without_idle_timeout(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(UPSTREAM("{" HPO_TYPE "}")), &cfg);
    assert_int_equal(cfg.idle_timeout.seconds, 3600);
    xlb_cluster_config_free(&cfg);
    ct_valid(EDS(UPSTREAM("{" HPO_TYPE ",\"common_http_protocol_options\":{}}")), &cfg);
    assert_int_equal(cfg.idle_timeout.seconds, 3600);
    xlb_cluster_config_free(&cfg);
}

/* A75 names upstream_config only: the same options in typed_extension_protocol_options (where
 * Envoy reads them) change nothing. */
static void typed_extension_protocol_options_not_read(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(",\"typed_extension_protocol_options\":{\"envoy.extensions.upstreams.http.v3."
                 "HttpProtocolOptions\":{" HPO_TYPE ",\"common_http_protocol_options\":{"
                 "\"idle_timeout\":\"90s\"}}}"),
             &cfg);
    assert_int_equal(cfg.idle_timeout.seconds, 3600);
    xlb_cluster_config_free(&cfg);
}

/* A17: the first grpc_health_check names the service the subchannels watch; none: no check. */
static void grpc_health_check_names_the_service(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(""), &cfg);
    assert_null(cfg.health_check_service);
    xlb_cluster_config_free(&cfg);
    ct_valid(EDS(",\"health_checks\":[{},{\"grpc_health_check\":{\"service_name\":\"a.B\"}},"
                 "{\"grpc_health_check\":{\"service_name\":\"c.D\"}}]"),
             &cfg);
    assert_string_equal(cfg.health_check_service, "a.B");
    xlb_cluster_config_free(&cfg);
    ct_valid(EDS(",\"health_checks\":[{\"grpc_health_check\":{}}]"), &cfg);
    assert_string_equal(cfg.health_check_service, ""); /* the server as a whole */
    xlb_cluster_config_free(&cfg);
}

static void health_check_service_too_long(void **state)
{
    char name[200], json[512];
    memset(name, 's', 129);
    name[129] = '\0';
    snprintf(json, sizeof(json),
             EDS(",\"health_checks\":[{\"grpc_health_check\":{\"service_name\":\"%s\"}}]"), name);
    ct_expect_nack(json, "cluster \"backend\": health_checks[0].grpc_health_check.service_name: "
                         "129 bytes: xlb sends service names of at most 128 bytes");
}

static void eds_cluster_config_required(void **state)
{
    ct_expect_nack("{\"name\":\"b\",\"type\":\"EDS\"}",
                   "cluster \"b\": eds_cluster_config: field not present");
}

static void eds_config_required(void **state)
{
    ct_expect_nack("{\"name\":\"b\",\"type\":\"EDS\",\"eds_cluster_config\":{}}",
                   "cluster \"b\": eds_cluster_config.eds_config: field not present");
}

static void eds_config_must_be_ads_or_self(void **state)
{
    ct_expect_nack("{\"name\":\"b\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{}}}",
                   "cluster \"b\": eds_cluster_config.eds_config: ConfigSource is not ads or self");
}

static void static_type_rejected(void **state)
{
    ct_expect_nack("{\"name\":\"b\",\"type\":\"STATIC\"}",
                   "cluster \"b\": type: STATIC is not supported");
}

static void missing_type_is_static(void **state)
{
    ct_expect_nack("{\"name\":\"b\"}", "cluster \"b\": type: STATIC is not supported");
}

static void original_dst_rejected(void **state)
{
    ct_expect_nack("{\"name\":\"b\",\"type\":\"ORIGINAL_DST\"}",
                   "cluster \"b\": type: ORIGINAL_DST is not supported");
}

#define DNS(eps)                                                                                   \
    "{\"name\":\"d\",\"type\":\"LOGICAL_DNS\",\"load_assignment\":{\"endpoints\":[" eps "]}}"
#define DNS_EP(sa) "{\"lb_endpoints\":[{\"endpoint\":{\"address\":{\"socket_address\":" sa "}}}]}"

static void logical_dns_valid(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(DNS(DNS_EP("{\"address\":\"backend.example\",\"port_value\":8443}")), &cfg);
    assert_int_equal(cfg.type, XLB_CLUSTER_LOGICAL_DNS);
    assert_string_equal(cfg.dns_host, "backend.example");
    assert_int_equal(cfg.dns_port, 8443);
    assert_null(cfg.eds_service_name);
    xlb_cluster_config_free(&cfg);
}

static void logical_dns_load_assignment_required(void **state)
{
    ct_expect_nack("{\"name\":\"d\",\"type\":\"LOGICAL_DNS\"}",
                   "cluster \"d\": load_assignment: field not present");
}

static void logical_dns_one_locality(void **state)
{
    ct_expect_nack(
        DNS(DNS_EP("{\"address\":\"a\",\"port_value\":1}") "," DNS_EP(
            "{\"address\":\"b\",\"port_value\":1}")),
        "cluster \"d\": load_assignment.endpoints: must contain exactly one locality for "
        "LOGICAL_DNS cluster, found 2");
}

static void logical_dns_one_endpoint(void **state)
{
    ct_expect_nack(DNS("{\"lb_endpoints\":[]}"),
                   "cluster \"d\": load_assignment.endpoints[0].lb_endpoints: must contain exactly "
                   "one endpoint for LOGICAL_DNS cluster, found 0");
}

static void logical_dns_no_resolver_name(void **state)
{
    ct_expect_nack(DNS(DNS_EP("{\"address\":\"a\",\"port_value\":1,\"resolver_name\":\"r\"}")),
                   "cluster \"d\": load_assignment.endpoints[0].lb_endpoints[0].endpoint.address."
                   "socket_address.resolver_name: LOGICAL_DNS clusters must NOT have a custom "
                   "resolver name set");
}

static void logical_dns_port_required(void **state)
{
    ct_expect_nack(DNS(DNS_EP("{\"address\":\"a\"}")),
                   "cluster \"d\": load_assignment.endpoints[0].lb_endpoints[0].endpoint.address."
                   "socket_address.port_value: field not present");
}

static void logical_dns_endpoint_required(void **state)
{
    ct_expect_nack(DNS("{\"lb_endpoints\":[{}]}"),
                   "cluster \"d\": load_assignment.endpoints[0].lb_endpoints[0].endpoint: field "
                   "not present");
}

static void logical_dns_address_required(void **state)
{
    ct_expect_nack(DNS("{\"lb_endpoints\":[{\"endpoint\":{}}]}"),
                   "cluster \"d\": load_assignment.endpoints[0].lb_endpoints[0].endpoint."
                   "address: field not present");
}

static void logical_dns_socket_address_required(void **state)
{
    ct_expect_nack(DNS("{\"lb_endpoints\":[{\"endpoint\":{\"address\":{}}}]}"),
                   "cluster \"d\": load_assignment.endpoints[0].lb_endpoints[0].endpoint."
                   "address.socket_address: field not present");
}

static void logical_dns_host_required(void **state)
{
    ct_expect_nack(DNS(DNS_EP("{\"port_value\":443}")),
                   "cluster \"d\": load_assignment.endpoints[0].lb_endpoints[0].endpoint."
                   "address.socket_address.address: field not present");
}

static void unknown_discovery_type(void **state)
{
    ct_expect_nack("{\"name\":\"b\",\"type\":99}",
                   "cluster \"b\": type: unknown discovery type 99");
}

#define AGG(cfg)                                                                                   \
    "{\"name\":\"agg\",\"cluster_type\":{\"name\":\"envoy.clusters.aggregate\",\"typed_"           \
    "config\":" cfg "}}"
#define AGG_TYPE                                                                                   \
    "\"@type\":\"type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig\""

static void aggregate_valid(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(AGG("{" AGG_TYPE ",\"clusters\":[\"primary\",\"fallback\"]}"), &cfg);
    assert_int_equal(cfg.type, XLB_CLUSTER_AGGREGATE);
    assert_int_equal(cfg.n_aggregate_clusters, 2);
    assert_string_equal(cfg.aggregate_clusters[0], "primary");
    assert_string_equal(cfg.aggregate_clusters[1], "fallback");
    xlb_cluster_config_free(&cfg);
}

static void aggregate_clusters_non_empty(void **state)
{
    ct_expect_nack(AGG("{" AGG_TYPE "}"),
                   "cluster \"agg\": cluster_type.typed_config.value.clusters: must be non-empty");
}

static void aggregate_typed_config_required(void **state)
{
    ct_expect_nack("{\"name\":\"agg\",\"cluster_type\":{\"name\":\"envoy.clusters.aggregate\"}}",
                   "cluster \"agg\": cluster_type.typed_config: field not present");
}

static void custom_cluster_type_unknown(void **state)
{
    ct_expect_nack(AGG("{\"@type\":\"type.googleapis.com/envoy.extensions.filters.http.router.v3."
                       "Router\"}"),
                   "cluster \"agg\": cluster_type.typed_config.type_url: unknown cluster_type "
                   "extension \"envoy.extensions.filters.http.router.v3.Router\"");
}

static void lrs_server_must_be_self(void **state)
{
    ct_expect_nack(EDS(",\"lrs_server\":{\"ads\":{}}"),
                   "cluster \"backend\": lrs_server: ConfigSource is not self");
}

static void outlier_detection_defaults(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(",\"outlier_detection\":{}"), &cfg);
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
    ct_valid(EDS(",\"outlier_detection\":{\"interval\":\"1s\",\"base_ejection_time\":\"2s\","
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
    ct_valid(EDS(",\"outlier_detection\":{\"enforcing_failure_percentage\":1}"), &cfg);
    assert_true(cfg.outlier.failure_percentage_enabled);
    assert_int_equal(cfg.outlier.failure_percentage.threshold, 85);
    assert_int_equal(cfg.outlier.failure_percentage.minimum_hosts, 5);
    assert_int_equal(cfg.outlier.failure_percentage.request_volume, 50);
    xlb_cluster_config_free(&cfg);
}

static void outlier_max_ejection_percent_above_100(void **state)
{
    ct_expect_nack(
        EDS(",\"outlier_detection\":{\"max_ejection_percent\":101}"),
        "cluster \"backend\": outlier_detection.max_ejection_percent: 101 is not in 0..100");
}

static void outlier_enforcing_success_rate_above_100(void **state)
{
    ct_expect_nack(EDS(",\"outlier_detection\":{\"enforcing_success_rate\":150}"),
                   "cluster \"backend\": outlier_detection.enforcing_success_rate: 150 is not in "
                   "0..100");
}

static void outlier_enforcing_failure_percentage_above_100(void **state)
{
    ct_expect_nack(
        EDS(",\"outlier_detection\":{\"enforcing_failure_percentage\":101}"),
        "cluster \"backend\": outlier_detection.enforcing_failure_percentage: 101 is not "
        "in 0..100");
}

static void outlier_failure_threshold_above_100(void **state)
{
    ct_expect_nack(
        EDS(",\"outlier_detection\":{\"enforcing_failure_percentage\":5,"
            "\"failure_percentage_threshold\":200}"),
        "cluster \"backend\": outlier_detection.failure_percentage_threshold: 200 is not "
        "in 0..100");
}

static void outlier_threshold_ignored_when_disabled(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(",\"outlier_detection\":{\"failure_percentage_threshold\":200}"), &cfg);
    assert_false(cfg.outlier.failure_percentage_enabled);
    xlb_cluster_config_free(&cfg);
}

static void outlier_base_ejection_time_invalid(void **state)
{
    ct_expect_nack(EDS(",\"outlier_detection\":{\"base_ejection_time\":\"-2s\"}"),
                   "cluster \"backend\": outlier_detection.base_ejection_time.seconds: -2 is not "
                   "in 0..315576000000");
}

static void outlier_negative_interval(void **state)
{
    ct_expect_nack(EDS(",\"outlier_detection\":{\"interval\":\"-1s\"}"),
                   "cluster \"backend\": outlier_detection.interval.seconds: -1 is not in "
                   "0..315576000000");
}

/* The JSON reader refuses such a Duration; the wire does not, so the message is edited. */
static void outlier_max_ejection_time_too_long(void **state)
{
    Cluster *msg = ct_json(EDS(",\"outlier_detection\":{\"max_ejection_time\":\"1s\"}"));
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
    ct_expect_nack(EDS(UPSTREAM("{" HPO_TYPE ",\"common_http_protocol_options\":{"
                                "\"idle_timeout\":\"-5s\"}}")),
                   "cluster \"backend\": upstream_config.typed_config.value."
                   "common_http_protocol_options.idle_timeout.seconds: -5 is not in "
                   "0..315576000000");
}

/* The JSON reader refuses such a Duration; the wire does not, so the message is edited. */
static void idle_timeout_nanos_invalid(void **state)
{
    Cluster *msg = ct_json(EDS(UPSTREAM("{" HPO_TYPE "}")));
    Envoy__Extensions__Upstreams__Http__V3__HttpProtocolOptions hpo;
    envoy__extensions__upstreams__http__v3__http_protocol_options__init(&hpo);
    Envoy__Config__Core__V3__HttpProtocolOptions common;
    envoy__config__core__v3__http_protocol_options__init(&common);
    Google__Protobuf__Duration idle;
    google__protobuf__duration__init(&idle);
    idle.nanos = 1000000000;
    common.idle_timeout = &idle;
    hpo.common_http_protocol_options = &common;
    uint8_t packed[64];
    size_t len = protobuf_c_message_pack(&hpo.base, packed);
    Google__Protobuf__Any *any = msg->upstream_config->typed_config;
    xv_any_replace(any, any->type_url, packed, len);
    ct_expect_nack_msg(msg, "cluster \"backend\": upstream_config.typed_config.value."
                            "common_http_protocol_options.idle_timeout.nanos: 1000000000 is not "
                            "in 0..999999999");
}

static void upstream_config_must_be_http_protocol_options(void **state)
{
    ct_expect_nack(EDS(UPSTREAM("{\"@type\":\"type.googleapis.com/envoy.config.core.v3."
                                "HttpProtocolOptions\"}")),
                   "cluster \"backend\": upstream_config.typed_config: unsupported upstream "
                   "config type \"envoy.config.core.v3.HttpProtocolOptions\"");
}

static void upstream_config_typed_config_required(void **state)
{
    ct_expect_nack(EDS(",\"upstream_config\":{\"name\":\"u\"}"),
                   "cluster \"backend\": upstream_config.typed_config: field not present");
}

static void upstream_config_undecodable(void **state)
{
    static const uint8_t garbage[] = {0x0a, 0x7f, 0x01};
    Cluster *msg = ct_json(EDS(UPSTREAM("{" HPO_TYPE "}")));
    Google__Protobuf__Any *any = msg->upstream_config->typed_config;
    xv_any_replace(any, any->type_url, garbage, sizeof(garbage));
    ct_expect_nack_msg(msg, "cluster \"backend\": upstream_config.typed_config: could not "
                            "parse HttpProtocolOptions");
}

static void long_name_cut_in_errors(void **state)
{
    char json[512], name[201];
    memset(name, 'n', 200);
    name[200] = '\0';
    snprintf(json, sizeof(json), "{\"name\":\"%s\"}", name);
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(ct_validate(json, &cfg, &errs), -1);
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
        cmocka_unit_test(typed_extension_protocol_options_not_read),
        cmocka_unit_test(grpc_health_check_names_the_service),
        cmocka_unit_test(health_check_service_too_long),
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
        cmocka_unit_test(logical_dns_endpoint_required),
        cmocka_unit_test(logical_dns_address_required),
        cmocka_unit_test(logical_dns_socket_address_required),
        cmocka_unit_test(logical_dns_host_required),
        cmocka_unit_test(unknown_discovery_type),
        cmocka_unit_test(aggregate_valid),
        cmocka_unit_test(aggregate_clusters_non_empty),
        cmocka_unit_test(aggregate_typed_config_required),
        cmocka_unit_test(custom_cluster_type_unknown),
        cmocka_unit_test(lrs_server_must_be_self),
        cmocka_unit_test(outlier_detection_defaults),
        cmocka_unit_test(outlier_detection_all_fields),
        cmocka_unit_test(outlier_failure_percentage_defaults),
        cmocka_unit_test(outlier_max_ejection_percent_above_100),
        cmocka_unit_test(outlier_enforcing_success_rate_above_100),
        cmocka_unit_test(outlier_enforcing_failure_percentage_above_100),
        cmocka_unit_test(outlier_failure_threshold_above_100),
        cmocka_unit_test(outlier_threshold_ignored_when_disabled),
        cmocka_unit_test(outlier_base_ejection_time_invalid),
        cmocka_unit_test(outlier_negative_interval),
        cmocka_unit_test(outlier_max_ejection_time_too_long),
        cmocka_unit_test(idle_timeout_invalid),
        cmocka_unit_test(idle_timeout_nanos_invalid),
        cmocka_unit_test(upstream_config_must_be_http_protocol_options),
        cmocka_unit_test(upstream_config_typed_config_required),
        cmocka_unit_test(upstream_config_undecodable),
        cmocka_unit_test(long_name_cut_in_errors),
    };
    return cmocka_run_group_tests_name("xds_validate_cluster", tests, NULL, NULL);
}
