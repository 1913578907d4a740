/* Weighted choice (alias method) and the per-lcore random source it draws from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pick_test.h"
#include "xlb_rng.h"
#include "xlb_wchoice.h"

#define DRAWS 2000000u

static void test_rng_is_reproducible(void **state)
{
    struct xlb_rng a, b, c;
    xlb_rng_seed(&a, 7);
    xlb_rng_seed(&b, 7);
    xlb_rng_seed(&c, 8);
    int differs = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = xlb_rng_next(&a);
        assert_int_equal(x, xlb_rng_next(&b));
        differs |= x != xlb_rng_next(&c);
    }
    assert_true(differs);
}

static void test_rng_below_is_uniform(void **state)
{
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 1);
    uint64_t counts[7] = {0};
    for (uint32_t i = 0; i < DRAWS; i++) {
        uint32_t v = xlb_rng_below(&rng, 7);
        assert_true(v < 7);
        counts[v]++;
    }
    for (int i = 0; i < 7; i++)
        assert_binomial(counts[i], DRAWS, 1.0 / 7);
    assert_int_equal(xlb_rng_below(&rng, 0), 0);
}

static void test_build_rejects_bad_input(void **state)
{
    uint32_t items[3] = {1, 2, 3}, zeros[3] = {0, 0, 0};
    struct xlb_wchoice *t = (void *)1;
    assert_int_equal(xlb_wchoice_build(items, zeros, 0, &t), -EINVAL);
    assert_null(t);
    assert_int_equal(xlb_wchoice_build(items, zeros, 3, &t), -EINVAL);
    assert_int_equal(xlb_wchoice_build(NULL, zeros, 3, &t), -EINVAL);
    assert_int_equal(xlb_wchoice_build(items, zeros, XLB_WCHOICE_MAX_ITEMS + 1, &t), -EINVAL);

    struct xlb_rng rng;
    xlb_rng_seed(&rng, 1);
    assert_int_equal(xlb_wchoice_pick(NULL, &rng), XLB_PICK_NONE);
}

/* Draw DRAWS times and check each item's count against weight / total. */
static void check_proportions(const uint32_t *weights, uint32_t n, uint64_t seed)
{
    uint32_t *items = malloc(sizeof(*items) * n);
    uint64_t *counts = calloc(n, sizeof(*counts));
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        items[i] = i;
        total += weights[i];
    }
    struct xlb_wchoice *t;
    assert_int_equal(xlb_wchoice_build(items, weights, n, &t), 0);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, seed);
    for (uint32_t d = 0; d < DRAWS; d++) {
        uint32_t v = xlb_wchoice_pick(t, &rng);
        assert_true(v < n);
        counts[v]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (weights[i] == 0)
            assert_int_equal(counts[i], 0);
        else
            assert_binomial(counts[i], DRAWS, (double)weights[i] / (double)total);
    }
    xlb_wchoice_free(t);
    free(items);
    free(counts);
}

static void test_small_weights(void **state)
{
    const uint32_t w[] = {1, 2, 3, 4};
    check_proportions(w, 4, 11);
}

static void test_zero_weights_never_chosen(void **state)
{
    const uint32_t w[] = {0, 5, 0, 1, 0};
    check_proportions(w, 5, 12);
}

static void test_single_item(void **state)
{
    const uint32_t items[] = {42}, w[] = {9};
    struct xlb_wchoice *t;
    assert_int_equal(xlb_wchoice_build(items, w, 1, &t), 0);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 3);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(xlb_wchoice_pick(t, &rng), 42);
    xlb_wchoice_free(t);
}

static void test_extreme_weights(void **state)
{
    const uint32_t huge[] = {1, UINT32_MAX};
    check_proportions(huge, 2, 13);
    const uint32_t skewed[] = {1000000, 1, 1, 1000};
    check_proportions(skewed, 4, 14);
    const uint32_t maxed[] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    check_proportions(maxed, 3, 15);
}

static void test_many_items(void **state)
{
    enum { N = 1000 };
    uint32_t w[N];
    for (uint32_t i = 0; i < N; i++)
        w[i] = i + 1;
    check_proportions(w, N, 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng_is_reproducible),
        cmocka_unit_test(test_rng_below_is_uniform),
        cmocka_unit_test(test_build_rejects_bad_input),
        cmocka_unit_test(test_small_weights),
        cmocka_unit_test(test_zero_weights_never_chosen),
        cmocka_unit_test(test_single_item),
        cmocka_unit_test(test_extreme_weights),
        cmocka_unit_test(test_many_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
