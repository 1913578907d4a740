/*
 * Circuit-breaker slots of clusters (lib/xlb_load.h): one per cluster name, assigned on first
 * sight and kept for the life of the process, so that a cluster's in-flight counts survive
 * its removal and return, and no other cluster ever inherits them. When the slots run out,
 * new clusters get XLB_LB_NO_SLOT (no circuit breaking is counted for them).
 */
#ifndef XLB_CLUSTER_SLOTS_H
#define XLB_CLUSTER_SLOTS_H

#include <stdint.h>

#include "name_index.h"
#include "xlb_lb.h"

struct xlb_cluster_slots {
    char *names[XLB_CLUSTER_SLOTS]; /* slot -> its cluster's name; the first n are taken */
    uint32_t n;
    struct xlb_name_index by_name; /* value: the slot + 1 (NULL is "no slot yet") */
};

void xlb_cluster_slots_init(struct xlb_cluster_slots *s);
void xlb_cluster_slots_free(struct xlb_cluster_slots *s);

/* The cluster's slot, taken now when it has none; XLB_LB_NO_SLOT when full or out of memory. */
uint32_t xlb_cluster_slots_get(struct xlb_cluster_slots *s, const char *name);

/* The cluster's slot, or XLB_LB_NO_SLOT when it never had one. */
uint32_t xlb_cluster_slots_find(const struct xlb_cluster_slots *s, const char *name);

#endif
