#include "xlb_rr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int xlb_rr_build(const uint32_t *slots, uint32_t n, struct xlb_rr **out)
{
    *out = NULL;
    if (slots == NULL || n == 0)
        return -EINVAL;
    struct xlb_rr *rr = malloc(sizeof(*rr) + sizeof(rr->slots[0]) * (size_t)n);
    if (rr == NULL)
        return -ENOMEM;
    rr->n_slots = n;
    memcpy(rr->slots, slots, sizeof(rr->slots[0]) * (size_t)n);
    *out = rr;
    return 0;
}

void xlb_rr_free(struct xlb_rr *rr)
{
    free(rr);
}

uint64_t xlb_rr_bytes(const struct xlb_rr *rr)
{
    return sizeof(*rr) + (uint64_t)rr->n_slots * sizeof(rr->slots[0]);
}

uint32_t xlb_rr_pick_usable(const struct xlb_rr *rr, struct xlb_rr_cursor *cursor,
                            const uint64_t *usable)
{
    if (rr == NULL || rr->n_slots == 0)
        return XLB_PICK_NONE;
    for (uint32_t tries = 0; tries < rr->n_slots; tries++) {
        uint32_t slot = rr->slots[xlb_rr_cursor_take(cursor, rr->n_slots)];
        if (xlb_slot_usable(usable, slot))
            return slot;
    }
    return XLB_PICK_NONE;
}
