/*
 * Weighted round robin (A58) through the LB tree over a worker's subchannels: the shares
 * follow the weights this worker's load reports set, READY endpoints only, round robin until
 * two endpoints have weights out of blackout, new shares every weight_update_period; without
 * connectivity (L4, splice, simulate) it is round robin. Explicit clocks, no sleeping.
 */
#include "lb_test.h"
#include "xlb_lb_connectivity.h"

#define T0 1000000u

static struct xlb_cluster_config wrr(uint64_t blackout_ms)
{
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_WRR);
    xlb_wrr_config_default(&cfg.wrr);
    cfg.wrr.blackout_ms = blackout_ms;
    return cfg;
}

static void start(struct fixture *f, const struct xlb_cluster_config *cfg)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    fixture_start(f, e, cfg, NULL, 1, true);
    assert_int_equal(f->v.leaves[0]->policy, XLB_LB_POLICY_WRR);
    assert_int_equal(xlb_lb_connectivity_init(&f->w), 0);
    for (uint32_t i = 0; i < 3; i++)
        xlb_lb_connectivity_set(&f->w, ENDPOINT_SLOT_BASE + i, XLB_CONN_READY, 0);
}

/* What a load report of this utilization (at 100 qps) does to the endpoint on this worker. */
static void report(struct fixture *f, uint32_t endpoint, double utilization, uint64_t now_ms)
{
    struct xlb_wrr_report r = {.cpu_utilization = utilization, .qps = 100};
    assert_true(xlb_wrr_weight_update(&f->load->endpoints[ENDPOINT_SLOT_BASE + endpoint].weight,
                                      1.0f, &r, now_ms));
}

static void picks(struct fixture *f, uint32_t n, uint64_t now_ms, uint32_t count[3])
{
    count[0] = count[1] = count[2] = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_lb_request req = {.connection_id = i, .connectivity = true, .now_ms = now_ms};
        struct xlb_lb_trace t;
        assert_int_equal(xlb_lb_pick(&f->v.vip, &req, &f->w, &t), XLB_LB_PICKED);
        count[t.endpoint]++;
    }
}

/* Utilizations 0.2, 0.4 and 0.8 at the same qps: weights 500, 250, 125, shares 4:2:1. */
static void test_shares_follow_utilization(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = wrr(0);
    struct fixture f;
    start(&f, &cfg);
    report(&f, 0, 0.2, T0);
    report(&f, 1, 0.4, T0);
    report(&f, 2, 0.8, T0);
    uint32_t count[3];
    picks(&f, 7000, T0, count);
    assert_in_range(count[0], 3990, 4010);
    assert_in_range(count[1], 1990, 2010);
    assert_in_range(count[2], 990, 1010);
    assert_int_equal(f.load->endpoints[ENDPOINT_SLOT_BASE + 0].weight.scaled, XLB_WRR_SCALE);
    fixture_done(&f);
}

/* In blackout (10 s by default) the weights are not used: round robin; after it they are. */
static void test_blackout_then_weights(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = wrr(10000);
    struct fixture f;
    start(&f, &cfg);
    report(&f, 0, 0.2, T0);
    report(&f, 1, 0.8, T0);
    uint32_t count[3];
    picks(&f, 300, T0 + 5000, count);
    assert_int_equal(count[0], 100);
    assert_int_equal(count[1], 100);
    assert_int_equal(count[2], 100);
    /* After the blackout (reports kept coming): 400 and 100, and the mean 250 for endpoint 2,
     * which never reported. */
    report(&f, 0, 0.2, T0 + 10000);
    report(&f, 1, 0.8, T0 + 10000);
    picks(&f, 7500, T0 + 11000, count);
    assert_in_range(count[0], 3990, 4010);
    assert_in_range(count[1], 990, 1010);
    assert_in_range(count[2], 2490, 2510);
    fixture_done(&f);
}

/* Only READY endpoints: the one CONNECTING gets nothing, even with the largest weight; once
 * READY again (a new blackout for it, here 0) the shares include it at once. */
