/*
 * ClusterLoadAssignment (EDS) as a whole (A27, A61): localities grouped by contiguous
 * priorities, no locality twice in a priority, no endpoint address twice in the resource,
 * weights that fit 32 bits, and drop_overloads.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "validate_endpoint_internal.h"

typedef Envoy__Config__Endpoint__V3__ClusterLoadAssignment Cla;

/* Localities as validated, before they are grouped by priority. */
struct kept {
    struct xlb_eds_locality *locs;
    uint32_t *priority;
    size_t *source; /* index in ClusterLoadAssignment.endpoints, for error paths */
    size_t n;
};

static bool same_locality(const struct xlb_eds_locality *a, const struct xlb_eds_locality *b)
{
    return strcmp(a->region, b->region) == 0 && strcmp(a->zone, b->zone) == 0 &&
           strcmp(a->sub_zone, b->sub_zone) == 0;
}

/* Every priority from 0 to the highest must have a locality; reports the first gap. */
static bool check_contiguous(struct xv_ctx *ctx, const struct kept *k, size_t *n_priorities)
{
    bool *seen = xv_calloc(ctx, "endpoints", k->n + 1, sizeof(*seen));
    if (seen == NULL)
        return false;
    uint32_t max = 0;
    for (size_t i = 0; i < k->n; i++) {
        if (k->priority[i] > max)
            max = k->priority[i];
        if (k->priority[i] <= k->n)
            seen[k->priority[i]] = true;
    }
    bool ok = true;
    for (uint32_t p = 0; p < max && ok; p++) {
        if (!seen[p]) {
            xv_error(ctx, "endpoints",
                     "priority %u has no localities (priorities must be contiguous from 0)", p);
            ok = false;
        }
    }
    free(seen);
    *n_priorities = k->n == 0 ? 0 : (size_t)max + 1;
    return ok;
}

static bool check_priority(struct xv_ctx *ctx, const struct kept *k, uint32_t p)
{
    uint64_t sum = 0;
    bool ok = true;
    for (size_t i = 0; i < k->n; i++) {
        if (k->priority[i] != p)
            continue;
        sum += k->locs[i].weight;
        for (size_t j = 0; j < i; j++) {
            if (k->priority[j] == p && same_locality(&k->locs[i], &k->locs[j])) {
                char path[XV_PATH_MAX];
                xv_pathf(path, "endpoints[%zu].locality", k->source[i]);
                xv_error(
                    ctx, path,
                    "duplicate locality {region=\"%.32s\", zone=\"%.32s\", sub_zone=\"%.32s\"} "
                    "in priority %u",
                    k->locs[i].region, k->locs[i].zone, k->locs[i].sub_zone, p);
                ok = false;
                break;
            }
        }
    }
    if (sum > UINT32_MAX) {
        xv_error(ctx, "endpoints", "sum of locality weights for priority %u exceeds uint32 max", p);
        ok = false;
    }
    return ok;
}

/* Moves the localities into out->priorities; k keeps nothing afterwards. */
static bool group(struct xv_ctx *ctx, struct kept *k, size_t n_priorities,
                  struct xlb_endpoint_config *out)
{
    out->priorities = xv_calloc(ctx, "endpoints", n_priorities, sizeof(*out->priorities));
    if (out->priorities == NULL)
        return false;
    out->n_priorities = n_priorities;
    for (size_t p = 0; p < n_priorities; p++) {
        struct xlb_eds_priority *prio = &out->priorities[p];
        prio->localities = xv_calloc(ctx, "endpoints", k->n, sizeof(*prio->localities));
        if (prio->localities == NULL)
            return false;
        for (size_t i = 0; i < k->n; i++)
            if (k->priority[i] == p) {
                prio->localities[prio->n_localities++] = k->locs[i];
                memset(&k->locs[i], 0, sizeof(k->locs[i]));
            }
    }
    return true;
}

struct addr_ref {
    struct xlb_host_port hp;
    size_t order;  /* position in the resource, to report the later one of a pair */
    size_t source; /* ClusterLoadAssignment.endpoints index */
};

static int addr_cmp(const void *a, const void *b)
{
    const struct addr_ref *x = a, *y = b;
    int c = memcmp(&x->hp.addr, &y->hp.addr, sizeof(x->hp.addr));
    if (c == 0)
        c = (int)x->hp.port - (int)y->hp.port;
    if (c == 0)
        c = x->order < y->order ? -1 : x->order > y->order;
    return c;
}

static bool same_addr(const struct addr_ref *a, const struct addr_ref *b)
{
    return memcmp(&a->hp.addr, &b->hp.addr, sizeof(a->hp.addr)) == 0 && a->hp.port == b->hp.port;
}

static size_t count_addresses(const struct kept *k)
{
    size_t n = 0;
    for (size_t i = 0; i < k->n; i++)
        for (size_t j = 0; j < k->locs[i].n_endpoints; j++)
            n += k->locs[i].endpoints[j].n_addresses;
    return n;
}

