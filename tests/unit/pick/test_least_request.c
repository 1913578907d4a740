/* Least request (A48): choice count rules, fewest in flight wins, weights, unusable endpoints. */
#include <errno.h>

#include "pick_test.h"
#include "xlb_least_request.h"

static struct xlb_least_request *build(const uint32_t *slots, const uint32_t *weights, uint32_t n,
                                       uint32_t choices)
{
    struct xlb_least_request *lr;
    assert_int_equal(xlb_least_request_build(slots, weights, n, choices, &lr), 0);
    return lr;
}

/* A48: absent gives 2, below 2 is refused (NACK), above 10 is capped. */
static void test_choice_count_rules(void **state)
{
    uint32_t out = 0;
    assert_int_equal(xlb_least_request_choice_count(false, 0, &out), 0);
    assert_int_equal(out, 2);
    assert_int_equal(xlb_least_request_choice_count(true, 0, &out), -EINVAL);
    assert_int_equal(xlb_least_request_choice_count(true, 1, &out), -EINVAL);
    assert_int_equal(xlb_least_request_choice_count(true, 2, &out), 0);
    assert_int_equal(out, 2);
    assert_int_equal(xlb_least_request_choice_count(true, 7, &out), 0);
    assert_int_equal(out, 7);
    assert_int_equal(xlb_least_request_choice_count(true, 11, &out), 0);
    assert_int_equal(out, 10);
    assert_int_equal(xlb_least_request_choice_count(true, UINT64_MAX, &out), 0);
    assert_int_equal(out, 10);
}

static void test_build_rejects_bad_input(void **state)
{
    const uint32_t slots[] = {1};
    struct xlb_least_request *lr = NULL;
    assert_int_equal(xlb_least_request_build(slots, NULL, 0, 2, &lr), -EINVAL);
    assert_int_equal(xlb_least_request_build(slots, NULL, 1, 1, &lr), -EINVAL);
    assert_int_equal(xlb_least_request_build(slots, NULL, 1, 11, &lr), -EINVAL);
    assert_null(lr);
    assert_int_equal(xlb_least_request_pick(NULL, NULL, NULL, NULL, NULL), XLB_PICK_NONE);
}

/*
 * Two endpoints, one busy: with 2 draws the idle one wins unless both draws hit the busy one,
 * so it takes 3/4 of the picks (gRPC's power of two choices), not 1/2 as random would.
 */
static void test_idle_endpoint_wins_three_quarters(void **state)
{
    const uint32_t slots[] = {0, 1};
    uint32_t in_flight[2] = {5, 0};
    struct xlb_least_request *lr = build(slots, NULL, 2, 2);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 7);
    enum { PICKS = 200000 };
    uint64_t idle = 0;
    for (int i = 0; i < PICKS; i++)
        idle += xlb_least_request_pick(lr, in_flight, NULL, &rng, NULL) == 1;
    assert_binomial(idle, PICKS, 0.75);
    xlb_least_request_free(lr);
}

/* With choice_count = n = 10, nearly every pick sees the single idle endpoint among busy ones. */
static void test_more_choices_find_the_idle_one(void **state)
{
    uint32_t slots[10], in_flight[10];
    for (uint32_t i = 0; i < 10; i++) {
        slots[i] = i;
        in_flight[i] = 3;
    }
    in_flight[6] = 0;
    struct xlb_least_request *lr = build(slots, NULL, 10, 10);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 8);
    enum { PICKS = 100000 };
    uint64_t idle = 0;
    for (int i = 0; i < PICKS; i++)
        idle += xlb_least_request_pick(lr, in_flight, NULL, &rng, NULL) == 6;
    /* missed only when all 10 draws avoid it: 0.9^10 */
    assert_binomial(idle, PICKS, 1.0 - pow(0.9, 10));
    xlb_least_request_free(lr);
}

/*
 * Unequal weights: weight 3 with 1 in flight (effective 3/2) beats weight 1 with none in
 * flight (effective 1/1), so the heavy endpoint wins whenever it is drawn (3/4 of picks);
 * plain least request would give it only the picks where both draws are it (1/4).
 */
static void test_weights_bias_the_comparison(void **state)
{
    const uint32_t slots[] = {0, 1};
    const uint32_t weights[] = {3, 1};
    uint32_t in_flight[2] = {1, 0};
    struct xlb_least_request *weighted = build(slots, weights, 2, 2);
    struct xlb_least_request *plain = build(slots, NULL, 2, 2);
    assert_true(weighted->weights_differ);
    assert_false(plain->weights_differ);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 9);
    enum { PICKS = 100000 };
    uint64_t heavy_weighted = 0, heavy_plain = 0;
    for (int i = 0; i < PICKS; i++) {
        heavy_weighted += xlb_least_request_pick(weighted, in_flight, NULL, &rng, NULL) == 0;
        heavy_plain += xlb_least_request_pick(plain, in_flight, NULL, &rng, NULL) == 0;
    }
    assert_binomial(heavy_weighted, PICKS, 0.75);
    assert_binomial(heavy_plain, PICKS, 0.25);
    xlb_least_request_free(weighted);
    xlb_least_request_free(plain);
}

/* Unusable endpoints (not READY) are never picked, even when idle; none usable: no pick. */
static void test_skips_unusable(void **state)
{
    const uint32_t slots[] = {3, 64, 65, 130};
    uint32_t in_flight[131] = {0};
    in_flight[3] = 9;
    in_flight[130] = 4;
    uint64_t usable[3] = {0};
    xlb_slot_set_usable(usable, 3, true);
    xlb_slot_set_usable(usable, 130, true);
    struct xlb_least_request *lr = build(slots, NULL, 4, 2);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 10);
    uint64_t counts[2] = {0};
    for (int i = 0; i < 10000; i++) {
        uint32_t slot = xlb_least_request_pick(lr, in_flight, usable, &rng, NULL);
        assert_true(slot == 3 || slot == 130);
        counts[slot == 130]++;
    }
    assert_true(counts[1] > counts[0]);
    usable[0] = usable[1] = usable[2] = 0;
    assert_int_equal(xlb_least_request_pick(lr, in_flight, usable, &rng, NULL), XLB_PICK_NONE);
    xlb_least_request_free(lr);
}

/* The trace names what was compared, for `xlbctl simulate`. */
static void test_trace_reports_candidates(void **state)
{
    const uint32_t slots[] = {0, 1, 2};
    uint32_t in_flight[3] = {4, 2, 7};
    struct xlb_least_request *lr = build(slots, NULL, 3, 3);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 11);
    struct xlb_least_request_trace trace;
    uint32_t slot = xlb_least_request_pick(lr, in_flight, NULL, &rng, &trace);
    assert_int_equal(trace.n_candidates, 3);
    assert_false(trace.fell_back);
    uint32_t least = UINT32_MAX;
    for (uint32_t i = 0; i < trace.n_candidates; i++) {
        assert_int_equal(trace.in_flight[i], in_flight[trace.slots[i]]);
        assert_true(trace.usable[i]);
        if (trace.in_flight[i] < least)
            least = trace.in_flight[i];
    }
    assert_int_equal(in_flight[slot], least);
    xlb_least_request_free(lr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choice_count_rules),
        cmocka_unit_test(test_build_rejects_bad_input),
        cmocka_unit_test(test_idle_endpoint_wins_three_quarters),
        cmocka_unit_test(test_more_choices_find_the_idle_one),
        cmocka_unit_test(test_weights_bias_the_comparison),
        cmocka_unit_test(test_skips_unusable),
        cmocka_unit_test(test_trace_reports_candidates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
