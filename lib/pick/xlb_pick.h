/*
 * Conventions shared by every pick algorithm in lib/pick/.
 *
 * Endpoints are named by their stable slot (a uint32 counter index that survives snapshot
 * swaps), so a pick returns a slot and per-lcore counters can be indexed by it directly.
 * Whether an endpoint may take a new flow right now is a bitmap indexed by slot, owned by
 * whoever tracks endpoint state; the pick code only reads it.
 */
#ifndef XLB_PICK_H
#define XLB_PICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "No pick": nothing was usable, or the structure is empty. */
#define XLB_PICK_NONE UINT32_MAX

/* Words needed for a usability bitmap that covers slots [0, n_slots). */
#define XLB_USABLE_WORDS(n_slots) (((uint64_t)(n_slots) + 63) / 64)

/*
 * A NULL bitmap means "every endpoint is usable": most picks happen when nothing is failing,
 * and callers that have no failure state to report need not build an all-ones bitmap.
 */
static inline bool xlb_slot_usable(const uint64_t *usable, uint32_t slot)
{
    if (usable == NULL)
        return true;
    return (usable[slot / 64] >> (slot % 64)) & 1;
}

/*
 * The first usable slot of a circular list (a hash ring's points, a Maglev table) from index
 * `at` on, in list order: how ring hash and Maglev move a pick past endpoints that cannot take
 * it, alike on every host. XLB_PICK_NONE when none is.
 */
static inline uint32_t xlb_next_usable(const uint32_t *slots, uint32_t n, uint32_t at,
                                       const uint64_t *usable)
{
    for (uint32_t step = 0; step < n; step++) {
        if (xlb_slot_usable(usable, slots[at]))
            return slots[at];
        at = at + 1 == n ? 0 : at + 1;
    }
    return XLB_PICK_NONE;
}

static inline void xlb_slot_set_usable(uint64_t *usable, uint32_t slot, bool on)
{
    uint64_t bit = UINT64_C(1) << (slot % 64);
    if (on)
        usable[slot / 64] |= bit;
    else
        usable[slot / 64] &= ~bit;
}

#endif
