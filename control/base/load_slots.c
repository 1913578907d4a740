#include "load_slots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_load.h"

struct xlb_load_slot_entry {
    char *key;
    int slot;
    struct xlb_load_slot_entry *next;
};

void xlb_load_slots_init(struct xlb_load_slots *slots)
{
    memset(slots, 0, sizeof(*slots));
}

void xlb_load_slots_free(struct xlb_load_slots *slots)
{
    for (unsigned b = 0; b < XLB_LOAD_SLOT_BUCKETS; b++)
        while (slots->buckets[b] != NULL) {
            struct xlb_load_slot_entry *e = slots->buckets[b];
            slots->buckets[b] = e->next;
            free(e->key);
            free(e);
        }
}

static unsigned bucket_of(const char *key)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % XLB_LOAD_SLOT_BUCKETS;
}

/* The key's slot, assigning the next free one of *next (below limit) on first sight. */
static int lookup(struct xlb_load_slots *slots, const char *key, uint32_t *next, uint32_t limit)
{
    unsigned b = bucket_of(key);
    for (struct xlb_load_slot_entry *e = slots->buckets[b]; e != NULL; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e->slot;
    if (*next >= limit)
        return -1;
    struct xlb_load_slot_entry *e = calloc(1, sizeof(*e));
    if (e == NULL || (e->key = strdup(key)) == NULL) {
        free(e);
        return -1;
    }
    e->slot = (int)(*next)++;
    e->next = slots->buckets[b];
    slots->buckets[b] = e;
    return e->slot;
}

/* Fields joined by a unit separator, which no resource name contains. */
int xlb_load_slots_locality(struct xlb_load_slots *slots, const char *cluster, uint32_t priority,
                            const char *region, const char *zone, const char *sub_zone)
{
    char key[1024];
    snprintf(key, sizeof(key), "L\x1f%s\x1f%u\x1f%s\x1f%s\x1f%s", cluster, priority,
             region ? region : "", zone ? zone : "", sub_zone ? sub_zone : "");
    return lookup(slots, key, &slots->next_locality, XLB_LOCALITY_SLOTS);
}

int xlb_load_slots_drop(struct xlb_load_slots *slots, const char *cluster, const char *category)
{
    char key[1024];
    snprintf(key, sizeof(key), "D\x1f%s\x1f%s", cluster, category);
    return lookup(slots, key, &slots->next_drop, XLB_DROP_SLOTS);
}
