/*
 * The pick over compiled clusters (lib/lb) where something other than endpoint choice
 * decides: aggregate clusters failing over between leaves (A75), drop overloads and circuit
 * breaking. Seeded randomness, distributions at 5 sigma.
 */
#include "lb_test.h"
#include "xlb_const.h"

/* ---- A75: aggregate ---- */

static struct xlb_lb_cluster *leaf(const char *name, const char *a, const char *b, bool down)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, a, 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, b, 1, XLB_HEALTH_HEALTHY);
    const bool ejected[2] = {down, down};
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    cfg.name = XLB_UNCONST(name);
    struct xlb_lb_cluster *c = compile(name, &cfg, e, ejected, 2);
    free(e);
    return c;
}

static void assert_leaf_takes_all(struct vip1 *v, uint32_t leaf_index)
{
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    for (uint32_t i = 0; i < 500; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(v, &w, i, NULL, &t), XLB_LB_PICKED);
        assert_ptr_equal(t.cluster, v->leaves[leaf_index]);
        assert_int_equal(t.target, 0);
    }
    xlb_lb_worker_fini(&w);
}

static void test_aggregate_failover_and_recovery(void **state)
{
    (void)state;
    struct vip1 v;
    struct xlb_lb_cluster *leaves[2] = {
        leaf("primary", "198.18.0.1:80", "198.18.0.2:80", false),
        leaf("secondary", "198.18.1.1:80", "198.18.1.2:80", false),
    };
    vip_init(&v, "agg", leaves, 2);
    assert_leaf_takes_all(&v, 0);

    /* The first leaf loses every usable endpoint: the second takes every pick. */
    xlb_lb_cluster_release(v.leaves[0]);
    v.leaves[0] = leaf("primary", "198.18.0.1:80", "198.18.0.2:80", true);
    assert_leaf_takes_all(&v, 1);

    /* It recovers: it takes them again. */
    xlb_lb_cluster_release(v.leaves[0]);
    v.leaves[0] = leaf("primary", "198.18.0.1:80", "198.18.0.2:80", false);
    assert_leaf_takes_all(&v, 0);

    /* Both down: the last leaf decides, and has nothing. */
    xlb_lb_cluster_release(v.leaves[0]);
    xlb_lb_cluster_release(v.leaves[1]);
    v.leaves[0] = leaf("primary", "198.18.0.1:80", "198.18.0.2:80", true);
    v.leaves[1] = leaf("secondary", "198.18.1.1:80", "198.18.1.2:80", true);
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_trace t;
    assert_int_equal(pick(&v, &w, 0, NULL, &t), XLB_LB_NO_ENDPOINT);
    assert_ptr_equal(t.cluster, v.leaves[1]);
    xlb_lb_worker_fini(&w);

    /* A target that is not ready fails every pick. */
    v.target.ready = false;
    assert_int_equal(pick(&v, &w, 0, NULL, &t), XLB_LB_NOT_READY);
    v.target.ready = true;
    vip_done(&v);
}

/* ---- drop overloads ---- */

/* .1 and .2 in one locality. */
static struct eds *one_locality(void)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    return e;
}

/* e, round robin, in cluster slot 3, with load counters. */
static void drop_fixture(struct fixture *f, struct eds *e)
{
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    fixture_start(f, e, &cfg, NULL, 3, true);
}

static void test_drop_ten_percent(void **state)
{
    (void)state;
    struct eds *e = one_locality();
    eds_drop(e, "lb", 100000);
    struct fixture f;
    drop_fixture(&f, e);
    uint32_t slot = drop_slot_of("lb");
    const uint32_t n = 100000;
    uint64_t dropped = 0, picked = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_lb_trace t;
        enum xlb_lb_outcome o = pick(&f.v, &f.w, i, NULL, &t);
        if (o == XLB_LB_DROPPED) {
            dropped++;
            assert_non_null(t.drop_category);
            assert_string_equal(t.drop_category, "lb");
            assert_int_equal(t.endpoint, XLB_PICK_NONE);
        } else {
            assert_int_equal(o, XLB_LB_PICKED);
            assert_null(t.drop_category);
            picked++;
        }
    }
    assert_binomial(dropped, n, 0.1);
    assert_int_equal(f.load->drops[slot], dropped);
    assert_int_equal(f.load->clusters[3].started, picked);
    assert_int_equal(f.load->clusters[3].circuit_dropped, 0);
    fixture_done(&f);
}

