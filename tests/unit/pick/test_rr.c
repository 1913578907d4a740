/* Round robin: order, cursor wrap, random start, skipping unusable endpoints. */
#include <errno.h>

#include "pick_test.h"
#include "xlb_rr.h"

static struct xlb_rr *build(const uint32_t *slots, uint32_t n)
{
    struct xlb_rr *rr;
    assert_int_equal(xlb_rr_build(slots, n, &rr), 0);
    return rr;
}

static void test_order_and_wrap(void **state)
{
    const uint32_t slots[] = {10, 20, 30};
    struct xlb_rr *rr = build(slots, 3);
    struct xlb_rr_cursor cursor = {0};
    const uint32_t expect[] = {10, 20, 30, 10, 20, 30, 10};
    for (int i = 0; i < 7; i++)
        assert_int_equal(xlb_rr_pick(rr, &cursor), expect[i]);
    xlb_rr_free(rr);
}

/* A cursor left over from a longer array folds back into range instead of reading past it. */
static void test_stale_cursor_folds(void **state)
{
    const uint32_t slots[] = {10, 20, 30};
    struct xlb_rr *rr = build(slots, 3);
    struct xlb_rr_cursor cursor = {.next = 7};
    assert_int_equal(xlb_rr_pick(rr, &cursor), 20);
    assert_int_equal(xlb_rr_pick(rr, &cursor), 30);
    assert_int_equal(xlb_rr_pick(rr, &cursor), 10);
    cursor.next = UINT32_MAX;
    assert_int_equal(xlb_rr_pick(rr, &cursor), slots[UINT32_MAX % 3]);
    xlb_rr_free(rr);
}

static void test_random_start_is_uniform(void **state)
{
    const uint32_t slots[] = {0, 1, 2, 3, 4};
    struct xlb_rr *rr = build(slots, 5);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 99);
    uint64_t counts[5] = {0};
    enum { RESETS = 500000 };
    for (int i = 0; i < RESETS; i++) {
        struct xlb_rr_cursor cursor;
        xlb_rr_cursor_reset(&cursor, rr, &rng);
        counts[xlb_rr_pick(rr, &cursor)]++;
    }
    for (int i = 0; i < 5; i++)
        assert_binomial(counts[i], RESETS, 0.2);
    xlb_rr_free(rr);
}

static void test_skips_unusable(void **state)
{
    const uint32_t slots[] = {3, 64, 65, 130};
    struct xlb_rr *rr = build(slots, 4);
    uint64_t usable[XLB_USABLE_WORDS(131)] = {0};
    xlb_slot_set_usable(usable, 64, true);
    xlb_slot_set_usable(usable, 130, true);
    struct xlb_rr_cursor cursor = {0};
    const uint32_t expect[] = {64, 130, 64, 130};
    for (int i = 0; i < 4; i++)
        assert_int_equal(xlb_rr_pick_usable(rr, &cursor, usable), expect[i]);

    xlb_slot_set_usable(usable, 64, false);
    xlb_slot_set_usable(usable, 130, false);
    assert_int_equal(xlb_rr_pick_usable(rr, &cursor, usable), XLB_PICK_NONE);
    uint32_t any = xlb_rr_pick_usable(rr, &cursor, NULL); /* NULL bitmap: all usable */
    assert_true(any == 3 || any == 64 || any == 65 || any == 130);
    xlb_rr_free(rr);
}

static void test_bad_input(void **state)
{
    const uint32_t slots[] = {1};
    struct xlb_rr *rr = (void *)1;
    assert_int_equal(xlb_rr_build(slots, 0, &rr), -EINVAL);
    assert_null(rr);
    assert_int_equal(xlb_rr_build(NULL, 1, &rr), -EINVAL);
    struct xlb_rr_cursor cursor = {0};
    assert_int_equal(xlb_rr_pick(NULL, &cursor), XLB_PICK_NONE);
    assert_int_equal(xlb_rr_pick_usable(NULL, &cursor, NULL), XLB_PICK_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_wrap),
        cmocka_unit_test(test_stale_cursor_folds),
        cmocka_unit_test(test_random_start_is_uniform),
        cmocka_unit_test(test_skips_unusable),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
