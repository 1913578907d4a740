/*
 * The Any registry knows every message protoc-c generated from proto/: the names are taken
 * from the generated descriptors in the build tree, so a new .proto cannot be forgotten.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "pj_test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned n_checked;
static unsigned n_missing;

/* A descriptor's full name is the quoted line right after its magic number. */
static void check_file(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    bool after_magic = false;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (after_magic) {
            char name[400], url[450];
            if (sscanf(line, " \"%399[A-Za-z0-9_.]\",", name) == 1) {
                snprintf(url, sizeof(url), "type.googleapis.com/%s", name);
                n_checked++;
                if (xlb_proto_type_by_url(url) == NULL) {
                    print_message("not in the registry: %s\n", name);
                    n_missing++;
                }
            }
        }
        after_magic = strstr(line, "PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC") != NULL;
    }
    fclose(f);
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    size_t len = strlen(path);
    if (flag == FTW_F && len > 7 && strcmp(path + len - 7, ".pb-c.c") == 0)
        check_file(path);
    return 0;
}

static void test_registry_complete(void **state)
{
    const char *build = getenv("XLB_BUILD_DIR");
    if (build == NULL)
        fail_msg("XLB_BUILD_DIR is not set: run this test with meson test, which sets it");
    char root[512];
    snprintf(root, sizeof(root), "%s/proto", build);
    assert_int_equal(nftw(root, visit, 16, FTW_PHYS), 0);
    assert_true(n_checked > 90);
    assert_int_equal(n_missing, 0);
}

const struct CMUnitTest registry_tests[] = {
    cmocka_unit_test(test_registry_complete),
};
const size_t registry_tests_count = sizeof(registry_tests) / sizeof(registry_tests[0]);
