/*
 * xlb.static_resources (control/xds/static_resources.c): the errors of the loader itself, one
 * line each naming the JSON path; the valid resources of the same document load all the same.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "static_resources.h"

#define CLUSTER(n)                                                                                 \
    "{\"name\":\"" n "\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}}}"

/* Load the document; exactly one error line, this one, and rc -1. */
static void expect_one_error(const char *json, const char *line, struct xlb_xds_cache *cache)
{
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_static_resources_load(cache, doc, &errs), -1);
    cJSON_Delete(doc);
    assert_int_equal(errs.n, 1);
    assert_string_equal(errs.lines[0], line);
    xlb_errors_free(&errs);
}

static void resource_defined_twice(void **state)
{
    struct xlb_xds_cache cache;
    xlb_xds_cache_init(&cache);
    expect_one_error("{\"clusters\":[" CLUSTER("c") "," CLUSTER("c") "]}",
                     "xlb.static_resources.clusters[1]: cluster \"c\" is defined twice", &cache);
    const struct xlb_xds_resource *r = xlb_xds_cache_find(&cache, XLB_XDS_CDS, "c");
    assert_non_null(r); /* the first one stays */
    assert_int_equal(r->state, XLB_RES_STATIC);
    xlb_xds_cache_free(&cache);
}

static void listener_needs_a_name(void **state)
{
    struct xlb_xds_cache cache;
    xlb_xds_cache_init(&cache);
    expect_one_error("{\"listeners\":[{\"api_listener\":{}}],\"clusters\":[" CLUSTER("ok") "]}",
                     "xlb.static_resources.listeners[0]: needs a \"name\"", &cache);
    assert_non_null(xlb_xds_cache_find(&cache, XLB_XDS_CDS, "ok"));
    xlb_xds_cache_free(&cache);
}

/* Endpoints are named by cluster_name; an empty one is no name. */
static void endpoints_need_a_cluster_name(void **state)
{
    struct xlb_xds_cache cache;
    xlb_xds_cache_init(&cache);
    expect_one_error("{\"endpoints\":[{\"cluster_name\":\"\"}]}",
                     "xlb.static_resources.endpoints[0]: needs a \"cluster_name\"", &cache);
    xlb_xds_cache_free(&cache);
}

/* The cluster "name" of the cache, loaded and valid. */
static const struct xlb_cluster_config *loaded_cluster(const struct xlb_xds_cache *cache,
                                                       const char *name)
{
    const struct xlb_xds_resource *r = xlb_xds_cache_find(cache, XLB_XDS_CDS, name);
    assert_non_null(r);
    assert_int_equal(r->state, XLB_RES_STATIC);
    assert_true(r->has_value);
    return &r->value.cluster;
}

/*
 * Least request (A48) from static JSON as over ADS: lb_policy LEAST_REQUEST keeps its
 * least_request_lb_config.choice_count, and a load_balancing_policy may name the LeastRequest
 * extension by its @type (both were once dropped or refused by the JSON reader).
 */
static void least_request_from_json(void **state)
{
    static const char doc[] =
        "{\"clusters\":[{\"name\":\"enum\",\"type\":\"EDS\","
        "\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}},"
        "\"lb_policy\":\"LEAST_REQUEST\",\"least_request_lb_config\":{\"choice_count\":3}},"
        "{\"name\":\"policy\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":"
        "{\"ads\":{}}},\"load_balancing_policy\":{\"policies\":[{\"typed_extension_config\":"
        "{\"name\":\"lr\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
        "envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest\","
        "\"choice_count\":3}}}]}}]}";
    struct xlb_xds_cache cache;
    xlb_xds_cache_init(&cache);
    cJSON *json = cJSON_Parse(doc);
    assert_non_null(json);
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_static_resources_load(&cache, json, &errs), 0);
    cJSON_Delete(json);
    assert_int_equal(errs.n, 0);
    for (int i = 0; i < 2; i++) {
        const struct xlb_cluster_config *c = loaded_cluster(&cache, i ? "policy" : "enum");
        assert_int_equal(c->lb_policy, XLB_LB_LEAST_REQUEST);
        assert_int_equal(c->choice_count, 3);
    }
    xlb_xds_cache_free(&cache);
}

/* Pick first (A62) named by its @type in static JSON, with shuffle_address_list. */
static void pick_first_from_json(void **state)
{
    static const char doc[] =
        "{\"clusters\":[{\"name\":\"pf\",\"type\":\"EDS\",\"eds_cluster_config\":"
        "{\"eds_config\":{\"ads\":{}}},\"load_balancing_policy\":{\"policies\":["
        "{\"typed_extension_config\":{\"name\":\"pf\",\"typed_config\":{\"@type\":"
        "\"type.googleapis.com/envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst\","
        "\"shuffle_address_list\":true}}}]}}]}";
    struct xlb_xds_cache cache;
    xlb_xds_cache_init(&cache);
    cJSON *json = cJSON_Parse(doc);
    assert_non_null(json);
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_static_resources_load(&cache, json, &errs), 0);
    cJSON_Delete(json);
    assert_int_equal(errs.n, 0);
    const struct xlb_cluster_config *c = loaded_cluster(&cache, "pf");
    assert_int_equal(c->lb_policy, XLB_LB_PICK_FIRST);
    assert_true(c->shuffle_address_list);
    xlb_xds_cache_free(&cache);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resource_defined_twice),        cmocka_unit_test(listener_needs_a_name),
        cmocka_unit_test(endpoints_need_a_cluster_name), cmocka_unit_test(least_request_from_json),
        cmocka_unit_test(pick_first_from_json),
    };
    return cmocka_run_group_tests_name("static_resources", tests, NULL, NULL);
}
