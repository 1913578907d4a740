/*
 * The bounded allocator: alignment, exhaustion, merging back to one block, realloc/calloc as
 * nghttp2 uses them, bad frees ignored, and a seeded random run checked against a shadow copy.
 */
#include <stdlib.h>
#include <string.h>

#include "h2_test.h"
#include "xlb_h2_arena.h"

static _Alignas(16) uint8_t mem[64 * 1024 + 16];

static void test_alloc_free(void **state)
{
    struct xlb_h2_arena a;
    xlb_h2_arena_init(&a, mem, 64 * 1024);
    uint8_t *p = xlb_h2_arena_alloc(&a, 1);
    uint8_t *q = xlb_h2_arena_alloc(&a, 100);
    assert_non_null(p);
    assert_non_null(q);
    assert_int_equal((uintptr_t)p % 16, 0);
    assert_int_equal((uintptr_t)q % 16, 0);
    assert_true(q >= p + 16 || p >= q + 100);
    assert_int_equal(xlb_h2_arena_in_use(&a), 32 + 128); /* 16-byte header, 16-byte steps */
    xlb_h2_arena_free(&a, p);
    xlb_h2_arena_free(&a, q);
    assert_int_equal(xlb_h2_arena_in_use(&a), 0);
    assert_int_equal(xlb_h2_arena_high_water(&a), 160);
    /* everything merged back: the whole arena in one piece */
    void *all = xlb_h2_arena_alloc(&a, 64 * 1024 - XLB_H2_ARENA_HEADER);
    assert_non_null(all);
    assert_null(xlb_h2_arena_alloc(&a, 1));
    xlb_h2_arena_free(&a, all);
}

static void test_exhaustion(void **state)
{
    struct xlb_h2_arena a;
    xlb_h2_arena_init(&a, mem, 4096);
    void *ptrs[200];
    int n = 0;
    while (n < 200 && (ptrs[n] = xlb_h2_arena_alloc(&a, 48)) != NULL)
        n++;
    assert_int_equal(n, 4096 / 64);
    assert_int_equal(a.last_failed, 48);
    assert_int_equal(xlb_h2_arena_in_use(&a), 4096);
    assert_null(xlb_h2_arena_alloc(&a, 1u << 30));
    assert_null(xlb_h2_arena_alloc(&a, UINT32_MAX));
    /* free every other block: no two free neighbours merge, so 64 bytes at most fit */
    for (int i = 0; i < n; i += 2)
        xlb_h2_arena_free(&a, ptrs[i]);
    assert_null(xlb_h2_arena_alloc(&a, 49));
    void *again = xlb_h2_arena_alloc(&a, 48);
    assert_non_null(again);
    xlb_h2_arena_free(&a, again);
    for (int i = 1; i < n; i += 2)
        xlb_h2_arena_free(&a, ptrs[i]);
    assert_int_equal(xlb_h2_arena_in_use(&a), 0);
    assert_non_null(xlb_h2_arena_alloc(&a, 4096 - XLB_H2_ARENA_HEADER));
}

static void test_unaligned_and_tiny(void **state)
{
    struct xlb_h2_arena a;
    xlb_h2_arena_init(&a, mem + 3, 1000);
    assert_int_equal((uintptr_t)a.base % 16, 0);
    assert_true(a.size <= 1000 - 13 && a.size % 16 == 0);
    uint8_t *p = xlb_h2_arena_alloc(&a, 10);
    assert_non_null(p);
    assert_true(p >= mem + 3 && p + 10 <= mem + 1003);
    xlb_h2_arena_init(&a, mem, 31);
    assert_null(xlb_h2_arena_alloc(&a, 0));
    xlb_h2_arena_init(&a, mem, 0);
    assert_null(xlb_h2_arena_alloc(&a, 1));
}

