/*
 * RE2 rewrite strings translated for pcre2_substitute (control/xds/regex_substitution.c): each
 * case checks the PCRE2 text, and that PCRE2 applying it produces what RE2's GlobalReplace
 * documents for the RE2 text (worked out by hand in the case).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "regex_substitution.h"
#include "xds_regex.h"

static void assert_translates(const char *re2, const char *want)
{
    char err[128] = "";
    char *got = xlb_regex_substitution_from_re2(re2, err, sizeof(err));
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* subject with every match of pattern replaced by the RE2 rewrite re2, through PCRE2. */
static void assert_rewrites(const char *pattern, const char *re2, const char *subject,
                            const char *want)
{
    char err[128] = "";
    pcre2_code *code = xlb_xds_regex_compile(pattern, false, err, sizeof(err));
    assert_non_null(code);
    char *sub = xlb_regex_substitution_from_re2(re2, err, sizeof(err));
    assert_non_null(sub);
    PCRE2_UCHAR out[256];
    PCRE2_SIZE out_len = sizeof(out);
    int rc = pcre2_substitute(code, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0,
                              PCRE2_SUBSTITUTE_GLOBAL, NULL, NULL, (PCRE2_SPTR)sub,
                              PCRE2_ZERO_TERMINATED, out, &out_len);
    assert_true(rc >= 0);
    assert_string_equal((const char *)out, want);
    free(sub);
    pcre2_code_free(code);
}

static void groups_become_dollar_braces(void **state)
{
    (void)state;
    assert_translates("\\1", "${1}");
    assert_translates("<\\2-\\1>", "<${2}-${1}>");
    assert_translates("\\0", "${0}");
    /* RE2 reads one digit: "\10" is group 1 then '0', not group 10. */
    assert_translates("\\10", "${1}0");
}

static void dollar_and_backslash_are_literal(void **state)
{
    (void)state;
    assert_translates("$1", "$$1");
    assert_translates("a$", "a$$");
    assert_translates("\\\\", "\\");
    assert_translates("", "");
    assert_translates("plain/text", "plain/text");
}

static void other_escapes_are_refused(void **state)
{
    (void)state;
    char err[128] = "";
    assert_null(xlb_regex_substitution_from_re2("ab\\n", err, sizeof(err)));
    assert_string_equal(err, "invalid rewrite: '\\' must be followed by a digit or '\\' (at "
                             "offset 2)");
    assert_null(xlb_regex_substitution_from_re2("trailing\\", err, sizeof(err)));
}

/* What RE2::GlobalReplace gives, by its documentation, for these rewrites. */
static void pcre2_produces_what_re2_would(void **state)
{
    (void)state;
    /* Groups swapped, every match replaced. */
    assert_rewrites("(\\w+)@(\\w+)", "\\2.\\1", "alice@example bob@test", "example.alice test.bob");
    /* "$1" in RE2 is two literal characters. */
    assert_rewrites("user-(\\d+)", "$1=\\1", "user-42", "$1=42");
    /* "\10" is group 1 followed by '0'. */
    assert_rewrites("(a)", "\\10", "xax", "xa0x");
    /* "\\" is one backslash; "\0" the whole match. */
    assert_rewrites("b+", "[\\\\\\0]", "abba", "a[\\bb]a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_become_dollar_braces),
        cmocka_unit_test(dollar_and_backslash_are_literal),
        cmocka_unit_test(other_escapes_are_refused),
        cmocka_unit_test(pcre2_produces_what_re2_would),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
