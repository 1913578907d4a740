/* Ring hash per gRPC A42: XXH64, ring size rules, point lookup, walking past unusable. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "pick_test.h"
#include "xlb_rng.h"
#include "xlb_ring_hash.h"

static struct xlb_ring_hash *build(const struct xlb_ring_hash_endpoint *eps, uint32_t n,
                                   const struct xlb_ring_hash_config *config)
{
    struct xlb_ring_hash_config defaults;
    xlb_ring_hash_config_default(&defaults);
    struct xlb_ring_hash *ring;
    assert_int_equal(xlb_ring_hash_build(eps, n, config ? config : &defaults, &ring), 0);
    return ring;
}

static uint32_t points_of(const struct xlb_ring_hash *ring, uint32_t slot)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < ring->n_points; i++)
        count += ring->slots[i] == slot;
    return count;
}

/* Published XXH64 vectors (seed 0): the hash A42 names must be the real one. */
static void test_xxh64_vectors(void **state)
{
    assert_true(XXH64("", 0, 0) == UINT64_C(0xEF46DB3751D8E999));
    assert_true(XXH64("a", 1, 0) == UINT64_C(0xD24EC4F1A98C6E5B));
    assert_true(XXH64("abc", 3, 0) == UINT64_C(0x44BC2CF5AD770999));
}

/* Three equal endpoints: w_min = 1/3, scale = ceil(1024 / 3) * 3 = 1026 points, 342 each. */
static void test_size_equal_weights(void **state)
{
    const struct xlb_ring_hash_endpoint eps[] = {
        {"10.0.0.1:80", 1, 1}, {"10.0.0.2:80", 2, 1}, {"10.0.0.3:80", 3, 1}};
    struct xlb_ring_hash *ring = build(eps, 3, NULL);
    assert_int_equal(ring->n_points, 1026);
    for (uint32_t s = 1; s <= 3; s++)
        assert_int_equal(points_of(ring, s), 342);
    xlb_ring_hash_free(ring);
}

/*
 * A42's example: locality weights times endpoint weights give A=6, B=3, C=6, D=2. w_min = 2/17,
 * scale = ceil(1024 * 2/17) * 17/2 = 1028.5, so 1029 points; D gets exactly 121 and the running
 * sums give A 363, B 182, C 363.
 */
static void test_size_a42_example(void **state)
{
    const struct xlb_ring_hash_endpoint eps[] = {
        {"10.0.0.1:80", 1, 6}, {"10.0.0.2:80", 2, 3}, {"10.0.0.3:80", 3, 6}, {"10.0.0.4:80", 4, 2}};
    struct xlb_ring_hash *ring = build(eps, 4, NULL);
    assert_int_equal(ring->n_points, 1029);
    assert_int_equal(points_of(ring, 1), 363);
    assert_int_equal(points_of(ring, 2), 182);
    assert_int_equal(points_of(ring, 3), 363);
    assert_int_equal(points_of(ring, 4), 121);
    xlb_ring_hash_free(ring);
}

/* The client-side cap (default 4096) bounds both min and max ring size. */
static void test_size_cap(void **state)
{
    const struct xlb_ring_hash_endpoint eps[] = {{"a", 1, 1}, {"b", 2, 1}};
    struct xlb_ring_hash_config config = {.min_ring_size = 8192, .max_ring_size = 16384};
    struct xlb_ring_hash *ring = build(eps, 2, &config);
    assert_int_equal(ring->n_points, 4096);
    xlb_ring_hash_free(ring);

    config.ring_size_cap = 1u << 20;
    ring = build(eps, 2, &config);
    assert_int_equal(ring->n_points, 8192);
    xlb_ring_hash_free(ring);

    /* A cap above 8M is clamped, not rejected. */
    config = (struct xlb_ring_hash_config){
        .min_ring_size = 5000, .max_ring_size = 6000, .ring_size_cap = UINT64_C(1) << 40};
    ring = build(eps, 1, &config);
    assert_int_equal(ring->n_points, 5000);
    xlb_ring_hash_free(ring);
}

/* w_min = 1/10001 asks for 10001 points; max (capped to 4096) scales it back down. */
static void test_size_max_scales_down(void **state)
{
    const struct xlb_ring_hash_endpoint eps[] = {{"light", 1, 1}, {"heavy", 2, 10000}};
    struct xlb_ring_hash *ring = build(eps, 2, NULL);
    assert_int_equal(ring->n_points, 4096);
    assert_int_equal(points_of(ring, 1), 1);
    xlb_ring_hash_free(ring);

    struct xlb_ring_hash_config config = {.min_ring_size = 1, .max_ring_size = 1};
    ring = build(eps, 1, &config);
    assert_int_equal(ring->n_points, 1);
    xlb_ring_hash_free(ring);
}

