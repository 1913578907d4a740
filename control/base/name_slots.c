/* See name_slots.h. */
#include "name_slots.h"

#include <stdlib.h>
#include <string.h>

void xlb_name_slots_init(struct xlb_name_slots *s, uint32_t limit)
{
    memset(s, 0, sizeof(*s));
    xlb_name_index_init(&s->by_name);
    s->limit = limit;
}

void xlb_name_slots_free(struct xlb_name_slots *s)
{
    xlb_name_index_free(&s->by_name);
    for (uint32_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    s->names = NULL;
    s->n = s->cap = 0;
}

uint32_t xlb_name_slots_find(const struct xlb_name_slots *s, const char *name)
{
    uintptr_t at = (uintptr_t)xlb_name_index_find(&s->by_name, name);
    return at != 0 ? (uint32_t)(at - 1) : XLB_NO_SLOT;
}

uint32_t xlb_name_slots_get(struct xlb_name_slots *s, const char *name)
{
    uint32_t slot = xlb_name_slots_find(s, name);
    if (slot != XLB_NO_SLOT || s->n == s->limit)
        return slot;
    if (s->n == s->cap) {
        uint32_t cap = s->cap != 0 ? s->cap * 2 : 16;
        if (cap > s->limit)
            cap = s->limit;
        char **names = realloc(s->names, cap * sizeof(*names));
        if (names == NULL)
            return XLB_NO_SLOT;
        s->names = names;
        s->cap = cap;
    }
    char *copy = strdup(name);
    if (copy == NULL || xlb_name_index_set(&s->by_name, copy, (void *)(uintptr_t)(s->n + 1)) != 0) {
        free(copy);
        return XLB_NO_SLOT;
    }
    s->names[s->n] = copy;
    return s->n++;
}