static void test_ready_only(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = wrr(0);
    struct fixture f;
    start(&f, &cfg);
    report(&f, 0, 0.2, T0);
    report(&f, 1, 0.4, T0);
    report(&f, 2, 0.8, T0);
    xlb_lb_connectivity_set(&f.w, ENDPOINT_SLOT_BASE + 0, XLB_CONN_CONNECTING, T0);
    uint32_t count[3];
    picks(&f, 300, T0, count);
    assert_int_equal(count[0], 0);
    assert_in_range(count[1], 195, 205);
    xlb_lb_connectivity_set(&f.w, ENDPOINT_SLOT_BASE + 0, XLB_CONN_READY, T0);
    report(&f, 0, 0.2, T0 + 1);
    picks(&f, 700, T0 + 1, count);
    assert_in_range(count[0], 395, 405);
    fixture_done(&f);
}

/* New reports change the shares only at the next update period (1 s by default). */
static void test_update_period(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = wrr(0);
    struct fixture f;
    start(&f, &cfg);
    report(&f, 0, 0.2, T0);
    report(&f, 1, 0.4, T0);
    report(&f, 2, 0.8, T0);
    uint32_t count[3];
    picks(&f, 7, T0, count);
    report(&f, 0, 0.8, T0 + 10);
    report(&f, 2, 0.2, T0 + 10);
    picks(&f, 700, T0 + 999, count);
    assert_true(count[0] > count[2]);
    picks(&f, 700, T0 + 1000, count);
    assert_true(count[2] > count[0]);
    assert_in_range(count[2], 395, 405);
    fixture_done(&f);
}

/* Without connectivity (L4 and splice VIPs, simulate) no report arrives: round robin. */
static void test_round_robin_without_connectivity(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = wrr(0);
    struct fixture f;
    start(&f, &cfg);
    report(&f, 0, 0.2, T0);
    report(&f, 1, 0.8, T0);
    uint32_t count[3] = {0};
    for (uint32_t i = 0; i < 300; i++)
        count[pick_ok(&f, i, NULL).endpoint]++;
    assert_int_equal(count[0], 100);
    assert_int_equal(count[1], 100);
    fixture_done(&f);
}

/* xlbctl simulate: picks without connectivity weigh by the shares it is given (the workers'
 * mean); with no share for the locality they are round robin. */
static void test_simulate_uses_worker_shares(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = wrr(0);
    struct fixture f;
    start(&f, &cfg);
    uint32_t *shares = calloc(XLB_ENDPOINT_SLOTS, sizeof(uint32_t));
    assert_non_null(shares);
    f.w.wrr_shares = shares;
    uint32_t count[3] = {0};
    for (uint32_t i = 0; i < 300; i++)
        count[pick_ok(&f, i, NULL).endpoint]++;
    assert_int_equal(count[0], 100);
    assert_int_equal(count[2], 100);
    shares[ENDPOINT_SLOT_BASE + 0] = XLB_WRR_SCALE;
    shares[ENDPOINT_SLOT_BASE + 1] = XLB_WRR_SCALE / 2;
    shares[ENDPOINT_SLOT_BASE + 2] = XLB_WRR_SCALE / 4;
    count[0] = count[1] = count[2] = 0;
    for (uint32_t i = 0; i < 7000; i++)
        count[pick_ok(&f, i, NULL).endpoint]++;
    assert_in_range(count[0], 3990, 4010);
    assert_in_range(count[1], 1990, 2010);
    assert_in_range(count[2], 990, 1010);
    f.w.wrr_shares = NULL;
    free(shares);
    fixture_done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shares_follow_utilization),
        cmocka_unit_test(test_blackout_then_weights),
        cmocka_unit_test(test_ready_only),
        cmocka_unit_test(test_update_period),
        cmocka_unit_test(test_round_robin_without_connectivity),
        cmocka_unit_test(test_simulate_uses_worker_shares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
