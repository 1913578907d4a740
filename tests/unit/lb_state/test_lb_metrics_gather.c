/*
 * The LB metrics' values gathered from a compiled tree and the workers' counters: xDS
 * resources (proto3 JSON) -> dependency manager -> LB state, counters written here as two
 * workers would, then xlb_lb_metrics_gather must sum them per cluster, locality, drop
 * category and endpoint, and an endpoint that takes over a reused slot must start from zero.
 */
#include <string.h>

#include "lb_metrics.h"
#include "lb_state_fixture.h"

#define EP(addr)                                                                                   \
    "{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"" addr                          \
    "\",\"port_value\":9000}}}}"
#define CLUSTER                                                                                    \
    "{\"name\":\"c1\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}}}"
/* Zone a (weight 2): .21 .22; zone b (weight 1): .23; a drop category of 0 %. */
#define EDS3                                                                                       \
    "{\"cluster_name\":\"c1\",\"endpoints\":["                                                     \
    "{\"locality\":{\"zone\":\"a\"},\"load_balancing_weight\":2,\"lb_endpoints\":[" EP(            \
        "198.18.0.21") "," EP("198.18.0.22") "]},"                                                 \
                                             "{\"locality\":{\"zone\":\"b\"},\"load_balancing_"    \
                                             "weight\":1,"                                         \
                                             "\"lb_endpoints\":[" EP(                              \
                                                 "198.18.0.23") "]}],"                             \
                                                                "\"policy\":{\"drop_overloads\":[" \
                                                                "{"                                \
                                                                "\"category\":\"throttle\","       \
                                                                "\"drop_percentage\":{"            \
                                                                "\"numerator\":0}}]}}"

static int setup(void **state)
{
    return lbs_setup(state, 2);
}

static const struct xlb_lb_cluster *compiled(struct lbs_fixture *f)
{
    const struct xlb_lb_cluster *c = xlb_lb_trees_cluster(f->lb, "c1");
    assert_non_null(c);
    return c;
}

static void sums_the_workers_counters(void **state)
{
    struct lbs_fixture *f = *state;
    assert_int_equal(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L4, "c1"), 0);
    dm_put(f->dm, XLB_XDS_CDS, "c1", CLUSTER);
    dm_put(f->dm, XLB_XDS_EDS, "c1", EDS3);
    lbs_update(f);
    const struct xlb_lb_cluster *c = compiled(f);
    /* Worker 0 and worker 1 each count part of the same traffic. */
    for (int w = 0; w < 2; w++) {
        struct xlb_worker_load *l = &f->load[w];
        l->clusters[c->cluster_slot].started += 5 + w;
        l->clusters[c->cluster_slot].finished += 4;
        l->clusters[c->cluster_slot].circuit_dropped += 1;
        l->localities[c->priorities[0].localities[0].load_slot].issued += 3;
        l->localities[c->priorities[0].localities[1].load_slot].issued += 2 + w;
        l->drops[c->drops[0].load_slot] += 7;
        l->endpoints[c->endpoints[0].slot].succeeded += 2;
        l->endpoints[c->endpoints[1].slot].failed += 1;
        l->endpoints[c->endpoints[2].slot].succeeded += 1 + w;
    }
    /* Subchannel states: READY on any worker wins, then CONNECTING, then TRANSIENT_FAILURE. */
    f->load[0].endpoints[c->endpoints[0].slot].connectivity = XLB_CONN_TRANSIENT_FAILURE;
    f->load[1].endpoints[c->endpoints[0].slot].connectivity = XLB_CONN_READY;
    f->load[0].endpoints[c->endpoints[1].slot].connectivity = XLB_CONN_CONNECTING;
    f->load[1].endpoints[c->endpoints[1].slot].connectivity = XLB_CONN_TRANSIENT_FAILURE;
    f->load[1].endpoints[c->endpoints[2].slot].connectivity = XLB_CONN_TRANSIENT_FAILURE;
    struct xlb_lb_metrics m;
    assert_int_equal(xlb_lb_metrics_gather(f->lb, f->load, 2, &m), 0);
    assert_int_equal(m.n_clusters, 1);
    const struct xlb_lbm_cluster *g = &m.clusters[0];
    assert_string_equal(g->name, "c1");
    assert_int_equal(g->started, 11);
    assert_int_equal(g->finished, 8);
    assert_int_equal(g->circuit_dropped, 2);
    assert_int_equal(g->chosen_priority, 0);
    assert_int_equal(g->n_localities, 2);
    assert_string_equal(g->localities[0].name, "/a/");
    assert_int_equal(g->localities[0].weight, 2);
    assert_int_equal(g->localities[0].started, 6);
    assert_int_equal(g->localities[1].started, 5);
    assert_int_equal(g->n_drops, 1);
    assert_string_equal(g->drops[0].category, "throttle");
    assert_int_equal(g->drops[0].dropped, 14);
    assert_int_equal(g->n_endpoints, 3);
    assert_string_equal(g->endpoints[0].address, "198.18.0.21:9000");
    assert_int_equal(g->endpoints[0].succeeded, 4);
    assert_int_equal(g->endpoints[1].failed, 2);
    assert_int_equal(g->endpoints[2].locality, 1);
    assert_int_equal(g->endpoints[2].succeeded, 3);
    assert_int_equal(g->endpoints[0].connectivity, XLB_CONN_READY);
    assert_int_equal(g->endpoints[1].connectivity, XLB_CONN_CONNECTING);
    assert_int_equal(g->endpoints[2].connectivity, XLB_CONN_TRANSIENT_FAILURE);
    /* xlbctl endpoints and clusters show the same aggregate. */
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < 3; i++)
        cJSON_AddItemToArray(list, cJSON_CreateObject());
    xlb_lb_trees_describe_endpoints(f->lb, "c1", 0, list);
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "connectivity")),
        "READY");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 1), "connectivity")),
        "CONNECTING");
    cJSON_Delete(list);
    cJSON *summary = cJSON_CreateObject();
    xlb_lb_trees_describe_cluster(f->lb, "c1", summary);
    assert_int_equal(cJSON_GetObjectItem(summary, "ready")->valueint, 1);
    cJSON_Delete(summary);
    xlb_lb_metrics_free(&m);
}

