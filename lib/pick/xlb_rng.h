/*
 * Per-lcore pseudo-random source for picks.
 *
 * The state lives with the caller (one per worker lcore, one per test), so no two lcores ever
 * share a cache line for it and a fixed seed replays exactly the same picks. The generator is
 * xoshiro256** (Blackman and Vigna): four 64-bit words, a few shifts and rotates per draw, and
 * statistical quality far beyond what weighted choice needs. It is not cryptographic; nothing
 * here needs that.
 */
#ifndef XLB_RNG_H
#define XLB_RNG_H

#include <stdint.h>

struct xlb_rng {
    uint64_t s[4];
};

/*
 * Seed the state from one 64-bit value. The seed is spread with splitmix64 so that nearby
 * seeds (lcore ids, say) give unrelated streams and the all-zero state cannot occur.
 */
void xlb_rng_seed(struct xlb_rng *rng, uint64_t seed);

static inline uint64_t xlb_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* One uniformly distributed 64-bit value. */
static inline uint64_t xlb_rng_next(struct xlb_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t out = xlb_rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = xlb_rng_rotl(s[3], 45);
    return out;
}

/*
 * A value in [0, bound) without a division: the high half of a 32x32 multiply. The bias is at
 * most bound / 2^32, far below anything a load balancer could observe. bound 0 yields 0.
 */
static inline uint32_t xlb_rng_below(struct xlb_rng *rng, uint32_t bound)
{
    uint32_t r = (uint32_t)(xlb_rng_next(rng) >> 32);
    return (uint32_t)(((uint64_t)r * bound) >> 32);
}

#endif
