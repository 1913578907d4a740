/*
 * Stable endpoint slots (lib/lb/xlb_lb.h): the index of an endpoint's per-worker counters.
 * A slot is held by each compiled cluster that lists the endpoint; when the last holder lets
 * go it waits out an RCU grace period (a worker may still count on an older snapshot) before
 * another endpoint may take it. A reused slot's counters go on from where the last endpoint
 * left them, so each slot keeps the values it had when it was taken: its endpoint's baseline.
 */
#ifndef XLB_ENDPOINT_SLOTS_H
#define XLB_ENDPOINT_SLOTS_H

#include <stdint.h>

#include "lb_trees.h"

struct xlb_endpoint_slots {
    struct xlb_lb_grace grace;
    uint32_t next_fresh; /* slots never used yet start here */
    uint32_t *refs;      /* per slot */
    uint32_t *free_list;
    uint32_t n_free;
    struct xlb_quarantined_slot {
        uint32_t slot;
        uint64_t token;
    } * quarantine;
    uint32_t n_quarantine;
    struct xlb_slot_base {
        uint64_t succeeded, failed;
    } * base; /* per slot */
};

/* Returns 0 or -ENOMEM. grace NULL: a released slot is reusable at once (tests). */
int xlb_endpoint_slots_init(struct xlb_endpoint_slots *s, const struct xlb_lb_grace *grace);
void xlb_endpoint_slots_free(struct xlb_endpoint_slots *s);

/* A free slot held once, or XLB_LB_NO_SLOT when all are in use or waiting. */
uint32_t xlb_endpoint_slots_take(struct xlb_endpoint_slots *s);
/* One more holder of slot; returns slot (XLB_LB_NO_SLOT passes through). */
uint32_t xlb_endpoint_slots_hold(struct xlb_endpoint_slots *s, uint32_t slot);
/* One holder fewer; the last one sends the slot into quarantine. */
void xlb_endpoint_slots_release(struct xlb_endpoint_slots *s, uint32_t slot);
/* The counters a slot had when its endpoint took it (no worker writes a slot in quarantine,
 * so they are exact); xlb_endpoint_slots_base reads them back, zeros for an unknown slot. */
void xlb_endpoint_slots_set_base(struct xlb_endpoint_slots *s, uint32_t slot, uint64_t succeeded,
                                 uint64_t failed);
struct xlb_slot_base xlb_endpoint_slots_base(const struct xlb_endpoint_slots *s, uint32_t slot);
/* Quarantined slots whose grace period is over become free. */
void xlb_endpoint_slots_recycle(struct xlb_endpoint_slots *s);

#endif