static void test_bad_config(void **state)
{
    const struct xlb_ring_hash_endpoint eps[] = {{"a", 1, 1}};
    const struct xlb_ring_hash_config bad[] = {
        {.min_ring_size = 0, .max_ring_size = 10},
        {.min_ring_size = 10, .max_ring_size = 9},
        {.min_ring_size = 10, .max_ring_size = XLB_RING_HASH_LIMIT + 1},
        {.min_ring_size = XLB_RING_HASH_LIMIT + 1, .max_ring_size = XLB_RING_HASH_LIMIT + 1},
    };
    struct xlb_ring_hash *ring = (void *)1;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(xlb_ring_hash_build(eps, 1, &bad[i], &ring), -EINVAL);
    assert_null(ring);

    struct xlb_ring_hash_config config;
    xlb_ring_hash_config_default(&config);
    assert_int_equal(xlb_ring_hash_build(eps, 0, &config, &ring), -EINVAL);
    const struct xlb_ring_hash_endpoint no_key[] = {{NULL, 1, 1}}, empty[] = {{"", 1, 1}};
    assert_int_equal(xlb_ring_hash_build(no_key, 1, &config, &ring), -EINVAL);
    assert_int_equal(xlb_ring_hash_build(empty, 1, &config, &ring), -EINVAL);
    char longkey[XLB_RING_HASH_MAX_KEY + 2];
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    const struct xlb_ring_hash_endpoint overlong[] = {{longkey, 1, 1}};
    assert_int_equal(xlb_ring_hash_build(overlong, 1, &config, &ring), -EINVAL);
    const struct xlb_ring_hash_endpoint clash[] = {{"a", 1, 1}, {"a", 2, 1}};
    assert_int_equal(xlb_ring_hash_build(clash, 2, &config, &ring), -EINVAL);
    assert_int_equal(xlb_ring_hash_pick(NULL, 5, NULL), XLB_PICK_NONE);
}

/* Points are XXH64("<key>_<n>") and sorted; weight 0 counts as 1, as in gRPC. */
static void test_points_are_a42_hashes(void **state)
{
    const struct xlb_ring_hash_endpoint eps[] = {{"[2001:db8::1]:443", 7, 0}};
    struct xlb_ring_hash_config config = {.min_ring_size = 3, .max_ring_size = 3};
    struct xlb_ring_hash *ring = build(eps, 1, &config);
    assert_int_equal(ring->n_points, 3);
    uint64_t want[3];
    for (int i = 0; i < 3; i++) {
        char key[64];
        int len = snprintf(key, sizeof(key), "[2001:db8::1]:443_%d", i);
        want[i] = XXH64(key, (size_t)len, 0);
    }
    for (int i = 0; i < 3; i++) {
        int found = 0;
        for (int j = 0; j < 3; j++)
            found |= ring->hashes[j] == want[i];
        assert_true(found);
    }
    assert_true(ring->hashes[0] < ring->hashes[1] && ring->hashes[1] < ring->hashes[2]);
    xlb_ring_hash_free(ring);
}

/* Duplicate keys merge with their weights added: the same ring as one endpoint of weight 2. */
static void test_duplicates_merge(void **state)
{
    const struct xlb_ring_hash_endpoint dup[] = {{"a", 1, 1}, {"b", 2, 1}, {"a", 1, 1}};
    const struct xlb_ring_hash_endpoint merged[] = {{"a", 1, 2}, {"b", 2, 1}};
    struct xlb_ring_hash *x = build(dup, 3, NULL), *y = build(merged, 2, NULL);
    assert_int_equal(x->n_points, y->n_points);
    assert_memory_equal(x->hashes, y->hashes, sizeof(uint64_t) * x->n_points);
    assert_memory_equal(x->slots, y->slots, sizeof(uint32_t) * x->n_points);
    xlb_ring_hash_free(x);
    xlb_ring_hash_free(y);
}

static uint32_t reference_point(const struct xlb_ring_hash *ring, uint64_t h)
{
    for (uint32_t i = 0; i < ring->n_points; i++)
        if (ring->hashes[i] >= h)
            return i;
    return 0;
}

static struct xlb_ring_hash *ten_endpoints(void)
{
    static char keys[10][24];
    struct xlb_ring_hash_endpoint eps[10];
    for (uint32_t i = 0; i < 10; i++) {
        snprintf(keys[i], sizeof(keys[i]), "198.18.0.%u:8080", i + 1);
        eps[i] = (struct xlb_ring_hash_endpoint){keys[i], 100 + i, 1};
    }
    return build(eps, 10, NULL);
}

/* The bucket index must agree with a plain scan, including exact hits and the wrap. */
static void test_point_lookup(void **state)
{
    struct xlb_ring_hash *ring = ten_endpoints();
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 5);
    for (int i = 0; i < 20000; i++) {
        uint64_t h = xlb_rng_next(&rng);
        assert_int_equal(xlb_ring_hash_point_for(ring, h), reference_point(ring, h));
    }
    for (uint32_t i = 0; i < ring->n_points; i++) {
        assert_int_equal(xlb_ring_hash_point_for(ring, ring->hashes[i]), i);
        assert_int_equal(xlb_ring_hash_point_for(ring, ring->hashes[i] + 1),
                         i + 1 == ring->n_points ? 0 : i + 1);
    }
    assert_int_equal(xlb_ring_hash_point_for(ring, 0), 0);
    assert_int_equal(xlb_ring_hash_point_for(ring, UINT64_MAX), 0);
    xlb_ring_hash_free(ring);
}

