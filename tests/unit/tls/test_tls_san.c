/* match_subject_alt_names (A29) over one SAN (lib/tls/xlb_tls_client.c): each kind, case, and
 * the regex's full match. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "xlb_tls_client.h"

static bool matches(enum xlb_san_match type, bool ignore_case, const char *value, const char *san)
{
    struct xlb_san_matcher m = {.type = type, .ignore_case = ignore_case, .value = value};
    return xlb_tls_san_matches(&m, san, strlen(san));
}

static void each_kind(void **state)
{
    (void)state;
    assert_true(matches(XLB_SAN_EXACT, false, "api.example", "api.example"));
    assert_false(matches(XLB_SAN_EXACT, false, "api.example", "api.example.evil"));
    assert_false(matches(XLB_SAN_EXACT, false, "api.example", "API.example"));
    assert_true(matches(XLB_SAN_EXACT, true, "api.example", "API.example"));
    assert_true(matches(XLB_SAN_PREFIX, false, "spiffe://prod/", "spiffe://prod/ns/a"));
    assert_false(matches(XLB_SAN_PREFIX, false, "spiffe://prod/", "spiffe://dev/ns/a"));
    assert_true(matches(XLB_SAN_SUFFIX, true, ".EXAMPLE", "a.example"));
    assert_false(matches(XLB_SAN_SUFFIX, false, ".example", "example"));
    assert_true(matches(XLB_SAN_CONTAINS, false, "/ns/", "spiffe://prod/ns/a"));
    assert_false(matches(XLB_SAN_CONTAINS, false, "/ns/", "spiffe://prod/n/a"));
}

/* A regex must match the whole SAN, as xDS's RE2 FullMatch. */
static void regex_matches_whole(void **state)
{
    (void)state;
    assert_true(matches(XLB_SAN_REGEX, false, "[a-z]+\\.example", "api.example"));
    assert_false(matches(XLB_SAN_REGEX, false, "[a-z]+\\.example", "api.example.evil"));
    assert_false(matches(XLB_SAN_REGEX, false, "[a-z]+\\.example", "x.api.example!"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_kind),
        cmocka_unit_test(regex_matches_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
