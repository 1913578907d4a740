/*
 * One A42 hash policy of a route, as validated (struct xlb_hash_policy), compiled for the
 * workers (struct xlb_lb_hash_policy): the header name lower-cased, a regex_rewrite's pattern
 * compiled and its RE2 substitution translated for pcre2_substitute.
 */
#ifndef XLB_HASH_POLICY_COMPILE_H
#define XLB_HASH_POLICY_COMPILE_H

#include <stddef.h>

#include "route_config.h"
#include "xlb_lb.h"

/* Returns 0, or a negative errno with a reason in err. Whatever *out holds either way is freed
 * with the VIP that owns it (lib/lb). */
int xlb_hash_policy_compile(const struct xlb_hash_policy *in, struct xlb_lb_hash_policy *out,
                            char *err, size_t err_len);

#endif
