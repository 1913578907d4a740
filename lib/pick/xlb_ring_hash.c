#include "xlb_ring_hash.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

/* One distinct endpoint after duplicates are merged, in first-seen input order. */
struct ring_member {
    const char *key;
    size_t key_len;
    uint32_t slot;
    uint64_t weight;
    uint32_t n_points;
};

struct ring_point {
    uint64_t hash;
    uint32_t member; /* ties (a 64-bit collision) break by input order: same ring everywhere */
    uint32_t slot;
};

void xlb_ring_hash_config_default(struct xlb_ring_hash_config *config)
{
    config->min_ring_size = XLB_RING_HASH_DEFAULT_MIN_SIZE;
    config->max_ring_size = XLB_RING_HASH_DEFAULT_MAX_SIZE;
    config->ring_size_cap = XLB_RING_HASH_DEFAULT_CAP;
}

/* The effective (min, max) after A42's validation and the client-side cap. */
static int effective_bounds(const struct xlb_ring_hash_config *config, uint64_t *min, uint64_t *max)
{
    if (config->min_ring_size < 1 || config->min_ring_size > XLB_RING_HASH_LIMIT ||
        config->max_ring_size < config->min_ring_size ||
        config->max_ring_size > XLB_RING_HASH_LIMIT)
        return -EINVAL;
    uint64_t cap = config->ring_size_cap == 0 ? XLB_RING_HASH_DEFAULT_CAP : config->ring_size_cap;
    if (cap > XLB_RING_HASH_LIMIT)
        cap = XLB_RING_HASH_LIMIT;
    *min = config->min_ring_size < cap ? config->min_ring_size : cap;
    *max = config->max_ring_size < cap ? config->max_ring_size : cap;
    return 0;
}

static int compare_members_by_key(const void *a, const void *b)
{
    const struct ring_member *x = *(const struct ring_member *const *)a;
    const struct ring_member *y = *(const struct ring_member *const *)b;
    int c = strcmp(x->key, y->key);
    if (c != 0)
        return c;
    return x < y ? -1 : x > y; /* keep input order among equal keys */
}

/*
 * Fold duplicates into their first occurrence, adding weights, and compact the array while
 * keeping first-seen order (the order decides how fractional points are shared out).
 * Returns the number of distinct members, or -EINVAL for one key under two slots.
 */
static int merge_duplicates(struct ring_member *members, uint32_t n)
{
    struct ring_member **sorted = malloc(sizeof(*sorted) * n);
    if (sorted == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        sorted[i] = &members[i];
    qsort(sorted, n, sizeof(*sorted), compare_members_by_key);

    /* Equal keys sort together, earliest first: that one survives and takes the weight. */
    int rc = 0;
    struct ring_member *survivor = sorted[0];
    for (uint32_t i = 1; i < n; i++) {
        struct ring_member *m = sorted[i];
        if (strcmp(survivor->key, m->key) != 0) {
            survivor = m;
            continue;
        }
        if (survivor->slot != m->slot)
            rc = -EINVAL;
        survivor->weight += m->weight;
        m->weight = 0; /* merged away; every real weight is at least 1 */
    }
    free(sorted);
    if (rc != 0)
        return rc;

    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++)
        if (members[i].weight != 0)
            members[kept++] = members[i];
    return (int)kept;
}

/*
 * A42's ring arithmetic, in the same double-precision steps as gRPC and Envoy so that the
 * number of points each endpoint gets (and so the ring itself) is the same as theirs.
 * Returns the total number of points.
 */
static uint64_t share_out_points(struct ring_member *members, uint32_t n, uint64_t min_size,
                                 uint64_t max_size)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += members[i].weight;

    double min_normalized = 1.0;
    for (uint32_t i = 0; i < n; i++) {
        double w = (double)members[i].weight / (double)sum;
        min_normalized = w < min_normalized ? w : min_normalized;
    }
    double scale = ceil(min_normalized * (double)min_size) / min_normalized;
    if (scale > (double)max_size)
        scale = (double)max_size;

    /* Running sums hand out whole points while the fractional targets accumulate. */
    double current = 0.0, target = 0.0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        target += scale * ((double)members[i].weight / (double)sum);
        uint32_t count = 0;
        while (current < target) {
            count++;
            current += 1.0;
        }
        members[i].n_points = count;
        total += count;
    }
    return total;
}

static int compare_points(const void *a, const void *b)
{
    const struct ring_point *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->member > y->member) - (x->member < y->member);
}

/* Hash "<key>_<n>" for every point of every member. */
static void hash_points(const struct ring_member *members, uint32_t n, struct ring_point *points)
{
    char buf[XLB_RING_HASH_MAX_KEY + 1 + 11];
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        memcpy(buf, members[i].key, members[i].key_len);
        buf[members[i].key_len] = '_';
        char *suffix = buf + members[i].key_len + 1;
        for (uint32_t j = 0; j < members[i].n_points; j++) {
            int len = snprintf(suffix, 11, "%u", j);
            size_t total = members[i].key_len + 1 + (size_t)len;
            points[at++] = (struct ring_point){
                .hash = XXH64(buf, total, 0), .member = i, .slot = members[i].slot};
        }
    }
}

