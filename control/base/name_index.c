/* See name_index.h. */
#include "name_index.h"

#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

/* Slots of the first table; it doubles as names arrive. */
#define MIN_CAP 16

static uint64_t xxh3(const char *name, size_t len)
{
    return XXH3_64bits(name, len);
}

void xlb_name_index_init_hashed(struct xlb_name_index *ix, xlb_name_hash_fn hash)
{
    memset(ix, 0, sizeof(*ix));
    ix->hash = hash;
}

void xlb_name_index_init(struct xlb_name_index *ix)
{
    xlb_name_index_init_hashed(ix, xxh3);
}

void xlb_name_index_free(struct xlb_name_index *ix)
{
    free(ix->slots);
    ix->slots = NULL;
    ix->cap = 0;
    ix->n = 0;
}

/* The slot holding name, or the free slot that ends its probe run; cap must be non-zero. */
static size_t probe(const struct xlb_name_index *ix, const char *name, uint64_t hash)
{
    size_t mask = ix->cap - 1;
    size_t i = hash & mask;
    while (ix->slots[i].name != NULL &&
           (ix->slots[i].hash != hash || strcmp(ix->slots[i].name, name) != 0))
        i = (i + 1) & mask;
    return i;
}

void *xlb_name_index_find(const struct xlb_name_index *ix, const char *name)
{
    if (ix->n == 0)
        return NULL;
    size_t i = probe(ix, name, ix->hash(name, strlen(name)));
    return ix->slots[i].name != NULL ? ix->slots[i].value : NULL;
}

/* Rehashes into cap slots; the stored hashes make this a copy, not a rehash of names. */
static int resize(struct xlb_name_index *ix, size_t cap)
{
    struct xlb_name_slot *slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return -1;
    struct xlb_name_index grown = {.slots = slots, .cap = cap, .n = ix->n, .hash = ix->hash};
    for (size_t i = 0; i < ix->cap; i++)
        if (ix->slots[i].name != NULL)
            slots[probe(&grown, ix->slots[i].name, ix->slots[i].hash)] = ix->slots[i];
    free(ix->slots);
    *ix = grown;
    return 0;
}

int xlb_name_index_set(struct xlb_name_index *ix, const char *name, void *value)
{
    uint64_t hash = ix->hash(name, strlen(name));
    size_t i = ix->cap ? probe(ix, name, hash) : 0;
    /* Only a new name may grow the table: replacing an entry never fails. Kept at most half
     * full, where linear probing's runs stay a slot or two long. */
    if (ix->cap == 0 || (ix->slots[i].name == NULL && 2 * (ix->n + 1) > ix->cap)) {
        if (resize(ix, ix->cap ? 2 * ix->cap : MIN_CAP) != 0)
            return -1;
        i = probe(ix, name, hash);
    }
    if (ix->slots[i].name == NULL)
        ix->n++;
    ix->slots[i] = (struct xlb_name_slot){.hash = hash, .name = name, .value = value};
    return 0;
}

/* Whether home (a slot's ideal position) lies cyclically in (hole, at]: then the entry at `at`
 * must stay where it is, since a probe from home reaches it without crossing the hole. */
static bool stays(size_t home, size_t hole, size_t at)
{
    if (hole <= at)
        return hole < home && home <= at;
    return hole < home || home <= at;
}

bool xlb_name_index_remove(struct xlb_name_index *ix, const char *name)
{
    if (ix->n == 0)
        return false;
    size_t mask = ix->cap - 1;
    size_t hole = probe(ix, name, ix->hash(name, strlen(name)));
    if (ix->slots[hole].name == NULL)
        return false;
    /* Backward shift: pull later entries of the run into the hole, so that no probe run is
     * ever broken by a free slot and no tombstones pile up. */
    for (size_t at = (hole + 1) & mask; ix->slots[at].name != NULL; at = (at + 1) & mask) {
        if (stays(ix->slots[at].hash & mask, hole, at))
            continue;
        ix->slots[hole] = ix->slots[at];
        hole = at;
    }
    ix->slots[hole] = (struct xlb_name_slot){0};
    ix->n--;
    return true;
}
