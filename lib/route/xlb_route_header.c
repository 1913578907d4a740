/*
 * Header matchers (A28, A63 string_match), with gRPC C-core's semantics: a header's value is
 * all its fields joined with ','; "-bin" headers are never visible; content-type always reads
 * "application/grpc"; a matcher other than present_match fails on an absent header whatever
 * its invert_match says.
 */
#include "xlb_route_internal.h"

#include <string.h>

static const char grpc_content_type[] = "application/grpc";

enum lookup { ABSENT, FOUND, TOO_LONG };

/* The header's value: one field points into the request, several are joined in scratch. */
static enum lookup lookup(const struct xlb_rt_header *h, const struct xlb_route_request *req,
                          struct xlb_route_scratch *scratch, const char **value, uint32_t *len)
{
    if (h->source == XLB_RT_SRC_ABSENT)
        return ABSENT;
    if (h->source == XLB_RT_SRC_CONTENT_TYPE) {
        *value = grpc_content_type;
        *len = sizeof(grpc_content_type) - 1;
        return FOUND;
    }
    unsigned found = 0;
    uint32_t used = 0;
    for (uint32_t i = 0; i < req->n_fields; i++) {
        const struct xlb_route_field *f = &req->fields[i];
        if (f->name_len != h->name_len || memcmp(f->name, h->name, h->name_len) != 0)
            continue;
        if (found == 0) {
            *value = f->value;
            *len = f->value_len;
        } else {
            if (found == 1) {
                if (*len > XLB_ROUTE_JOIN_MAX)
                    return TOO_LONG;
                memcpy(scratch->join, *value, *len);
                used = *len;
            }
            if (f->value_len + 1 > XLB_ROUTE_JOIN_MAX - used)
                return TOO_LONG;
            scratch->join[used++] = ',';
            memcpy(scratch->join + used, f->value, f->value_len);
            used += f->value_len;
            *value = scratch->join;
            *len = used;
        }
        found++;
    }
    return found > 0 ? FOUND : ABSENT;
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* A decimal int64 with optional sign and surrounding ASCII spaces (absl::SimpleAtoi). */
static bool parse_int64(const char *s, uint32_t len, int64_t *out)
{
    uint32_t i = 0, end = len;
    while (i < end && space(s[i]))
        i++;
    while (end > i && space(s[end - 1]))
        end--;
    bool negative = false;
    if (i < end && (s[i] == '+' || s[i] == '-'))
        negative = s[i++] == '-';
    if (i == end)
        return false;
    /* Accumulate negatively so that INT64_MIN parses. */
    int64_t v = 0;
    for (; i < end; i++) {
        if (!digit(s[i]))
            return false;
        int d = s[i] - '0';
        if (v < (INT64_MIN + d) / 10)
            return false;
        v = v * 10 - d;
    }
    if (!negative) {
        if (v == INT64_MIN)
            return false;
        v = -v;
    }
    *out = v;
    return true;
}

static bool bytes_eq(const struct xlb_rt_header *h, const char *a, const char *b, uint32_t n)
{
    return h->ignore_case ? xlb_rt_caseeq(a, b, n) : memcmp(a, b, n) == 0;
}

static bool contains(const struct xlb_rt_header *h, const char *v, uint32_t len)
{
    if (h->value_len > len)
        return false;
    for (uint32_t i = 0; i + h->value_len <= len; i++)
        if (bytes_eq(h, v + i, h->value, h->value_len))
            return true;
    return false;
}

static bool value_matches(const struct xlb_rt_header *h, const char *v, uint32_t len,
                          struct xlb_route_scratch *scratch)
{
    int64_t n;
    switch (h->kind) {
    case XLB_RT_HDR_EXACT:
        return len == h->value_len && bytes_eq(h, v, h->value, len);
    case XLB_RT_HDR_REGEX:
        return xlb_rt_regex(h->re, v, len, scratch);
    case XLB_RT_HDR_RANGE:
        return parse_int64(v, len, &n) && n >= h->range_start && n < h->range_end;
    case XLB_RT_HDR_PREFIX:
        return len >= h->value_len && bytes_eq(h, v, h->value, h->value_len);
    case XLB_RT_HDR_SUFFIX:
        return len >= h->value_len && bytes_eq(h, v + len - h->value_len, h->value, h->value_len);
    case XLB_RT_HDR_CONTAINS:
        return contains(h, v, len);
    default:
        return false;
    }
}

static bool header_matches(const struct xlb_rt_header *h, const struct xlb_route_request *req,
                           struct xlb_route_scratch *scratch)
{
    const char *v = NULL;
    uint32_t len = 0;
    enum lookup found = lookup(h, req, scratch, &v, &len);
    if (found == TOO_LONG)
        return false;
    bool match;
    if (h->kind == XLB_RT_HDR_PRESENT)
        match = (found == FOUND) == h->present;
    else if (found == ABSENT)
        return false;
    else
        match = value_matches(h, v, len, scratch);
    return match != h->invert;
}

bool xlb_rt_headers_match(const struct xlb_route_table *table, const struct xlb_rt_route *route,
                          const struct xlb_route_request *request,
                          struct xlb_route_scratch *scratch)
{
    const struct xlb_rt_header *h = &table->headers[route->first_header];
    for (uint32_t i = 0; i < route->n_headers; i++)
        if (!header_matches(&h[i], request, scratch))
            return false;
    return true;
}
