/* See route_compile.h. */
#include "route_compile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "name_index.h"
#include "xds_regex.h"

/* The table's cluster names, and an index of them: a route table names every cluster once. */
struct names {
    char **v;
    uint32_t n, cap;
    struct xlb_name_index index; /* value: the name's position + 1 (NULL is "absent") */
};

static char *dup_lower(const char *s, bool fold)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d == NULL)
        return NULL;
    /* Copied, then folded in place: GCC's LTO vectorises a one-pass copy-and-fold of a
     * constant one-character string into an 8-byte store it then warns about. */
    memcpy(d, s, n + 1);
    for (size_t i = 0; fold && i < n; i++)
        if (d[i] >= 'A' && d[i] <= 'Z')
            d[i] = (char)(d[i] + ('a' - 'A'));
    return d;
}

/* The index of name, appending it when new; XLB_PICK_NONE when out of memory. */
static uint32_t cluster_index(struct names *names, const char *name)
{
    uintptr_t at = (uintptr_t)xlb_name_index_find(&names->index, name);
    if (at != 0)
        return (uint32_t)(at - 1);
    if (names->n == names->cap) {
        uint32_t cap = names->cap ? names->cap * 2 : 8;
        char **v = realloc(names->v, cap * sizeof(*v));
        if (v == NULL)
            return XLB_PICK_NONE;
        names->v = v;
        names->cap = cap;
    }
    char *copy = dup_lower(name, false);
    if (copy == NULL ||
        xlb_name_index_set(&names->index, copy, (void *)(uintptr_t)(names->n + 1)) != 0) {
        free(copy);
        return XLB_PICK_NONE;
    }
    names->v[names->n] = copy;
    return names->n++;
}

/* A regex validation accepted; NULL here can only be PCRE2 running out of memory. */
static pcre2_code *regex(const char *pattern)
{
    char err[128];
    return xlb_xds_regex_compile(pattern, true, err, sizeof(err));
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int compile_header(const struct xlb_header_matcher *in, struct xlb_rt_header *out)
{
    out->name = dup_lower(in->name, true);
    out->value = dup_lower(in->value, false);
    if (out->name == NULL || out->value == NULL)
        return -ENOMEM;
    out->name_len = (uint32_t)strlen(out->name);
    out->value_len = (uint32_t)strlen(out->value);
    out->kind = (uint8_t)in->type; /* the two enums list the kinds in the same order */
    out->source = ends_with(out->name, "-bin")             ? XLB_RT_SRC_ABSENT
                  : strcmp(out->name, "content-type") == 0 ? XLB_RT_SRC_CONTENT_TYPE
                                                           : XLB_RT_SRC_REQUEST;
    out->present = in->present;
    out->ignore_case = in->ignore_case;
    out->invert = in->invert;
    out->range_start = in->range_start;
    out->range_end = in->range_end;
    if (in->type == XLB_HEADER_REGEX && (out->re = regex(in->value)) == NULL)
        return -ENOMEM;
    return 0;
}

/* A39: a weighted entry's filter overrides make the entry drawn matter, not only its cluster. */
static bool entries_override(const struct xlb_route *in)
{
    for (size_t i = 0; i < in->n_weighted; i++)
        if (in->weighted[i].overrides.n > 0)
            return true;
    return false;
}

/* The weighted choice draws cluster indexes, or, when the entries carry overrides, entry
 * indexes that the table's entry_clusters maps (see struct xlb_rt_route). */
static int compile_weighted(const struct xlb_route *in, struct xlb_route_table *t,
                            struct xlb_rt_route *out, struct names *names)
{
    uint32_t n = (uint32_t)in->n_weighted;
    uint32_t *items = calloc(n, sizeof(*items));
    uint32_t *weights = calloc(n, sizeof(*weights));
    int rc = items && weights ? 0 : -ENOMEM;
    bool told_apart = entries_override(in);
    if (told_apart)
        out->cluster = t->n_entry_clusters;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        uint32_t cluster = cluster_index(names, in->weighted[i].name);
        weights[i] = in->weighted[i].weight;
        if (cluster == XLB_PICK_NONE)
            rc = -ENOMEM;
        else if (told_apart)
            t->entry_clusters[t->n_entry_clusters++] = cluster;
        items[i] = told_apart ? i : cluster;
    }
    if (rc == 0)
        rc = xlb_wchoice_build(items, weights, n, &out->choice) == 0 ? 0 : -ENOMEM;
    free(items);
    free(weights);
    return rc;
}

static int compile_action(const struct xlb_route *in, struct xlb_route_table *t,
                          struct xlb_rt_route *out, struct names *names)
{
    switch (in->action) {
    case XLB_ROUTE_CLUSTER:
        out->action = XLB_RT_ACT_CLUSTER;
        out->cluster = cluster_index(names, in->cluster);
        return out->cluster == XLB_PICK_NONE ? -ENOMEM : 0;
    case XLB_ROUTE_WEIGHTED_CLUSTERS:
        out->action = XLB_RT_ACT_WEIGHTED;
        return compile_weighted(in, t, out, names);
    case XLB_ROUTE_NON_FORWARDING:
        out->action = XLB_RT_ACT_NON_FORWARDING;
        return 0;
    default:
        out->action = XLB_RT_ACT_UNSUPPORTED;
        return 0;
    }
}

