/*
 * The control plane's LB state end to end: xDS resources (proto3 JSON, validated as ADS would)
 * -> dependency manager -> compiled trees, then the state that reshapes them: outlier
 * detection fed by the workers' per-endpoint counters (A50), the A56 choice that follows an
 * ejection, stable endpoint slots across EDS updates, per-cluster rebuilds, and idle-timeout
 * draining (A75). The clock is virtual; the workers' counters are a real struct
 * xlb_worker_load written here as a worker would.
 */
#include <stdio.h>
#include <string.h>

#include "lb_state_fixture.h"

#define EP(addr, extra)                                                                            \
    "{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"" addr                          \
    "\",\"port_value\":8080}}}" extra "}"
#define LOC(zone, priority, eps)                                                                   \
    "{\"locality\":{\"zone\":\"" zone "\"},\"load_balancing_weight\":1,\"priority\":" #priority    \
    ",\"lb_endpoints\":[" eps "]}"
#define EDS(name, locs) "{\"cluster_name\":\"" name "\",\"endpoints\":[" locs "]}"
/* Failure-percentage detection every second, ejecting for 2 s, any host count. */
#define CLUSTER_OD(name)                                                                           \
    "{\"name\":\"" name                                                                            \
    "\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}},"                    \
    "\"outlier_detection\":{\"interval\":\"1s\",\"base_ejection_time\":\"2s\","                    \
    "\"max_ejection_percent\":100,\"enforcing_failure_percentage\":100,"                           \
    "\"failure_percentage_minimum_hosts\":1,\"failure_percentage_request_volume\":10,"             \
    "\"failure_percentage_threshold\":50,\"enforcing_success_rate\":0}}"

static int setup(void **state)
{
    return lbs_setup(state, 1);
}

static bool tick(struct lbs_fixture *f, uint64_t advance_ms)
{
    f->now += advance_ms;
    return xlb_lb_trees_tick(f->lb, f->now);
}

/* The address of n picks on VIP 0, as "last octet" counts per endpoint index. */
static void picks(struct lbs_fixture *f, uint32_t n, uint32_t *counts, uint32_t n_counts)
{
    memset(counts, 0, n_counts * sizeof(*counts));
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_lb_request req = {.connection_id = i};
        struct xlb_lb_trace t;
        if (xlb_lb_pick(xlb_lb_trees_vip(f->lb, 0), &req, &f->w, &t) == XLB_LB_PICKED &&
            t.endpoint < n_counts)
            counts[t.endpoint]++;
    }
}

static void l4_vip(struct lbs_fixture *f, const char *cluster_json, const char *eds_json)
{
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L4, "c1") == 0);
    dm_put(f->dm, XLB_XDS_CDS, "c1", cluster_json);
    dm_put(f->dm, XLB_XDS_EDS, "c1", eds_json);
    assert_true(lbs_update(f));
    assert_non_null(xlb_lb_trees_vip(f->lb, 0));
}

/* An L7 VIP "svc" whose routes "/s0/" and "/s1/" go to the EDS clusters c1 and c2. */
static void l7_vip(struct lbs_fixture *f)
{
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L7, "svc") == 0);
    dm_put_inline_listener(f->dm, "svc", "c1 c2");
    dm_put_eds_cluster(f->dm, "c1", NULL);
    dm_put_eds_cluster(f->dm, "c2", NULL);
    dm_put_endpoints(f->dm, "c1");
    dm_put_endpoints(f->dm, "c2");
    assert_true(lbs_update(f));
}

static uint32_t slot_of(struct lbs_fixture *f, uint32_t endpoint)
{
    return xlb_lb_trees_cluster(f->lb, "c1")->endpoints[endpoint].slot;
}

static void test_outlier_ejection_reaches_the_picks(void **state)
{
    struct lbs_fixture *f = *state;
    l4_vip(f, CLUSTER_OD("c1"),
           EDS("c1", LOC("a", 0, EP("198.18.0.21", "") "," EP("198.18.0.22", ""))));
    uint32_t counts[2];
    picks(f, 100, counts, 2);
    assert_true(counts[0] > 0 && counts[1] > 0);

    /* A worker reports 20 failures on .21 and 20 successes on .22 within the interval. */
    f->load->endpoints[slot_of(f, 0)].failed += 20;
    f->load->endpoints[slot_of(f, 1)].succeeded += 20;
    assert_false(tick(f, 250)); /* counted, no sweep yet */
    assert_true(tick(f, 750));  /* the sweep at 1 s ejects .21 and republishes */
    assert_true(xlb_lb_trees_cluster(f->lb, "c1")->endpoints[0].ejected);
    picks(f, 100, counts, 2);
    assert_int_equal(counts[0], 0);
    assert_int_equal(counts[1], 100);

    /* Base ejection time 2 s: the first sweep after it un-ejects. */
    assert_false(tick(f, 1000));
    assert_true(tick(f, 1000) || tick(f, 1000));
    picks(f, 100, counts, 2);
    assert_true(counts[0] > 0);
}

