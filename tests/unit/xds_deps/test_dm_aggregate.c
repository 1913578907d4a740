/*
 * Dependency manager, aggregate clusters (A37/A75 as C-core's XdsDependencyManager resolves
 * them) and L4 VIPs: flattening order, duplicates, missing children, depth limit, cycles.
 */
#include "dm_test.h"

#include <stdio.h>
#include <string.h>

/* An L7 VIP whose only route goes to `cluster`, with listener and routes present. */
static void vip_to(struct dm_fixture *f, const char *cluster)
{
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L7, "svc");
    dm_put_listener(f, "svc", "r1");
    dm_put_routes(f, "r1", cluster);
}

static void leaf(struct dm_fixture *f, const char *name)
{
    dm_put_eds_cluster(f, name, NULL);
    dm_put_endpoints(f, name);
}

static void aggregate_flattening_order_and_dedup(void **state)
{
    struct dm_fixture *f = *state;
    vip_to(f, "agg");
    dm_put_aggregate(f, "agg", "a1 x a2");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:agg cds:a1 cds:x cds:a2");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"a1\"");

    dm_put_aggregate(f, "a1", "p q");
    dm_put_aggregate(f, "a2", "q r p");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:agg cds:a1 cds:x cds:a2 cds:p cds:q cds:r");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"p\"");

    leaf(f, "p");
    leaf(f, "q");
    leaf(f, "x");
    dm_put_dns_cluster(f, "r");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:agg cds:a1 cds:x cds:a2 cds:p cds:q cds:r "
                         "eds:p eds:q eds:x");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    dm_expect_leaves(f, 0, "agg", "p q x r");
    dm_expect_leaves(f, 0, "a2", "q r p");
    const struct xlb_dm_cluster *agg = dm_expect_cluster(f, 0, "agg", XLB_DM_READY);
    assert_true(agg->from_route);
    assert_null(agg->eds);
    assert_false(dm_expect_cluster(f, 0, "p", XLB_DM_READY)->from_route);
}

static void aggregate_children_missing(void **state)
{
    struct dm_fixture *f = *state;
    vip_to(f, "agg");
    dm_put_aggregate(f, "agg", "m p");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"m\"");

    /* A child that does not exist is left out, but one still awaited keeps it warming. */
    dm_gone(f, XLB_XDS_CDS, "m");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"p\"");
    dm_expect_cluster(f, 0, "agg", XLB_DM_WARMING);

    leaf(f, "p");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    dm_expect_leaves(f, 0, "agg", "p");
    dm_expect_cluster(f, 0, "m", XLB_DM_ERROR);
    dm_expect_watched(f, "lds:svc rds:r1 cds:agg cds:m cds:p eds:p");

    /* No usable leaf left: an error of the aggregate, the VIP stays ready. */
    dm_put_invalid(f, XLB_XDS_CDS, "n", "{\"name\":\"n\",\"type\":\"ORIGINAL_DST\"}");
    dm_put_aggregate(f, "agg", "m n");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    const struct xlb_dm_cluster *agg = dm_expect_cluster(f, 0, "agg", XLB_DM_ERROR);
    assert_string_equal(agg->error, "aggregate cluster \"agg\" has no usable leaf cluster");
    assert_int_equal(agg->n_leaves, 0);
    dm_expect_watched(f, "lds:svc rds:r1 cds:agg cds:m cds:n");
}

/* agg1 -> agg2 -> ... -> agg<levels-1> -> leaf: `levels` levels in all. */
static void chain(struct dm_fixture *f, int levels)
{
    char name[16], child[16];
    for (int i = 1; i < levels; i++) {
        snprintf(name, sizeof(name), "agg%d", i);
        snprintf(child, sizeof(child), i + 1 < levels ? "agg%d" : "leaf", i + 1);
        dm_put_aggregate(f, name, child);
    }
    leaf(f, "leaf");
}

static void aggregate_depth_16_passes(void **state)
{
    struct dm_fixture *f = *state;
    vip_to(f, "agg1");
    chain(f, XLB_DM_MAX_AGGREGATE_DEPTH);
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    dm_expect_leaves(f, 0, "agg1", "leaf");
    assert_int_equal(f->dm.vips[0].n_clusters, 16);
}

