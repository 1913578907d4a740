/*
 * xds.config.resource-in-sotw: a state-of-the-world response may carry each resource wrapped
 * in an envoy.service.discovery.v3.Resource. The client unwraps it, names it by the wrapper's
 * name when there is one, and NACKs a wrapper that holds nothing or a resource of another type.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ads_test.h"

#define RESOURCE_URL "type.googleapis.com/envoy.service.discovery.v3.Resource"

/* A wrapper named name (none when NULL) around a resource given as proto3 JSON fields. */
static Google__Protobuf__Any *wrapped(const char *name, const char *type_url, const char *fields)
{
    char json[1024];
    snprintf(json, sizeof(json), "{%s%s%s\"resource\":{\"@type\":\"%s\",%s}}",
             name ? "\"name\":\"" : "", name ? name : "", name ? "\"," : "", type_url, fields);
    return ads_any(RESOURCE_URL, json);
}

#define CLUSTER_FIELDS(n)                                                                          \
    "\"name\":\"" n "\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}}"

static struct ads_fixture *connected(void)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_CDS, "c1");
    ads_watch(f, XLB_XDS_CDS, "c2");
    ads_start(f, 1);
    fake_ready(fake_channel(0));
    return f;
}

static const char *last_error_detail(void)
{
    return ads_error_detail(fake_last_request(ads_stream()));
}

static void wrapped_resource_is_accepted(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {wrapped("c1", CDS_URL, CLUSTER_FIELDS("c1"))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 1);
    assert_null(last_error_detail());
    assert_string_equal(fake_last_request(ads_stream())->version_info, "1");
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c1")->state, XLB_RES_ACKED);
    ads_fixture_free(f);
}

/* The wrapper's name is the resource's name; without one, the resource's own. */
static void wrapper_name_takes_precedence(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {wrapped("c2", CDS_URL, CLUSTER_FIELDS("other")),
                                  wrapped(NULL, CDS_URL, CLUSTER_FIELDS("c1"))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 2);
    assert_null(last_error_detail());
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c1")->state, XLB_RES_ACKED);
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c2")->state, XLB_RES_ACKED);
    ads_fixture_free(f);
}

static void wrapped_resource_of_another_type_is_nacked(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {wrapped("c1", LDS_URL, "\"name\":\"c1\""),
                                  ads_any(CDS_URL, CLUSTER("c2"))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 2);
    assert_non_null(last_error_detail());
    assert_string_equal(last_error_detail(),
                        "resources[0]: Resource wrapper holds type "
                        "type.googleapis.com/envoy.config.listener.v3.Listener in a response of "
                        "type type.googleapis.com/envoy.config.cluster.v3.Cluster");
    assert_string_equal(fake_last_request(ads_stream())->version_info, "");
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c2")->state, XLB_RES_ACKED);
    /* Named by its wrapper, c1 was in the response: not deleted as absent, still awaited. */
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c1")->state, XLB_RES_REQUESTED);
    ads_fixture_free(f);
}

static void wrapper_without_a_resource_is_nacked(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {ads_any(RESOURCE_URL, "{\"name\":\"c1\"}")};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 1);
    assert_non_null(last_error_detail());
    assert_string_equal(last_error_detail(), "resources[0]: Resource wrapper without a resource");
    ads_fixture_free(f);
}

static void wrapper_that_does_not_decode_is_nacked(void **state)
{
    static const uint8_t garbage[] = {0x12, 0x7f, 'x'};
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {ads_raw_any(RESOURCE_URL, garbage, sizeof(garbage))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 1);
    assert_non_null(last_error_detail());
    assert_string_equal(last_error_detail(),
                        "resources[0]: cannot be decoded as a Resource wrapper");
    ads_fixture_free(f);
}

/* Wrapped and plain resources in one response; LDS/CDS deletion still sees both. */
static void mixed_wrapped_and_plain(void **state)
{
    struct ads_fixture *f = connected();
    Google__Protobuf__Any *r[] = {ads_any(CDS_URL, CLUSTER("c1")),
                                  wrapped("c2", CDS_URL, CLUSTER_FIELDS("c2"))};
    ads_respond(ads_stream(), CDS_URL, "1", "n1", r, 2);
    assert_null(last_error_detail());
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c1")->state, XLB_RES_ACKED);
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "c2")->state, XLB_RES_ACKED);

    /* The same name plain and wrapped is one resource twice. */
    Google__Protobuf__Any *twice[] = {ads_any(CDS_URL, CLUSTER("c1")),
                                      wrapped("c1", CDS_URL, CLUSTER_FIELDS("c1")),
                                      ads_any(CDS_URL, CLUSTER("c2"))};
    ads_respond(ads_stream(), CDS_URL, "2", "n2", twice, 3);
    assert_non_null(last_error_detail());
    assert_string_equal(last_error_detail(),
                        "resources[1]: cluster \"c1\" appears twice in one response");

    /* A wrapped resource that fails validation is NACKed like a plain one; its error is the
     * one config dump shows, and its previous value stays. */
    Google__Protobuf__Any *bad[] = {
        wrapped("c1", CDS_URL,
                "\"name\":\"c1\",\"type\":\"EDS\",\"lb_policy\":\"RING_HASH\","
                "\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}},"
                "\"ring_hash_lb_config\":{\"minimum_ring_size\":0}"),
        ads_any(CDS_URL, CLUSTER("c2"))};
    ads_respond(ads_stream(), CDS_URL, "3", "n3", bad, 2);
    const struct xlb_xds_resource *c1 = ads_resource(f, XLB_XDS_CDS, "c1");
    assert_int_equal(c1->state, XLB_RES_NACKED);
    assert_true(c1->has_value);
    assert_non_null(c1->error);
    assert_non_null(strstr(c1->error, "minimum_ring_size"));
    assert_non_null(strstr(last_error_detail(), "cluster \"c1\""));
    ads_fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrapped_resource_is_accepted),
        cmocka_unit_test(wrapper_name_takes_precedence),
        cmocka_unit_test(wrapped_resource_of_another_type_is_nacked),
        cmocka_unit_test(wrapper_without_a_resource_is_nacked),
        cmocka_unit_test(wrapper_that_does_not_decode_is_nacked),
        cmocka_unit_test(mixed_wrapped_and_plain),
    };
    return cmocka_run_group_tests_name("ads_wrapped", tests, NULL, NULL);
}