static void test_ejecting_a_whole_priority_fails_over(void **state)
{
    struct lbs_fixture *f = *state;
    l4_vip(f, CLUSTER_OD("c1"),
           EDS("c1", LOC("a", 0, EP("198.18.0.21", "")) "," LOC("b", 1, EP("198.18.0.31", ""))));
    assert_int_equal(xlb_lb_trees_cluster(f->lb, "c1")->chosen_priority, 0);
    f->load->endpoints[slot_of(f, 0)].failed += 20;
    f->load->endpoints[slot_of(f, 1)].succeeded += 20;
    tick(f, 250);
    assert_true(tick(f, 750));
    /* A56: priority 0 reports TRANSIENT_FAILURE, so priority 1 takes the picks at once. */
    assert_int_equal(xlb_lb_trees_cluster(f->lb, "c1")->chosen_priority, 1);
    uint32_t counts[2];
    picks(f, 50, counts, 2);
    assert_int_equal(counts[1], 50);
}

static void test_endpoint_slots_are_stable_and_reused_after_grace(void **state)
{
    struct lbs_fixture *f = *state;
    l4_vip(f, CLUSTER_OD("c1"),
           EDS("c1", LOC("a", 0, EP("198.18.0.21", "") "," EP("198.18.0.22", ""))));
    uint32_t s21 = slot_of(f, 0), s22 = slot_of(f, 1);
    /* .21 leaves, .23 arrives: .22 keeps its slot; .21's slot waits for the grace period. */
    dm_put(f->dm, XLB_XDS_EDS, "c1",
           EDS("c1", LOC("a", 0, EP("198.18.0.22", "") "," EP("198.18.0.23", ""))));
    assert_true(lbs_update(f));
    assert_int_equal(slot_of(f, 0), s22);
    uint32_t s23 = slot_of(f, 1);
    assert_true(s23 != s21 && s23 != s22);
    f->grace_over = true;
    tick(f, 250); /* recycles */
    dm_put(
        f->dm, XLB_XDS_EDS, "c1",
        EDS("c1", LOC("a", 0,
                      EP("198.18.0.22", "") "," EP("198.18.0.23", "") "," EP("198.18.0.24", ""))));
    assert_true(lbs_update(f));
    assert_int_equal(slot_of(f, 0), s22);
    assert_int_equal(slot_of(f, 1), s23);
    assert_int_equal(slot_of(f, 2), s21); /* reused once no worker can count on it */
}

static void test_unchanged_cluster_is_not_recompiled(void **state)
{
    struct lbs_fixture *f = *state;
    l7_vip(f);
    const struct xlb_lb_cluster *c1 = xlb_lb_trees_cluster(f->lb, "c1");
    const struct xlb_lb_cluster *c2 = xlb_lb_trees_cluster(f->lb, "c2");
    const struct xlb_lb_vip *vip = xlb_lb_trees_vip(f->lb, 0);
    assert_false(lbs_update(f)); /* nothing changed: nothing rebuilt */
    assert_ptr_equal(xlb_lb_trees_vip(f->lb, 0), vip);
    dm_put(f->dm, XLB_XDS_EDS, "c2", EDS("c2", LOC("a", 0, EP("198.18.0.40", ""))));
    assert_true(lbs_update(f));
    assert_ptr_equal(xlb_lb_trees_cluster(f->lb, "c1"), c1); /* kept */
    assert_ptr_not_equal(xlb_lb_trees_cluster(f->lb, "c2"), c2);
    assert_ptr_not_equal(xlb_lb_trees_vip(f->lb, 0), vip);
}

/* A request on the route "/s<route>/" of VIP 0; the cluster it picked, or NULL. */
static const struct xlb_lb_cluster *pick_route(struct lbs_fixture *f, int route)
{
    char path[16];
    int len = snprintf(path, sizeof(path), "/s%d/x", route);
    struct xlb_route_request http = {.path = path, .path_len = (uint32_t)len};
    struct xlb_lb_request req = {.http = &http};
    struct xlb_lb_trace t;
    if (xlb_lb_pick(xlb_lb_trees_vip(f->lb, 0), &req, &f->w, &t) != XLB_LB_PICKED)
        return NULL;
    return t.cluster;
}

