/* See xlb_pick_first.h. */
#include "xlb_pick_first.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_rng.h"

int xlb_pick_first_build(const struct xlb_pick_first_entry *entries, uint32_t n, bool shuffle,
                         uint64_t shuffle_seed, struct xlb_pick_first **out)
{
    *out = NULL;
    if (n == 0)
        return -EINVAL;
    struct xlb_pick_first *pf = malloc(sizeof(*pf) + (size_t)n * sizeof(pf->entries[0]));
    if (pf == NULL)
        return -ENOMEM;
    pf->n_entries = n;
    memcpy(pf->entries, entries, (size_t)n * sizeof(entries[0]));
    if (shuffle) {
        struct xlb_rng rng;
        xlb_rng_seed(&rng, shuffle_seed);
        for (uint32_t i = n - 1; i > 0; i--) {
            uint32_t j = xlb_rng_below(&rng, i + 1);
            struct xlb_pick_first_entry t = pf->entries[i];
            pf->entries[i] = pf->entries[j];
            pf->entries[j] = t;
        }
    }
    *out = pf;
    return 0;
}

void xlb_pick_first_free(struct xlb_pick_first *pf)
{
    free(pf);
}

uint64_t xlb_pick_first_bytes(const struct xlb_pick_first *pf)
{
    return pf == NULL ? 0 : sizeof(*pf) + (uint64_t)pf->n_entries * sizeof(pf->entries[0]);
}

/* Where the held entry is in this list: its old position when the list did not move it (the
 * common case), else a search by key; n_entries when it is not in the list. */
static uint32_t held_position(const struct xlb_pick_first *pf,
                              const struct xlb_pick_first_state *state)
{
    if (state->at < pf->n_entries && pf->entries[state->at].key == state->key)
        return state->at;
    for (uint32_t i = 0; i < pf->n_entries; i++)
        if (pf->entries[i].key == state->key)
            return i;
    return pf->n_entries;
}

uint32_t xlb_pick_first_pick(const struct xlb_pick_first *pf, struct xlb_pick_first_state *state,
                             xlb_pick_first_usable_fn usable, const void *ctx)
{
    if (pf == NULL || pf->n_entries == 0)
        return XLB_PICK_NONE;
    uint32_t n = pf->n_entries, start = 0;
    if (state->held) {
        uint32_t at = held_position(pf, state);
        if (at < n && usable(ctx, pf->entries[at].index)) {
            state->at = at;
            return pf->entries[at].index;
        }
        if (at < n)
            start = at + 1 == n ? 0 : at + 1; /* moves on to the next one in order */
    }
    for (uint32_t step = 0, at = start; step < n; step++, at = at + 1 == n ? 0 : at + 1)
        if (usable(ctx, pf->entries[at].index)) {
            *state =
                (struct xlb_pick_first_state){.at = at, .key = pf->entries[at].key, .held = true};
            return pf->entries[at].index;
        }
    return XLB_PICK_NONE;
}
