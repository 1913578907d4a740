/*
 * Dependency manager, L7 VIPs: the LDS -> RDS -> CDS -> EDS chain, warming, errors local to a
 * cluster, NACKs, watch-set changes, shared clusters and change fingerprints. Every scenario
 * feeds the cache step by step and checks the watch set and the VIP after each step.
 */
#include "dm_test.h"

#include <string.h>

static void full_chain_warms_then_ready(void **state)
{
    struct dm_fixture *f = *state;
    assert_int_equal(xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "svc"), 0);
    dm_step(f);
    dm_expect_watched(f, "lds:svc");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for listener \"svc\"");

    dm_put_listener(f, "svc", "r1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for route_configuration \"r1\"");
    assert_non_null(f->dm.vips[0].listener);
    assert_null(f->dm.vips[0].routes);

    dm_put_routes(f, "r1", "c1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"c1\"");
    dm_expect_cluster(f, 0, "c1", XLB_DM_WARMING);

    dm_put_eds_cluster(f, "c1", "e1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 eds:e1");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster_load_assignment \"e1\"");

    dm_put_endpoints(f, "e1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 eds:e1");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    const struct xlb_dm_vip *vip = &f->dm.vips[0];
    assert_string_equal(vip->listener->rds_name, "r1");
    assert_string_equal(vip->routes->name, "r1");
    assert_int_equal(vip->n_clusters, 1);
    const struct xlb_dm_cluster *c = dm_expect_cluster(f, 0, "c1", XLB_DM_READY);
    assert_true(c->from_route);
    assert_int_equal(c->value->type, XLB_CLUSTER_EDS);
    assert_string_equal(c->eds->name, "e1");
    assert_non_null(c->endpoints);
    assert_int_equal(c->endpoints->n_priorities, 1);
    assert_null(c->error);
    assert_null(c->note);
}

static void inline_route_config(void **state)
{
    struct dm_fixture *f = *state;
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "svc");
    dm_put_inline_listener(f, "svc", "c1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc cds:c1");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"c1\"");
    assert_string_equal(f->dm.vips[0].routes->name, "inline");

    dm_put_dns_cluster(f, "c1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc cds:c1");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    const struct xlb_dm_cluster *c = dm_expect_cluster(f, 0, "c1", XLB_DM_READY);
    assert_null(c->eds);
    assert_null(c->endpoints);

    /* Moving the routes to RDS drops the clusters until the route configuration comes. */
    dm_put_listener(f, "svc", "r1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for route_configuration \"r1\"");
    assert_int_equal(f->dm.vips[0].n_clusters, 0);
}

static void weighted_clusters(void **state)
{
    struct dm_fixture *f = *state;
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "svc");
    dm_put_listener(f, "svc", "r1");
    dm_put(f, XLB_XDS_RDS, "r1",
           "{\"name\":\"r1\",\"virtual_hosts\":[{\"name\":\"a\",\"domains\":[\"a.example\"],"
           "\"routes\":[{\"match\":{\"prefix\":\"/a/\"},\"route\":{\"weighted_clusters\":"
           "{\"clusters\":[{\"name\":\"w1\",\"weight\":1},{\"name\":\"w2\",\"weight\":3}]}}},"
           "{\"match\":{\"prefix\":\"/n/\"},\"non_forwarding_action\":{}}]},"
           "{\"name\":\"b\",\"domains\":[\"*\"],\"routes\":[{\"match\":{\"prefix\":\"\"},"
           "\"route\":{\"cluster\":\"c3\"}}]}]}");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:w1 cds:w2 cds:c3");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"w1\"");

    dm_put_eds_cluster(f, "w1", NULL);
    dm_put_dns_cluster(f, "w2");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:w1 cds:w2 cds:c3 eds:w1");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster_load_assignment \"w1\"");

    dm_put_endpoints(f, "w1");
    dm_put_eds_cluster(f, "c3", NULL);
    dm_put_endpoints(f, "c3");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:w1 cds:w2 cds:c3 eds:w1 eds:c3");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    assert_int_equal(f->dm.vips[0].n_clusters, 3);
    dm_expect_cluster(f, 0, "w1", XLB_DM_READY);
    dm_expect_cluster(f, 0, "w2", XLB_DM_READY);
    dm_expect_cluster(f, 0, "c3", XLB_DM_READY);
}