/*
 * A coarse index over the top bits of the hash: a lookup jumps to its bucket and searches the
 * few points inside, instead of a binary search over the whole ring.
 */
static int build_buckets(struct xlb_ring_hash *ring)
{
    uint32_t bits = 1;
    while (bits < 31 && (UINT64_C(1) << bits) < ring->n_points / 4)
        bits++;
    uint32_t n_buckets = UINT32_C(1) << bits;
    ring->bucket_shift = 64 - bits;
    ring->bucket_first = malloc(sizeof(uint32_t) * ((size_t)n_buckets + 1));
    if (ring->bucket_first == NULL)
        return -ENOMEM;
    uint32_t i = 0;
    for (uint32_t b = 0; b < n_buckets; b++) {
        while (i < ring->n_points && (ring->hashes[i] >> ring->bucket_shift) < b)
            i++;
        ring->bucket_first[b] = i;
    }
    ring->bucket_first[n_buckets] = ring->n_points;
    return 0;
}

static int fill_ring(struct xlb_ring_hash *ring, const struct ring_member *members, uint32_t n,
                     uint64_t total)
{
    struct ring_point *points = malloc(sizeof(*points) * total);
    ring->hashes = malloc(sizeof(*ring->hashes) * total);
    ring->slots = malloc(sizeof(*ring->slots) * total);
    if (points == NULL || ring->hashes == NULL || ring->slots == NULL) {
        free(points);
        return -ENOMEM;
    }
    hash_points(members, n, points);
    qsort(points, total, sizeof(*points), compare_points);
    for (uint64_t i = 0; i < total; i++) {
        ring->hashes[i] = points[i].hash;
        ring->slots[i] = points[i].slot;
    }
    free(points);
    ring->n_points = (uint32_t)total;
    return build_buckets(ring);
}

static int load_members(const struct xlb_ring_hash_endpoint *endpoints, uint32_t n,
                        struct ring_member *members)
{
    for (uint32_t i = 0; i < n; i++) {
        const char *key = endpoints[i].key;
        size_t len = key == NULL ? 0 : strnlen(key, XLB_RING_HASH_MAX_KEY + 1);
        if (len == 0 || len > XLB_RING_HASH_MAX_KEY)
            return -EINVAL;
        members[i] = (struct ring_member){
            .key = key,
            .key_len = len,
            .slot = endpoints[i].slot,
            .weight = endpoints[i].weight == 0 ? 1 : endpoints[i].weight,
        };
    }
    return 0;
}

int xlb_ring_hash_build(const struct xlb_ring_hash_endpoint *endpoints, uint32_t n,
                        const struct xlb_ring_hash_config *config, struct xlb_ring_hash **out)
{
    *out = NULL;
    uint64_t min_size, max_size;
    if (endpoints == NULL || n == 0 || n > XLB_RING_HASH_LIMIT || config == NULL ||
        effective_bounds(config, &min_size, &max_size) != 0)
        return -EINVAL;

    struct ring_member *members = malloc(sizeof(*members) * n);
    struct xlb_ring_hash *ring = calloc(1, sizeof(*ring));
    int rc = members == NULL || ring == NULL ? -ENOMEM : load_members(endpoints, n, members);
    int distinct = rc == 0 ? merge_duplicates(members, n) : rc;
    if (distinct > 0) {
        uint64_t total = share_out_points(members, (uint32_t)distinct, min_size, max_size);
        rc = fill_ring(ring, members, (uint32_t)distinct, total);
    } else {
        rc = distinct;
    }
    free(members);
    if (rc != 0) {
        xlb_ring_hash_free(ring);
        return rc;
    }
    *out = ring;
    return 0;
}

void xlb_ring_hash_free(struct xlb_ring_hash *ring)
{
    if (ring == NULL)
        return;
    free(ring->bucket_first);
    free(ring->hashes);
    free(ring->slots);
    free(ring);
}

uint64_t xlb_ring_hash_bytes(const struct xlb_ring_hash *ring)
{
    uint64_t buckets = (UINT64_C(1) << (64 - ring->bucket_shift)) + 1;
    return sizeof(*ring) + buckets * sizeof(uint32_t) +
           (uint64_t)ring->n_points * (sizeof(uint64_t) + sizeof(uint32_t));
}

uint32_t xlb_ring_hash_point_for(const struct xlb_ring_hash *ring, uint64_t request_hash)
{
    uint64_t bucket = request_hash >> ring->bucket_shift;
    uint32_t lo = ring->bucket_first[bucket], hi = ring->bucket_first[bucket + 1];
    /* Every point before this bucket is smaller and every point after it larger. */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ring->hashes[mid] < request_hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == ring->n_points ? 0 : lo;
}

uint32_t xlb_ring_hash_pick(const struct xlb_ring_hash *ring, uint64_t request_hash,
                            const uint64_t *usable)
{
    if (ring == NULL || ring->n_points == 0)
        return XLB_PICK_NONE;
    /*
     * A42's picker moves on from a failed endpoint to the next distinct one in ring order;
     * duplicates of a failed endpoint are failed too, so "next usable point" is the same walk.
     */
    return xlb_next_usable(ring->slots, ring->n_points, xlb_ring_hash_point_for(ring, request_hash),
                           usable);
}
