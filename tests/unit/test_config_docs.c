/*
 * docs/configuration.md and the parser agree on the keys of the xlb section. Each object's
 * table in the document follows a "<!-- keys: OBJECT -->" line and lists one key per row, in
 * backquotes in the first column; the parser's tables (xlb_bootstrap_objects) are what it
 * reads and what it accepts. A key in one and not the other fails, and so does a documented
 * object the parser does not have.
 *
 * The document's path is the first argument (meson passes it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bootstrap.h"

#define MAX_DOC_KEYS 64

static const char *doc_path;

struct doc_table {
    char object[64];
    unsigned n;
    char keys[MAX_DOC_KEYS][64];
};

/* The key of a table row ("| `name` | ..."), or false for a row that names none. */
static bool row_key(const char *line, char key[64])
{
    const char *start = strstr(line, "`");
    const char *bar = strchr(line + 1, '|');
    if (start == NULL || bar == NULL || start > bar)
        return false;
    const char *end = strchr(start + 1, '`');
    if (end == NULL || end > bar || end - start - 1 >= 64)
        return false;
    memcpy(key, start + 1, (size_t)(end - start - 1));
    key[end - start - 1] = '\0';
    return true;
}

/* Every keys table of the document; returns how many. */
static unsigned read_doc_tables(struct doc_table *tables, unsigned max)
{
    FILE *f = fopen(doc_path, "r");
    if (f == NULL)
        fail_msg("cannot open %s", doc_path);
    char line[4096];
    unsigned n = 0;
    struct doc_table *cur = NULL;
    unsigned rows = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        char object[64];
        if (sscanf(line, "<!-- keys: %63s -->", object) == 1) {
            assert_true(n < max);
            cur = &tables[n++];
            memset(cur, 0, sizeof(*cur));
            snprintf(cur->object, sizeof(cur->object), "%s", object);
            rows = 0;
            continue;
        }
        if (cur == NULL)
            continue;
        if (line[0] != '|') {
            if (rows > 0) /* the table has ended */
                cur = NULL;
            continue;
        }
        if (rows++ < 2) /* the header and the |---| line */
            continue;
        char key[64];
        if (!row_key(line, key))
            fail_msg("%s: a row of the %s table names no key: %s", doc_path, cur->object, line);
        assert_true(cur->n < MAX_DOC_KEYS);
        snprintf(cur->keys[cur->n++], sizeof(cur->keys[0]), "%s", key);
    }
    fclose(f);
    return n;
}

static bool parser_has(const struct xlb_config_object *object, const char *key)
{
    for (size_t k = 0; k < object->n_keys; k++)
        if (strcmp(object->keys[k].name, key) == 0)
            return true;
    return false;
}

static bool doc_has(const struct doc_table *table, const char *key)
{
    for (unsigned k = 0; k < table->n; k++)
        if (strcmp(table->keys[k], key) == 0)
            return true;
    return false;
}

static void documented_keys_are_the_parsed_keys(void **state)
{
    (void)state;
    struct doc_table tables[16];
    unsigned n_tables = read_doc_tables(tables, 16);
    unsigned problems = 0;
    for (const struct xlb_config_object *const *o = xlb_bootstrap_objects; *o != NULL; o++) {
        const struct doc_table *table = NULL;
        for (unsigned t = 0; t < n_tables; t++)
            if (strcmp(tables[t].object, (*o)->path) == 0)
                table = &tables[t];
        if (table == NULL) {
            print_error("%s has no \"<!-- keys: %s -->\" table\n", doc_path, (*o)->path);
            problems++;
            continue;
        }
        for (size_t k = 0; k < (*o)->n_keys; k++)
            if (!doc_has(table, (*o)->keys[k].name)) {
                print_error("%s.%s is read by the parser but not documented\n", (*o)->path,
                            (*o)->keys[k].name);
                problems++;
            }
        for (unsigned k = 0; k < table->n; k++)
            if (!parser_has(*o, table->keys[k])) {
                print_error("%s.%s is documented but the parser does not read it\n", (*o)->path,
                            table->keys[k]);
                problems++;
            }
    }
    for (unsigned t = 0; t < n_tables; t++) {
        bool known = false;
        for (const struct xlb_config_object *const *o = xlb_bootstrap_objects; *o != NULL; o++)
            known |= strcmp((*o)->path, tables[t].object) == 0;
        if (!known) {
            print_error("%s documents keys of %s, which the parser does not have\n", doc_path,
                        tables[t].object);
            problems++;
        }
    }
    assert_int_equal(problems, 0);
}

/* The comparison itself finds a difference (so that the test above cannot pass vacuously). */
static void a_difference_is_found(void **state)
{
    (void)state;
    struct doc_table tables[16];
    unsigned n_tables = read_doc_tables(tables, 16);
    assert_int_equal(n_tables, 5);
    unsigned total = 0;
    for (unsigned t = 0; t < n_tables; t++)
        total += tables[t].n;
    unsigned parsed = 0;
    for (const struct xlb_config_object *const *o = xlb_bootstrap_objects; *o != NULL; o++)
        parsed += (unsigned)(*o)->n_keys;
    assert_int_equal(total, parsed);
    assert_true(doc_has(&tables[0], "workers"));
    assert_false(doc_has(&tables[0], "wrokers"));
    assert_true(parser_has(&xlb_bootstrap_vip_object, "l7_mode"));
    assert_false(parser_has(&xlb_bootstrap_vip_object, "l7mode"));
    char key[64];
    assert_true(row_key("| `mtu` | integer | the MTU |", key));
    assert_string_equal(key, "mtu");
    assert_false(row_key("| mtu | integer | `576` |", key));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s docs/configuration.md\n", argv[0]);
        return 2;
    }
    doc_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(documented_keys_are_the_parsed_keys),
        cmocka_unit_test(a_difference_is_found),
    };
    return cmocka_run_group_tests_name("config_docs", tests, NULL, NULL);
}