/* Ready chain svc -> r1 -> clusters, each EDS cluster with its own assignment. */
static void ready_chain(struct dm_fixture *f, const char *clusters)
{
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "svc");
    dm_put_listener(f, "svc", "r1");
    dm_put_routes(f, "r1", clusters);
    char copy[256];
    strcpy(copy, clusters);
    for (char *save, *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        dm_put_eds_cluster(f, tok, NULL);
        dm_put_endpoints(f, tok);
    }
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
}

static void cluster_does_not_exist_stays_local(void **state)
{
    struct dm_fixture *f = *state;
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "svc");
    dm_put_listener(f, "svc", "r1");
    dm_put_routes(f, "r1", "c1 c2");
    dm_put_eds_cluster(f, "c1", NULL);
    dm_put_endpoints(f, "c1");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"c2\"");

    dm_gone(f, XLB_XDS_CDS, "c2");
    dm_step(f);
    /* Still named by a route: still watched, the server may create it later. */
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 cds:c2 eds:c1");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    dm_expect_cluster(f, 0, "c1", XLB_DM_READY);
    const struct xlb_dm_cluster *c2 = dm_expect_cluster(f, 0, "c2", XLB_DM_ERROR);
    assert_string_equal(c2->error, "cluster \"c2\" does not exist");
    assert_null(c2->value);

    dm_put_eds_cluster(f, "c2", NULL);
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 cds:c2 eds:c1 eds:c2");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster_load_assignment \"c2\"");
}

static void eds_does_not_exist_leaves_cluster_empty(void **state)
{
    struct dm_fixture *f = *state;
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "svc");
    dm_put_listener(f, "svc", "r1");
    dm_put_routes(f, "r1", "c1");
    dm_put_eds_cluster(f, "c1", "svc-eds");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster_load_assignment \"svc-eds\"");

    dm_gone(f, XLB_XDS_EDS, "svc-eds");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 eds:svc-eds");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    const struct xlb_dm_cluster *c = dm_expect_cluster(f, 0, "c1", XLB_DM_READY);
    assert_non_null(c->eds);
    assert_null(c->endpoints);
    assert_null(c->error);
    assert_string_equal(c->note, "cluster_load_assignment \"svc-eds\" does not exist");

    /* An assignment NACKed without a previous value leaves its cluster empty too. */
    dm_put_routes(f, "r1", "c1 c2");
    dm_put_eds_cluster(f, "c2", NULL);
    dm_put_invalid(f, XLB_XDS_EDS, "c2",
                   "{\"cluster_name\":\"c2\",\"endpoints\":[{"
                   "\"locality\":{},\"load_balancing_weight\":1,\"lb_endpoints\":[{"
                   "\"endpoint\":{\"address\":{\"socket_address\":{"
                   "\"address\":\"198.18.0.1\",\"port_value\":0}}}}]}]}");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    c = dm_expect_cluster(f, 0, "c2", XLB_DM_READY);
    assert_null(c->endpoints);
    assert_non_null(strstr(c->note, "cluster_load_assignment \"c2\": "));
    assert_non_null(strstr(c->note, "port_value: 0 is not in 1..65535"));
}

static void listener_does_not_exist(void **state)
{
    struct dm_fixture *f = *state;
    ready_chain(f, "c1");
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 eds:c1");

    dm_gone(f, XLB_XDS_LDS, "svc");
    dm_step(f);
    dm_expect_watched(f, "lds:svc");
    dm_expect_vip(f, 0, XLB_DM_ERROR, "listener \"svc\" does not exist");
    assert_null(f->dm.vips[0].listener);
    assert_int_equal(f->dm.vips[0].n_clusters, 0);

    /* What was unwatched was forgotten (as gRPC's XdsClient drops a resource with its last
     * watcher): the listener back, its routes are awaited again, not served from before. */
    dm_put_listener(f, "svc", "r1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for route_configuration \"r1\"");
    dm_put_routes(f, "r1", "c1");
    dm_put_eds_cluster(f, "c1", NULL);
    dm_put_endpoints(f, "c1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 eds:c1");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
}

/* A cluster that leaves the routes and comes back is awaited anew: its old value and
 * assignment were dropped with their watch, so xlb never serves endpoints the server may have
 * changed or removed meanwhile. */
static void rewatched_cluster_waits_for_fresh_values(void **state)
{
    struct dm_fixture *f = *state;
    ready_chain(f, "c1 c2");
    dm_put_routes(f, "r1", "c1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 eds:c1");
    const struct xlb_xds_resource *eds = xlb_xds_cache_find(&f->cache, XLB_XDS_EDS, "c2");
    assert_non_null(eds);
    assert_false(eds->has_value);
    assert_int_equal(eds->state, XLB_RES_REQUESTED);

    dm_put_routes(f, "r1", "c1 c2");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"c2\"");
    dm_put_eds_cluster(f, "c2", NULL);
    dm_put_endpoints(f, "c2");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
}

