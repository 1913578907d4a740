/*
 * Pick first (gRPC A62): an ordered address list, the first usable entry taken and kept.
 *
 * The list belongs to the snapshot (one per priority, built on the control plane: localities
 * in order, their endpoints in EDS order, shuffled once when the cluster asks for
 * shuffle_address_list) and is never written by workers. What a worker sticks to is a small
 * state in its own memory: the position and the stable key (endpoint slot) of the entry it
 * chose. The key keeps a worker on its endpoint across a new snapshot whose list moved it;
 * a worker leaves its endpoint only when that endpoint is no longer usable, for the next
 * usable one in list order (wrapping), as a gRPC channel's pick_first moves on only when its
 * connected subchannel fails.
 */
#ifndef XLB_PICK_FIRST_H
#define XLB_PICK_FIRST_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_pick.h"

struct xlb_pick_first_entry {
    uint32_t index; /* what a pick returns (the LB tree's endpoint index) */
    uint32_t key;   /* stable across snapshots (the endpoint slot) */
};

struct xlb_pick_first {
    uint32_t n_entries;
    struct xlb_pick_first_entry entries[];
};

/* Per worker and cluster; all zero is "nothing chosen yet". */
struct xlb_pick_first_state {
    uint32_t at;
    uint32_t key;
    bool held;
};

/* Whether entry `index` may take a request now (the caller's test: bitmap, connectivity). */
typedef bool (*xlb_pick_first_usable_fn)(const void *ctx, uint32_t index);

/*
 * Copy the entries, in order, or shuffled (Fisher-Yates from `shuffle_seed`) when `shuffle`.
 * Returns 0, -EINVAL for no entries, or -ENOMEM.
 */
int xlb_pick_first_build(const struct xlb_pick_first_entry *entries, uint32_t n, bool shuffle,
                         uint64_t shuffle_seed, struct xlb_pick_first **out);
void xlb_pick_first_free(struct xlb_pick_first *pf);
uint64_t xlb_pick_first_bytes(const struct xlb_pick_first *pf);

/*
 * The held entry while it is usable; else the next usable one after it in list order
 * (from the start when nothing is held or the held key is not in this list), which becomes
 * held. XLB_PICK_NONE when no entry is usable (the state is kept). At most 2 * n_entries
 * steps, n_entries + 1 in the steady state's common case of 1.
 */
uint32_t xlb_pick_first_pick(const struct xlb_pick_first *pf, struct xlb_pick_first_state *state,
                             xlb_pick_first_usable_fn usable, const void *ctx);

#endif
