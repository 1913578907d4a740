/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed
 * 64-bit PRF, cheap on short inputs, which is what a SYN cookie needs -- an attacker who sees
 * many cookies must not be able to compute the next one.
 */
#ifndef XLB_SIPHASH_H
#define XLB_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* A 128-bit key as the two little-endian 64-bit words k0, k1 of its 16 bytes (as in the
 * paper), so that the published test vectors apply unchanged. */
void xlb_siphash_key(uint64_t key[2], const uint8_t bytes[16]);

/* SipHash-2-4 of len bytes at data (any alignment). */
uint64_t xlb_siphash24(const uint64_t key[2], const void *data, size_t len);

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

/* Two compression rounds per message word: the "2" of SipHash-2-4. */
static inline void xlb_sip_absorb(struct xlb_sip_state *s, uint64_t m)
{
    s->v3 ^= m;
    xlb_sip_round(s);
    xlb_sip_round(s);
    s->v0 ^= m;
}

/* Four finalisation rounds: the "4". */
static inline uint64_t xlb_sip_finish(struct xlb_sip_state *s)
{
    s->v2 ^= 0xff;
    for (int i = 0; i < 4; i++)
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
 * xlb_siphash24(key, data, 24), inline, with whole-word loads: the flow table hashes a
 * 24-byte key for every packet, and the general function's byte-at-a-time tail loads and
 * call cost about 66 cycles a key on the development guest against 42 for this form (same
 * values: test_siphash checks them against each other and the paper's vector).
 */
static inline uint64_t xlb_siphash24_24(const uint64_t key[2], const void *data)
{
    const uint8_t *p = data;
    struct xlb_sip_state s = xlb_sip_init(key);
    xlb_sip_absorb(&s, xlb_sip_word(p));
    xlb_sip_absorb(&s, xlb_sip_word(p + 8));
    xlb_sip_absorb(&s, xlb_sip_word(p + 16));
    xlb_sip_absorb(&s, (uint64_t)24 << 56); /* no tail bytes, the length in the top byte */
    return xlb_sip_finish(&s);
}

#endif
