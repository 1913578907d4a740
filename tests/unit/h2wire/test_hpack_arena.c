/*
 * How much arena an HPACK decoder needs with a 4096-byte dynamic table, measured on the worst
 * inputs we know: the table full of the tiniest entries, of a few big ones, of entries whose
 * Huffman coding uses the longest code (nghttp2 allocates 2 bytes per coded byte, and 30-bit
 * codes make 3.75 coded bytes per byte), the phases one after another, the largest literal a
 * block can carry on top, and seeded random mixes of all that. Prints the figures (docs/l7.md
 * quotes them) and checks XLB_HPACK_TABLE_ARENA and XLB_HPACK_ARENA_SIZE hold for them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_test.h"
#include "hpack_craft.h"
#include "xlb_hpack.h"

#define MEM_MAX (512 * 1024)

static _Alignas(16) uint8_t mem[MEM_MAX];
static uint8_t block[64 * 1024];
static char storage[64 * 1024];

/* A workload: the block of round r (0-based) into out; returns its length, 0 after the last. */
typedef size_t (*workload_fn)(uint8_t *out, int round, uint32_t block_cap);

struct usage {
    uint32_t resident; /* most in use between blocks: the table itself */
    uint32_t peak;     /* most in use at any time */
};

static int run(workload_fn w, uint32_t block_cap, uint32_t arena_size, struct usage *u)
{
    struct xlb_h2_arena a;
    struct xlb_hpack_decoder d;
    struct xlb_h2_headers h;
    xlb_h2_arena_init(&a, mem, arena_size);
    int rc = xlb_hpack_decoder_init(&d, &a);
    memset(u, 0, sizeof(*u));
    size_t len;
    for (int r = 0; rc == 0 && (len = w(block, r, block_cap)) > 0; r++) {
        assert_true(len <= block_cap);
        rc = xlb_hpack_decode(&d, block, (uint32_t)len, &h, storage, sizeof(storage));
        if (xlb_h2_arena_in_use(&a) > u->resident)
            u->resident = xlb_h2_arena_in_use(&a);
    }
    u->peak = xlb_h2_arena_high_water(&a);
    xlb_hpack_decoder_fini(&d);
    assert_int_equal(xlb_h2_arena_in_use(&a), 0);
    assert_true(rc == 0 || rc == -ENOMEM);
    return rc;
}

