/*
 * Least request (A48) through the LB tree: a cluster compiled from LEAST_REQUEST picks, in
 * its locality, the drawn endpoint with the fewest requests in flight on this worker; every
 * pick counts one more in flight on the endpoint it chose; with connectivity (the L7 stream
 * mode) only READY endpoints are drawn. Seeded randomness.
 */
#include "lb_test.h"
#include "xlb_lb_connectivity.h"

#define T0 1000000u

static struct xlb_cluster_config least_request(uint32_t choice_count)
{
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_LEAST_REQUEST);
    cfg.choice_count = choice_count;
    return cfg;
}

static struct eds *three_endpoints(void)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    return e;
}

static uint32_t *in_flight(struct fixture *f, uint32_t endpoint)
{
    return &f->load->endpoints[ENDPOINT_SLOT_BASE + endpoint].in_flight;
}

/* An endpoint holding 100 long calls gets no new one while the others have fewer; the picks
 * count their calls in flight, which stay balanced between the other two. */
static void test_busy_endpoint_avoided(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = least_request(10);
    struct fixture f;
    fixture_start(&f, three_endpoints(), &cfg, NULL, 1, true);
    assert_int_equal(f.v.leaves[0]->policy, XLB_LB_POLICY_LEAST_REQUEST);
    *in_flight(&f, 0) = 100;
    uint32_t count[3] = {0};
    for (uint32_t i = 0; i < 100; i++)
        count[pick_ok(&f, i, NULL).endpoint]++;
    assert_int_equal(count[0], 0);
    assert_int_equal(*in_flight(&f, 0), 100);
    assert_int_equal(*in_flight(&f, 1), count[1]);
    assert_int_equal(*in_flight(&f, 2), count[2]);
    /* Ten draws out of two candidates rarely miss the less loaded one: within a few. */
    assert_true(count[1] >= 45 && count[2] >= 45);
    assert_int_equal(f.load->clusters[1].started, 100);
    fixture_done(&f);
}

/* Round robin on the same counts would give the busy endpoint its third. */
static void test_round_robin_ignores_in_flight(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct fixture f;
    fixture_start(&f, three_endpoints(), &cfg, NULL, 1, true);
    *in_flight(&f, 0) = 100;
    uint32_t count[3] = {0};
    for (uint32_t i = 0; i < 99; i++)
        count[pick_ok(&f, i, NULL).endpoint]++;
    assert_int_equal(count[0], 33);
    fixture_done(&f);
}

/* With connectivity only READY endpoints are drawn: the idle endpoint still CONNECTING gets
 * nothing, the busy READY one gets a call only when it is the less loaded. */
static void test_ready_only(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = least_request(2);
    struct fixture f;
    fixture_start(&f, three_endpoints(), &cfg, NULL, 1, true);
    assert_int_equal(xlb_lb_connectivity_init(&f.w), 0);
    xlb_lb_connectivity_set(&f.w, ENDPOINT_SLOT_BASE + 0, XLB_CONN_READY, 0);
    xlb_lb_connectivity_set(&f.w, ENDPOINT_SLOT_BASE + 1, XLB_CONN_CONNECTING, 0);
    xlb_lb_connectivity_set(&f.w, ENDPOINT_SLOT_BASE + 2, XLB_CONN_READY, 0);
    *in_flight(&f, 0) = 20;
    uint32_t count[3] = {0};
    for (uint32_t i = 0; i < 200; i++) {
        struct xlb_lb_request req = {.connection_id = i, .connectivity = true, .now_ms = T0};
        struct xlb_lb_trace t;
        assert_int_equal(xlb_lb_pick(&f.v.vip, &req, &f.w, &t), XLB_LB_PICKED);
        count[t.endpoint]++;
    }
    assert_int_equal(count[1], 0);
    /* Endpoint 2 catches up with 0's 20 first; then they share (ties go to the first draw). */
    assert_true(count[2] >= 100);
    assert_int_equal(*in_flight(&f, 0) + *in_flight(&f, 2), 220);
    fixture_done(&f);
}

/* Weights differ: weight 3 with 2 in flight beats weight 1 with 1 (3/3 > 1/2, Envoy's bias 1). */
static void test_weights_scale_in_flight(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 3, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = least_request(10);
    struct fixture f;
    fixture_start(&f, e, &cfg, NULL, 1, true);
    uint32_t count[2] = {0};
    for (uint32_t i = 0; i < 400; i++)
        count[pick_ok(&f, i, NULL).endpoint]++;
    /* In flight settles near 3:1 (each pick adds one to the winner). */
    assert_true(count[0] >= 280 && count[0] <= 320);
    fixture_done(&f);
}

/* xlbctl simulate: the sums over workers replace the worker's own counts, and the trace shows
 * the candidates with those sums. */
static void test_simulate_sums_and_trace(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = least_request(10);
    struct fixture f;
    fixture_start(&f, three_endpoints(), &cfg, NULL, 1, false);
    uint32_t *sums = calloc(XLB_ENDPOINT_SLOTS, sizeof(uint32_t));
    assert_non_null(sums);
    sums[ENDPOINT_SLOT_BASE + 0] = 7;
    sums[ENDPOINT_SLOT_BASE + 1] = 3;
    sums[ENDPOINT_SLOT_BASE + 2] = 5;
    struct xlb_least_request_trace lt;
    f.w.in_flight_sums = sums;
    f.w.least_request_trace = &lt;
    for (uint32_t i = 0; i < 20; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, NULL);
        assert_int_equal(lt.n_candidates, 10);
        uint32_t least = UINT32_MAX;
        for (uint32_t c = 0; c < lt.n_candidates; c++) {
            assert_int_equal(lt.in_flight[c], sums[ENDPOINT_SLOT_BASE + lt.slots[c]]);
            least = lt.in_flight[c] < least ? lt.in_flight[c] : least;
        }
        assert_int_equal(sums[ENDPOINT_SLOT_BASE + t.endpoint], least);
    }
    f.w.in_flight_sums = NULL;
    f.w.least_request_trace = NULL;
    free(sums);
    fixture_done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busy_endpoint_avoided),
        cmocka_unit_test(test_round_robin_ignores_in_flight),
        cmocka_unit_test(test_ready_only),
        cmocka_unit_test(test_weights_scale_in_flight),
        cmocka_unit_test(test_simulate_sums_and_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
