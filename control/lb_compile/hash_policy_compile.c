/* A42 hash policies for the workers; see hash_policy_compile.h. */
#include "hash_policy_compile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "regex_substitution.h"
#include "xds_regex.h"

/* The highest group "${N}" names in a translated substitution; 0 when none. */
static uint32_t highest_group(const char *substitution)
{
    uint32_t highest = 0;
    for (const char *s = substitution; *s != '\0'; s++) {
        if (s[0] == '$' && s[1] == '$')
            s++;
        else if (s[0] == '$' && s[1] == '{' && (uint32_t)(s[2] - '0') > highest)
            highest = (uint32_t)(s[2] - '0');
    }
    return highest;
}

int xlb_hash_policy_compile(const struct xlb_hash_policy *in, struct xlb_lb_hash_policy *out,
                            char *err, size_t err_len)
{
    out->kind = in->kind == XLB_HASH_CHANNEL_ID ? XLB_LB_HASH_CHANNEL_ID : XLB_LB_HASH_HEADER;
    out->terminal = in->terminal;
    if (in->kind != XLB_HASH_HEADER)
        return 0;
    out->header = strdup(in->header_name);
    if (out->header == NULL)
        return -ENOMEM;
    for (char *p = out->header; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    out->header_len = (uint32_t)strlen(out->header);
    if (in->regex == NULL)
        return 0;
    /* The same compile function validation used, so what was ACKed compiles here. */
    out->re = xlb_xds_regex_compile(in->regex, false, err, err_len);
    if (out->re == NULL)
        return -EINVAL;
    out->substitution =
        xlb_regex_substitution_from_re2(in->substitution ? in->substitution : "", err, err_len);
    if (out->substitution == NULL)
        return -EINVAL;
    out->substitution_len = (uint32_t)strlen(out->substitution);
    /* RE2::GlobalReplace refuses a rewrite naming a group the pattern lacks and leaves the
     * value as it was; gRPC then hashes the value unchanged. pcre2_substitute would fail
     * instead (no hash), so such a policy hashes without rewriting, as gRPC does. */
    uint32_t groups = 0;
    pcre2_pattern_info(out->re, PCRE2_INFO_CAPTURECOUNT, &groups);
    if (highest_group(out->substitution) > groups) {
        pcre2_code_free(out->re);
        out->re = NULL;
        return 0;
    }
    pcre2_jit_compile(out->re, PCRE2_JIT_COMPLETE);
    return 0;
}