static void test_cluster_change_keeps_the_routes(void **state)
{
    struct lbs_fixture *f = *state;
    l7_vip(f);
    struct xlb_lb_vip *before = xlb_lb_trees_vip(f->lb, 0);
    xlb_lb_vip_hold(before); /* as a published snapshot holds it */
    /* An endpoint change: a new tree, on the same compiled routes. */
    dm_put(f->dm, XLB_XDS_EDS, "c2", EDS("c2", LOC("a", 0, EP("198.18.0.40", ""))));
    assert_true(lbs_update(f));
    struct xlb_lb_vip *after = xlb_lb_trees_vip(f->lb, 0);
    assert_ptr_not_equal(after, before);
    assert_ptr_equal(after->routes, before->routes);
    xlb_lb_vip_release(before); /* the old tree goes; the routes stay with the new one */
    assert_ptr_equal(pick_route(f, 0), xlb_lb_trees_cluster(f->lb, "c1"));
    assert_ptr_equal(pick_route(f, 1), xlb_lb_trees_cluster(f->lb, "c2"));
    /* A route change compiles the routes anew. */
    xlb_lb_vip_hold(after);
    dm_put_inline_listener(f->dm, "svc", "c2 c1");
    assert_true(lbs_update(f));
    assert_ptr_not_equal(xlb_lb_trees_vip(f->lb, 0)->routes, after->routes);
    xlb_lb_vip_release(after);
    assert_ptr_equal(pick_route(f, 0), xlb_lb_trees_cluster(f->lb, "c2"));
    assert_ptr_equal(pick_route(f, 1), xlb_lb_trees_cluster(f->lb, "c1"));
}

static void test_draining_endpoint_is_reported_drained_after_idle_timeout(void **state)
{
    struct lbs_fixture *f = *state;
    l4_vip(f,
           "{\"name\":\"c1\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}},"
           "\"upstream_config\":{\"name\":\"http\",\"typed_config\":{\"@type\":"
           "\"type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions\","
           "\"common_http_protocol_options\":{\"idle_timeout\":\"2s\"}}}}",
           EDS("c1", LOC("a", 0,
                         EP("198.18.0.21", "") "," EP("198.18.0.22",
                                                      ",\"health_status\":\"DRAINING\""))));
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < 2; i++)
        cJSON_AddItemToArray(list, cJSON_CreateObject());
    /* Sessions keep using the draining endpoint: not drained. */
    f->load->endpoints[slot_of(f, 1)].session_picks += 3;
    tick(f, 1500);
    xlb_lb_trees_describe_endpoints(f->lb, "c1", f->now, list);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 1), "drained")));
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "drained"));
    cJSON_Delete(list);
    /* No session for 2 s: drained. */
    tick(f, 2000);
    list = cJSON_CreateArray();
    for (int i = 0; i < 2; i++)
        cJSON_AddItemToArray(list, cJSON_CreateObject());
    xlb_lb_trees_describe_endpoints(f->lb, "c1", f->now, list);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 1), "drained")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 1), "usable")));
    cJSON_Delete(list);
}

static void test_warming_vip_keeps_its_tree(void **state)
{
    struct lbs_fixture *f = *state;
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L7, "svc") == 0);
    dm_put_inline_listener(f->dm, "svc", "c1");
    dm_put_eds_cluster(f->dm, "c1", NULL);
    dm_put_endpoints(f->dm, "c1");
    assert_true(lbs_update(f));
    const struct xlb_lb_vip *vip = xlb_lb_trees_vip(f->lb, 0);
    /* The routes now name c2, which has not arrived: the VIP warms on its last tree. */
    dm_put_inline_listener(f->dm, "svc", "c1 c2");
    assert_false(lbs_update(f));
    assert_ptr_equal(xlb_lb_trees_vip(f->lb, 0), vip);
    dm_put_eds_cluster(f->dm, "c2", NULL);
    dm_put_endpoints(f->dm, "c2");
    assert_true(lbs_update(f));
    assert_int_equal(xlb_lb_trees_vip(f->lb, 0)->n_targets, 2);
}