/* A61: an address may appear once in the whole resource, whatever the locality or priority. */
static bool check_duplicates(struct xv_ctx *ctx, const struct kept *k)
{
    size_t n = count_addresses(k), m = 0;
    struct addr_ref *refs = xv_calloc(ctx, "endpoints", n, sizeof(*refs));
    if (refs == NULL)
        return false;
    for (size_t i = 0; i < k->n; i++)
        for (size_t j = 0; j < k->locs[i].n_endpoints; j++)
            for (uint32_t a = 0; a < k->locs[i].endpoints[j].n_addresses; a++, m++) {
                refs[m].hp = k->locs[i].endpoints[j].addresses[a];
                refs[m].order = m;
                refs[m].source = k->source[i];
            }
    qsort(refs, n, sizeof(*refs), addr_cmp);
    bool ok = true;
    for (size_t i = 1; i < n; i++) {
        if (!same_addr(&refs[i], &refs[i - 1]) || (i >= 2 && same_addr(&refs[i], &refs[i - 2])))
            continue;
        char path[XV_PATH_MAX], text[XLB_HOST_PORT_STRLEN];
        xv_pathf(path, "endpoints[%zu]", refs[i].source);
        xlb_host_port_format(&refs[i].hp, text, sizeof(text));
        xv_error(ctx, path, "duplicate endpoint address \"%s\"", text);
        ok = false;
    }
    free(refs);
    return ok;
}

static bool read_localities(struct xv_ctx *ctx, const Cla *msg, struct kept *k)
{
    k->locs = xv_calloc(ctx, "endpoints", msg->n_endpoints, sizeof(*k->locs));
    k->priority = xv_calloc(ctx, "endpoints", msg->n_endpoints, sizeof(*k->priority));
    k->source = xv_calloc(ctx, "endpoints", msg->n_endpoints, sizeof(*k->source));
    if (k->locs == NULL || k->priority == NULL || k->source == NULL)
        return false;
    bool ok = true;
    for (size_t i = 0; i < msg->n_endpoints; i++) {
        char path[XV_PATH_MAX];
        xv_idx(path, "endpoints", i);
        int r = xv_locality(ctx, path, msg->endpoints[i], &k->locs[k->n], &k->priority[k->n]);
        if (r == 1)
            k->source[k->n++] = i;
        else
            xv_locality_free(&k->locs[k->n]);
        ok = ok && r >= 0;
    }
    return ok;
}

static bool read_drops(struct xv_ctx *ctx, const Cla *msg, struct xlb_endpoint_config *out)
{
    if (msg->policy == NULL || msg->policy->n_drop_overloads == 0)
        return true;
    size_t n = msg->policy->n_drop_overloads;
    out->drops = xv_calloc(ctx, "policy.drop_overloads", n, sizeof(*out->drops));
    if (out->drops == NULL)
        return false;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        const Envoy__Config__Endpoint__V3__ClusterLoadAssignment__Policy__DropOverload *d =
            msg->policy->drop_overloads[i];
        char path[XV_PATH_MAX], child[XV_PATH_MAX];
        xv_idx(path, "policy.drop_overloads", i);
        xv_key(child, path, "drop_percentage");
        struct xlb_drop_overload *slot = &out->drops[out->n_drops];
        if (d->drop_percentage == NULL) {
            xv_error(ctx, child, "field not present");
            ok = false;
            continue;
        }
        if (!xv_fraction_ppm(ctx, child, d->drop_percentage, &slot->parts_per_million)) {
            ok = false;
            continue;
        }
        slot->category = xv_strdup(ctx, path, d->category);
        if (slot->category == NULL)
            return false;
        out->n_drops++;
    }
    return ok;
}

static void kept_free(struct kept *k)
{
    for (size_t i = 0; i < k->n; i++)
        xv_locality_free(&k->locs[i]);
    free(k->locs);
    free(k->priority);
    free(k->source);
}

int xlb_validate_endpoints(const Cla *msg, struct xlb_endpoint_config *out, struct xlb_errors *errs)
{
    struct xv_ctx ctx;
    xv_ctx_init(&ctx, errs, "cluster_load_assignment", msg->cluster_name);
    memset(out, 0, sizeof(*out));
    struct kept k = {0};
    size_t n_priorities = 0;
    out->cluster_name = xv_strdup(&ctx, "cluster_name", msg->cluster_name);
    bool ok = out->cluster_name != NULL && read_localities(&ctx, msg, &k);
    if (ok)
        ok = check_contiguous(&ctx, &k, &n_priorities);
    for (uint32_t p = 0; ok && p < n_priorities; p++)
        ok = check_priority(&ctx, &k, p);
    ok = ok && check_duplicates(&ctx, &k) && group(&ctx, &k, n_priorities, out);
    ok = read_drops(&ctx, msg, out) && ok;
    kept_free(&k);
    if (!ok) {
        xlb_endpoint_config_free(out);
        return -1;
    }
    return 0;
}

void xlb_endpoint_config_free(struct xlb_endpoint_config *config)
{
    for (size_t p = 0; p < config->n_priorities; p++) {
        for (size_t i = 0; i < config->priorities[p].n_localities; i++)
            xv_locality_free(&config->priorities[p].localities[i]);
        free(config->priorities[p].localities);
    }
    free(config->priorities);
    for (size_t i = 0; i < config->n_drops; i++)
        free(config->drops[i].category);
    free(config->drops);
    free(config->cluster_name);
    memset(config, 0, sizeof(*config));
}
