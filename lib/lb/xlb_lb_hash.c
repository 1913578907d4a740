/*
 * The request hash of A42: each hash policy of the route in order produces a hash or nothing;
 * produced hashes are combined as Envoy does (rotate the running hash left by one, xor the new
 * one), and a terminal policy ends the walk once some hash exists.
 */
#include <string.h>
#include <xxhash.h>

#include "xlb_lb.h"

/* Header values joined with ',' as gRPC presents a repeated header; false when too long. */
static bool joined_header(const struct xlb_route_request *http, const struct xlb_lb_hash_policy *p,
                          char *buf, uint32_t cap, uint32_t *len)
{
    bool found = false;
    *len = 0;
    for (uint32_t i = 0; i < http->n_fields; i++) {
        const struct xlb_route_field *f = &http->fields[i];
        if (f->name_len != p->header_len || memcmp(f->name, p->header, f->name_len) != 0)
            continue;
        uint32_t need = *len + (found ? 1 : 0) + f->value_len;
        if (need > cap)
            return false;
        if (found)
            buf[(*len)++] = ',';
        memcpy(buf + *len, f->value, f->value_len);
        *len += f->value_len;
        found = true;
    }
    return found;
}

/* One HEADER policy's hash; false when the header is absent or cannot be rewritten. */
static bool header_hash(const struct xlb_route_request *http, const struct xlb_lb_hash_policy *p,
                        struct xlb_lb_worker *w, uint64_t *out)
{
    char value[XLB_ROUTE_JOIN_MAX], rewritten[XLB_ROUTE_JOIN_MAX];
    uint32_t len;
    if (http == NULL || !joined_header(http, p, value, sizeof(value), &len))
        return false;
    if (p->re == NULL) {
        *out = XXH64(value, len, 0);
        return true;
    }
    /* Envoy's regex_rewrite replaces every match. The caller's match data and limits keep
     * PCRE2 from allocating or running unbounded on a worker. */
    PCRE2_SIZE out_len = sizeof(rewritten);
    int rc = pcre2_substitute(p->re, (PCRE2_SPTR)value, len, 0,
                              PCRE2_SUBSTITUTE_GLOBAL | PCRE2_NO_UTF_CHECK, w->hash_match,
                              w->hash_limits, (PCRE2_SPTR)p->substitution, p->substitution_len,
                              (PCRE2_UCHAR *)rewritten, &out_len);
    if (rc < 0)
        return false;
    *out = XXH64(rewritten, out_len, 0);
    return true;
}

uint64_t xlb_lb_request_hash(const struct xlb_lb_vip *vip, uint32_t route,
                             const struct xlb_lb_request *request, struct xlb_lb_worker *w,
                             bool *hashed)
{
    uint64_t hash = 0;
    *hashed = false;
    if (vip->route_n_hash == NULL || route >= vip->routes->n_routes)
        return 0;
    const struct xlb_lb_hash_policy *p = &vip->hash_policies[vip->route_first_hash[route]];
    for (uint32_t i = 0; i < vip->route_n_hash[route]; i++, p++) {
        uint64_t one;
        bool produced;
        if (p->kind == XLB_LB_HASH_CHANNEL_ID) {
            one = XXH64(&request->connection_id, sizeof(request->connection_id), 0);
            produced = true;
        } else {
            produced = header_hash(request->http, p, w, &one);
        }
        if (produced) {
            hash = *hashed ? (((hash << 1) | (hash >> 63)) ^ one) : one;
            *hashed = true;
        }
        if (*hashed && p->terminal) /* Envoy: a terminal policy ends a walk that has a hash */
            break;
    }
    return hash;
}
