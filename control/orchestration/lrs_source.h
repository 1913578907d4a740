/*
 * Load figures for LRS: for each cluster with load reporting enabled, its localities (from its
 * EDS resource) with the per-worker load counters of their slots summed over the workers, and
 * its drops per category. Implements struct xlb_lrs_source.
 */
#ifndef XLB_LRS_SOURCE_H
#define XLB_LRS_SOURCE_H

#include "lb_trees.h"
#include "load_slots.h"
#include "lrs_client.h"
#include "xds_cache.h"
#include "xlb_load.h"

struct xlb_lrs_source_state {
    const struct xlb_xds_cache *cache;
    const struct xlb_worker_load *load; /* n_workers copies */
    unsigned n_workers;
    struct xlb_load_slots slots;
    const struct xlb_lb_trees *lb; /* circuit-breaker counter slots; set by the owner */
    /* Buffers handed to the LRS client, valid until the next call. */
    const char **enabled;
    size_t enabled_cap;
    struct xlb_lrs_locality_load *localities;
    size_t localities_cap;
    struct xlb_lrs_drop_load *drops;
    size_t drops_cap;
};

void xlb_lrs_source_init(struct xlb_lrs_source_state *s, const struct xlb_xds_cache *cache,
                         const struct xlb_worker_load *load, unsigned n_workers);
void xlb_lrs_source_free(struct xlb_lrs_source_state *s);
/* The source for xlb_lrs_client_config, reading s. */
struct xlb_lrs_source xlb_lrs_source_of(struct xlb_lrs_source_state *s);

#endif
