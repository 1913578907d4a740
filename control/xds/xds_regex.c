/* PCRE2 standing in for RE2; see xds_regex.h and docs/conformance.md. */
#include "xds_regex.h"

#include <stdint.h>
#include <stdio.h>

/*
 * RE2 guarantees linear-time matching, so it has no backreferences and no lookbehind; a
 * resource using them is NACKed by gRPC. PCRE2 reports both after compiling, so xlb refuses
 * them too instead of accepting what a gRPC client would reject.
 */
static bool needs_backtracking(const pcre2_code *code, char *err, size_t err_len)
{
    uint32_t backref_max = 0, lookbehind_max = 0;
    pcre2_pattern_info(code, PCRE2_INFO_BACKREFMAX, &backref_max);
    pcre2_pattern_info(code, PCRE2_INFO_MAXLOOKBEHIND, &lookbehind_max);
    if (backref_max > 0) {
        snprintf(err, err_len, "backreferences are not supported");
        return true;
    }
    if (lookbehind_max > 0) {
        snprintf(err, err_len, "lookbehind assertions are not supported");
        return true;
    }
    return false;
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
    return code;
}
