/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed
 * 64-bit PRF, cheap on short inputs, which is what a SYN cookie needs -- an attacker who sees
 * many cookies must not be able to compute the next one. And SipHash-1-3, the same with one
 * compression and three finalisation rounds, for hash tables: an attacker who cannot see the
 * values still cannot aim keys at one bucket (hash flooding), at two thirds of the work.
 */
#ifndef XLB_SIPHASH_H
#define XLB_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* A 128-bit key as the two little-endian 64-bit words k0, k1 of its 16 bytes (as in the
 * paper), so that the published test vectors apply unchanged. */
void xlb_siphash_key(uint64_t key[2], const uint8_t bytes[16]);

/* SipHash-2-4 and SipHash-1-3 of len bytes at data (any alignment). */
uint64_t xlb_siphash24(const uint64_t key[2], const void *data, size_t len);
uint64_t xlb_siphash13(const uint64_t key[2], const void *data, size_t len);

/* The algorithm's state and its round (SipRound), for the inline form below. */
struct xlb_sip_state {
    uint64_t v0, v1, v2, v3;
};

static inline uint64_t xlb_sip_rotl(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64 - b));
}

static inline void xlb_sip_round(struct xlb_sip_state *s)
{
    s->v0 += s->v1;
    s->v1 = xlb_sip_rotl(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = xlb_sip_rotl(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = xlb_sip_rotl(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = xlb_sip_rotl(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = xlb_sip_rotl(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = xlb_sip_rotl(s->v2, 32);
}

/* The key mixed with the initialisation constants, which spell
 * "somepseudorandomlygeneratedbytes". */
static inline struct xlb_sip_state xlb_sip_init(const uint64_t key[2])
{
    return (struct xlb_sip_state){
        .v0 = key[0] ^ 0x736f6d6570736575ull,
        .v1 = key[1] ^ 0x646f72616e646f6dull,
        .v2 = key[0] ^ 0x6c7967656e657261ull,
        .v3 = key[1] ^ 0x7465646279746573ull,
    };
}

/* A message word, with c compression rounds (the "2" of SipHash-2-4). */
static inline void xlb_sip_absorb_rounds(struct xlb_sip_state *s, uint64_t m, int c)
{
    s->v3 ^= m;
    for (int i = 0; i < c; i++)
        xlb_sip_round(s);
    s->v0 ^= m;
}

/* d finalisation rounds (the "4"), and the value. */
static inline uint64_t xlb_sip_finish_rounds(struct xlb_sip_state *s, int d)
{
    s->v2 ^= 0xff;
    for (int i = 0; i < d; i++)
        xlb_sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* A little-endian 64-bit word at p (any alignment), one load on a little-endian host. */
static inline uint64_t xlb_sip_word(const uint8_t *p)
{
    uint64_t v;
    __builtin_memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/*
 * SipHash-c-d of 24 bytes, inline, with whole-word loads: the flow table hashes a 24-byte key
 * for every packet, and the general function's byte-at-a-time tail loads and call cost about
 * 66 cycles a key on the development guest against 42 for this form (2-4); same values:
 * test_siphash checks them against each other and the published vectors.
 */
static inline uint64_t xlb_siphash_24_bytes(const uint64_t key[2], const void *data, int c, int d)
{
    const uint8_t *p = data;
    struct xlb_sip_state s = xlb_sip_init(key);
    xlb_sip_absorb_rounds(&s, xlb_sip_word(p), c);
    xlb_sip_absorb_rounds(&s, xlb_sip_word(p + 8), c);
    xlb_sip_absorb_rounds(&s, xlb_sip_word(p + 16), c);
    xlb_sip_absorb_rounds(&s, (uint64_t)24 << 56, c); /* no tail bytes, the length on top */
    return xlb_sip_finish_rounds(&s, d);
}

static inline uint64_t xlb_siphash24_24(const uint64_t key[2], const void *data)
{
    return xlb_siphash_24_bytes(key, data, 2, 4);
}

static inline uint64_t xlb_siphash13_24(const uint64_t key[2], const void *data)
{
    return xlb_siphash_24_bytes(key, data, 1, 3);
}

#endif
