/*
 * Compile one leaf cluster (a validated Cluster and its ClusterLoadAssignment) into the
 * workers' struct xlb_lb_cluster (lib/lb/xlb_lb.h). Pure: the caller supplies the stable slots
 * and the state that is not config (ejections, the A56 choice), so tests drive it directly.
 */
#ifndef XLB_CLUSTER_COMPILE_H
#define XLB_CLUSTER_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_config.h"
#include "endpoint_config.h"
#include "xlb_lb.h"

struct xlb_cluster_compile_input {
    const char *name;
    const struct xlb_cluster_config *config;     /* required */
    const struct xlb_endpoint_config *endpoints; /* NULL: no endpoints (yet) */
    /* Per endpoint, in flattened EDS order (priority, locality, endpoint): */
    const uint32_t *endpoint_slots; /* stable slots; NULL: XLB_LB_NO_SLOT for all */
    const bool *ejected;            /* outlier detection; NULL: none ejected */
    uint32_t cluster_slot;
    struct ssl_ctx_st *upstream_tls; /* A29 client context, taken (freed on failure); NULL: none */
    /* Stable load slots (LRS, round-robin cursors); XLB_LB_NO_SLOT when none is left. */
    uint32_t (*locality_slot)(void *arg, uint32_t priority, const struct xlb_eds_locality *l);
    uint32_t (*drop_slot)(void *arg, const char *category);
    void *arg;
};

/* Endpoints of an assignment across all priorities (the length of the per-endpoint arrays). */
uint32_t xlb_cluster_compile_count(const struct xlb_endpoint_config *endpoints);

/*
 * Build *out (refs = 1, chosen_priority = the first priority with a usable endpoint, which
 * the caller may replace with its A56 policy's choice before publishing). Returns 0, or -1
 * with a reason in err (out of memory, an address that appears twice).
 */
int xlb_cluster_compile(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster **out,
                        char *err, size_t err_len);

/* Whether priority p of a compiled cluster can take a request (A56 READY vs FAILURE). */
static inline bool xlb_cluster_priority_usable(const struct xlb_lb_cluster *c, uint32_t p)
{
    return p < c->n_priorities && c->priorities[p].n_usable > 0;
}

#endif
