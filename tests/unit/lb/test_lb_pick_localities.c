/*
 * The pick over compiled clusters (lib/lb), driven from hand-built configs compiled by
 * control/lb_compile: weighted localities and round robin (A27), priorities (A56). Seeded
 * randomness, distributions at 5 sigma.
 */
#include "lb_test.h"

/* ---- A27: weighted localities, round robin inside ---- */

/* Localities 2:1, two endpoints each: A's endpoints get 1/3 each, B's 1/6 each. */
static void test_weighted_localities(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(2);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct fixture f;
    fixture_start(&f, e, &cfg, NULL, 1, true);

    const uint32_t n = 60000;
    uint64_t count[4] = {0}, per_locality[2] = {0};
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, NULL);
        assert_int_equal(t.priority, 0);
        assert_true(t.endpoint < 4);
        assert_int_equal(t.slot, ENDPOINT_SLOT_BASE + t.endpoint);
        assert_int_equal(t.locality, t.endpoint / 2);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_NONE);
        count[t.endpoint]++;
        per_locality[t.locality]++;
    }
    assert_binomial(per_locality[0], n, 2.0 / 3.0);
    assert_binomial(count[0], n, 1.0 / 3.0);
    assert_binomial(count[1], n, 1.0 / 3.0);
    assert_binomial(count[2], n, 1.0 / 6.0);
    assert_binomial(count[3], n, 1.0 / 6.0);
    /* Round robin splits each locality's share evenly, to within one pick. */
    assert_true(llabs((long long)count[0] - (long long)count[1]) <= 1);
    assert_true(llabs((long long)count[2] - (long long)count[3]) <= 1);
    /* Each locality's issued counter saw exactly its picks. */
    const struct xlb_lb_priority *p = &f.v.leaves[0]->priorities[0];
    assert_int_equal(f.load->localities[p->localities[0].load_slot].issued, per_locality[0]);
    assert_int_equal(f.load->localities[p->localities[1].load_slot].issued, per_locality[1]);
    assert_int_equal(f.load->clusters[1].started, n);
    fixture_done(&f);
}

/* One locality, endpoint weights 1, 5, 10, 1: round robin visits each in EDS order, evenly. */
static void test_round_robin_in_turn_ignores_weights(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 5, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.3:80", 10, XLB_HEALTH_UNKNOWN);
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_HEALTHY);
    struct fixture f;
    fixture_rr(&f, e, NULL);

    uint32_t prev = XLB_PICK_NONE, count[4] = {0};
    for (uint32_t i = 0; i < 400; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, NULL);
        if (prev != XLB_PICK_NONE)
            assert_int_equal(t.endpoint, (prev + 1) % 4);
        prev = t.endpoint;
        count[t.endpoint]++;
    }
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(count[i], 100);
    fixture_done(&f);
}

/* An ejected endpoint leaves the cycle; the others keep their turn. */
static void test_round_robin_skips_ejected(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_HEALTHY);
    const bool ejected[4] = {false, true, false, false};
    struct fixture f;
    fixture_rr(&f, e, ejected);

    static const uint32_t next[4] = {2, XLB_PICK_NONE, 3, 0};
    uint32_t prev = XLB_PICK_NONE, count[4] = {0};
    for (uint32_t i = 0; i < 300; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, NULL);
        assert_int_not_equal(t.endpoint, 1);
        if (prev != XLB_PICK_NONE)
            assert_int_equal(t.endpoint, next[prev]);
        prev = t.endpoint;
        count[t.endpoint]++;
    }
    assert_int_equal(count[0], 100);
    assert_int_equal(count[2], 100);
    assert_int_equal(count[3], 100);
    fixture_done(&f);
}

/* ---- A56: priorities ---- */

/* Priority 0: .1 and .2; priority 1: .3 and .4 (one locality each). */
static struct eds *two_priorities(enum xlb_health_status p0_health)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, p0_health);
    eds_endpoint(e, "198.18.0.2:80", 1, p0_health);
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_HEALTHY);
    return e;
}

/* Picks all land in `priority`, spread evenly over its two endpoints. */
static void assert_all_in_priority(struct fixture *f, uint32_t priority)
{
    uint32_t count[4] = {0};
    for (uint32_t i = 0; i < 1000; i++) {
        struct xlb_lb_trace t = pick_ok(f, i, NULL);
        assert_int_equal(t.priority, priority);
        assert_int_equal(f->v.leaves[0]->endpoints[t.endpoint].priority, priority);
        count[t.endpoint]++;
    }
    assert_int_equal(count[2 * priority], 500);
    assert_int_equal(count[2 * priority + 1], 500);
}

/* The two-priority cluster with p0_health and the given endpoints ejected: its chosen
 * priority, and where picks land. */
static void assert_priority(enum xlb_health_status p0_health, const bool *ejected,
                            uint32_t priority)
{
    struct fixture f;
    fixture_rr(&f, two_priorities(p0_health), ejected);
    assert_int_equal(f.v.leaves[0]->chosen_priority, priority);
    assert_all_in_priority(&f, priority);
    fixture_done(&f);
}

static void test_priority_0_preferred(void **state)
{
    (void)state;
    assert_priority(XLB_HEALTH_HEALTHY, NULL, 0);

    /* One priority-0 endpoint ejected: priority 0 still takes everything, on the other one. */
    const bool one_ejected[4] = {true, false, false, false};
    struct fixture f;
    fixture_rr(&f, two_priorities(XLB_HEALTH_HEALTHY), one_ejected);
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(pick_ok(&f, i, NULL).endpoint, 1);
    fixture_done(&f);
}

static void test_priority_failover_when_all_ejected(void **state)
{
    (void)state;
    const bool ejected[4] = {true, true, false, false};
    assert_priority(XLB_HEALTH_HEALTHY, ejected, 1);
}

/* Draining endpoints cannot take new picks, so an all-DRAINING priority 0 fails over too. */
static void test_priority_failover_when_all_draining(void **state)
{
    (void)state;
    assert_priority(XLB_HEALTH_DRAINING, NULL, 1);
}

static void test_no_usable_endpoint(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    const bool ejected[4] = {true, true, true, true};
    struct fixture f;
    fixture_start(&f, two_priorities(XLB_HEALTH_HEALTHY), &cfg, ejected, 1, true);
    for (uint32_t i = 0; i < 10; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&f.v, &f.w, i, NULL, &t), XLB_LB_NO_ENDPOINT);
        assert_int_equal(t.outcome, XLB_LB_NO_ENDPOINT);
        assert_int_equal(t.endpoint, XLB_PICK_NONE);
        assert_int_equal(t.priority, XLB_PICK_NONE);
        assert_ptr_equal(t.cluster, f.v.leaves[0]);
    }
    assert_int_equal(f.load->clusters[1].started, 0); /* nothing was started */
    fixture_done(&f);

    /* No assignment at all behaves the same. */
    fixture_rr(&f, NULL, NULL);
    struct xlb_lb_trace t;
    assert_int_equal(pick(&f.v, &f.w, 1, NULL, &t), XLB_LB_NO_ENDPOINT);
    fixture_done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weighted_localities),
        cmocka_unit_test(test_round_robin_in_turn_ignores_weights),
        cmocka_unit_test(test_round_robin_skips_ejected),
        cmocka_unit_test(test_priority_0_preferred),
        cmocka_unit_test(test_priority_failover_when_all_ejected),
        cmocka_unit_test(test_priority_failover_when_all_draining),
        cmocka_unit_test(test_no_usable_endpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