/* The smallest arena (in 64-byte steps) the workload runs in. */
static uint32_t smallest_arena(workload_fn w, uint32_t block_cap)
{
    struct usage u;
    uint32_t lo = 1, hi = MEM_MAX / 64;
    assert_int_equal(run(w, block_cap, MEM_MAX, &u), 0);
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (run(w, block_cap, mid * 64, &u) == 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi * 64;
}

static const int ROUNDS = 4;

static size_t tiny_entries(uint8_t *out, int r, uint32_t cap)
{
    size_t n = 0;
    for (int i = 0; r < ROUNDS && i < 130; i++) { /* 32-byte entries: 128 fill the table */
        out[n++] = HPACK_INCREMENTAL;
        n += hpack_raw(out + n, "", 0);
        n += hpack_raw(out + n, "", 0);
    }
    return n;
}

static size_t one_char_entries(uint8_t *out, int r, uint32_t cap)
{
    size_t n = 0;
    for (int i = 0; r < ROUNDS && i < 130; i++)
        n += hpack_add_entry_raw(out + n, (char)('a' + (i + r) % 26), "", 0);
    return n;
}

static size_t big_raw_entry(uint8_t *out, int r, uint32_t cap)
{
    static char value[4063];
    memset(value, 'v', sizeof(value));
    return r < ROUNDS ? hpack_add_entry_raw(out, 'x', value, sizeof(value)) : 0;
}

/* A 4096-byte entry of 4062 newlines: 15233 coded bytes, a 30.5 KB buffer kept in the table. */
static size_t big_huffman_entry(uint8_t *out, int r, uint32_t cap)
{
    return r < ROUNDS && cap >= 15240 ? hpack_add_entry_huff(out, 'x', 4062) : 0;
}

static size_t medium_huffman_entries(uint8_t *out, int r, uint32_t cap)
{
    static const size_t sizes[] = {20, 80, 161, 280, 1000, 1356, 2000};
    if (r >= (int)(2 * sizeof(sizes) / sizeof(sizes[0])))
        return 0;
    size_t d = sizes[r / 2], n = 0;
    for (size_t i = 0; i < 4096 / (33 + d) + 1; i++) {
        if (n + 16 + (30 * d + 7) / 8 > cap)
            break;
        n += hpack_add_entry_huff(out + n, (char)('a' + i % 26), d);
    }
    return n;
}

/* Tiny entries, then big Huffman ones, then tiny again... */
static size_t phases(uint8_t *out, int r, uint32_t cap)
{
    if (r >= 8)
        return 0;
    return r % 2 ? big_huffman_entry(out, 0, cap) : one_char_entries(out, 0, cap);
}

/* The table full, and the largest literal the block can carry decoded on top. */
static size_t full_table_and_literal(uint8_t *out, int r, uint32_t cap)
{
    if (r >= ROUNDS)
        return 0;
    size_t n = r % 2 ? one_char_entries(out, 0, cap) : 0;
    if (r == 2)
        n = hpack_add_entry_huff(out, 'x', 4062 * cap / 16384);
    size_t room = cap - n - 8;
    out[n++] = HPACK_LITERAL;
    n += hpack_raw(out + n, "y", 1);
    return n + hpack_huff_newlines(out + n, room * 8 / 30 - 1);
}

/* Seeded random mixes of all of the above, 12 blocks each. */
static uint32_t mix_seed, rng;

static uint32_t next(void)
{
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

static size_t random_mix(uint8_t *out, int r, uint32_t cap)
{
    if (r == 0)
        rng = mix_seed;
    if (r >= 12)
        return 0;
    size_t n = 0;
    for (uint32_t k = 1 + next() % 6, i = 0; i < k && n < cap * 3 / 4; i++) {
        uint32_t kind = next() % 4;
        size_t d = kind == 0 ? 0 : kind == 1 ? next() % 64 : next() % (kind == 2 ? 1400 : 4062);
        if (n + 12 + (30 * d + 7) / 8 > cap - 64)
            break;
        if (next() % 2) {
            n += hpack_add_entry_huff(out + n, (char)('a' + next() % 26), d);
        } else {
            static char v[4096];
            memset(v, 'q', d);
            n += hpack_add_entry_raw(out + n, (char)('a' + next() % 26), v, d);
        }
    }
    if (next() % 2 && n + 80 < cap) {
        size_t room = cap - n - 12;
        out[n++] = HPACK_LITERAL;
        n += hpack_raw(out + n, "y", 1);
        n += hpack_huff_newlines(out + n, room * 8 / 30);
    }
    return n;
}

static void measure(const char *name, workload_fn w, uint32_t cap, bool table_only)
{
    struct usage u;
    assert_int_equal(run(w, cap, MEM_MAX, &u), 0);
    uint32_t need = smallest_arena(w, cap);
    print_message("%-26s block cap %5u: resident %6u, peak %6u, smallest arena %6u\n", name, cap,
                  u.resident, u.peak, need);
    assert_true(u.resident <= XLB_HPACK_TABLE_ARENA);
    if (table_only)
        assert_int_equal(run(w, cap, XLB_HPACK_TABLE_ARENA, &u), 0);
    assert_int_equal(run(w, cap, XLB_HPACK_ARENA_SIZE(cap), &u), 0);
}

static void test_table_workloads(void **state)
{
    measure("tiny entries", tiny_entries, 4096, true);
    measure("one-character entries", one_char_entries, 4096, true);
    measure("one big raw entry", big_raw_entry, 4096, true);
    measure("medium Huffman entries", medium_huffman_entries, 16384, false);
    measure("one big Huffman entry", big_huffman_entry, 16384, false);
    measure("tiny, then big, then tiny", phases, 16384, false);
}

static void test_largest_literal(void **state)
{
    for (uint32_t cap = 4096; cap <= 16384; cap *= 2)
        measure("full table + largest literal", full_table_and_literal, cap, false);
}

static void test_random_mixes(void **state)
{
    for (uint32_t cap = 4096; cap <= 16384; cap *= 2) {
        uint32_t worst_peak = 0, worst_need = 0;
        for (mix_seed = 1; mix_seed <= 150; mix_seed++) {
            struct usage u;
            assert_int_equal(run(random_mix, cap, MEM_MAX, &u), 0);
            assert_true(u.resident <= XLB_HPACK_TABLE_ARENA);
            if (u.peak > worst_peak)
                worst_peak = u.peak;
            assert_int_equal(run(random_mix, cap, XLB_HPACK_ARENA_SIZE(cap), &u), 0);
            if (mix_seed % 10 == 0) {
                uint32_t need = smallest_arena(random_mix, cap);
                worst_need = need > worst_need ? need : worst_need;
            }
        }
        print_message("random mixes, block cap %5u: worst peak %6u, smallest arena up to %6u "
                      "(XLB_HPACK_ARENA_SIZE %u)\n",
                      cap, worst_peak, worst_need, XLB_HPACK_ARENA_SIZE(cap));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_workloads),
        cmocka_unit_test(test_largest_literal),
        cmocka_unit_test(test_random_mixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
