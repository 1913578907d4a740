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

void xlb_siphash_key(uint64_t key[2], const uint8_t bytes[16])
{
    key[0] = load_le(bytes, 8);
    key[1] = load_le(bytes + 8, 8);
}

uint64_t xlb_siphash24(const uint64_t key[2], const void *data, size_t len)
{
    const uint8_t *p = data;
    struct xlb_sip_state s = xlb_sip_init(key);
    size_t whole = len & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8)
        xlb_sip_absorb(&s, xlb_sip_word(p + i));
    /* The last word carries the length (mod 256) in its top byte, so that messages differing
     * only by trailing zero bytes hash apart. */
    xlb_sip_absorb(&s, load_le(p + whole, len - whole) | ((uint64_t)len << 56));
    return xlb_sip_finish(&s);
}
