#include "lrs_source.h"

#include <stdlib.h>
#include <string.h>

void xlb_lrs_source_init(struct xlb_lrs_source_state *s, const struct xlb_xds_cache *cache,
                         const struct xlb_worker_load *load, unsigned n_workers)
{
    memset(s, 0, sizeof(*s));
    s->cache = cache;
    s->load = load;
    s->n_workers = n_workers;
    xlb_load_slots_init(&s->slots);
}

void xlb_lrs_source_free(struct xlb_lrs_source_state *s)
{
    xlb_load_slots_free(&s->slots);
    free(s->enabled);
    free(s->localities);
    free(s->drops);
    memset(s, 0, sizeof(*s));
}

/* Room for n elements of size size in *buf (capacity *cap); false when memory ran out. */
static bool reserve(void **buf, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return true;
    void *grown = realloc(*buf, n * size);
    if (grown == NULL)
        return false;
    *buf = grown;
    *cap = n;
    return true;
}

static size_t enabled_clusters(void *arg, const char *const **names)
{
    struct xlb_lrs_source_state *s = arg;
    size_t n = 0;
    for (const struct xlb_xds_resource *r = s->cache->list[XLB_XDS_CDS]; r != NULL; r = r->next) {
        if (!r->has_value || !r->value.cluster.lrs_enabled)
            continue;
        if (!reserve((void **)&s->enabled, &s->enabled_cap, n + 1, sizeof(char *)))
            break;
        s->enabled[n++] = r->name;
    }
    *names = s->enabled;
    return n;
}

static struct xlb_locality_load sum_locality(const struct xlb_lrs_source_state *s, uint32_t slot)
{
    struct xlb_locality_load sum = {0};
    for (unsigned w = 0; slot != XLB_NO_SLOT && w < s->n_workers; w++) {
        const struct xlb_locality_load *l = &s->load[w].localities[slot];
        sum.issued += l->issued;
        sum.succeeded += l->succeeded;
        sum.failed += l->failed;
    }
    return sum;
}

static uint64_t sum_drops(const struct xlb_lrs_source_state *s, uint32_t slot)
{
    uint64_t sum = 0;
    for (unsigned w = 0; slot != XLB_NO_SLOT && w < s->n_workers; w++)
        sum += s->load[w].drops[slot];
    return sum;
}

static int fill_localities(struct xlb_lrs_source_state *s, const char *cluster,
                           const struct xlb_endpoint_config *eds, struct xlb_lrs_cluster_load *out)
{
    size_t n = 0;
    for (size_t p = 0; p < eds->n_priorities; p++)
        n += eds->priorities[p].n_localities;
    if (!reserve((void **)&s->localities, &s->localities_cap, n + 1, sizeof(*s->localities)))
        return -1;
    n = 0;
    for (size_t p = 0; p < eds->n_priorities; p++)
        for (size_t l = 0; l < eds->priorities[p].n_localities; l++) {
            const struct xlb_eds_locality *loc = &eds->priorities[p].localities[l];
            uint32_t slot = xlb_load_slots_locality(&s->slots, cluster, (uint32_t)p, loc->region,
                                                    loc->zone, loc->sub_zone);
            if (slot == XLB_NO_SLOT)
                continue; /* out of slots: this locality goes unreported */
            struct xlb_locality_load sum = sum_locality(s, slot);
            uint64_t finished = sum.succeeded + sum.failed;
            s->localities[n++] = (struct xlb_lrs_locality_load){
                .region = loc->region,
                .zone = loc->zone,
                .sub_zone = loc->sub_zone,
                .priority = (uint32_t)p,
                .issued = sum.issued,
                .successful = sum.succeeded,
                .errors = sum.failed,
                .in_progress = sum.issued > finished ? sum.issued - finished : 0,
            };
        }
    out->localities = s->localities;
    out->n_localities = n;
    return 0;
}

static int fill_drops(struct xlb_lrs_source_state *s, const char *cluster,
                      const struct xlb_endpoint_config *eds, struct xlb_lrs_cluster_load *out)
{
    if (!reserve((void **)&s->drops, &s->drops_cap, eds->n_drops + 1, sizeof(*s->drops)))
        return -1;
    size_t n = 0;
    for (size_t d = 0; d < eds->n_drops; d++) {
        uint32_t slot = xlb_load_slots_drop(&s->slots, cluster, eds->drops[d].category);
        if (slot != XLB_NO_SLOT)
            s->drops[n++] = (struct xlb_lrs_drop_load){eds->drops[d].category, sum_drops(s, slot)};
    }
    out->drops = s->drops;
    out->n_drops = n;
    return 0;
}

/* Requests the circuit breaker refused: reported as drops outside any category (A27). */
static uint64_t circuit_drops(const struct xlb_lrs_source_state *s, const char *cluster)
{
    uint32_t slot = xlb_lb_trees_cluster_slot(s->lb, cluster);
    uint64_t sum = 0;
    for (unsigned w = 0; slot != XLB_LB_NO_SLOT && s->load != NULL && w < s->n_workers; w++)
        sum += __atomic_load_n(&s->load[w].clusters[slot].circuit_dropped, __ATOMIC_RELAXED);
    return sum;
}

static int cluster_load(void *arg, const char *cluster, struct xlb_lrs_cluster_load *out)
{
    struct xlb_lrs_source_state *s = arg;
    const struct xlb_xds_resource *cds = xlb_xds_cache_find(s->cache, XLB_XDS_CDS, cluster);
    if (cds == NULL || !cds->has_value || !cds->value.cluster.lrs_enabled)
        return -1;
    const char *service = cds->value.cluster.eds_service_name;
    memset(out, 0, sizeof(*out));
    out->service_name = service;
    out->uncategorized_drops = circuit_drops(s, cluster);
    const struct xlb_xds_resource *eds = xlb_xds_cache_find(
        s->cache, XLB_XDS_EDS, service != NULL && service[0] ? service : cluster);
    if (eds == NULL || !eds->has_value)
        return 0; /* no endpoints known: a report with no locality */
    if (fill_localities(s, cluster, &eds->value.endpoints, out) != 0 ||
        fill_drops(s, cluster, &eds->value.endpoints, out) != 0)
        return -1;
    return 0;
}

struct xlb_lrs_source xlb_lrs_source_of(struct xlb_lrs_source_state *s)
{
    return (struct xlb_lrs_source){
        .enabled_clusters = enabled_clusters,
        .cluster_load = cluster_load,
        .arg = s,
    };
}
