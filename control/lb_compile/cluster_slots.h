/*
 * Circuit-breaker slots of clusters (lib/xlb_load.h): one per cluster name, assigned on first
 * sight and kept for the life of the process, so that a cluster's in-flight counts survive
 * its removal and return, and no other cluster ever inherits them. When the slots run out,
 * new clusters get XLB_LB_NO_SLOT (no circuit breaking is counted for them).
 * A map of control/base/name_slots.h with XLB_CLUSTER_SLOTS slots.
 */
#ifndef XLB_CLUSTER_SLOTS_H
#define XLB_CLUSTER_SLOTS_H

#include <stdint.h>

#include "name_slots.h"
#include "xlb_lb.h"

_Static_assert(XLB_NO_SLOT == XLB_LB_NO_SLOT, "one spelling of \"no slot\"");

struct xlb_cluster_slots {
    struct xlb_name_slots by_name;
};

static inline void xlb_cluster_slots_init(struct xlb_cluster_slots *s)
{
    xlb_name_slots_init(&s->by_name, XLB_CLUSTER_SLOTS);
}

static inline void xlb_cluster_slots_free(struct xlb_cluster_slots *s)
{
    xlb_name_slots_free(&s->by_name);
}

/* The cluster's slot, taken now when it has none; XLB_LB_NO_SLOT when full or out of memory. */
static inline uint32_t xlb_cluster_slots_get(struct xlb_cluster_slots *s, const char *name)
{
    return xlb_name_slots_get(&s->by_name, name);
}

/* The cluster's slot, or XLB_LB_NO_SLOT when it never had one. */
static inline uint32_t xlb_cluster_slots_find(const struct xlb_cluster_slots *s, const char *name)
{
    return xlb_name_slots_find(&s->by_name, name);
}

#endif
