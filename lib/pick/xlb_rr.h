/*
 * Round robin over an immutable array of endpoint slots.
 *
 * The array belongs to the snapshot (one per locality, built on the control plane) and is
 * never written by workers; the position in it is a cursor each worker lcore keeps in its own
 * memory. gRPC's round_robin picker starts at a random index so that many clients do not all
 * send their first call to the same backend; here each lcore is one such client. An lcore
 * starts its cursor at a random index drawn from its own xlb_rng (xlb_rr_cursor_reset) when it
 * first sees a locality and again whenever the snapshot generation replaces that locality's
 * array, just as gRPC builds a new picker with a fresh random start on every address update.
 * Between resets the cursor advances by one per pick, so each lcore cycles through the
 * endpoints in order and the lcores together spread evenly.
 */
#ifndef XLB_RR_H
#define XLB_RR_H

#include <stdint.h>

#include "xlb_pick.h"
#include "xlb_rng.h"

struct xlb_rr {
    uint32_t n_slots;
    uint32_t slots[];
};

/* Per-lcore position; plain data in the caller's memory. */
struct xlb_rr_cursor {
    uint32_t next;
};

/* Copy slots into a new array. Returns 0, -EINVAL for no slots, or -ENOMEM. */
int xlb_rr_build(const uint32_t *slots, uint32_t n, struct xlb_rr **out);
void xlb_rr_free(struct xlb_rr *rr);
uint64_t xlb_rr_bytes(const struct xlb_rr *rr);

/* Start the cursor at a uniformly random index, as gRPC's picker does. */
static inline void xlb_rr_cursor_reset(struct xlb_rr_cursor *cursor, const struct xlb_rr *rr,
                                       struct xlb_rng *rng)
{
    cursor->next = xlb_rng_below(rng, rr->n_slots);
}

/*
 * The cursor may come from an older, longer array; fold it back in range once rather than
 * paying a division on every pick.
 */
static inline uint32_t xlb_rr_cursor_take(struct xlb_rr_cursor *cursor, uint32_t n)
{
    uint32_t at = cursor->next;
    if (at >= n)
        at %= n;
    cursor->next = at + 1 == n ? 0 : at + 1;
    return at;
}

/* Next slot in order; XLB_PICK_NONE for an empty or NULL array. */
static inline uint32_t xlb_rr_pick(const struct xlb_rr *rr, struct xlb_rr_cursor *cursor)
{
    if (rr == NULL || rr->n_slots == 0)
        return XLB_PICK_NONE;
    return rr->slots[xlb_rr_cursor_take(cursor, rr->n_slots)];
}

/*
 * Next usable slot in order, skipping endpoints the bitmap marks unusable (a connect failure
 * not yet reflected in the snapshot). Examines at most n_slots entries; XLB_PICK_NONE when none
 * is usable. gRPC's round_robin likewise only ever picks READY subchannels.
 */
uint32_t xlb_rr_pick_usable(const struct xlb_rr *rr, struct xlb_rr_cursor *cursor,
                            const uint64_t *usable);

#endif
