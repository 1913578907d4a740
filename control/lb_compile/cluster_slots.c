/* See cluster_slots.h. */
#include "cluster_slots.h"

#include <stdlib.h>
#include <string.h>

void xlb_cluster_slots_init(struct xlb_cluster_slots *s)
{
    memset(s, 0, sizeof(*s));
    xlb_name_index_init(&s->by_name);
}

void xlb_cluster_slots_free(struct xlb_cluster_slots *s)
{
    xlb_name_index_free(&s->by_name);
    for (uint32_t i = 0; i < s->n; i++)
        free(s->names[i]);
    s->n = 0;
}

uint32_t xlb_cluster_slots_find(const struct xlb_cluster_slots *s, const char *name)
{
    uintptr_t at = (uintptr_t)xlb_name_index_find(&s->by_name, name);
    return at != 0 ? (uint32_t)(at - 1) : XLB_LB_NO_SLOT;
}

uint32_t xlb_cluster_slots_get(struct xlb_cluster_slots *s, const char *name)
{
    uint32_t slot = xlb_cluster_slots_find(s, name);
    if (slot != XLB_LB_NO_SLOT || s->n == XLB_CLUSTER_SLOTS)
        return slot;
    char *copy = strdup(name);
    if (copy == NULL || xlb_name_index_set(&s->by_name, copy, (void *)(uintptr_t)(s->n + 1)) != 0) {
        free(copy);
        return XLB_LB_NO_SLOT; /* out of memory: a later compile asks again */
    }
    s->names[s->n] = copy;
    return s->n++;
}
