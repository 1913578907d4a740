/* Maglev: deterministic tables, table sizes, minimal disruption, weighted shares. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pick_test.h"
#include "xlb_maglev.h"
#include "xlb_rng.h"

enum { MAX_N = 1000 };
static char keys[MAX_N][32];

static void make_endpoints(struct xlb_maglev_endpoint *eps, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        snprintf(keys[i], sizeof(keys[i]), "198.18.%u.%u:443", i / 250, i % 250 + 1);
        eps[i] = (struct xlb_maglev_endpoint){keys[i], i, 1};
    }
}

static struct xlb_maglev *build(const struct xlb_maglev_endpoint *eps, uint32_t n, uint32_t size)
{
    struct xlb_maglev *m;
    assert_int_equal(xlb_maglev_build(eps, n, size, &m), 0);
    return m;
}

static void count_entries(const struct xlb_maglev *m, uint32_t *counts, uint32_t n)
{
    memset(counts, 0, sizeof(*counts) * n);
    for (uint32_t i = 0; i < m->size; i++) {
        assert_true(m->table[i] < n);
        counts[m->table[i]]++;
    }
}

static void test_sizes_are_primes_over_100n(void **state)
{
    assert_int_equal(xlb_maglev_size_for(1), XLB_MAGLEV_DEFAULT_SIZE);
    assert_int_equal(xlb_maglev_size_for(655), XLB_MAGLEV_DEFAULT_SIZE);
    assert_int_equal(xlb_maglev_size_for(656), 77951);
    const uint32_t ns[] = {1, 10, 656, 1000, 10000, 100000, 1000000, 1342198};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        uint32_t size = xlb_maglev_size_for(ns[i]);
        assert_true(xlb_maglev_is_prime(size));
        assert_true((uint64_t)size >= 100ull * ns[i]);
    }
    assert_int_equal(xlb_maglev_size_for(2000000), 0);
    assert_false(xlb_maglev_is_prime(1));
    assert_true(xlb_maglev_is_prime(2));
    assert_false(xlb_maglev_is_prime(65535));
}

/* Another host with the same endpoints listed in another order builds the same table. */
static void test_same_table_any_order(void **state)
{
    enum { N = 50 };
    struct xlb_maglev_endpoint eps[N], shuffled[N];
    make_endpoints(eps, N);
    eps[7].weight = 3;
    memcpy(shuffled, eps, sizeof(eps));
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 21);
    for (uint32_t i = N - 1; i > 0; i--) {
        uint32_t j = xlb_rng_below(&rng, i + 1);
        struct xlb_maglev_endpoint t = shuffled[i];
        shuffled[i] = shuffled[j];
        shuffled[j] = t;
    }
    struct xlb_maglev *a = build(eps, N, 0), *b = build(shuffled, N, 0);
    assert_int_equal(a->size, b->size);
    assert_memory_equal(a->table, b->table, sizeof(uint32_t) * a->size);
    xlb_maglev_free(a);
    xlb_maglev_free(b);
}

/* Unweighted Maglev fills in turns, so shares differ by at most one entry. */
static void test_unweighted_balance(void **state)
{
    enum { N = 100 };
    struct xlb_maglev_endpoint eps[N];
    make_endpoints(eps, N);
    struct xlb_maglev *m = build(eps, N, 0);
    uint32_t counts[N], lo = UINT32_MAX, hi = 0;
    count_entries(m, counts, N);
    for (uint32_t i = 0; i < N; i++) {
        lo = counts[i] < lo ? counts[i] : lo;
        hi = counts[i] > hi ? counts[i] : hi;
    }
    assert_true(hi - lo <= 1);
    xlb_maglev_free(m);
}

/*
 * Removing one of N endpoints must move its own entries (1/N of the table) and only a little
 * more: the paper measures a few percent of extra churn at M = 100N. Allow up to 2/N in all.
 */
static void test_disruption_near_one_over_n(void **state)
{
    enum { N = 100 };
    struct xlb_maglev_endpoint eps[N];
    make_endpoints(eps, N);
    struct xlb_maglev *before = build(eps, N, XLB_MAGLEV_DEFAULT_SIZE);
    eps[37] = eps[N - 1];
    struct xlb_maglev *after = build(eps, N - 1, XLB_MAGLEV_DEFAULT_SIZE);

    uint32_t moved = 0, owned = 0;
    for (uint32_t i = 0; i < before->size; i++) {
        owned += before->table[i] == 37;
        moved += before->table[i] != after->table[i];
        assert_int_not_equal(after->table[i], 37);
    }
    double fraction = (double)moved / before->size;
    print_message("maglev: removing 1 of %d moved %.4f of the table (own share %.4f)\n", N,
                  fraction, (double)owned / before->size);
    assert_true(moved >= owned);
    assert_true(fraction <= 2.0 / N);
    xlb_maglev_free(before);
    xlb_maglev_free(after);
}

