/*
 * Names -> stable slots, the one implementation behind every "slot by name" of the control
 * plane (circuit-breaker slots of clusters, load-report slots of localities and drop
 * categories): a name takes the next free slot on first sight and keeps it for the life of the
 * map; slots are never given back, so no other name ever inherits a slot's counters. Once
 * `limit` slots are taken, new names get XLB_NO_SLOT, as they do when memory runs out (a later
 * call asks again).
 *
 * XLB_NO_SLOT is UINT32_MAX, the same value as lib/lb's XLB_LB_NO_SLOT: "no slot" is spelled
 * one way throughout, for endpoint slots too.
 */
#ifndef XLB_NAME_SLOTS_H
#define XLB_NAME_SLOTS_H

#include <stdint.h>

#include "name_index.h"

#define XLB_NO_SLOT UINT32_MAX

struct xlb_name_slots {
    struct xlb_name_index by_name; /* value: the slot + 1 (NULL is "no slot yet") */
    char **names;                  /* slot -> its name (owned copies); the first n are taken */
    uint32_t n, cap, limit;
};

/* An empty map of at most limit slots; holds no memory until the first name. */
void xlb_name_slots_init(struct xlb_name_slots *s, uint32_t limit);
void xlb_name_slots_free(struct xlb_name_slots *s);

/* The name's slot, taken now when it has none; XLB_NO_SLOT when full or out of memory. */
uint32_t xlb_name_slots_get(struct xlb_name_slots *s, const char *name);

/* The name's slot, or XLB_NO_SLOT when it never had one. */
uint32_t xlb_name_slots_find(const struct xlb_name_slots *s, const char *name);

#endif
