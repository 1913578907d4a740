/*
 * Deletion in state-of-the-world responses: LDS and CDS responses list every resource, so a
 * subscribed listener or cluster missing from one is deleted (does not exist), unless the
 * server has ignore_resource_deletion and a value is cached; RDS and EDS responses need not
 * list everything, so a missing resource keeps its value.
 */
#include <stdlib.h>
#include <string.h>

#include "ads_test.h"

#define RDS_URL "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
#define LISTENER(n)                                                                                \
    "{\"name\":\"" n "\",\"api_listener\":{\"api_listener\":{\"@type\":\"type.googleapis.com/"     \
    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\","         \
    "\"rds\":{\"config_source\":{\"ads\":{}},\"route_config_name\":\"routes\"},"                   \
    "\"http_filters\":[{\"name\":\"router\",\"typed_config\":{\"@type\":\"type.googleapis.com/"    \
    "envoy.extensions.filters.http.router.v3.Router\"}}]}}}"
#define ROUTES(n) "{\"name\":\"" n "\"}"

/* Two watched resources of a type, both answered in version 1. */
static struct ads_fixture *both_cached(bool ignore_deletion, enum xlb_xds_type type,
                                       const char *url, const char *json1, const char *json2)
{
    struct ads_fixture *f = ads_fixture_new();
    f->ignore_resource_deletion = ignore_deletion;
    ads_watch(f, type, "a");
    ads_watch(f, type, "b");
    ads_start(f, 1);
    fake_ready(fake_channel(0));
    Google__Protobuf__Any *r[] = {ads_any(url, json1), ads_any(url, json2)};
    ads_respond(ads_stream(), url, "1", "n1", r, 2);
    assert_null(ads_error_detail(fake_last_request(ads_stream())));
    assert_int_equal(ads_resource(f, type, "a")->state, XLB_RES_ACKED);
    assert_int_equal(ads_resource(f, type, "b")->state, XLB_RES_ACKED);
    return f;
}

/* Version 2 lists "a" alone. */
static void answer_a_alone(const char *url, const char *json1)
{
    Google__Protobuf__Any *r[] = {ads_any(url, json1)};
    ads_respond(ads_stream(), url, "2", "n2", r, 1);
    assert_null(ads_error_detail(fake_last_request(ads_stream())));
}

static void listener_missing_from_lds_is_deleted(void **state)
{
    struct ads_fixture *f = both_cached(false, XLB_XDS_LDS, LDS_URL, LISTENER("a"), LISTENER("b"));
    answer_a_alone(LDS_URL, LISTENER("a"));
    assert_int_equal(ads_resource(f, XLB_XDS_LDS, "a")->state, XLB_RES_ACKED);
    assert_int_equal(ads_resource(f, XLB_XDS_LDS, "b")->state, XLB_RES_DOES_NOT_EXIST);
    ads_fixture_free(f);
}

static void cluster_missing_from_cds_is_deleted(void **state)
{
    struct ads_fixture *f = both_cached(false, XLB_XDS_CDS, CDS_URL, CLUSTER("a"), CLUSTER("b"));
    answer_a_alone(CDS_URL, CLUSTER("a"));
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "b")->state, XLB_RES_DOES_NOT_EXIST);
    assert_false(ads_resource(f, XLB_XDS_CDS, "b")->has_value);
    ads_fixture_free(f);
}

static void ignore_resource_deletion_keeps_the_cluster(void **state)
{
    struct ads_fixture *f = both_cached(true, XLB_XDS_CDS, CDS_URL, CLUSTER("a"), CLUSTER("b"));
    answer_a_alone(CDS_URL, CLUSTER("a"));
    assert_int_equal(ads_resource(f, XLB_XDS_CDS, "b")->state, XLB_RES_ACKED);
    assert_true(ads_resource(f, XLB_XDS_CDS, "b")->has_value);
    ads_fixture_free(f);
}

static void ignore_resource_deletion_keeps_the_listener(void **state)
{
    struct ads_fixture *f = both_cached(true, XLB_XDS_LDS, LDS_URL, LISTENER("a"), LISTENER("b"));
    answer_a_alone(LDS_URL, LISTENER("a"));
    assert_int_equal(ads_resource(f, XLB_XDS_LDS, "b")->state, XLB_RES_ACKED);
    ads_fixture_free(f);
}

static void route_configuration_missing_from_rds_is_kept(void **state)
{
    struct ads_fixture *f = both_cached(false, XLB_XDS_RDS, RDS_URL, ROUTES("a"), ROUTES("b"));
    answer_a_alone(RDS_URL, ROUTES("a"));
    assert_int_equal(ads_resource(f, XLB_XDS_RDS, "b")->state, XLB_RES_ACKED);
    assert_true(ads_resource(f, XLB_XDS_RDS, "b")->has_value);
    ads_fixture_free(f);
}

static void assignment_missing_from_eds_is_kept(void **state)
{
    struct ads_fixture *f = both_cached(false, XLB_XDS_EDS, EDS_URL, CLA("a"), CLA("b"));
    answer_a_alone(EDS_URL, CLA("a"));
    assert_int_equal(ads_resource(f, XLB_XDS_EDS, "b")->state, XLB_RES_ACKED);
    assert_true(ads_resource(f, XLB_XDS_EDS, "b")->has_value);
    ads_fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(listener_missing_from_lds_is_deleted),
        cmocka_unit_test(cluster_missing_from_cds_is_deleted),
        cmocka_unit_test(ignore_resource_deletion_keeps_the_cluster),
        cmocka_unit_test(ignore_resource_deletion_keeps_the_listener),
        cmocka_unit_test(route_configuration_missing_from_rds_is_kept),
        cmocka_unit_test(assignment_missing_from_eds_is_kept),
    };
    return cmocka_run_group_tests_name("ads_deletion", tests, NULL, NULL);
}
