/* Pick first (A62): first usable entry, kept while usable, next in order when not, the held
 * entry found again in a new list, and the shuffle a permutation fixed by its seed. */
#include <errno.h>

#include "pick_test.h"
#include "xlb_pick_first.h"

#define N 4

static struct xlb_pick_first *build(bool shuffle, uint64_t seed)
{
    struct xlb_pick_first_entry entries[N];
    for (uint32_t i = 0; i < N; i++)
        entries[i] = (struct xlb_pick_first_entry){.index = i, .key = 100 + i};
    struct xlb_pick_first *pf;
    assert_int_equal(xlb_pick_first_build(entries, N, shuffle, seed, &pf), 0);
    return pf;
}

/* Bit i of *ctx: index i is usable. */
static bool usable_bit(const void *ctx, uint32_t index)
{
    return (*(const uint32_t *)ctx >> index) & 1u;
}

static uint32_t pick(const struct xlb_pick_first *pf, struct xlb_pick_first_state *s,
                     uint32_t usable)
{
    return xlb_pick_first_pick(pf, s, usable_bit, &usable);
}

static void test_first_and_sticky(void **state)
{
    struct xlb_pick_first *pf = build(false, 0);
    struct xlb_pick_first_state s = {0};
    for (int i = 0; i < 5; i++)
        assert_int_equal(pick(pf, &s, 0xf), 0);
    assert_int_equal(pick(pf, &s, 0xe), 1); /* 0 fails: the next one */
    assert_int_equal(pick(pf, &s, 0xf), 1); /* 0 is back: stays on 1 */
    assert_int_equal(pick(pf, &s, 0x9), 3); /* 1 and 2 fail: 3 */
    assert_int_equal(pick(pf, &s, 0x7), 0); /* 3 fails: wraps to 0 */
    assert_int_equal(pick(pf, &s, 0x0), XLB_PICK_NONE);
    assert_int_equal(pick(pf, &s, 0xf), 0); /* the state survived: still 0 */
    xlb_pick_first_free(pf);
}

/* Fresh state after its entry failed starts from the entry after it, not from the head. */
static void test_moves_on_in_order(void **state)
{
    struct xlb_pick_first *pf = build(false, 0);
    struct xlb_pick_first_state s = {.at = 2, .key = 102, .held = true};
    assert_int_equal(pick(pf, &s, 0xb), 3); /* 2 fails: 3, although 0 and 1 are usable */
    xlb_pick_first_free(pf);
}

/* A new list that moved the held endpoint: the worker stays on it; a list without it: head. */
static void test_held_key_survives_new_list(void **state)
{
    struct xlb_pick_first *pf = build(false, 0);
    struct xlb_pick_first_state s = {0};
    assert_int_equal(pick(pf, &s, 0xe), 1);
    xlb_pick_first_free(pf);
    struct xlb_pick_first_entry moved[] = {
        {.index = 0, .key = 103}, {.index = 1, .key = 100}, {.index = 2, .key = 101}};
    assert_int_equal(xlb_pick_first_build(moved, 3, false, 0, &pf), 0);
    assert_int_equal(pick(pf, &s, 0x7), 2); /* key 101 is at index 2 now */
    xlb_pick_first_free(pf);
    struct xlb_pick_first_entry other[] = {{.index = 0, .key = 7}, {.index = 1, .key = 8}};
    assert_int_equal(xlb_pick_first_build(other, 2, false, 0, &pf), 0);
    assert_int_equal(pick(pf, &s, 0x3), 0);
    xlb_pick_first_free(pf);
}

static void test_shuffle_permutes_by_seed(void **state)
{
    struct xlb_pick_first *plain = build(false, 1);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(plain->entries[i].index, i);
    bool some_differ = false;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct xlb_pick_first *a = build(true, seed), *b = build(true, seed);
        uint32_t seen = 0;
        for (uint32_t i = 0; i < N; i++) {
            assert_int_equal(a->entries[i].index, b->entries[i].index);
            assert_int_equal(a->entries[i].key, 100 + a->entries[i].index);
            seen |= 1u << a->entries[i].index;
            some_differ |= a->entries[i].index != i;
        }
        assert_int_equal(seen, 0xf);
        xlb_pick_first_free(a);
        xlb_pick_first_free(b);
    }
    assert_true(some_differ);
    xlb_pick_first_free(plain);
}

static void test_empty_refused(void **state)
{
    struct xlb_pick_first *pf;
    struct xlb_pick_first_entry e = {0};
    assert_int_equal(xlb_pick_first_build(&e, 0, false, 0, &pf), -EINVAL);
    assert_null(pf);
    struct xlb_pick_first_state s = {0};
    assert_int_equal(pick(NULL, &s, 0xf), XLB_PICK_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_and_sticky),
        cmocka_unit_test(test_moves_on_in_order),
        cmocka_unit_test(test_held_key_survives_new_list),
        cmocka_unit_test(test_shuffle_permutes_by_seed),
        cmocka_unit_test(test_empty_refused),
    };
    return cmocka_run_group_tests_name("pick_first", tests, NULL, NULL);
}
