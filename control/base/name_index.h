/*
 * A map from names (cluster names, mostly) to the caller's pointers, for the control plane's
 * lookups by name: with a thousand clusters, a scan per lookup makes every update cost
 * clusters x clusters string compares. Open addressing (linear probing, deletions by backward
 * shift) over a 64-bit XXH3 of the name; the hash is kept beside each name so that a probe
 * compares strings only when the hashes match, and growing never hashes a name again.
 *
 * Names are borrowed: the caller keeps each one alive, unchanged, while it is in the index.
 * No DPDK here (unit tests and xlbctl run without EAL). Not thread-safe; single owner.
 */
#ifndef XLB_NAME_INDEX_H
#define XLB_NAME_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*xlb_name_hash_fn)(const char *name, size_t len);

struct xlb_name_slot {
    uint64_t hash;
    const char *name; /* NULL: the slot is free */
    void *value;
};

struct xlb_name_index {
    struct xlb_name_slot *slots;
    size_t cap; /* a power of two, or 0 before the first insertion */
    size_t n;
    xlb_name_hash_fn hash;
};

/* An empty index hashing with XXH3; holds no memory until the first insertion. */
void xlb_name_index_init(struct xlb_name_index *ix);
/* The same with another hash function: tests force collisions with it. */
void xlb_name_index_init_hashed(struct xlb_name_index *ix, xlb_name_hash_fn hash);
/* Frees the index's memory (not the names or values) and leaves it empty and usable. */
void xlb_name_index_free(struct xlb_name_index *ix);

/* The value stored for name, or NULL. */
void *xlb_name_index_find(const struct xlb_name_index *ix, const char *name);

/*
 * Stores value for name: a new entry, or the existing entry of an equal name, whose borrowed
 * name becomes this one (so a caller may free the string it stored before). Returns 0, or -1
 * when out of memory (the index is unchanged then); replacing an existing entry never fails.
 */
int xlb_name_index_set(struct xlb_name_index *ix, const char *name, void *value);

/* Removes name's entry; false when there was none. */
bool xlb_name_index_remove(struct xlb_name_index *ix, const char *name);

#endif