static void route_config_does_not_exist(void **state)
{
    struct dm_fixture *f = *state;
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "svc");
    dm_put_listener(f, "svc", "r1");
    dm_gone(f, XLB_XDS_RDS, "r1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1");
    dm_expect_vip(f, 0, XLB_DM_ERROR, "route_configuration \"r1\" does not exist");
}

static void nack_without_previous_value(void **state)
{
    struct dm_fixture *f = *state;
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "svc");
    dm_put_invalid(f, XLB_XDS_LDS, "svc", "{\"name\":\"svc\"}");
    dm_step(f);
    dm_expect_watched(f, "lds:svc");
    dm_expect_vip(f, 0, XLB_DM_ERROR, "listener \"svc\": api_listener: field not present");

    /* A cluster NACKed without a value is an error of that cluster only. */
    dm_put_listener(f, "svc", "r1");
    dm_put_routes(f, "r1", "c1 bad");
    dm_put_eds_cluster(f, "c1", NULL);
    dm_put_endpoints(f, "c1");
    dm_put_invalid(f, XLB_XDS_CDS, "bad", "{\"name\":\"bad\",\"type\":\"ORIGINAL_DST\"}");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    const struct xlb_dm_cluster *bad = dm_expect_cluster(f, 0, "bad", XLB_DM_ERROR);
    assert_string_equal(bad->error, "cluster \"bad\": type: ORIGINAL_DST is not supported");
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 cds:bad eds:c1");
}

static void nack_with_previous_value_keeps_serving(void **state)
{
    struct dm_fixture *f = *state;
    ready_chain(f, "c1");
    const struct xlb_route_config *routes = f->dm.vips[0].routes;

    dm_put_invalid(f, XLB_XDS_RDS, "r1", "{\"name\":\"r1\",\"virtual_hosts\":[{}]}");
    dm_put_invalid(f, XLB_XDS_CDS, "c1", "{\"name\":\"c1\",\"type\":\"ORIGINAL_DST\"}");
    dm_put_invalid(f, XLB_XDS_EDS, "c1",
                   "{\"cluster_name\":\"c1\",\"endpoints\":[{"
                   "\"locality\":{},\"load_balancing_weight\":1,\"lb_endpoints\":[{"
                   "\"endpoint\":{\"address\":{\"socket_address\":{"
                   "\"address\":\"198.18.0.1\",\"port_value\":0}}}}]}]}");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 eds:c1");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    assert_ptr_equal(f->dm.vips[0].routes, routes);
    const struct xlb_dm_cluster *c = dm_expect_cluster(f, 0, "c1", XLB_DM_READY);
    assert_int_equal(c->cds->state, XLB_RES_NACKED);
    assert_non_null(c->value);
    assert_int_equal(c->eds->state, XLB_RES_NACKED);
    assert_non_null(c->endpoints);
}

static void removed_route_cluster_is_unwatched(void **state)
{
    struct dm_fixture *f = *state;
    ready_chain(f, "c1 c2");
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 cds:c2 eds:c1 eds:c2");
    uint64_t watch_changes = f->dm.watch_changes;

    dm_put_routes(f, "r1", "c1");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:c1 eds:c1");
    assert_true(f->dm.watch_changes > watch_changes);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    assert_int_equal(f->dm.vips[0].n_clusters, 1);
    assert_null(xlb_dm_vip_cluster(&f->dm.vips[0], "c2"));

    /* Nothing changed: the watch set stays as it is. */
    watch_changes = f->dm.watch_changes;
    dm_step(f);
    assert_int_equal(f->dm.watch_changes, watch_changes);
}

