/* Route selection within a virtual host (A28): first match wins. */
#include "xlb_route_internal.h"

#include <stdlib.h>
#include <string.h>

struct xlb_route_scratch *xlb_route_scratch_create(void)
{
    struct xlb_route_scratch *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->md = pcre2_match_data_create(1, NULL);
    s->mctx = pcre2_match_context_create(NULL);
    if (s->md == NULL || s->mctx == NULL) {
        xlb_route_scratch_free(s);
        return NULL;
    }
    pcre2_set_match_limit(s->mctx, XLB_ROUTE_MATCH_LIMIT);
    pcre2_set_depth_limit(s->mctx, XLB_ROUTE_DEPTH_LIMIT);
    return s;
}

void xlb_route_scratch_free(struct xlb_route_scratch *scratch)
{
    if (scratch == NULL)
        return;
    pcre2_match_data_free(scratch->md);
    pcre2_match_context_free(scratch->mctx);
    free(scratch);
}

/*
 * The code was compiled anchored at both ends (full match). Any negative return, including a
 * limit hit or a subject that is not UTF-8, means no match: a bounded failure, never a stall.
 */
bool xlb_rt_regex(const pcre2_code *re, const char *subject, uint32_t len,
                  struct xlb_route_scratch *scratch)
{
    int rc = pcre2_match(re, (PCRE2_SPTR)subject, len, 0, 0, scratch->md, scratch->mctx);
    return rc >= 0;
}

static bool path_matches(const struct xlb_rt_route *r, const struct xlb_route_request *req,
                         struct xlb_route_scratch *scratch)
{
    switch (r->path_kind) {
    case XLB_RT_PATH_PREFIX:
        if (req->path_len < r->path_len)
            return false;
        break;
    case XLB_RT_PATH_EXACT:
        if (req->path_len != r->path_len)
            return false;
        break;
    default:
        return xlb_rt_regex(r->re, req->path, req->path_len, scratch);
    }
    if (r->case_sensitive)
        return memcmp(req->path, r->path, r->path_len) == 0;
    return xlb_rt_caseeq(req->path, r->path, r->path_len);
}

/* A uniform draw in [0, 1e6) below the route's fraction, as gRPC's UnderFraction. */
static bool fraction_passes(const struct xlb_rt_route *r, struct xlb_rng *rng)
{
    return !r->has_fraction || xlb_rng_below(rng, 1000000u) < r->fraction_ppm;
}

static enum xlb_route_verdict decide(const struct xlb_route_table *table, uint32_t index,
                                     struct xlb_rng *rng, struct xlb_route_result *result)
{
    const struct xlb_rt_route *r = &table->routes[index];
    result->route = index;
    result->cluster = result->entry = XLB_ROUTE_NONE;
    switch (r->action) {
    case XLB_RT_ACT_CLUSTER:
        result->cluster = r->cluster;
        result->verdict = XLB_ROUTE_RESULT_CLUSTER;
        break;
    case XLB_RT_ACT_WEIGHTED:
        result->cluster = xlb_wchoice_pick(r->choice, rng);
        if (r->cluster != XLB_PICK_NONE && result->cluster != XLB_PICK_NONE) {
            result->entry = result->cluster;
            result->cluster = table->entry_clusters[r->cluster + result->entry];
        }
        result->verdict = XLB_ROUTE_RESULT_CLUSTER;
        break;
    case XLB_RT_ACT_NON_FORWARDING:
        result->verdict = XLB_ROUTE_RESULT_NON_FORWARDING;
        break;
    default:
        result->verdict = XLB_ROUTE_RESULT_UNSUPPORTED;
        break;
    }
    return result->verdict;
}

/* A weighted route's cluster for column item `item` of its choice. */
static uint32_t weighted_cluster(const struct xlb_route_table *table, const struct xlb_rt_route *r,
                                 uint32_t item)
{
    return r->cluster != XLB_PICK_NONE ? table->entry_clusters[r->cluster + item] : item;
}

bool xlb_route_reaches(const struct xlb_route_table *table, uint32_t route, uint32_t cluster)
{
    if (route >= table->n_routes)
        return false;
    const struct xlb_rt_route *r = &table->routes[route];
    if (r->action == XLB_RT_ACT_CLUSTER)
        return r->cluster == cluster;
    if (r->action != XLB_RT_ACT_WEIGHTED || r->choice == NULL)
        return false;
    /* Every entry is some column's item (a table of n entries has n columns). */
    for (uint32_t c = 0; c < r->choice->n_columns; c++)
        if (weighted_cluster(table, r, r->choice->columns[c].item) == cluster)
            return true;
    return false;
}

enum xlb_route_verdict xlb_route_match(const struct xlb_route_table *table, uint32_t vhost,
                                       const struct xlb_route_request *request, struct xlb_rng *rng,
                                       struct xlb_route_scratch *scratch,
                                       struct xlb_route_result *result)
{
    if (vhost < table->n_vhosts) {
        const struct xlb_rt_vhost *vh = &table->vhosts[vhost];
        for (uint32_t i = vh->first_route; i < vh->first_route + vh->n_routes; i++) {
            const struct xlb_rt_route *r = &table->routes[i];
            /* gRPC's order: path, then headers, then the fraction's draw. */
            if (path_matches(r, request, scratch) &&
                xlb_rt_headers_match(table, r, request, scratch) && fraction_passes(r, rng))
                return decide(table, i, rng, result);
        }
    }
    result->verdict = XLB_ROUTE_RESULT_NO_ROUTE;
    result->route = XLB_ROUTE_NONE;
    result->cluster = result->entry = XLB_ROUTE_NONE;
    return result->verdict;
}