static void test_bad_frees_ignored(void **state)
{
    struct xlb_h2_arena a;
    xlb_h2_arena_init(&a, mem, 4096);
    uint8_t *p = xlb_h2_arena_alloc(&a, 100);
    xlb_h2_arena_free(&a, NULL);
    xlb_h2_arena_free(&a, p + 16);     /* inside a block */
    xlb_h2_arena_free(&a, mem + 8192); /* outside the arena */
    static uint8_t elsewhere[64];
    xlb_h2_arena_free(&a, elsewhere);
    assert_int_equal(xlb_h2_arena_in_use(&a), 128);
    xlb_h2_arena_free(&a, p);
    xlb_h2_arena_free(&a, p); /* twice */
    assert_int_equal(xlb_h2_arena_in_use(&a), 0);
    assert_non_null(xlb_h2_arena_alloc(&a, 4096 - XLB_H2_ARENA_HEADER));
}

static void test_mem_functions(void **state)
{
    struct xlb_h2_arena a;
    xlb_h2_arena_init(&a, mem, 4096);
    nghttp2_mem *m = &a.mem;
    uint8_t *p = m->malloc(20, m->mem_user_data);
    memcpy(p, "0123456789abcdefghij", 20);
    uint8_t *same = m->realloc(p, 24, m->mem_user_data); /* still fits its 32-byte payload */
    assert_ptr_equal(same, p);
    uint8_t *grown = m->realloc(p, 1000, m->mem_user_data);
    assert_non_null(grown);
    assert_memory_equal(grown, "0123456789abcdefghij", 20);
    assert_null(m->realloc(grown, 5000, m->mem_user_data)); /* fails, old block kept */
    assert_memory_equal(grown, "0123456789abcdefghij", 20);
    uint8_t *z = m->calloc(10, 10, m->mem_user_data);
    for (int i = 0; i < 100; i++)
        assert_int_equal(z[i], 0);
    assert_null(m->calloc(SIZE_MAX / 2, 4, m->mem_user_data));
    uint8_t *n = m->realloc(NULL, 10, m->mem_user_data);
    assert_non_null(n);
    m->free(n, m->mem_user_data);
    m->free(z, m->mem_user_data);
    m->free(grown, m->mem_user_data);
    assert_int_equal(xlb_h2_arena_in_use(&a), 0);
}

/* Seeded random allocations and frees: blocks never overlap (each keeps its fill byte), in_use
 * matches, and after freeing everything the arena is one block again. */
static void test_random_against_shadow(void **state)
{
    struct xlb_h2_arena a;
    xlb_h2_arena_init(&a, mem, 64 * 1024);
    enum { SLOTS = 256 };
    uint8_t *ptr[SLOTS] = {0};
    uint32_t len[SLOTS] = {0};
    uint32_t seed = 7;
    for (int step = 0; step < 200000; step++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t i = (seed >> 8) % SLOTS;
        if (ptr[i] != NULL) {
            for (uint32_t k = 0; k < len[i]; k++)
                assert_int_equal(ptr[i][k], (uint8_t)i);
            xlb_h2_arena_free(&a, ptr[i]);
            ptr[i] = NULL;
            continue;
        }
        seed = seed * 1103515245u + 12345u;
        uint32_t r = seed >> 8;
        len[i] = r % 4 == 0 ? r % 8000 : r % 200;
        ptr[i] = xlb_h2_arena_alloc(&a, len[i]);
        if (ptr[i] != NULL)
            memset(ptr[i], (int)i, len[i]);
    }
    for (int i = 0; i < SLOTS; i++)
        xlb_h2_arena_free(&a, ptr[i]);
    assert_int_equal(xlb_h2_arena_in_use(&a), 0);
    assert_non_null(xlb_h2_arena_alloc(&a, 64 * 1024 - XLB_H2_ARENA_HEADER));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_free),         cmocka_unit_test(test_exhaustion),
        cmocka_unit_test(test_unaligned_and_tiny), cmocka_unit_test(test_bad_frees_ignored),
        cmocka_unit_test(test_mem_functions),      cmocka_unit_test(test_random_against_shadow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
