/*
 * RouteMatch as gRPC reads it (A28): a path specifier (prefix, path or safe_regex), header
 * matchers and a runtime fraction. Some matches can never select a gRPC method; gRPC ignores
 * those routes instead of NACKing, and so does xlb.
 */
#include <stdlib.h>
#include <string.h>

#include "validate_route_internal.h"

typedef Envoy__Config__Route__V3__RouteMatch RouteMatch;
typedef Envoy__Config__Route__V3__HeaderMatcher HeaderMatcher;
typedef Envoy__Type__Matcher__V3__StringMatcher StringMatcher;

/* "" matches everything; otherwise "/", "/service", "/service/" or "/service/method-prefix". */
static bool prefix_usable(const char *prefix)
{
    if (prefix[0] == '\0')
        return true;
    if (prefix[0] != '/')
        return false;
    const char *second = strchr(prefix + 1, '/');
    if (second == NULL)
        return true;
    return second != prefix + 1 && strchr(second + 1, '/') == NULL;
}

/* Exactly "/service/method" with both parts non-empty. */
static bool path_usable(const char *path)
{
    if (path[0] != '/')
        return false;
    const char *second = strchr(path + 1, '/');
    return second != NULL && second != path + 1 && second[1] != '\0' &&
           strchr(second + 1, '/') == NULL;
}

static int read_path(struct xv_ctx *ctx, const char *path, const RouteMatch *m,
                     struct xlb_route_match *out)
{
    char child[XV_PATH_MAX];
    const char *value;
    switch (m->path_specifier_case) {
    case ENVOY__CONFIG__ROUTE__V3__ROUTE_MATCH__PATH_SPECIFIER_PREFIX:
        if (!prefix_usable(m->prefix))
            return 0;
        out->path_type = XLB_PATH_PREFIX;
        value = m->prefix;
        break;
    case ENVOY__CONFIG__ROUTE__V3__ROUTE_MATCH__PATH_SPECIFIER_PATH:
        if (!path_usable(m->path))
            return 0;
        out->path_type = XLB_PATH_EXACT;
        value = m->path;
        break;
    case ENVOY__CONFIG__ROUTE__V3__ROUTE_MATCH__PATH_SPECIFIER_SAFE_REGEX:
        xv_key(child, path, "safe_regex");
        if (!xv_regex_check(ctx, child, m->safe_regex->regex, true))
            return -1;
        out->path_type = XLB_PATH_REGEX;
        value = m->safe_regex->regex;
        break;
    default:
        xv_error(ctx, path, "invalid path specifier");
        return -1;
    }
    out->path = xv_strdup(ctx, path, value);
    return out->path != NULL ? 1 : -1;
}

/* string_match: the same five kinds, with ignore_case (which regexes do not honour). */
static bool read_string_match(struct xv_ctx *ctx, const char *path, const StringMatcher *sm,
                              struct xlb_header_matcher *out, const char **value)
{
    out->ignore_case = sm->ignore_case;
    switch (sm->match_pattern_case) {
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_EXACT:
        out->type = XLB_HEADER_EXACT;
        *value = sm->exact;
        return true;
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_PREFIX:
        out->type = XLB_HEADER_PREFIX;
        *value = sm->prefix;
        return true;
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_SUFFIX:
        out->type = XLB_HEADER_SUFFIX;
        *value = sm->suffix;
        return true;
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_CONTAINS:
        out->type = XLB_HEADER_CONTAINS;
        *value = sm->contains;
        return true;
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_SAFE_REGEX: {
        char child[XV_PATH_MAX];
        xv_key(child, path, "safe_regex");
        out->type = XLB_HEADER_REGEX;
        out->ignore_case = false;
        *value = sm->safe_regex->regex;
        return xv_regex_check(ctx, child, *value, true);
    }
    default:
        xv_error(ctx, path, "invalid string matcher");
        return false;
    }
}

static bool read_range(struct xv_ctx *ctx, const char *path, const HeaderMatcher *h,
                       struct xlb_header_matcher *out)
{
    char child[XV_PATH_MAX];
    xv_key(child, path, "range_match");
    out->type = XLB_HEADER_RANGE;
    out->range_start = h->range_match->start;
    out->range_end = h->range_match->end;
    if (out->range_end < out->range_start) {
        xv_error(ctx, child, "end %lld is smaller than start %lld", (long long)out->range_end,
                 (long long)out->range_start);
        return false;
    }
    return true;
}

