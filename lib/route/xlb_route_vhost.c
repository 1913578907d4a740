/* Virtual host selection (A28): see xlb_route_select_vhost in xlb_route.h. */
#include "xlb_route_internal.h"

static inline unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}

/* Patterns are stored lower-cased, so only the authority needs folding. */
static bool folded_eq(const char *pattern, const char *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if ((unsigned char)pattern[i] != lower((unsigned char)s[i]))
            return false;
    return true;
}

bool xlb_rt_caseeq(const char *a, const char *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
            return false;
    return true;
}

static bool domain_matches(const struct xlb_rt_domain *d, const char *host, uint32_t len)
{
    switch (d->kind) {
    case XLB_RT_DOMAIN_EXACT:
        return len == d->len && folded_eq(d->pattern, host, len);
    case XLB_RT_DOMAIN_SUFFIX:
        /* len >= pattern length: the '*' stands for at least one character. */
        return len >= d->len && folded_eq(d->pattern + 1, host + len - (d->len - 1), d->len - 1);
    case XLB_RT_DOMAIN_PREFIX:
        return len >= d->len && folded_eq(d->pattern, host, d->len - 1);
    default:
        return true;
    }
}

uint32_t xlb_route_select_vhost(const struct xlb_route_table *table, const char *authority,
                                uint32_t authority_len)
{
    uint32_t best = XLB_ROUTE_NONE;
    unsigned best_kind = XLB_RT_DOMAIN_UNIVERSE + 1;
    uint32_t best_len = 0;

    /* Domains are in vhost order, so a strict improvement keeps the earlier host on ties. */
    for (uint32_t i = 0; i < table->n_domains; i++) {
        const struct xlb_rt_domain *d = &table->domains[i];
        if (d->kind > best_kind || (d->kind == best_kind && d->len <= best_len))
            continue;
        if (!domain_matches(d, authority, authority_len))
            continue;
        best = d->vhost;
        best_kind = d->kind;
        best_len = d->len;
        if (best_kind == XLB_RT_DOMAIN_EXACT)
            break;
    }
    return best;
}
