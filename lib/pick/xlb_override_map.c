#include "xlb_override_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Inline XXH3: the key is 20 bytes, and a library call would cost as much as the hash. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAX_ENDPOINTS (1u << 30)

static struct xlb_override_key key_of(const struct xlb_host_port *where)
{
    struct xlb_override_key key = {.family = where->addr.family, .port = where->port};
    memcpy(key.bytes, where->addr.bytes, sizeof(key.bytes));
    return key;
}

static uint32_t bucket_of(const struct xlb_override_map *map, const struct xlb_override_key *key)
{
    return (uint32_t)XXH3_64bits(key, sizeof(*key)) & map->mask;
}

static int keys_equal(const struct xlb_override_key *a, const struct xlb_override_key *b)
{
    return memcmp(a, b, sizeof(*a)) == 0;
}

/* Smallest power of two holding n entries at a load of at most one half. */
static uint32_t bucket_count_for(uint32_t n)
{
    uint32_t buckets = 2;
    while (buckets < 2 * (uint64_t)n)
        buckets *= 2;
    return buckets;
}

static int validate_endpoint(const struct xlb_override_endpoint *e)
{
    int family = e->where.addr.family;
    if ((family != AF_INET && family != AF_INET6) || e->status > XLB_HEALTH_DEGRADED)
        return -EINVAL;
    return 0;
}

static int insert(struct xlb_override_map *map, const struct xlb_override_endpoint *e)
{
    struct xlb_override_key key = key_of(&e->where);
    for (uint32_t i = bucket_of(map, &key);; i = (i + 1) & map->mask) {
        struct xlb_override_bucket *b = &map->buckets[i];
        if (b->key.family == 0) {
            *b = (struct xlb_override_bucket){.key = key, .slot = e->slot, .status = e->status};
            return 0;
        }
        if (keys_equal(&b->key, &key))
            return -EEXIST;
    }
}

int xlb_override_map_build(const struct xlb_override_endpoint *endpoints, uint32_t n,
                           struct xlb_override_map **out)
{
    *out = NULL;
    if (endpoints == NULL || n == 0 || n > MAX_ENDPOINTS)
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++)
        if (validate_endpoint(&endpoints[i]) != 0)
            return -EINVAL;

    uint32_t buckets = bucket_count_for(n);
    struct xlb_override_map *map =
        calloc(1, sizeof(*map) + sizeof(map->buckets[0]) * (size_t)buckets);
    if (map == NULL)
        return -ENOMEM;
    map->mask = buckets - 1;
    map->n_endpoints = n;
    for (uint32_t i = 0; i < n; i++) {
        int rc = insert(map, &endpoints[i]);
        if (rc != 0) {
            free(map);
            return rc;
        }
    }
    *out = map;
    return 0;
}

void xlb_override_map_free(struct xlb_override_map *map)
{
    free(map);
}

uint64_t xlb_override_map_bytes(const struct xlb_override_map *map)
{
    return sizeof(*map) + ((uint64_t)map->mask + 1) * sizeof(map->buckets[0]);
}

/* The table is never more than half full, so a probe always meets an empty bucket. */
const struct xlb_override_bucket *xlb_override_map_find(const struct xlb_override_map *map,
                                                        const struct xlb_host_port *where)
{
    if (map == NULL)
        return NULL;
    struct xlb_override_key key = key_of(where);
    if (key.family == 0)
        return NULL;
    for (uint32_t i = bucket_of(map, &key);; i = (i + 1) & map->mask) {
        const struct xlb_override_bucket *b = &map->buckets[i];
        if (b->key.family == 0)
            return NULL;
        if (keys_equal(&b->key, &key))
            return b;
    }
}

uint32_t xlb_override_pick(const struct xlb_override_map *map, const struct xlb_host_port *where,
                           uint32_t status_mask, const uint64_t *usable)
{
    const struct xlb_override_bucket *b = xlb_override_map_find(map, where);
    if (b == NULL || !(status_mask & XLB_HEALTH_BIT(b->status)) ||
        !xlb_slot_usable(usable, b->slot))
        return XLB_PICK_NONE;
    return b->slot;
}
