/* SipHash-c-d, written from the algorithm as the paper specifies it: 2-4 and 1-3. */
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

void xlb_siphash_key(uint64_t key[2], const uint8_t bytes[16])
{
    key[0] = load_le(bytes, 8);
    key[1] = load_le(bytes + 8, 8);
}

/* c compression rounds per message word, d finalisation rounds. */
static uint64_t siphash_cd(const uint64_t key[2], const void *data, size_t len, int c, int d)
{
    const uint8_t *p = data;
    struct xlb_sip_state s = xlb_sip_init(key);
    size_t whole = len & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8)
        xlb_sip_absorb_rounds(&s, xlb_sip_word(p + i), c);
    /* The last word carries the length (mod 256) in its top byte, so that messages differing
     * only by trailing zero bytes hash apart. */
    xlb_sip_absorb_rounds(&s, load_le(p + whole, len - whole) | ((uint64_t)len << 56), c);
    return xlb_sip_finish_rounds(&s, d);
}

uint64_t xlb_siphash24(const uint64_t key[2], const void *data, size_t len)
{
    return siphash_cd(key, data, len, 2, 4);
}

uint64_t xlb_siphash13(const uint64_t key[2], const void *data, size_t len)
{
    return siphash_cd(key, data, len, 1, 3);
}
