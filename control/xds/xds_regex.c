/* PCRE2 standing in for RE2; see xds_regex.h and docs/conformance.md. */
#include "xds_regex.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * RE2 guarantees linear-time matching, so it has no backreferences; a resource using them is
 * NACKed by gRPC. PCRE2 reports them after compiling (a condition on a group counts too), so
 * xlb refuses them instead of accepting what a gRPC client would reject. The rest of the
 * PCRE2-only syntax is found in the pattern's text (re2_lacks below). (PCRE2's lookbehind
 * count is no guide: it counts \b and \A, which RE2 has.)
 */
static bool needs_backtracking(const pcre2_code *code, char *err, size_t err_len)
{
    uint32_t backref_max = 0;
    pcre2_pattern_info(code, PCRE2_INFO_BACKREFMAX, &backref_max);
    if (backref_max > 0) {
        snprintf(err, err_len, "backreferences are not supported");
        return true;
    }
    return false;
}

/* Index of the ']' closing the class that opens at p[open], or of the last byte if none. */
static size_t class_end(const char *p, size_t open)
{
    size_t j = open + 1;
    if (p[j] == '^')
        j++;
    if (p[j] == ']')
        j++; /* a leading ']' is a member */
    for (; p[j] != '\0'; j++) {
        if (p[j] == '\\' && p[j + 1] != '\0')
            j++;
        else if (p[j] == '[' && p[j + 1] == ':' && strstr(p + j + 2, ":]") != NULL)
            j = (size_t)(strstr(p + j + 2, ":]") - p) + 1; /* [:alpha:] */
        else if (p[j] == ']')
            return j;
    }
    return j > 0 ? j - 1 : 0;
}

/* The larger count of the repetition {n}, {n,} or {n,m} that the '}' at p[i] closes, or -1
 * when it closes none. */
static long repeat_count(const char *p, size_t i)
{
    size_t j = i;
    while (j > 0 && (isdigit((unsigned char)p[j - 1]) || p[j - 1] == ','))
        j--;
    if (j == 0 || p[j - 1] != '{' || !isdigit((unsigned char)p[j]))
        return -1;
    long largest = 0;
    for (const char *d = p + j; d < p + i; d++)
        if (isdigit((unsigned char)*d)) {
            long n = strtol(d, NULL, 10);
            largest = n > largest ? n : largest;
            while (isdigit((unsigned char)d[1]))
                d++;
        }
    return largest;
}

/* Whether g (after "(?") sets flags, "(?i)" or "(?i:...)", with one RE2 lacks (RE2 has i, m,
 * s and U). */
static const char *flags_lack(const char *g)
{
    size_t n = strspn(g, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-^");
    if (n == 0 || (g[n] != ')' && g[n] != ':'))
        return NULL;
    for (size_t k = 0; k < n; k++)
        if (strchr("imsU-", g[k]) == NULL)
            return "flags other than i, m, s and U are not supported";
    return NULL;
}

/* What a "(?" group at g (the bytes after "(?") needs that RE2 lacks, or NULL. */
static const char *group_lacks(const char *g)
{
    if (g[0] == '=' || g[0] == '!')
        return "lookahead assertions are not supported";
    if (g[0] == '<' && (g[1] == '=' || g[1] == '!'))
        return "lookbehind assertions are not supported";
    if (g[0] == '>')
        return "atomic groups are not supported";
    if (g[0] == '(')
        return "conditional groups are not supported";
    if (g[0] == '|')
        return "branch reset groups are not supported";
    if (g[0] == 'C')
        return "callouts are not supported";
    if (g[0] == '#')
        return "comment groups are not supported";
    if (g[0] == 'R' || g[0] == '&' || isdigit((unsigned char)g[0]) ||
        ((g[0] == '+' || g[0] == '-') && isdigit((unsigned char)g[1])) ||
        (g[0] == 'P' && g[1] == '>'))
        return "recursion and subroutine calls are not supported";
    return flags_lack(g);
}

/* What an escape \e needs that RE2 lacks, or NULL. */
static const char *escape_lacks(char e)
{
    switch (e) {
    case 'K':
        return "\\K is not supported";
    case 'G':
        return "\\G is not supported";
    case 'Z':
        return "\\Z is not supported (RE2 has \\z)";
    case 'R':
        return "\\R is not supported";
    case 'X':
        return "\\X is not supported";
    case 'c':
        return "\\c (control characters) is not supported";
    case 'h':
    case 'H':
        return "\\h and \\H are not supported";
    default:
        return NULL;
    }
}

/*
 * The first construct of a pattern PCRE2 compiled that RE2 does not have (besides
 * backreferences, which PCRE2 reports itself), or NULL: lookaround, atomic and conditional
 * groups, recursion, possessive quantifiers, flags RE2 lacks, verbs, counts over 1000 and a
 * few escapes. Character classes
 * and \Q...\E quotes are skipped, since these characters mean nothing special inside them.
 */
static const char *re2_lacks(const char *p)
{
    bool after_quantifier = false;
    for (size_t i = 0; p[i] != '\0'; i++) {
        char c = p[i];
        bool quantifier = false;
        if (c == '\\' && p[i + 1] == 'Q') {
            const char *end = strstr(p + i + 2, "\\E");
            if (end == NULL)
                return NULL; /* quoted to the end */
            i = (size_t)(end - p) + 1;
        } else if (c == '\\' && p[i + 1] != '\0') {
            const char *lack = escape_lacks(p[++i]);
            if (lack != NULL)
                return lack;
        } else if (c == '[') {
            i = class_end(p, i);
        } else if (c == '(' && p[i + 1] == '*') {
            return "PCRE2 verbs and pattern options (*...) are not supported";
        } else if (c == '(' && p[i + 1] == '?') {
            const char *lack = group_lacks(p + i + 2);
            if (lack != NULL)
                return lack;
            i++; /* the '?' opens the group: not a quantifier */
        } else if (c == '+' && after_quantifier) {
            return "possessive quantifiers are not supported";
        } else if (c == '*' || c == '+' || c == '{') {
            quantifier = c != '{';
        } else if (c == '?') {
            quantifier = !after_quantifier; /* after a quantifier, '?' makes it lazy */
        } else if (c == '}') {
            long count = repeat_count(p, i);
            if (count > 1000)
                return "repeat counts over 1000 are not supported";
            quantifier = count >= 0;
        }
        after_quantifier = quantifier;
    }
    return NULL;
}

pcre2_code *xlb_xds_regex_compile(const char *pattern, bool full_match, char *err, size_t err_len)
{
    /* RE2 reads patterns as UTF-8 and rejects invalid UTF-8; \C would break that. */
    uint32_t options = PCRE2_UTF | PCRE2_NEVER_BACKSLASH_C;
    if (full_match)
        options |= PCRE2_ANCHORED | PCRE2_ENDANCHORED;
    int code_err = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, options, &code_err,
                                     &offset, NULL);
    if (code == NULL) {
        PCRE2_UCHAR message[128];
        if (pcre2_get_error_message(code_err, message, sizeof(message)) < 0)
            snprintf((char *)message, sizeof(message), "error %d", code_err);
        snprintf(err, err_len, "%s", (const char *)message);
        return NULL;
    }
    if (needs_backtracking(code, err, err_len)) {
        pcre2_code_free(code);
        return NULL;
    }
    const char *lack = re2_lacks(pattern);
    if (lack != NULL) {
        snprintf(err, err_len, "%s", lack);
        pcre2_code_free(code);
        return NULL;
    }
    return code;
}
