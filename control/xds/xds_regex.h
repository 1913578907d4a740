/*
 * Regular expressions of xDS resources (RegexMatcher), compiled with PCRE2 in place of RE2.
 *
 * Validation and matching must agree, so both compile through this one function. Envoy and gRPC
 * match safe_regex against the whole string (RE2::FullMatch): full_match anchors both ends. A
 * hash policy's regex_rewrite replaces every match anywhere (RE2::GlobalReplace): full_match
 * false. Differences from RE2 are listed in docs/conformance.md.
 */
#ifndef XLB_XDS_REGEX_H
#define XLB_XDS_REGEX_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Compile pattern. Returns the code (free with pcre2_code_free), or NULL with the reason in
 * err: PCRE2's message, or the RE2 feature the pattern needs that xlb refuses.
 */
pcre2_code *xlb_xds_regex_compile(const char *pattern, bool full_match, char *err, size_t err_len);

#endif