static int compile_route(const struct xlb_route *in, struct xlb_route_table *t,
                         struct xlb_rt_route *out, struct names *names)
{
    const struct xlb_route_match *m = &in->match;
    out->path_kind = (uint8_t)m->path_type; /* same order as enum xlb_rt_path_kind */
    out->case_sensitive = m->case_sensitive;
    out->has_fraction = m->has_fraction;
    out->fraction_ppm = m->fraction_per_million;
    out->cluster = XLB_PICK_NONE;
    if (m->path_type == XLB_PATH_REGEX) {
        if ((out->re = regex(m->path)) == NULL)
            return -ENOMEM;
    } else {
        if ((out->path = dup_lower(m->path, false)) == NULL)
            return -ENOMEM;
        out->path_len = (uint32_t)strlen(out->path);
    }
    out->first_header = t->n_headers;
    for (size_t i = 0; i < m->n_headers; i++) {
        /* Counted before it is filled, so that free() sees a partial matcher too. */
        struct xlb_rt_header *h = &t->headers[t->n_headers++];
        out->n_headers++;
        if (compile_header(&m->headers[i], h) != 0)
            return -ENOMEM;
    }
    return compile_action(in, t, out, names);
}

static int compile_vhost(const struct xlb_virtual_host *in, uint32_t index,
                         struct xlb_route_table *t, struct names *names)
{
    for (size_t i = 0; i < in->n_domains; i++) {
        struct xlb_rt_domain *d = &t->domains[t->n_domains];
        d->pattern = dup_lower(in->domains[i].pattern, true);
        if (d->pattern == NULL)
            return -ENOMEM;
        t->n_domains++;
        d->len = (uint32_t)strlen(d->pattern);
        d->kind = (uint8_t)in->domains[i].type; /* same order as enum xlb_rt_domain_kind */
        d->vhost = index;
    }
    struct xlb_rt_vhost *vh = &t->vhosts[index];
    vh->first_route = t->n_routes;
    for (size_t i = 0; i < in->n_routes; i++) {
        struct xlb_rt_route *r = &t->routes[t->n_routes++];
        vh->n_routes++;
        if (compile_route(&in->routes[i], t, r, names) != 0)
            return -ENOMEM;
    }
    return 0;
}

static int allocate(const struct xlb_route_config *config, struct xlb_route_table *t)
{
    size_t n_domains = 0, n_routes = 0, n_headers = 0, n_entries = 0;
    for (size_t v = 0; v < config->n_vhosts; v++) {
        const struct xlb_virtual_host *vh = &config->vhosts[v];
        n_domains += vh->n_domains;
        n_routes += vh->n_routes;
        for (size_t r = 0; r < vh->n_routes; r++) {
            n_headers += vh->routes[r].match.n_headers;
            if (vh->routes[r].action == XLB_ROUTE_WEIGHTED_CLUSTERS &&
                entries_override(&vh->routes[r]))
                n_entries += vh->routes[r].n_weighted;
        }
    }
    /* One spare element each, so that an empty config still gets non-NULL arrays. */
    t->vhosts = calloc(config->n_vhosts + 1, sizeof(*t->vhosts));
    t->domains = calloc(n_domains + 1, sizeof(*t->domains));
    t->routes = calloc(n_routes + 1, sizeof(*t->routes));
    t->headers = calloc(n_headers + 1, sizeof(*t->headers));
    t->entry_clusters = calloc(n_entries + 1, sizeof(*t->entry_clusters));
    return t->vhosts && t->domains && t->routes && t->headers && t->entry_clusters ? 0 : -ENOMEM;
}

int xlb_route_compile(const struct xlb_route_config *config, const char *const *cluster_names,
                      uint32_t n_cluster_names, struct xlb_route_table **out)
{
    *out = NULL;
    struct xlb_route_table *t = calloc(1, sizeof(*t));
    struct names names = {0};
    if (t == NULL)
        return -ENOMEM;
    xlb_name_index_init(&names.index);
    int rc = allocate(config, t);
    for (uint32_t i = 0; rc == 0 && i < n_cluster_names; i++)
        if (cluster_index(&names, cluster_names[i]) == XLB_PICK_NONE)
            rc = -ENOMEM;
    for (size_t v = 0; rc == 0 && v < config->n_vhosts; v++) {
        t->n_vhosts++;
        rc = compile_vhost(&config->vhosts[v], (uint32_t)v, t, &names);
    }
    t->cluster_names = names.v;
    t->n_clusters = names.n;
    xlb_name_index_free(&names.index);
    if (rc != 0) {
        xlb_route_table_free(t);
        return rc;
    }
    xlb_route_table_jit(t);
    *out = t;
    return 0;
}