/* Categories draw in order: 10% "a", then 20% of the rest "b". */
static void test_drop_two_categories_in_order(void **state)
{
    (void)state;
    struct eds *e = one_locality();
    eds_drop(e, "a", 100000);
    eds_drop(e, "b", 200000);
    struct fixture f;
    drop_fixture(&f, e);
    uint32_t slot_a = drop_slot_of("a"), slot_b = drop_slot_of("b");
    assert_int_not_equal(slot_a, slot_b);
    const uint32_t n = 100000;
    uint64_t a = 0, b = 0, picked = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_lb_trace t;
        if (pick(&f.v, &f.w, i, NULL, &t) == XLB_LB_PICKED) {
            picked++;
            continue;
        }
        assert_int_equal(t.outcome, XLB_LB_DROPPED);
        if (strcmp(t.drop_category, "a") == 0)
            a++;
        else if (strcmp(t.drop_category, "b") == 0)
            b++;
        else
            fail_msg("category %s", t.drop_category);
    }
    assert_binomial(a, n, 0.1);
    assert_binomial(b, n, 0.9 * 0.2);
    assert_binomial(picked, n, 0.9 * 0.8);
    assert_int_equal(f.load->drops[slot_a], a);
    assert_int_equal(f.load->drops[slot_b], b);
    fixture_done(&f);
}

static void test_drop_everything(void **state)
{
    (void)state;
    struct eds *e = one_locality();
    eds_drop(e, "all", 1000000);
    struct fixture f;
    drop_fixture(&f, e);
    uint32_t slot = drop_slot_of("all");
    /* Even a session to a healthy endpoint is dropped: drops come first. */
    struct xlb_lb_session s = session_of(NULL, "198.18.0.1:80", NULL);
    for (uint32_t i = 0; i < 10000; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&f.v, &f.w, i, i % 2 ? &s : NULL, &t), XLB_LB_DROPPED);
        assert_string_equal(t.drop_category, "all");
    }
    assert_int_equal(f.load->drops[slot], 10000);
    assert_int_equal(f.load->clusters[3].started, 0);
    fixture_done(&f);
}

/* ---- circuit breaker ---- */

static void test_circuit_breaker(void **state)
{
    (void)state;
    struct eds *e = one_locality();
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    cfg.max_requests = 2;
    const uint32_t cs = 5;
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, cs));
    struct xlb_worker_load *loads = loads_new(2);
    struct xlb_lb_worker w;
    worker(&w, &loads[0], loads, 2);
    struct xlb_lb_trace t;

    loads[0].clusters[cs].started = 2;
    assert_int_equal(pick(&v, &w, 0, NULL, &t), XLB_LB_CIRCUIT_OPEN);
    assert_int_equal(t.endpoint, XLB_PICK_NONE);
    assert_int_equal(loads[0].clusters[cs].circuit_dropped, 1);

    /* One finishes: one more fits, and that pick fills the breaker again. */
    loads[0].clusters[cs].finished = 1;
    assert_int_equal(pick(&v, &w, 1, NULL, &t), XLB_LB_PICKED);
    assert_int_equal(loads[0].clusters[cs].started, 3);
    assert_int_equal(pick(&v, &w, 2, NULL, &t), XLB_LB_CIRCUIT_OPEN);

    /* One in flight: picked. */
    loads[0].clusters[cs].started = 1;
    loads[0].clusters[cs].finished = 0;
    assert_int_equal(pick(&v, &w, 3, NULL, &t), XLB_LB_PICKED);

    /* In flight is summed over every worker. */
    loads[0].clusters[cs].started = 1;
    loads[1].clusters[cs].started = 1;
    assert_int_equal(pick(&v, &w, 4, NULL, &t), XLB_LB_CIRCUIT_OPEN);
    /* A session does not get past an open breaker either. */
    struct xlb_lb_session s = session_of(NULL, "198.18.0.1:80", NULL);
    assert_int_equal(pick(&v, &w, 5, &s, &t), XLB_LB_CIRCUIT_OPEN);
    assert_int_equal(loads[0].clusters[cs].circuit_dropped, 4);
    assert_int_equal(loads[1].clusters[cs].circuit_dropped, 0); /* counted by the picker only */
    xlb_lb_worker_fini(&w);

    /* Another cluster slot's requests do not count. */
    memset(loads, 0, 2 * sizeof(*loads));
    loads[1].clusters[cs + 1].started = 100;
    worker(&w, &loads[0], loads, 2);
    assert_int_equal(pick(&v, &w, 6, NULL, &t), XLB_LB_PICKED);
    xlb_lb_worker_fini(&w);
    vip_done(&v);

    /* max_requests 0: no limit. */
    cfg.max_requests = 0;
    vip_one(&v, compile("web", &cfg, e, NULL, cs));
    loads[0].clusters[cs].started = 1000000;
    worker(&w, &loads[0], loads, 2);
    assert_int_equal(pick(&v, &w, 7, NULL, &t), XLB_LB_PICKED);
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(loads);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aggregate_failover_and_recovery),
        cmocka_unit_test(test_drop_ten_percent),
        cmocka_unit_test(test_drop_two_categories_in_order),
        cmocka_unit_test(test_drop_everything),
        cmocka_unit_test(test_circuit_breaker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
