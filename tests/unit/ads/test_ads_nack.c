/*
 * The ADS client's response rules, one test per rule: every problem of a response goes into
 * one NACK (previous version, the response's nonce, an error_detail naming the resource and
 * the rule, problems joined with "; "), while its valid resources still apply (A46). The rules
 * of the resources themselves are tests/unit/xds's.
 */
#include <stdlib.h>
#include <string.h>

#include "ads_test.h"

/* Two watched clusters, c1 and c2, on a connected stream. */
static struct ads_fixture *connected(void)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_CDS, "c1");
    ads_watch(f, XLB_XDS_CDS, "c2");
    ads_start(f, 1);
    fake_ready(fake_channel(0));
    return f;
}

/* The client's answer to the last response must be a NACK with this version, nonce and
 * error_detail. */
static void expect_nack(const char *version, const char *nonce, const char *error)
{
    const DiscoveryRequest *req = fake_last_request(ads_stream());
    assert_string_equal(req->type_url, CDS_URL);
    assert_string_equal(req->version_info, version);
    assert_string_equal(req->response_nonce, nonce);
    assert_non_null(ads_error_detail(req));
    assert_string_equal(ads_error_detail(req), error);
    assert_int_equal(req->error_detail->code, 3); /* INVALID_ARGUMENT */
}

static void expect_ack(const char *version, const char *nonce)
{
    const DiscoveryRequest *req = fake_last_request(ads_stream());
    assert_string_equal(req->version_info, version);
    assert_string_equal(req->response_nonce, nonce);
    assert_null(ads_error_detail(req));
}

static void resource_of_another_type(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {ads_raw_any(LDS_URL, "", 0), ads_any(CDS_URL, CLUSTER("c1"))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 2);
    expect_nack("", "n1",
                "resources[0]: type type.googleapis.com/envoy.config.listener.v3.Listener in a "
                "response of type type.googleapis.com/envoy.config.cluster.v3.Cluster");
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c1")->state, XLB_RES_ACKED);
    ads_fixture_free(f);
}

static void resource_that_does_not_decode(void **state)
{
    static const uint8_t garbage[] = {0x0a, 0x7f, 'c'};
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {ads_raw_any(CDS_URL, garbage, sizeof(garbage))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 1);
    expect_nack("", "n1", "resources[0]: cannot be decoded as cluster");
    ads_fixture_free(f);
}

static void resource_without_a_name(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {ads_any(CDS_URL, "{\"type\":\"EDS\"}")};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 1);
    expect_nack("", "n1", "resources[0]: cluster without a name");
    ads_fixture_free(f);
}

static void same_name_twice_in_one_response(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {ads_any(CDS_URL, CLUSTER("c1")), ads_any(CDS_URL, CLUSTER("c1"))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 2);
    expect_nack("", "n1", "resources[1]: cluster \"c1\" appears twice in one response");
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c1")->state, XLB_RES_ACKED);
    ads_fixture_free(f);
}

static void invalid_resource_keeps_the_previous_version(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *v1[] = {ads_any(CDS_URL, CLUSTER("c1")),
                                   ads_any(CDS_URL, CLUSTER("c2"))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", v1, 2);
    expect_ack("1", "n1");
    Google__Protobuf__Any *v2[] = {ads_any(CDS_URL, "{\"name\":\"c1\"}"),
                                   ads_any(CDS_URL, CLUSTER("c2"))};
    ads_respond(ads_stream(), CDS_URL, "2", "n2", v2, 2);
    expect_nack("1", "n2", "cluster \"c1\": type: STATIC is not supported");
    const struct xlb_xds_resource *c1 = ads_resource(f, XLB_XDS_CDS, "c1");
    assert_int_equal(c1->state, XLB_RES_NACKED);
    assert_true(c1->has_value); /* version 1's value keeps serving */
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c2")->state, XLB_RES_ACKED);

    cJSON *status = xlb_ads_client_status(f->client);
    const cJSON *last = cJSON_GetArrayItem(cJSON_GetObjectItem(status, "nack_history"), 0);
    assert_string_equal(cJSON_GetObjectItem(last, "version")->valuestring, "2");
    assert_string_equal(cJSON_GetObjectItem(last, "error")->valuestring,
                        "cluster \"c1\": type: STATIC is not supported");
    cJSON_Delete(status);
    ads_fixture_free(f);
}

static void every_problem_in_one_error_detail(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {ads_any(CDS_URL, "{\"type\":\"EDS\"}"),
                                  ads_any(CDS_URL, "{\"name\":\"c2\"}")};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 2);
    expect_nack("", "n1",
                "resources[0]: cluster without a name; cluster \"c2\": type: STATIC is not "
                "supported");
    ads_fixture_free(f);
}

static void resource_not_asked_for_is_ignored(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {ads_any(CDS_URL, CLUSTER("c1")), ads_any(CDS_URL, CLUSTER("c9"))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 2);
    expect_ack("1", "n1");
    assert_null(xlb_xds_cache_find(&f->cache, XLB_XDS_CDS, "c9"));
    ads_fixture_free(f);
}

static void response_of_unknown_type_is_ignored(void **state)
{
    struct ads_fixture *f = connected();
    size_t sent = ads_stream()->n_requests;
    ads_respond(ads_stream(), "type.googleapis.com/example.Unknown", "1", "n1", NULL, 0);
    assert_int_equal(ads_stream()->n_requests, sent);
    ads_fixture_free(f);
}

/* Garbage instead of a DiscoveryResponse is no answer: the stream ends, and the client comes
 * back after a backoff delay, not at once. */
static void undecodable_response_ends_the_stream(void **state)
{
    static const uint8_t garbage[] = {0x12, 0x7f};
    struct ads_fixture *f = connected();
    fake_deliver_bytes(ads_stream(), garbage, sizeof(garbage));
    assert_true(ads_stream()->cancelled);
    fake_advance(0);
    assert_int_equal(fake_n_channels(), 1);
    fake_advance(1200);
    assert_int_equal(fake_n_channels(), 2);
    assert_true(fake_channel(1)->created_ms >= 1800);
    ads_fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resource_of_another_type),
        cmocka_unit_test(resource_that_does_not_decode),
        cmocka_unit_test(resource_without_a_name),
        cmocka_unit_test(same_name_twice_in_one_response),
        cmocka_unit_test(invalid_resource_keeps_the_previous_version),
        cmocka_unit_test(every_problem_in_one_error_detail),
        cmocka_unit_test(resource_not_asked_for_is_ignored),
        cmocka_unit_test(response_of_unknown_type_is_ignored),
        cmocka_unit_test(undecodable_response_ends_the_stream),
    };
    return cmocka_run_group_tests_name("ads_nack", tests, NULL, NULL);
}