static uint64_t succeeded_of(struct lbs_fixture *f, const char *address)
{
    struct xlb_lb_metrics m;
    assert_int_equal(xlb_lb_metrics_gather(f->lb, f->load, 2, &m), 0);
    uint64_t found = UINT64_MAX;
    for (uint32_t e = 0; e < m.clusters[0].n_endpoints; e++)
        if (strcmp(m.clusters[0].endpoints[e].address, address) == 0)
            found = m.clusters[0].endpoints[e].succeeded;
    xlb_lb_metrics_free(&m);
    return found;
}

/* .21 leaves with 9 successes; once its slot is reused, .24 starts from 0, not 9. */
static void reused_slot_starts_from_zero(void **state)
{
    struct lbs_fixture *f = *state;
    assert_int_equal(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L4, "c1"), 0);
    dm_put(f->dm, XLB_XDS_CDS, "c1", CLUSTER);
    dm_put(f->dm, XLB_XDS_EDS, "c1",
           "{\"cluster_name\":\"c1\",\"endpoints\":[{\"locality\":{\"zone\":\"a\"},"
           "\"load_balancing_weight\":1,\"lb_endpoints\":[" EP("198.18.0.21") "]}]}");
    lbs_update(f);
    uint32_t slot = compiled(f)->endpoints[0].slot;
    f->load[1].endpoints[slot].succeeded = 9;
    assert_int_equal(succeeded_of(f, "198.18.0.21:9000"), 9);
    dm_put(f->dm, XLB_XDS_EDS, "c1",
           "{\"cluster_name\":\"c1\",\"endpoints\":[{\"locality\":{\"zone\":\"a\"},"
           "\"load_balancing_weight\":1,\"lb_endpoints\":[" EP("198.18.0.22") "]}]}");
    lbs_update(f);
    f->grace_over = true;
    f->now += 250;
    xlb_lb_trees_tick(f->lb, f->now); /* the grace period is over: the slot is free */
    dm_put(f->dm, XLB_XDS_EDS, "c1",
           "{\"cluster_name\":\"c1\",\"endpoints\":[{\"locality\":{\"zone\":\"a\"},"
           "\"load_balancing_weight\":1,\"lb_endpoints\":[" EP("198.18.0.22") "," EP(
               "198.18.0.24") "]}]}");
    lbs_update(f);
    assert_int_equal(compiled(f)->endpoints[1].slot, slot);
    assert_int_equal(succeeded_of(f, "198.18.0.24:9000"), 0);
    f->load[0].endpoints[slot].succeeded += 2;
    assert_int_equal(succeeded_of(f, "198.18.0.24:9000"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sums_the_workers_counters, setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(reused_slot_starts_from_zero, setup, lbs_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
