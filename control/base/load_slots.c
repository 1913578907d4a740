#include "load_slots.h"

#include <stdio.h>

#include "xlb_load.h"

void xlb_load_slots_init(struct xlb_load_slots *slots)
{
    xlb_name_slots_init(&slots->localities, XLB_LOCALITY_SLOTS);
    xlb_name_slots_init(&slots->drops, XLB_DROP_SLOTS);
}

void xlb_load_slots_free(struct xlb_load_slots *slots)
{
    xlb_name_slots_free(&slots->localities);
    xlb_name_slots_free(&slots->drops);
}

/* Fields joined by a unit separator, which no resource name contains. */
uint32_t xlb_load_slots_locality(struct xlb_load_slots *slots, const char *cluster,
                                 uint32_t priority, const char *region, const char *zone,
                                 const char *sub_zone)
{
    char key[1024];
    snprintf(key, sizeof(key), "%s\x1f%u\x1f%s\x1f%s\x1f%s", cluster, priority,
             region ? region : "", zone ? zone : "", sub_zone ? sub_zone : "");
    return xlb_name_slots_get(&slots->localities, key);
}

uint32_t xlb_load_slots_drop(struct xlb_load_slots *slots, const char *cluster,
                             const char *category)
{
    char key[1024];
    snprintf(key, sizeof(key), "%s\x1f%s", cluster, category);
    return xlb_name_slots_get(&slots->drops, key);
}