/* Envoy's weighted rule: entries in proportion to weight, to within a round's rounding. */
static void test_weighted_shares(void **state)
{
    enum { N = 4 };
    struct xlb_maglev_endpoint eps[N];
    make_endpoints(eps, N);
    const uint32_t weights[N] = {1, 2, 3, 4};
    for (uint32_t i = 0; i < N; i++)
        eps[i].weight = weights[i];
    struct xlb_maglev *m = build(eps, N, 0);
    uint32_t counts[N];
    count_entries(m, counts, N);
    for (uint32_t i = 0; i < N; i++) {
        double want = (double)m->size * weights[i] / 10.0;
        assert_true(counts[i] > want - 4 && counts[i] < want + 4);
    }
    xlb_maglev_free(m);

    /* One weight dwarfing the others must not stall the build, and light ones still appear. */
    eps[0].weight = UINT32_MAX;
    m = build(eps, N, 0);
    count_entries(m, counts, N);
    for (uint32_t i = 1; i < N; i++)
        assert_true(counts[i] >= 1 && counts[i] <= 2);
    xlb_maglev_free(m);
}

/*
 * A pick when some endpoints may not take it: the hash's own entry when its endpoint can, else
 * the next usable one in table order, the same on every host; nothing when none can.
 */
static void test_pick_usable_moves_on_in_table_order(void **state)
{
    struct xlb_maglev_endpoint eps[4];
    make_endpoints(eps, 4);
    struct xlb_maglev *m = build(eps, 4, 0);
    uint64_t usable[1] = {0xf};
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 11);
    for (int i = 0; i < 1000; i++) {
        uint64_t h = xlb_rng_next(&rng);
        assert_int_equal(xlb_maglev_pick_usable(m, h, usable), xlb_maglev_pick(m, h));
        assert_int_equal(xlb_maglev_pick_usable(m, h, NULL), xlb_maglev_pick(m, h));
    }
    usable[0] = 0xf & ~(UINT64_C(1) << 2); /* endpoint 2 may not take picks */
    unsigned moved = 0;
    for (uint32_t at = 0; at < m->size; at++) {
        uint32_t got = xlb_maglev_pick_usable(m, at, usable);
        if (m->table[at] != 2) {
            assert_int_equal(got, m->table[at]); /* the others keep their connections */
            continue;
        }
        uint32_t next = at;
        while (m->table[next] == 2)
            next = next + 1 == m->size ? 0 : next + 1;
        assert_int_equal(got, m->table[next]);
        moved++;
    }
    assert_true(moved > m->size / 8);
    usable[0] = 0;
    assert_int_equal(xlb_maglev_pick_usable(m, 12345, usable), XLB_PICK_NONE);
    xlb_maglev_free(m);
}

static void test_weight_zero_and_errors(void **state)
{
    enum { N = 3 };
    struct xlb_maglev_endpoint eps[N];
    make_endpoints(eps, N);
    eps[1].weight = 0;
    struct xlb_maglev *m = build(eps, N, 0);
    assert_int_equal(m->n_endpoints, 2);
    uint32_t counts[N];
    count_entries(m, counts, N);
    assert_int_equal(counts[1], 0);
    assert_int_equal(xlb_maglev_pick(m, 12345), m->table[12345 % m->size]);
    assert_int_equal(xlb_maglev_pick(m, UINT64_MAX), m->table[UINT64_MAX % m->size]);
    xlb_maglev_free(m);

    m = build(eps, N, 7); /* an explicit small prime is allowed */
    assert_int_equal(m->size, 7);
    xlb_maglev_free(m);

    struct xlb_maglev *bad = (void *)1;
    assert_int_equal(xlb_maglev_build(eps, N, 9, &bad), -EINVAL); /* not prime */
    assert_null(bad);
    assert_int_equal(xlb_maglev_build(eps, N, 1, &bad), -EINVAL);
    assert_int_equal(xlb_maglev_build(eps, 0, 0, &bad), -EINVAL);
    eps[0].weight = eps[2].weight = 0;
    assert_int_equal(xlb_maglev_build(eps, N, 0, &bad), -EINVAL);
    make_endpoints(eps, N);
    eps[2].key = eps[0].key;
    assert_int_equal(xlb_maglev_build(eps, N, 0, &bad), -EEXIST);
    eps[2].key = NULL;
    assert_int_equal(xlb_maglev_build(eps, N, 0, &bad), -EINVAL);
    make_endpoints(eps, N);
    eps[1].slot = XLB_PICK_NONE;
    assert_int_equal(xlb_maglev_build(eps, N, 0, &bad), -EINVAL);
    make_endpoints(eps, N);
    assert_int_equal(xlb_maglev_build(eps, N, 2, &bad), -EINVAL); /* smaller than N */
    assert_int_equal(xlb_maglev_pick(NULL, 1), XLB_PICK_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_are_primes_over_100n),
        cmocka_unit_test(test_same_table_any_order),
        cmocka_unit_test(test_unweighted_balance),
        cmocka_unit_test(test_disruption_near_one_over_n),
        cmocka_unit_test(test_weighted_shares),
        cmocka_unit_test(test_weight_zero_and_errors),
        cmocka_unit_test(test_pick_usable_moves_on_in_table_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
