/*
 * A regex_rewrite substitution written for RE2 (RE2::GlobalReplace, as Envoy and gRPC apply it)
 * rewritten for pcre2_substitute, so that xlb produces the string a gRPC client hashes.
 *
 * RE2 names capture groups \0 .. \9 and writes a backslash as \\; every other character,
 * '$' included, stands for itself. PCRE2 names groups with '$' and writes '$' as "$$". A group
 * becomes ${N} rather than $N, so that RE2's "\10" (group 1, then '0') stays group 1.
 */
#ifndef XLB_REGEX_SUBSTITUTION_H
#define XLB_REGEX_SUBSTITUTION_H

#include <stddef.h>

/*
 * Returns the PCRE2 substitution (free with free()), or NULL with the reason in err: a
 * backslash followed by anything but a digit or a backslash (RE2 rejects the rewrite), or no
 * memory.
 */
char *xlb_regex_substitution_from_re2(const char *re2, char *err, size_t err_len);

#endif
