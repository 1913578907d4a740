/* RE2 rewrite strings to PCRE2 substitutions; see regex_substitution.h. */
#include "regex_substitution.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *xlb_regex_substitution_from_re2(const char *re2, char *err, size_t err_len)
{
    /* The longest growth is "\N" (2 bytes) to "${N}" (4) and "$" to "$$": twice the input. */
    size_t len = strlen(re2);
    char *out = malloc(2 * len + 1);
    if (out == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = re2[i];
        if (c == '$') {
            out[o++] = '$';
            out[o++] = '$';
        } else if (c != '\\') {
            out[o++] = c;
        } else if (re2[i + 1] >= '0' && re2[i + 1] <= '9') {
            out[o++] = '$';
            out[o++] = '{';
            out[o++] = re2[++i];
            out[o++] = '}';
        } else if (re2[i + 1] == '\\') {
            out[o++] = re2[++i]; /* PCRE2 takes a backslash literally without EXTENDED */
        } else {
            snprintf(err, err_len,
                     "invalid rewrite: '\\' must be followed by a digit or '\\' (at offset %zu)",
                     i);
            free(out);
            return NULL;
        }
    }
    out[o] = '\0';
    return out;
}