static void test_removed_cluster_fails_its_picks(void **state)
{
    struct lbs_fixture *f = *state;
    l4_vip(f, CLUSTER_OD("c1"), EDS("c1", LOC("a", 0, EP("198.18.0.21", ""))));
    /* A74: a cluster that does not exist is an error local to it; its requests fail as a
     * gRPC client's RPCs to it fail UNAVAILABLE. */
    dm_gone(f->dm, XLB_XDS_CDS, "c1");
    assert_true(lbs_update(f));
    struct xlb_lb_request req = {0};
    struct xlb_lb_trace t;
    assert_int_equal(xlb_lb_pick(xlb_lb_trees_vip(f->lb, 0), &req, &f->w, &t), XLB_LB_NOT_READY);
    assert_null(xlb_lb_trees_cluster(f->lb, "c1")); /* its state is gone with it */
}

#define AGG_RING_HASH                                                                              \
    "{\"name\":\"agg\",\"lb_policy\":\"RING_HASH\",\"cluster_type\":{\"name\":"                    \
    "\"envoy.clusters.aggregate\",\"typed_config\":{\"@type\":\"type.googleapis.com/envoy."        \
    "extensions.clusters.aggregate.v3.ClusterConfig\",\"clusters\":[\"c1\",\"c2\"]}}}"

/* An L4 VIP on an aggregate whose own lb_policy is RING_HASH over two round-robin leaves. */
static void aggregate_vip(struct lbs_fixture *f, bool compat)
{
    xlb_lb_trees_set_aggregate_compat(f->lb, compat);
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L4, "agg") == 0);
    dm_put(f->dm, XLB_XDS_CDS, "agg", AGG_RING_HASH);
    dm_put_eds_cluster(f->dm, "c1", NULL);
    dm_put_eds_cluster(f->dm, "c2", NULL);
    dm_put(f->dm, XLB_XDS_EDS, "c1", EDS("c1", LOC("a", 0, EP("198.18.0.21", ""))));
    dm_put(f->dm, XLB_XDS_EDS, "c2", EDS("c2", LOC("b", 0, EP("198.18.0.31", ""))));
    assert_true(lbs_update(f));
}

static enum xlb_lb_override_outcome session_to_second_leaf(struct lbs_fixture *f, uint32_t *leaf_ep)
{
    struct xlb_lb_session session = {.n_addresses = 1};
    assert_int_equal(xlb_host_port_parse("198.18.0.31:8080", 16, &session.addresses[0]), 0);
    struct xlb_lb_request req = {.session = &session};
    struct xlb_lb_trace t;
    assert_int_equal(xlb_lb_pick(xlb_lb_trees_vip(f->lb, 0), &req, &f->w, &t), XLB_LB_PICKED);
    *leaf_ep = t.cluster == xlb_lb_trees_vip(f->lb, 0)->targets[0].leaves[1] ? 1 : 0;
    return (enum xlb_lb_override_outcome)t.override;
}

static void test_aggregate_follows_a75_by_default(void **state)
{
    struct lbs_fixture *f = *state;
    aggregate_vip(f, false);
    const struct xlb_lb_target *t = &xlb_lb_trees_vip(f->lb, 0)->targets[0];
    /* A75: each leaf keeps its own policy; the aggregate's RING_HASH is ignored. */
    assert_int_equal(t->leaves[0]->policy, XLB_LB_POLICY_ROUND_ROBIN);
    assert_null(t->leaves[0]->policy_from);
    uint32_t leaf;
    /* The first leaf is chosen, and its override host does not know c2's endpoint. */
    assert_int_equal(session_to_second_leaf(f, &leaf), XLB_LB_OVERRIDE_UNKNOWN);
    assert_int_equal(leaf, 0);
}

static void test_aggregate_backward_compat(void **state)
{
    struct lbs_fixture *f = *state;
    aggregate_vip(f, true);
    const struct xlb_lb_target *t = &xlb_lb_trees_vip(f->lb, 0)->targets[0];
    /* Before A75: the aggregate's lb_policy applies to its leaves... */
    assert_int_equal(t->leaves[0]->policy, XLB_LB_POLICY_RING_HASH);
    assert_int_equal(t->leaves[1]->policy, XLB_LB_POLICY_RING_HASH);
    assert_string_equal(t->leaves[0]->policy_from, "agg");
    /* ... and one override host spans them: a session to c2's endpoint is honoured. */
    uint32_t leaf;
    assert_int_equal(session_to_second_leaf(f, &leaf), XLB_LB_OVERRIDE_USED);
    assert_int_equal(leaf, 1);
    /* A plain pick still goes to the first leaf with a usable priority. */
    struct xlb_lb_request req = {.connection_id = 7};
    struct xlb_lb_trace tr;
    assert_int_equal(xlb_lb_pick(xlb_lb_trees_vip(f->lb, 0), &req, &f->w, &tr), XLB_LB_PICKED);
    assert_ptr_equal(tr.cluster, t->leaves[0]);
}

