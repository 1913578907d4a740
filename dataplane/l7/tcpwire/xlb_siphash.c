/* SipHash-2-4, written from the algorithm as the paper specifies it. */
#include "xlb_siphash.h"

/* Little-endian load of n <= 8 bytes: the algorithm reads its message as little-endian words
 * whatever the host's byte order. */
static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t rotl(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64 - b));
}

struct sip_state {
    uint64_t v0, v1, v2, v3;
};

static inline void sip_round(struct sip_state *s)
{
    s->v0 += s->v1;
    s->v1 = rotl(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl(s->v2, 32);
}

/* Two compression rounds per message word: the "2" of SipHash-2-4. */
static inline void sip_absorb(struct sip_state *s, uint64_t m)
{
    s->v3 ^= m;
    sip_round(s);
    sip_round(s);
    s->v0 ^= m;
}

void xlb_siphash_key(uint64_t key[2], const uint8_t bytes[16])
{
    key[0] = load_le(bytes, 8);
    key[1] = load_le(bytes + 8, 8);
}

uint64_t xlb_siphash24(const uint64_t key[2], const void *data, size_t len)
{
    const uint8_t *p = data;
    /* The initialisation constants spell "somepseudorandomlygeneratedbytes". */
    struct sip_state s = {
        .v0 = key[0] ^ 0x736f6d6570736575ull,
        .v1 = key[1] ^ 0x646f72616e646f6dull,
        .v2 = key[0] ^ 0x6c7967656e657261ull,
        .v3 = key[1] ^ 0x7465646279746573ull,
    };
    size_t whole = len & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8)
        sip_absorb(&s, load_le(p + i, 8));
    /* The last word carries the length (mod 256) in its top byte, so that messages differing
     * only by trailing zero bytes hash apart. */
    sip_absorb(&s, load_le(p + whole, len - whole) | ((uint64_t)len << 56));
    /* Four finalisation rounds: the "4". */
    s.v2 ^= 0xff;
    for (int i = 0; i < 4; i++)
        sip_round(&s);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