static void aggregate_depth_17_fails(void **state)
{
    struct dm_fixture *f = *state;
    vip_to(f, "agg1");
    chain(f, XLB_DM_MAX_AGGREGATE_DEPTH + 1);
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    const struct xlb_dm_cluster *root = dm_expect_cluster(f, 0, "agg1", XLB_DM_ERROR);
    assert_string_equal(root->error, "cluster \"agg1\": aggregate cluster graph exceeds the depth "
                                     "limit of 16 (\"agg1\" has 17 levels)");
    /* One level down the graph is within the limit. */
    dm_expect_leaves(f, 0, "agg2", "leaf");
    /* Everything is still watched: a change anywhere may repair it. */
    assert_int_equal(f->dm.vips[0].n_clusters, 17);
    assert_true(xlb_xds_cache_find(&f->cache, XLB_XDS_CDS, "agg16")->watched);
    assert_true(xlb_xds_cache_find(&f->cache, XLB_XDS_EDS, "leaf")->watched);
}

static void aggregate_cycle(void **state)
{
    struct dm_fixture *f = *state;
    vip_to(f, "agg");
    dm_put_aggregate(f, "agg", "b p");
    dm_put_aggregate(f, "b", "agg");
    leaf(f, "p");
    dm_step(f);
    dm_expect_watched(f, "lds:svc rds:r1 cds:agg cds:b cds:p eds:p");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    const struct xlb_dm_cluster *agg = dm_expect_cluster(f, 0, "agg", XLB_DM_ERROR);
    assert_string_equal(agg->error,
                        "cluster \"agg\": aggregate cluster graph has a cycle: agg -> b -> agg");
    const struct xlb_dm_cluster *b = dm_expect_cluster(f, 0, "b", XLB_DM_ERROR);
    assert_string_equal(b->error,
                        "cluster \"b\": aggregate cluster graph has a cycle: agg -> b -> agg");
    dm_expect_cluster(f, 0, "p", XLB_DM_READY);

    /* Breaking the cycle repairs both. */
    dm_put_aggregate(f, "b", "p");
    dm_step(f);
    dm_expect_leaves(f, 0, "agg", "p");
    dm_expect_leaves(f, 0, "b", "p");

    /* A cluster naming itself. */
    dm_put_aggregate(f, "agg", "agg");
    dm_step(f);
    agg = dm_expect_cluster(f, 0, "agg", XLB_DM_ERROR);
    assert_string_equal(agg->error,
                        "cluster \"agg\": aggregate cluster graph has a cycle: agg -> agg");
    dm_expect_watched(f, "lds:svc rds:r1 cds:agg");
}

static void l4_vip(void **state)
{
    struct dm_fixture *f = *state;
    assert_int_equal(xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L4, "c1"), 0);
    dm_step(f);
    dm_expect_watched(f, "cds:c1");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"c1\"");
    assert_null(f->dm.vips[0].listener);

    dm_put_eds_cluster(f, "c1", NULL);
    dm_step(f);
    dm_expect_watched(f, "cds:c1 eds:c1");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster_load_assignment \"c1\"");

    dm_put_endpoints(f, "c1");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    assert_null(f->dm.vips[0].routes);
    assert_true(dm_expect_cluster(f, 0, "c1", XLB_DM_READY)->from_route);

    /* The cluster going away is its own error: the VIP is complete, with nothing to pick. */
    dm_gone(f, XLB_XDS_CDS, "c1");
    dm_step(f);
    dm_expect_watched(f, "cds:c1");
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    dm_expect_cluster(f, 0, "c1", XLB_DM_ERROR);
}

static void l4_vip_on_aggregate(void **state)
{
    struct dm_fixture *f = *state;
    xlb_dm_add_vip(&f->dm, XLB_DM_VIP_L4, "agg");
    dm_put_aggregate(f, "agg", "primary fallback");
    leaf(f, "primary");
    dm_step(f);
    dm_expect_watched(f, "cds:agg cds:primary cds:fallback eds:primary");
    dm_expect_vip(f, 0, XLB_DM_WARMING, "waiting for cluster \"fallback\"");

    dm_put_dns_cluster(f, "fallback");
    dm_step(f);
    dm_expect_vip(f, 0, XLB_DM_READY, NULL);
    dm_expect_leaves(f, 0, "agg", "primary fallback");
}

int dm_aggregate_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(aggregate_flattening_order_and_dedup, dm_setup,
                                        dm_teardown),
        cmocka_unit_test_setup_teardown(aggregate_children_missing, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(aggregate_depth_16_passes, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(aggregate_depth_17_fails, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(aggregate_cycle, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(l4_vip, dm_setup, dm_teardown),
        cmocka_unit_test_setup_teardown(l4_vip_on_aggregate, dm_setup, dm_teardown),
    };
    return cmocka_run_group_tests_name("dependency_manager_aggregate", tests, NULL, NULL);
}