static void count_cluster(const struct xlb_lb_cluster *c, void *arg)
{
    (void)c;
    ++*(int *)arg;
}

static int n_clusters(struct lbs_fixture *f)
{
    int n = 0;
    xlb_lb_trees_each_cluster(f->lb, count_cluster, &n);
    return n;
}

/* Both VIPs of the variants test, recompiled. */
static void update_two(struct lbs_fixture *f)
{
    dm_step(f->dm);
    size_t index[2] = {0, 1};
    xlb_lb_trees_update(f->lb, &f->dm->dm, index, 2, f->now);
}

static void test_variants_come_and_go_by_name(void **state)
{
    struct lbs_fixture *f = *state;
    /* VIP 0 uses c1 itself; VIP 1 the aggregate, whose policy makes variants of c1 and c2. */
    xlb_lb_trees_set_aggregate_compat(f->lb, true);
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L4, "c1") == 0);
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L4, "agg") == 1);
    dm_put(f->dm, XLB_XDS_CDS, "agg", AGG_RING_HASH);
    dm_put_eds_cluster(f->dm, "c1", NULL);
    dm_put_eds_cluster(f->dm, "c2", NULL);
    dm_put_endpoints(f->dm, "c1");
    dm_put_endpoints(f->dm, "c2");
    update_two(f);
    const struct xlb_lb_cluster *own = xlb_lb_trees_cluster(f->lb, "c1");
    assert_non_null(own);
    assert_null(own->policy_from);
    assert_null(xlb_lb_trees_cluster(f->lb, "c2")); /* only a variant of it */
    const struct xlb_lb_target *t = &xlb_lb_trees_vip(f->lb, 1)->targets[0];
    assert_ptr_not_equal(t->leaves[0], own);
    assert_string_equal(t->leaves[0]->policy_from, "agg");
    assert_int_equal(n_clusters(f), 2); /* c1 itself, and c2's variant */
    uint32_t slot_c1 = xlb_lb_trees_cluster_slot(f->lb, "c1");
    uint32_t slot_c2 = xlb_lb_trees_cluster_slot(f->lb, "c2");
    assert_int_not_equal(slot_c2, XLB_LB_NO_SLOT);
    assert_int_not_equal(slot_c1, slot_c2);

    /* The aggregate goes: its variants with it, c1 itself stays as it was. */
    dm_gone(f->dm, XLB_XDS_CDS, "agg");
    update_two(f);
    assert_ptr_equal(xlb_lb_trees_cluster(f->lb, "c1"), own);
    assert_int_equal(n_clusters(f), 1);
    assert_int_equal(xlb_lb_trees_cluster_slot(f->lb, "c2"), slot_c2); /* for life */

    /* And comes back: the variants are new, the slots the same. c2 was forgotten with its
     * watch (as gRPC's XdsClient does): the server sends it again for the new watch. */
    dm_put(f->dm, XLB_XDS_CDS, "agg", AGG_RING_HASH);
    update_two(f);
    dm_put_eds_cluster(f->dm, "c2", NULL);
    dm_put_endpoints(f->dm, "c2");
    update_two(f);
    assert_int_equal(n_clusters(f), 2);
    t = &xlb_lb_trees_vip(f->lb, 1)->targets[0];
    assert_int_equal(t->n_leaves, 2);
    assert_int_equal(t->leaves[0]->cluster_slot, slot_c1);
    assert_int_equal(t->leaves[1]->cluster_slot, slot_c2);
    assert_ptr_equal(xlb_lb_trees_cluster(f->lb, "c1"), own);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_outlier_ejection_reaches_the_picks, setup,
                                        lbs_teardown),
        cmocka_unit_test_setup_teardown(test_ejecting_a_whole_priority_fails_over, setup,
                                        lbs_teardown),
        cmocka_unit_test_setup_teardown(test_endpoint_slots_are_stable_and_reused_after_grace,
                                        setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(test_unchanged_cluster_is_not_recompiled, setup,
                                        lbs_teardown),
        cmocka_unit_test_setup_teardown(test_cluster_change_keeps_the_routes, setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(
            test_draining_endpoint_is_reported_drained_after_idle_timeout, setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(test_warming_vip_keeps_its_tree, setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(test_aggregate_follows_a75_by_default, setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(test_aggregate_backward_compat, setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(test_removed_cluster_fails_its_picks, setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(test_variants_come_and_go_by_name, setup, lbs_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
