/*
 * The control plane's name index (control/base/name_index.h): lookups, replacement, removal, growth
 * to many names, and collisions forced with weak hash functions, checked against a plain
 * array: what a scan by strcmp would answer, the index must answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "name_index.h"
#include "xlb_const.h"

#define MANY 5000

/* Every name in one probe run, starting at the table's last slot: runs wrap around. */
static uint64_t same_hash(const char *name, size_t len)
{
    (void)name;
    (void)len;
    return UINT64_MAX;
}

/* A few distinct homes, and runs that overlap one another. */
static uint64_t weak_hash(const char *name, size_t len)
{
    return len > 0 ? (uint64_t)(unsigned char)name[len - 1] % 7 : 0;
}

static void finds_what_was_set(void **state)
{
    struct xlb_name_index ix;
    xlb_name_index_init(&ix);
    int a = 1, b = 2;
    assert_null(xlb_name_index_find(&ix, "c1")); /* empty, nothing allocated */
    assert_int_equal(xlb_name_index_set(&ix, "c1", &a), 0);
    assert_int_equal(xlb_name_index_set(&ix, "c2", &b), 0);
    assert_ptr_equal(xlb_name_index_find(&ix, "c1"), &a);
    assert_ptr_equal(xlb_name_index_find(&ix, "c2"), &b);
    assert_null(xlb_name_index_find(&ix, "c3"));
    assert_null(xlb_name_index_find(&ix, "c")); /* a prefix is another name */
    assert_null(xlb_name_index_find(&ix, ""));
    assert_int_equal(ix.n, 2);
    xlb_name_index_free(&ix);
    assert_null(xlb_name_index_find(&ix, "c1"));
}

static void replacing_takes_the_new_name_and_value(void **state)
{
    struct xlb_name_index ix;
    xlb_name_index_init(&ix);
    int a = 1, b = 2;
    char *first = strdup("cluster"), *second = strdup("cluster");
    assert_int_equal(xlb_name_index_set(&ix, first, &a), 0);
    assert_int_equal(xlb_name_index_set(&ix, second, &b), 0);
    assert_int_equal(ix.n, 1);
    /* The index borrows the latest string: the first may go. */
    free(first);
    assert_ptr_equal(xlb_name_index_find(&ix, "cluster"), &b);
    assert_true(xlb_name_index_remove(&ix, "cluster"));
    assert_false(xlb_name_index_remove(&ix, "cluster"));
    assert_null(xlb_name_index_find(&ix, "cluster"));
    free(second);
    xlb_name_index_free(&ix);
}

/* The names of the model: name i is "cluster-<i>". */
static char **make_names(size_t n)
{
    char **names = calloc(n, sizeof(*names));
    assert_non_null(names);
    for (size_t i = 0; i < n; i++) {
        names[i] = malloc(32);
        assert_non_null(names[i]);
        snprintf(names[i], 32, "cluster-%zu", i);
    }
    return names;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Every name's lookup agrees with `present` (the value of name i is &names[i]). */
static void expect_model(const struct xlb_name_index *ix, char **names, const bool *present,
                         size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        void *want = present[i] ? &names[i] : NULL;
        assert_ptr_equal(xlb_name_index_find(ix, names[i]), want);
        count += present[i];
    }
    assert_int_equal(ix->n, count);
}

/* Insert every name, remove every other one, then every third again, checking all lookups. */
static void run_model(xlb_name_hash_fn hash, size_t n)
{
    struct xlb_name_index ix;
    if (hash != NULL)
        xlb_name_index_init_hashed(&ix, hash);
    else
        xlb_name_index_init(&ix);
    char **names = make_names(n);
    bool *present = calloc(n, sizeof(bool));
    assert_non_null(present);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(xlb_name_index_set(&ix, names[i], &names[i]), 0);
        present[i] = true;
    }
    expect_model(&ix, names, present, n);
    for (size_t i = 0; i < n; i += 2) {
        assert_true(xlb_name_index_remove(&ix, names[i]));
        present[i] = false;
    }
    expect_model(&ix, names, present, n);
    for (size_t i = 0; i < n; i += 3) {
        if (!present[i])
            assert_int_equal(xlb_name_index_set(&ix, names[i], &names[i]), 0);
        present[i] = true;
    }
    expect_model(&ix, names, present, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(xlb_name_index_remove(&ix, names[i]), present[i]);
    assert_int_equal(ix.n, 0);
    xlb_name_index_free(&ix);
    free(present);
    free_names(names, n);
}

static void many_names(void **state)
{
    run_model(NULL, MANY);
}

static void every_hash_equal(void **state)
{
    run_model(same_hash, 300);
}

static void clustered_hashes(void **state)
{
    run_model(weak_hash, 1000);
}

/* Removal from the middle of a run that wraps past the table's end keeps the rest reachable. */
static void removal_inside_a_wrapping_run(void **state)
{
    struct xlb_name_index ix;
    xlb_name_index_init_hashed(&ix, same_hash);
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(xlb_name_index_set(&ix, names[i], XLB_UNCONST(names[i])), 0);
    assert_true(xlb_name_index_remove(&ix, "b"));
    assert_true(xlb_name_index_remove(&ix, "a"));
    for (size_t i = 2; i < 5; i++)
        assert_ptr_equal(xlb_name_index_find(&ix, names[i]), names[i]);
    assert_null(xlb_name_index_find(&ix, "a"));
    assert_null(xlb_name_index_find(&ix, "b"));
    xlb_name_index_free(&ix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_what_was_set),
        cmocka_unit_test(replacing_takes_the_new_name_and_value),
        cmocka_unit_test(many_names),
        cmocka_unit_test(every_hash_equal),
        cmocka_unit_test(clustered_hashes),
        cmocka_unit_test(removal_inside_a_wrapping_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
