#include "endpoint_slots.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int xlb_endpoint_slots_init(struct xlb_endpoint_slots *s, const struct xlb_lb_grace *grace)
{
    memset(s, 0, sizeof(*s));
    if (grace != NULL)
        s->grace = *grace;
    s->refs = calloc(XLB_ENDPOINT_SLOTS, sizeof(*s->refs));
    s->free_list = calloc(XLB_ENDPOINT_SLOTS, sizeof(*s->free_list));
    s->quarantine = calloc(XLB_ENDPOINT_SLOTS, sizeof(*s->quarantine));
    s->base = calloc(XLB_ENDPOINT_SLOTS, sizeof(*s->base));
    if (s->refs == NULL || s->free_list == NULL || s->quarantine == NULL || s->base == NULL) {
        xlb_endpoint_slots_free(s);
        return -ENOMEM;
    }
    return 0;
}

void xlb_endpoint_slots_free(struct xlb_endpoint_slots *s)
{
    free(s->refs);
    free(s->free_list);
    free(s->quarantine);
    free(s->base);
    memset(s, 0, sizeof(*s));
}

uint32_t xlb_endpoint_slots_take(struct xlb_endpoint_slots *s)
{
    uint32_t slot;
    if (s->refs == NULL)
        return XLB_LB_NO_SLOT;
    if (s->n_free > 0)
        slot = s->free_list[--s->n_free];
    else if (s->next_fresh < XLB_ENDPOINT_SLOTS)
        slot = s->next_fresh++;
    else
        return XLB_LB_NO_SLOT;
    s->refs[slot] = 1;
    return slot;
}

uint32_t xlb_endpoint_slots_hold(struct xlb_endpoint_slots *s, uint32_t slot)
{
    if (slot < XLB_ENDPOINT_SLOTS && s->refs != NULL)
        s->refs[slot]++;
    return slot;
}

void xlb_endpoint_slots_release(struct xlb_endpoint_slots *s, uint32_t slot)
{
    if (slot >= XLB_ENDPOINT_SLOTS || s->refs == NULL || s->refs[slot] == 0 || --s->refs[slot] > 0)
        return;
    if (s->grace.start == NULL) {
        s->free_list[s->n_free++] = slot;
        return;
    }
    s->quarantine[s->n_quarantine++] =
        (struct xlb_quarantined_slot){slot, s->grace.start(s->grace.arg)};
}

void xlb_endpoint_slots_set_base(struct xlb_endpoint_slots *s, uint32_t slot, uint64_t succeeded,
                                 uint64_t failed)
{
    if (slot < XLB_ENDPOINT_SLOTS && s->base != NULL)
        s->base[slot] = (struct xlb_slot_base){succeeded, failed};
}

struct xlb_slot_base xlb_endpoint_slots_base(const struct xlb_endpoint_slots *s, uint32_t slot)
{
    if (slot >= XLB_ENDPOINT_SLOTS || s->base == NULL)
        return (struct xlb_slot_base){0, 0};
    return s->base[slot];
}

void xlb_endpoint_slots_recycle(struct xlb_endpoint_slots *s)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < s->n_quarantine; i++) {
        if (s->grace.over(s->grace.arg, s->quarantine[i].token))
            s->free_list[s->n_free++] = s->quarantine[i].slot;
        else
            s->quarantine[kept++] = s->quarantine[i];
    }
    s->n_quarantine = kept;
}
