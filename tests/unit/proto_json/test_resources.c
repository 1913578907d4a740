/*
 * A realistic static_resources document: Listener (HCM with a stateful session filter in its
 * api_listener), RouteConfiguration, Clusters (EDS with ring hash, outlier detection, circuit
 * breakers and idle_timeout; an aggregate) and a ClusterLoadAssignment (two localities, two
 * priorities, drop overloads). The document is written in the printer's canonical form, so the
 * round trip must give it back unchanged.
 */
#include "pj_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envoy/config/cluster/v3/cluster.pb-c.h"
#include "envoy/config/endpoint/v3/endpoint.pb-c.h"
#include "envoy/config/listener/v3/listener.pb-c.h"
#include "envoy/config/route/v3/route.pb-c.h"
#include "envoy/extensions/clusters/aggregate/v3/cluster.pb-c.h"
#include "envoy/extensions/filters/http/stateful_session/v3/stateful_session.pb-c.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb-c.h"
#include "envoy/extensions/http/stateful_session/cookie/v3/cookie.pb-c.h"
#include "envoy/extensions/upstreams/http/v3/http_protocol_options.pb-c.h"

typedef Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpConnectionManager Hcm;
typedef Envoy__Extensions__Filters__Http__StatefulSession__V3__StatefulSession StatefulSession;
typedef Envoy__Extensions__Http__StatefulSession__Cookie__V3__CookieBasedSessionState CookieState;
typedef Envoy__Extensions__Upstreams__Http__V3__HttpProtocolOptions UpstreamOptions;

static cJSON *load_document(void)
{
    const char *dir = getenv("XLB_SOURCE_DIR");
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/unit/proto_json/static_resources.json", dir ? dir : ".");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[65536];
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    return doc;
}

/* Reads doc[key][index] as desc, with the path error lines would use. */
static ProtobufCMessage *read_resource(const cJSON *doc, const char *key, int index,
                                       const ProtobufCMessageDescriptor *desc)
{
    char path[64];
    snprintf(path, sizeof(path), "%s[%d]", key, index);
    struct xlb_errors errs = {0};
    const cJSON *json = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, key), index);
    assert_non_null(json);
    ProtobufCMessage *msg = xlb_proto_json_read(desc, json, path, &errs);
    for (unsigned i = 0; i < errs.n; i++)
        print_message("%s\n", errs.lines[i]);
    assert_int_equal(errs.n, 0);
    assert_non_null(msg);
    return msg;
}

static void check_listener(const cJSON *doc)
{
    Envoy__Config__Listener__V3__Listener *listener =
        (Envoy__Config__Listener__V3__Listener *)read_resource(
            doc, "listeners", 0, &envoy__config__listener__v3__listener__descriptor);
    assert_int_equal(listener->address->socket_address->port_value, 443);
    Hcm *hcm = (Hcm *)unpack_any(
        &listener->api_listener->api_listener->base,
        &envoy__extensions__filters__network__http_connection_manager__v3__http_connection_manager__descriptor);
    assert_string_equal(hcm->rds->route_config_name, "route-main");
    assert_int_equal(hcm->rds->config_source->config_source_specifier_case,
                     ENVOY__CONFIG__CORE__V3__CONFIG_SOURCE__CONFIG_SOURCE_SPECIFIER_ADS);
    assert_int_equal(hcm->n_http_filters, 2);
    assert_true(hcm->http_filters[0]->is_optional);
    assert_int_equal(hcm->common_http_protocol_options->max_stream_duration->seconds, 30);

    StatefulSession *session = (StatefulSession *)unpack_any(
        &hcm->http_filters[0]->typed_config->base,
        &envoy__extensions__filters__http__stateful_session__v3__stateful_session__descriptor);
    CookieState *cookie = (CookieState *)unpack_any(
        &session->session_state->typed_config->base,
        &envoy__extensions__http__stateful_session__cookie__v3__cookie_based_session_state__descriptor);
    assert_string_equal(cookie->cookie->name, "xlb-session");
    assert_int_equal(cookie->cookie->ttl->seconds, 3600);

    protobuf_c_message_free_unpacked(&cookie->base, NULL);
    protobuf_c_message_free_unpacked(&session->base, NULL);
    protobuf_c_message_free_unpacked(&hcm->base, NULL);
    protobuf_c_message_free_unpacked(&listener->base, NULL);
}

static void check_routes(const cJSON *doc)
{
    Envoy__Config__Route__V3__RouteConfiguration *rc =
        (Envoy__Config__Route__V3__RouteConfiguration *)read_resource(
            doc, "route_configurations", 0,
            &envoy__config__route__v3__route_configuration__descriptor);
    Envoy__Config__Route__V3__VirtualHost *vh = rc->virtual_hosts[0];
    assert_int_equal(vh->n_domains, 2);
    Envoy__Config__Route__V3__Route *route = vh->routes[0];
    assert_string_equal(route->match->prefix, "/echo.Echo/");
    assert_false(route->match->case_sensitive->value);
    assert_int_equal(route->match->headers[2]->range_match->end, 9007199254740993LL);
    assert_true(route->match->headers[0]->invert_match);
    assert_int_equal(route->route->weighted_clusters->clusters[1]->weight->value, 10);
    assert_int_equal(
        route->route->hash_policy[1]->policy_specifier_case,
        ENVOY__CONFIG__ROUTE__V3__ROUTE_ACTION__HASH_POLICY__POLICY_SPECIFIER_FILTER_STATE);
    assert_int_equal(route->route->max_stream_duration->max_stream_duration->nanos, 500000000);
    assert_string_equal(vh->routes[1]->route->cluster_header, "x-cluster");
    assert_string_equal(route->typed_per_filter_config[0]->key,
                        "envoy.filters.http.stateful_session");
    protobuf_c_message_free_unpacked(&rc->base, NULL);
}