static void two_vips_share_clusters(void **state)
{
    struct dm_fixture *f = *state;
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "a");
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "b");
    dm_put_listener(f, "a", "ra");
    dm_put_listener(f, "b", "rb");
    dm_put_routes(f, "ra", "c1 c2");
    dm_step(f);
    dm_expect_watched(f, "lds:a lds:b rds:ra rds:rb cds:c1 cds:c2");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"c1\"");
    dm_expect_vip(f, 1, XLB_DM_WARMING, "waiting for route_configuration \"rb\"");

    dm_put_routes(f, "rb", "c2 c3");
    const char *names[] = {"c1", "c2", "c3"};
    for (int i = 0; i < 3; i++) {
        dm_put_eds_cluster(f, names[i], NULL);
        dm_put_endpoints(f, names[i]);
    }
    dm_step(f);
    dm_expect_watched(f, "lds:a lds:b rds:ra rds:rb cds:c1 cds:c2 cds:c3 eds:c1 eds:c2 eds:c3");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    dm_expect_vip(f, 1, XLB_DM_READY, NULL);
    assert_ptr_equal(xlb_dm_vip_cluster(&f->dm.vips[0], "c2")->value,
                     xlb_dm_vip_cluster(&f->dm.vips[1], "c2")->value);

    /* VIP a stops using c2; VIP b still needs it. */
    dm_put_routes(f, "ra", "c1");
    dm_step(f);
    dm_expect_watched(f, "lds:a lds:b rds:ra rds:rb cds:c1 cds:c2 cds:c3 eds:c1 eds:c2 eds:c3");
    assert_null(xlb_dm_vip_cluster(&f->dm.vips[0], "c2"));

    dm_put_routes(f, "rb", "c3");
    dm_step(f);
    dm_expect_watched(f, "lds:a lds:b rds:ra rds:rb cds:c1 cds:c3 eds:c1 eds:c3");
}

static void fingerprint_follows_inputs(void **state)
{
    struct dm_fixture *f = *state;
    ready_chain(f, "c1 c2");
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L4, "c2");
    dm_step(f);
    uint64_t vip = f->dm.vips[0].fingerprint, l4 = f->dm.vips[1].fingerprint;
    uint64_t c1 = xlb_dm_vip_cluster(&f->dm.vips[0], "c1")->fingerprint;
    uint64_t c2 = xlb_dm_vip_cluster(&f->dm.vips[0], "c2")->fingerprint;

    /* No change, or changes to resources nobody uses: nothing moves. */
    dm_step(f);
    dm_put_eds_cluster(f, "unused", NULL);
    dm_put_listener(f, "other", "r9");
    dm_step(f);
    assert_true(f->dm.vips[0].fingerprint == vip);
    assert_true(f->dm.vips[1].fingerprint == l4);
    assert_true(xlb_dm_vip_cluster(&f->dm.vips[0], "c1")->fingerprint == c1);

    /* New endpoints for c1: the VIP and c1 move, c2 and the L4 VIP on c2 do not. */
    dm_put_endpoints(f, "c1");
    dm_step(f);
    assert_true(f->dm.vips[0].fingerprint != vip);
    assert_true(xlb_dm_vip_cluster(&f->dm.vips[0], "c1")->fingerprint != c1);
    assert_true(xlb_dm_vip_cluster(&f->dm.vips[0], "c2")->fingerprint == c2);
    assert_true(f->dm.vips[1].fingerprint == l4);
    vip = f->dm.vips[0].fingerprint;

    /* A new route configuration moves the VIP but no cluster. */
    c1 = xlb_dm_vip_cluster(&f->dm.vips[0], "c1")->fingerprint;
    dm_put_routes(f, "r1", "c1 c2");
    dm_step(f);
    assert_true(f->dm.vips[0].fingerprint != vip);
    assert_true(xlb_dm_vip_cluster(&f->dm.vips[0], "c1")->fingerprint == c1);
    assert_true(xlb_dm_vip_cluster(&f->dm.vips[0], "c2")->fingerprint == c2);
}

int dm_l7_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(full_chain_warms_then_ready, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(inline_route_config, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(weighted_clusters, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(cluster_does_not_exist_stays_local, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(eds_does_not_exist_leaves_cluster_empty, dm_setup,
                                        dm_teardown),
        cmocka_unit_test_setup_teardown(listener_does_not_exist, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(route_config_does_not_exist, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(nack_without_previous_value, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(nack_with_previous_value_keeps_serving, dm_setup,
                                        dm_teardown),
        cmocka_unit_test_setup_teardown(rewatched_cluster_waits_for_fresh_values, dm_setup,
                                        dm_teardown),
        cmocka_unit_test_setup_teardown(removed_route_cluster_is_unwatched, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(rewatched_cluster_waits_for_fresh_values, dm_setup,
                                        dm_teardown),
        cmocka_unit_test_setup_teardown(two_vips_share_clusters, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(fingerprint_follows_inputs, dm_setup, dm_teardown),
    };
    return cmocka_run_group_tests_name("dependency_manager_l7", tests, NULL, NULL);
}
