/*
 * Ring hash as gRPC proposal A42 builds it (the same ring as Envoy's RING_HASH).
 *
 * Every endpoint gets a number of points on a 64-bit ring in proportion to its weight; a point
 * is XXH64 (seed 0) of the endpoint's key followed by "_<n>" for its n-th point. A request hash
 * lands on the first point at or after it, wrapping past the top. The key is the endpoint's
 * address in gRPC's text form ("1.2.3.4:80", "[::1]:80"; see xlb_host_port_format) unless
 * EDS gives it a hash_key (A76).
 *
 * Ring size (A42, after its 2022 update): with w_min the smallest normalised weight,
 *     min = min(min_ring_size, cap), max = min(max_ring_size, cap)
 *     scale = min(ceil(w_min * min) / w_min, max),  points = ceil(scale)
 * where cap is the client-side ring size cap (gRPC default 4096, at most 8M). Endpoint i then
 * receives points while a running count stays below the running sum of scale * w_i, in input
 * order, which is how the least-weighted endpoint gets a whole number of points.
 *
 * Usability: a packet balancer has no subchannels. An endpoint is usable when xlb would open
 * a connection to it now (gRPC's READY or IDLE: connecting on demand is what every flow does)
 * and unusable when it is failing (TRANSIENT_FAILURE: recent connect failures, or not passing
 * health state). See docs/lb-algorithms.md for the full mapping.
 */
#ifndef XLB_RING_HASH_H
#define XLB_RING_HASH_H

#include <stdint.h>

#include "xlb_pick.h"

#define XLB_RING_HASH_DEFAULT_MIN_SIZE UINT64_C(1024)
/* xDS leaves maximum_ring_size unset -> 8M (A42); the cap brings it down to 4096. */
#define XLB_RING_HASH_DEFAULT_MAX_SIZE UINT64_C(8388608)
#define XLB_RING_HASH_LIMIT            UINT64_C(8388608) /* larger values are NACKed */
#define XLB_RING_HASH_DEFAULT_CAP      UINT64_C(4096)
#define XLB_RING_HASH_MAX_KEY          255

struct xlb_ring_hash_config {
    uint64_t min_ring_size; /* 1..8M */
    uint64_t max_ring_size; /* min_ring_size..8M */
    uint64_t ring_size_cap; /* 0 = 4096; clamped to 1..8M as gRPC does */
};

struct xlb_ring_hash_endpoint {
    const char *key; /* NUL-terminated, at most XLB_RING_HASH_MAX_KEY bytes */
    uint32_t slot;
    uint32_t weight; /* A42: endpoint weight x locality weight; 0 is taken as 1, as gRPC does */
};

struct xlb_ring_hash {
    uint32_t n_points;
    uint32_t bucket_shift;  /* bucket of a hash = hash >> bucket_shift */
    uint32_t *bucket_first; /* per bucket: index of its first point; one extra = n_points */
    uint64_t *hashes;       /* sorted ascending */
    uint32_t *slots;        /* slots[i] owns hashes[i] */
};

/* The defaults of A42 for a cluster whose ring_hash_lb_config is absent. */
void xlb_ring_hash_config_default(struct xlb_ring_hash_config *config);

/*
 * Build a ring. Endpoints with the same key are merged and their weights added (gRPC does the
 * same); the same key under two different slots is an error. Returns 0, -EINVAL for no
 * endpoints, a NULL, empty or overlong key, conflicting duplicates or sizes out of range, or
 * -ENOMEM.
 */
int xlb_ring_hash_build(const struct xlb_ring_hash_endpoint *endpoints, uint32_t n,
                        const struct xlb_ring_hash_config *config, struct xlb_ring_hash **out);

void xlb_ring_hash_free(struct xlb_ring_hash *ring);
uint64_t xlb_ring_hash_bytes(const struct xlb_ring_hash *ring);

/* Index of the first point with hash >= request_hash, wrapping to 0 past the last point. */
uint32_t xlb_ring_hash_point_for(const struct xlb_ring_hash *ring, uint64_t request_hash);

/*
 * The slot for a request hash: the owner of its point if usable, else the owner of the next
 * point in ring order whose endpoint is usable. At most n_points points are examined;
 * XLB_PICK_NONE when no endpoint is usable. usable NULL means all are.
 */
uint32_t xlb_ring_hash_pick(const struct xlb_ring_hash *ring, uint64_t request_hash,
                            const uint64_t *usable);

#endif