static void check_clusters(const cJSON *doc)
{
    Envoy__Config__Cluster__V3__Cluster *c = (Envoy__Config__Cluster__V3__Cluster *)read_resource(
        doc, "clusters", 0, &envoy__config__cluster__v3__cluster__descriptor);
    assert_string_equal(c->eds_cluster_config->service_name, "echo-primary-eds");
    assert_int_equal(c->ring_hash_lb_config->minimum_ring_size->value, 1024);
    assert_int_equal(c->ring_hash_lb_config->maximum_ring_size->value, 8388608);
    assert_int_equal(c->outlier_detection->interval->seconds, 10);
    assert_int_equal(c->outlier_detection->enforcing_failure_percentage->value, 0);
    assert_int_equal(c->circuit_breakers->thresholds[0]->max_requests->value, 1000);
    assert_int_equal(c->common_lb_config->override_host_status->n_statuses, 3);
    UpstreamOptions *options = (UpstreamOptions *)unpack_any(
        &c->upstream_config->typed_config->base,
        &envoy__extensions__upstreams__http__v3__http_protocol_options__descriptor);
    assert_int_equal(options->common_http_protocol_options->idle_timeout->seconds, 600);
    protobuf_c_message_free_unpacked(&options->base, NULL);
    protobuf_c_message_free_unpacked(&c->base, NULL);

    c = (Envoy__Config__Cluster__V3__Cluster *)read_resource(
        doc, "clusters", 1, &envoy__config__cluster__v3__cluster__descriptor);
    Envoy__Extensions__Clusters__Aggregate__V3__ClusterConfig *aggregate =
        (Envoy__Extensions__Clusters__Aggregate__V3__ClusterConfig *)unpack_any(
            &c->cluster_type->typed_config->base,
            &envoy__extensions__clusters__aggregate__v3__cluster_config__descriptor);
    assert_int_equal(aggregate->n_clusters, 2);
    assert_string_equal(aggregate->clusters[1], "echo-canary");
    protobuf_c_message_free_unpacked(&aggregate->base, NULL);
    protobuf_c_message_free_unpacked(&c->base, NULL);
}

static void check_endpoints(const cJSON *doc)
{
    Envoy__Config__Endpoint__V3__ClusterLoadAssignment *cla =
        (Envoy__Config__Endpoint__V3__ClusterLoadAssignment *)read_resource(
            doc, "cluster_load_assignments", 0,
            &envoy__config__endpoint__v3__cluster_load_assignment__descriptor);
    assert_int_equal(cla->n_endpoints, 2);
    assert_int_equal(cla->endpoints[0]->priority, 0);
    assert_int_equal(cla->endpoints[1]->priority, 1);
    assert_string_equal(cla->endpoints[1]->locality->sub_zone, "rack-7");
    assert_int_equal(cla->endpoints[0]->lb_endpoints[1]->health_status,
                     ENVOY__CONFIG__CORE__V3__HEALTH_STATUS__DRAINING);
    assert_string_equal(
        cla->endpoints[0]->lb_endpoints[1]->endpoint->address->socket_address->address,
        "2001:2::1:2");
    assert_int_equal(cla->policy->n_drop_overloads, 2);
    assert_int_equal(cla->policy->drop_overloads[1]->drop_percentage->denominator,
                     ENVOY__TYPE__V3__FRACTIONAL_PERCENT__DENOMINATOR_TYPE__MILLION);
    protobuf_c_message_free_unpacked(&cla->base, NULL);
}

static void test_realistic_document(void **state)
{
    cJSON *doc = load_document();
    check_listener(doc);
    check_routes(doc);
    check_clusters(doc);
    check_endpoints(doc);
    cJSON_Delete(doc);
}

/* JSON -> message -> binary -> message -> JSON gives every resource back unchanged. */
static void test_document_round_trip(void **state)
{
    static const struct {
        const char *key;
        const ProtobufCMessageDescriptor *desc;
    } kinds[] = {
        {"listeners", &envoy__config__listener__v3__listener__descriptor},
        {"route_configurations", &envoy__config__route__v3__route_configuration__descriptor},
        {"clusters", &envoy__config__cluster__v3__cluster__descriptor},
        {"cluster_load_assignments",
         &envoy__config__endpoint__v3__cluster_load_assignment__descriptor},
    };
    cJSON *doc = load_document();
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        const cJSON *resource;
        cJSON_ArrayForEach(resource, cJSON_GetObjectItem(doc, kinds[k].key)) {
            char *text = cJSON_PrintUnformatted(resource);
            expect_round_trip(kinds[k].desc, text, text);
            free(text);
        }
    }
    cJSON_Delete(doc);
}

const struct CMUnitTest resources_tests[] = {
    cmocka_unit_test(test_realistic_document),
    cmocka_unit_test(test_document_round_trip),
};
const size_t resources_tests_count = sizeof(resources_tests) / sizeof(resources_tests[0]);
