/* Gathering the LB metrics' values from the compiled trees and the workers' load counters. */
#include <stdlib.h>
#include <string.h>

#include "lb_metrics.h"
#include "lb_trees.h"

struct collect {
    const struct xlb_lb_cluster **list;
    uint32_t n, cap;
};

static void collect_one(const struct xlb_lb_cluster *c, void *arg)
{
    struct collect *k = arg;
    if (k->list != NULL && k->n < k->cap)
        k->list[k->n] = c;
    k->n++;
}

static int by_name(const void *a, const void *b)
{
    const struct xlb_lb_cluster *x = *(const struct xlb_lb_cluster *const *)a;
    const struct xlb_lb_cluster *y = *(const struct xlb_lb_cluster *const *)b;
    return strcmp(x->name, y->name);
}

/* One 64-bit counter summed over the workers (each is written by one worker only). */
static uint64_t sum(const struct xlb_worker_load *loads, unsigned n_workers, size_t offset)
{
    uint64_t total = 0;
    for (unsigned w = 0; loads != NULL && w < n_workers; w++)
        total +=
            __atomic_load_n((const uint64_t *)((const char *)&loads[w] + offset), __ATOMIC_RELAXED);
    return total;
}

#define CLUSTER_FIELD(slot, field)                                                                 \
    (offsetof(struct xlb_worker_load, clusters) + (slot) * sizeof(struct xlb_cluster_load) +       \
     offsetof(struct xlb_cluster_load, field))

static void cluster_counters(const struct xlb_lb_cluster *c, const struct xlb_worker_load *loads,
                             unsigned n, struct xlb_lbm_cluster *out)
{
    if (c->cluster_slot >= XLB_CLUSTER_SLOTS)
        return; /* uncounted: the slot table was full */
    out->started = sum(loads, n, CLUSTER_FIELD(c->cluster_slot, started));
    out->finished = sum(loads, n, CLUSTER_FIELD(c->cluster_slot, finished));
    out->circuit_dropped = sum(loads, n, CLUSTER_FIELD(c->cluster_slot, circuit_dropped));
}

static void fill_localities(const struct xlb_lb_cluster *c, const struct xlb_worker_load *loads,
                            unsigned n, struct xlb_lbm_cluster *out)
{
    for (uint32_t p = 0; p < c->n_priorities; p++)
        for (uint32_t l = 0; l < c->priorities[p].n_localities; l++) {
            const struct xlb_lb_locality *loc = &c->priorities[p].localities[l];
            struct xlb_lbm_locality *o = &out->localities[out->n_localities++];
            *o = (struct xlb_lbm_locality){
                .name = loc->name ? loc->name : "", .priority = p, .weight = loc->weight};
            if (loc->load_slot < XLB_LOCALITY_SLOTS)
                o->started = sum(loads, n,
                                 offsetof(struct xlb_worker_load, localities) +
                                     loc->load_slot * sizeof(struct xlb_locality_load) +
                                     offsetof(struct xlb_locality_load, issued));
        }
}

static void fill_drops(const struct xlb_lb_cluster *c, const struct xlb_worker_load *loads,
                       unsigned n, struct xlb_lbm_cluster *out)
{
    for (uint32_t d = 0; d < c->n_drops; d++) {
        const struct xlb_lb_drop *drop = &c->drops[d];
        out->drops[d] = (struct xlb_lbm_drop){.category = drop->category};
        if (drop->load_slot < XLB_DROP_SLOTS)
            out->drops[d].dropped =
                sum(loads, n,
                    offsetof(struct xlb_worker_load, drops) + drop->load_slot * sizeof(uint64_t));
    }
    out->n_drops = c->n_drops;
}

static void fill_endpoints(const struct xlb_lb_trees *st, const struct xlb_lb_cluster *c,
                           struct xlb_lbm_cluster *out)
{
    uint32_t first[c->n_priorities + 1]; /* flat index of each priority's first locality */
    first[0] = 0;
    for (uint32_t p = 0; p < c->n_priorities; p++)
        first[p + 1] = first[p] + c->priorities[p].n_localities;
    for (uint32_t e = 0; e < c->n_endpoints; e++) {
        const struct xlb_lb_endpoint *ep = &c->endpoints[e];
        struct xlb_lb_endpoint_counts counts = xlb_lb_trees_endpoint_counts(st, ep->slot);
        struct xlb_lbm_endpoint *o = &out->endpoints[e];
        *o = (struct xlb_lbm_endpoint){
            .locality = first[ep->priority] + ep->locality,
            .health = ep->health,
            .ejected = ep->ejected,
            .connectivity = (uint8_t)xlb_lb_trees_endpoint_connectivity(st, ep->slot),
            .succeeded = counts.succeeded,
            .failed = counts.failed,
        };
        xlb_host_port_format(&ep->where, o->address, sizeof(o->address));
    }
    out->n_endpoints = c->n_endpoints;
}

static int fill_cluster(const struct xlb_lb_trees *st, const struct xlb_lb_cluster *c,
                        const struct xlb_worker_load *loads, unsigned n,
                        struct xlb_lbm_cluster *out)
{
    uint32_t n_localities = 0;
    for (uint32_t p = 0; p < c->n_priorities; p++)
        n_localities += c->priorities[p].n_localities;
    out->name = c->name;
    out->chosen_priority = c->chosen_priority;
    out->localities = calloc(n_localities + 1, sizeof(*out->localities));
    out->drops = calloc(c->n_drops + 1, sizeof(*out->drops));
    out->endpoints = calloc(c->n_endpoints + 1, sizeof(*out->endpoints));
    if (out->localities == NULL || out->drops == NULL || out->endpoints == NULL)
        return -1;
    cluster_counters(c, loads, n, out);
    fill_localities(c, loads, n, out);
    fill_drops(c, loads, n, out);
    fill_endpoints(st, c, out);
    return 0;
}

int xlb_lb_metrics_gather(const struct xlb_lb_trees *st, const struct xlb_worker_load *loads,
                          unsigned n_workers, struct xlb_lb_metrics *out)
{
    memset(out, 0, sizeof(*out));
    struct collect k = {0};
    xlb_lb_trees_each_cluster(st, collect_one, &k); /* count */
    k.cap = k.n;
    k.n = 0;
    k.list = calloc(k.cap + 1, sizeof(*k.list));
    out->clusters = calloc(k.cap + 1, sizeof(*out->clusters));
    if (k.list == NULL || out->clusters == NULL) {
        free(k.list);
        xlb_lb_metrics_free(out);
        return -1;
    }
    xlb_lb_trees_each_cluster(st, collect_one, &k);
    if (k.n > k.cap)
        k.n = k.cap;
    qsort(k.list, k.n, sizeof(*k.list), by_name);
    int rc = 0;
    for (uint32_t i = 0; i < k.n && rc == 0; i++) {
        out->n_clusters++;
        rc = fill_cluster(st, k.list[i], loads, n_workers, &out->clusters[i]);
    }
    free(k.list);
    if (rc != 0)
        xlb_lb_metrics_free(out);
    return rc;
}

void xlb_lb_metrics_free(struct xlb_lb_metrics *m)
{
    for (uint32_t i = 0; m->clusters != NULL && i < m->n_clusters; i++) {
        free(m->clusters[i].localities);
        free(m->clusters[i].drops);
        free(m->clusters[i].endpoints);
    }
    free(m->clusters);
    memset(m, 0, sizeof(*m));
}