/* The same hash keeps landing on the same endpoint while nothing changes. */
static void test_sticky(void **state)
{
    struct xlb_ring_hash *ring = ten_endpoints();
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 6);
    for (int i = 0; i < 1000; i++) {
        uint64_t h = xlb_rng_next(&rng);
        uint32_t first = xlb_ring_hash_pick(ring, h, NULL);
        assert_int_equal(first, ring->slots[reference_point(ring, h)]);
        for (int j = 0; j < 3; j++)
            assert_int_equal(xlb_ring_hash_pick(ring, h, NULL), first);
    }
    xlb_ring_hash_free(ring);
}

/*
 * A42: when the chosen endpoint has failed, the pick goes to the next distinct endpoint in ring
 * order; hashes owned by endpoints still usable do not move.
 */
static void test_walks_past_unusable(void **state)
{
    struct xlb_ring_hash *ring = ten_endpoints();
    uint64_t usable[XLB_USABLE_WORDS(110)];
    memset(usable, 0xff, sizeof(usable));
    uint32_t down = ring->slots[0];
    xlb_slot_set_usable(usable, down, false);

    for (uint32_t i = 0; i < ring->n_points; i++) {
        uint64_t h = ring->hashes[i];
        uint32_t got = xlb_ring_hash_pick(ring, h, usable);
        if (ring->slots[i] != down) {
            assert_int_equal(got, ring->slots[i]);
            continue;
        }
        uint32_t j = i;
        while (ring->slots[j] == down)
            j = (j + 1) % ring->n_points;
        assert_int_equal(got, ring->slots[j]);
        assert_int_not_equal(got, down);
    }
    xlb_ring_hash_free(ring);
}

static void test_all_or_one_usable(void **state)
{
    struct xlb_ring_hash *ring = ten_endpoints();
    uint64_t usable[XLB_USABLE_WORDS(110)] = {0};
    struct xlb_rng rng;
    xlb_rng_seed(&rng, 8);
    for (int i = 0; i < 100; i++)
        assert_int_equal(xlb_ring_hash_pick(ring, xlb_rng_next(&rng), usable), XLB_PICK_NONE);
    xlb_slot_set_usable(usable, 104, true);
    for (int i = 0; i < 100; i++)
        assert_int_equal(xlb_ring_hash_pick(ring, xlb_rng_next(&rng), usable), 104);
    xlb_ring_hash_free(ring);
}

/* Share of the 64-bit hash space each slot owns: the arc ending at each of its points. */
static double ownership(const struct xlb_ring_hash *ring, uint32_t slot)
{
    double owned = 0;
    for (uint32_t i = 0; i < ring->n_points; i++) {
        if (ring->slots[i] != slot)
            continue;
        uint64_t prev = i == 0 ? ring->hashes[ring->n_points - 1] : ring->hashes[i - 1];
        owned += (double)(ring->hashes[i] - prev); /* unsigned difference wraps for i == 0 */
    }
    return owned / 18446744073709551616.0;
}

/*
 * Weights 1:3 give 256 and 768 points; the owned share is a sum of 256 of 1024 spacings, so
 * its standard deviation is about sqrt(0.25 * 0.75 / 1025) = 0.0135: five of them is 0.068.
 */
static void test_weight_proportions(void **state)
{
    const struct xlb_ring_hash_endpoint eps[] = {{"10.1.0.1:80", 1, 1}, {"10.1.0.2:80", 2, 3}};
    struct xlb_ring_hash *ring = build(eps, 2, NULL);
    assert_int_equal(points_of(ring, 1), 256);
    assert_int_equal(points_of(ring, 2), 768);
    double share = ownership(ring, 1);
    assert_true(share > 0.25 - 0.068 && share < 0.25 + 0.068);

    struct xlb_rng rng;
    xlb_rng_seed(&rng, 9);
    enum { DRAWS = 1000000 };
    uint64_t hits = 0;
    for (int i = 0; i < DRAWS; i++)
        hits += xlb_ring_hash_pick(ring, xlb_rng_next(&rng), NULL) == 1;
    assert_binomial(hits, DRAWS, share);
    xlb_ring_hash_free(ring);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xxh64_vectors),         cmocka_unit_test(test_size_equal_weights),
        cmocka_unit_test(test_size_a42_example),      cmocka_unit_test(test_size_cap),
        cmocka_unit_test(test_size_max_scales_down),  cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_points_are_a42_hashes), cmocka_unit_test(test_duplicates_merge),
        cmocka_unit_test(test_point_lookup),          cmocka_unit_test(test_sticky),
        cmocka_unit_test(test_walks_past_unusable),   cmocka_unit_test(test_all_or_one_usable),
        cmocka_unit_test(test_weight_proportions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