static bool read_header_kind(struct xv_ctx *ctx, const char *path, const HeaderMatcher *h,
                             struct xlb_header_matcher *out, const char **value)
{
    char child[XV_PATH_MAX];
    switch (h->header_match_specifier_case) {
    case ENVOY__CONFIG__ROUTE__V3__HEADER_MATCHER__HEADER_MATCH_SPECIFIER_EXACT_MATCH:
        out->type = XLB_HEADER_EXACT;
        *value = h->exact_match;
        return true;
    case ENVOY__CONFIG__ROUTE__V3__HEADER_MATCHER__HEADER_MATCH_SPECIFIER_SAFE_REGEX_MATCH:
        xv_key(child, path, "safe_regex_match");
        out->type = XLB_HEADER_REGEX;
        *value = h->safe_regex_match->regex;
        return xv_regex_check(ctx, child, *value, true);
    case ENVOY__CONFIG__ROUTE__V3__HEADER_MATCHER__HEADER_MATCH_SPECIFIER_RANGE_MATCH:
        return read_range(ctx, path, h, out);
    case ENVOY__CONFIG__ROUTE__V3__HEADER_MATCHER__HEADER_MATCH_SPECIFIER_PRESENT_MATCH:
        out->type = XLB_HEADER_PRESENT;
        out->present = h->present_match;
        return true;
    case ENVOY__CONFIG__ROUTE__V3__HEADER_MATCHER__HEADER_MATCH_SPECIFIER_PREFIX_MATCH:
        out->type = XLB_HEADER_PREFIX;
        *value = h->prefix_match;
        return true;
    case ENVOY__CONFIG__ROUTE__V3__HEADER_MATCHER__HEADER_MATCH_SPECIFIER_SUFFIX_MATCH:
        out->type = XLB_HEADER_SUFFIX;
        *value = h->suffix_match;
        return true;
    case ENVOY__CONFIG__ROUTE__V3__HEADER_MATCHER__HEADER_MATCH_SPECIFIER_CONTAINS_MATCH:
        out->type = XLB_HEADER_CONTAINS;
        *value = h->contains_match;
        return true;
    case ENVOY__CONFIG__ROUTE__V3__HEADER_MATCHER__HEADER_MATCH_SPECIFIER_STRING_MATCH:
        xv_key(child, path, "string_match");
        return read_string_match(ctx, child, h->string_match, out, value);
    default:
        xv_error(ctx, path, "invalid header matcher");
        return false;
    }
}

static bool read_header(struct xv_ctx *ctx, const char *path, const HeaderMatcher *h,
                        struct xlb_header_matcher *out)
{
    const char *value = "";
    if (!read_header_kind(ctx, path, h, out, &value))
        return false;
    out->invert = h->invert_match;
    out->name = xv_strdup(ctx, path, h->name);
    out->value = xv_strdup(ctx, path, value);
    return out->name != NULL && out->value != NULL;
}

static bool read_headers(struct xv_ctx *ctx, const char *path, const RouteMatch *m,
                         struct xlb_route_match *out)
{
    char hpath[XV_PATH_MAX];
    xv_key(hpath, path, "headers");
    out->headers = xv_calloc(ctx, hpath, m->n_headers, sizeof(*out->headers));
    if (out->headers == NULL)
        return false;
    bool ok = true;
    for (size_t i = 0; i < m->n_headers; i++) {
        char ipath[XV_PATH_MAX];
        xv_idx(ipath, hpath, i);
        /* Counted even when it failed, so that free() sees whatever was allocated. */
        ok = read_header(ctx, ipath, m->headers[i], &out->headers[out->n_headers++]) && ok;
    }
    return ok;
}

static bool read_fraction(struct xv_ctx *ctx, const char *path, const RouteMatch *m,
                          struct xlb_route_match *out)
{
    if (m->runtime_fraction == NULL || m->runtime_fraction->default_value == NULL)
        return true;
    char child[XV_PATH_MAX];
    xv_key(child, path, "runtime_fraction.default_value");
    out->has_fraction =
        xv_fraction_ppm(ctx, child, m->runtime_fraction->default_value, &out->fraction_per_million);
    return out->has_fraction;
}

int xv_route_match(struct xv_ctx *ctx, const char *path, const RouteMatch *m,
                   struct xlb_route_match *out)
{
    /* gRPC has no query parameters to match: such a route can never be chosen. */
    if (m->n_query_parameters > 0)
        return 0;
    int usable = read_path(ctx, path, m, out);
    if (usable <= 0)
        return usable;
    out->case_sensitive = m->case_sensitive == NULL || m->case_sensitive->value;
    bool ok = read_headers(ctx, path, m, out);
    ok = read_fraction(ctx, path, m, out) && ok;
    return ok ? 1 : -1;
}

void xv_route_match_free(struct xlb_route_match *match)
{
    free(match->path);
    for (size_t i = 0; i < match->n_headers; i++) {
        free(match->headers[i].name);
        free(match->headers[i].value);
    }
    free(match->headers);
    memset(match, 0, sizeof(*match));
}
