/*
 * test_lrs_messages.c: the first request and the server's responses, without a network.
 * Shares the reports' test binary (test_lrs_client.c, which owns main).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "envoy/service/load_stats/v3/lrs.pb-c.h"
#include "lrs_internal.h"
#include "lrs_test.h"
#include "xlb_const.h"

typedef Envoy__Service__LoadStats__V3__LoadStatsRequest lrs_request;

static void free_request(lrs_request *req)
{
    envoy__service__load_stats__v3__load_stats_request__free_unpacked(req, NULL);
}

/* ---- the first request ---- */

static Envoy__Config__Core__V3__Node *initial_node(const Envoy__Config__Core__V3__Node *node,
                                                   lrs_request **req)
{
    uint8_t *buf;
    size_t len;
    assert_int_equal(xlb_lrs_initial_request(node, &buf, &len), 0);
    *req = envoy__service__load_stats__v3__load_stats_request__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(*req);
    assert_int_equal((*req)->n_cluster_stats, 0);
    assert_non_null((*req)->node);
    return (*req)->node;
}

static void test_initial_request(void **state)
{
    Envoy__Config__Core__V3__Locality loc;
    envoy__config__core__v3__locality__init(&loc);
    loc.zone = XLB_STR("z1");
    Envoy__Config__Core__V3__Node node;
    envoy__config__core__v3__node__init(&node);
    node.id = XLB_STR("xlb-1");
    node.cluster = XLB_STR("gw");
    node.locality = &loc;
    node.user_agent_name = XLB_STR("xlb");
    char *features[] = {XLB_STR("xds.config.resource-in-sotw")};
    node.client_features = features;
    node.n_client_features = 1;
    lrs_request *req;
    Envoy__Config__Core__V3__Node *n = initial_node(&node, &req);
    assert_string_equal(n->id, "xlb-1");
    assert_string_equal(n->cluster, "gw");
    assert_string_equal(n->locality->zone, "z1");
    assert_string_equal(n->user_agent_name, "xlb");
    assert_int_equal(n->n_client_features, 2);
    assert_string_equal(n->client_features[0], "xds.config.resource-in-sotw");
    assert_string_equal(n->client_features[1], XLB_LRS_FEATURE_SEND_ALL);
    free_request(req);

    char *with[] = {XLB_STR(XLB_LRS_FEATURE_SEND_ALL)};
    node.client_features = with;
    n = initial_node(&node, &req);
    assert_int_equal(n->n_client_features, 1); /* not added twice */
    free_request(req);
}

/* ---- the server's answers ---- */

static int parse(Google__Protobuf__Duration *interval, bool all, char **clusters, size_t n,
                 struct xlb_lrs_settings *out, char *why)
{
    Envoy__Service__LoadStats__V3__LoadStatsResponse resp;
    envoy__service__load_stats__v3__load_stats_response__init(&resp);
    resp.load_reporting_interval = interval;
    resp.send_all_clusters = all;
    resp.clusters = clusters;
    resp.n_clusters = n;
    uint8_t *buf;
    size_t len;
    assert_int_equal(xlb_lrs_pack(&resp.base, &buf, &len), 0);
    int rc = xlb_lrs_response_parse(buf, len, XLB_LRS_MIN_INTERVAL_MS, out, why, 200);
    free(buf);
    return rc;
}

static Google__Protobuf__Duration duration(int64_t seconds, int32_t nanos)
{
    Google__Protobuf__Duration d;
    google__protobuf__duration__init(&d);
    d.seconds = seconds;
    d.nanos = nanos;
    return d;
}

static void test_response_clusters_and_interval(void **state)
{
    struct xlb_lrs_settings s;
    char why[200];
    Google__Protobuf__Duration d = duration(2, 500000000);
    char *names[] = {XLB_STR("zeta"), XLB_STR(""), XLB_STR("alpha"), XLB_STR("zeta")};
    assert_int_equal(parse(&d, false, names, 4, &s, why), 0);
    assert_false(s.send_all);
    assert_false(s.clamped);
    assert_int_equal(s.interval_ms, 2500);
    assert_int_equal(s.n_clusters, 2); /* empty and repeated names dropped */
    assert_string_equal(s.clusters[0], "alpha");
    assert_string_equal(s.clusters[1], "zeta");
    assert_true(xlb_lrs_settings_wants(&s, "zeta"));
    assert_false(xlb_lrs_settings_wants(&s, "beta"));
    xlb_lrs_settings_free(&s);

    d = duration(10, 1); /* sub-millisecond rest rounds up */
    assert_int_equal(parse(&d, true, names, 4, &s, why), 0);
    assert_true(s.send_all);
    assert_int_equal(s.n_clusters, 0);
    assert_true(xlb_lrs_settings_wants(&s, "anything"));
    assert_int_equal(s.interval_ms, 10001);
    xlb_lrs_settings_free(&s);
}

static void test_response_interval_clamped(void **state)
{
    struct xlb_lrs_settings s;
    char why[200];
    Google__Protobuf__Duration d = duration(0, 300000000);
    assert_int_equal(parse(&d, true, NULL, 0, &s, why), 0);
    assert_int_equal(s.interval_ms, XLB_LRS_MIN_INTERVAL_MS);
    assert_true(s.clamped);
    xlb_lrs_settings_free(&s);
    d = duration(0, 0);
    assert_int_equal(parse(&d, true, NULL, 0, &s, why), 0);
    assert_int_equal(s.interval_ms, XLB_LRS_MIN_INTERVAL_MS);
    xlb_lrs_settings_free(&s);
    assert_int_equal(parse(NULL, true, NULL, 0, &s, why), 0); /* no interval at all */
    assert_int_equal(s.interval_ms, XLB_LRS_MIN_INTERVAL_MS);
    assert_true(s.clamped);
    xlb_lrs_settings_free(&s);
}

static void expect_rejected(Google__Protobuf__Duration d, const char *reason)
{
    struct xlb_lrs_settings s = {.interval_ms = 7};
    char why[200] = "";
    assert_int_equal(parse(&d, true, NULL, 0, &s, why), -1);
    assert_non_null(strstr(why, reason));
    assert_int_equal(s.interval_ms, 7); /* untouched */
}

static void test_response_malformed(void **state)
{
    expect_rejected(duration(-1, 0), "negative");
    expect_rejected(duration(0, -5), "negative");
    expect_rejected(duration(1, 1000000000), "nanos out of range");
    expect_rejected(duration(86401, 0), "above");
    expect_rejected(duration(INT64_MAX, 0), "above");

    struct xlb_lrs_settings s;
    char why[200];
    static const uint8_t garbage[] = {0x0a, 0x7f, 'x'}; /* a string longer than the message */
    assert_int_equal(xlb_lrs_response_parse(garbage, sizeof(garbage), 1000, &s, why, sizeof(why)),
                     -1);
    assert_non_null(strstr(why, "undecodable"));
    static const uint8_t wrong_type[] = {0x20, 0x01, 0x12, 0x02, 0x08}; /* truncated Duration */
    assert_int_equal(
        xlb_lrs_response_parse(wrong_type, sizeof(wrong_type), 1000, &s, why, sizeof(why)), -1);
}

int lrs_message_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_request),
        cmocka_unit_test(test_response_clusters_and_interval),
        cmocka_unit_test(test_response_interval_clamped),
        cmocka_unit_test(test_response_malformed),
    };
    return cmocka_run_group_tests_name("lrs messages", tests, NULL, NULL);
}
