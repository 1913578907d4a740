/* Shared between the matcher's files; not part of the public API. */
#ifndef XLB_ROUTE_INTERNAL_H
#define XLB_ROUTE_INTERNAL_H

#include <stdbool.h>

#include "xlb_route.h"

struct xlb_route_scratch {
    pcre2_match_data *md;      /* one ovector pair: only "did it match" is wanted */
    pcre2_match_context *mctx; /* carries the match and depth limits */
    char join[XLB_ROUTE_JOIN_MAX];
};

/* ASCII case-insensitive equality of two byte strings of length n. */
bool xlb_rt_caseeq(const char *a, const char *b, uint32_t n);

/* Full match of subject against re within the scratch's limits. */
bool xlb_rt_regex(const pcre2_code *re, const char *subject, uint32_t len,
                  struct xlb_route_scratch *scratch);

/* Every header matcher of route matches request. */
bool xlb_rt_headers_match(const struct xlb_route_table *table, const struct xlb_rt_route *route,
                          const struct xlb_route_request *request,
                          struct xlb_route_scratch *scratch);

#endif
