/*
 * Stable slots of the per-worker load counters (lib/xlb_load.h): one per (cluster, priority,
 * locality) and one per (cluster, drop category), assigned on first sight and never reused, so
 * that the sums the control plane reads only ever grow. When the slots run out, new
 * combinations go uncounted (XLB_NO_SLOT) and the caller reports nothing for them.
 * Two maps of name_slots.h, keyed by the fields joined.
 */
#ifndef XLB_LOAD_SLOTS_H
#define XLB_LOAD_SLOTS_H

#include <stdint.h>

#include "name_slots.h"

struct xlb_load_slots {
    struct xlb_name_slots localities, drops;
};

void xlb_load_slots_init(struct xlb_load_slots *slots);
void xlb_load_slots_free(struct xlb_load_slots *slots);

/* The slot of a locality of a cluster, or XLB_NO_SLOT when none is left. NULL strings read as
 * "". */
uint32_t xlb_load_slots_locality(struct xlb_load_slots *slots, const char *cluster,
                                 uint32_t priority, const char *region, const char *zone,
                                 const char *sub_zone);
/* The slot of a drop category of a cluster, or XLB_NO_SLOT when none is left. */
uint32_t xlb_load_slots_drop(struct xlb_load_slots *slots, const char *cluster,
                             const char *category);

#endif
