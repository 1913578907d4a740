/*
 * Incremental Internet checksum updates (RFC 1624, eqn. 3): when a NAT rewrites addresses and
 * ports, the TCP checksum is patched for the changed 16-bit words instead of recomputed over
 * the whole segment.
 */
#ifndef XLB_CHECKSUM_H
#define XLB_CHECKSUM_H

#include <stdint.h>
#include <string.h>

/*
 * One's-complement sum folded to 16 bits: 2^32 and 2^16 are both 1 modulo 0xffff, so the
 * carries out of each half are added back in. The 32-bit halves are added with their carry;
 * then the sum plus itself rotated by 16 bits holds its two 16-bit halves' sum, carry
 * included, in its upper half.
 */
static inline uint16_t xlb_csum_fold(uint64_t sum)
{
    uint32_t high = (uint32_t)(sum >> 32), s = (uint32_t)sum + high;
    s += s < high;
    return (uint16_t)((s + ((s << 16) | (s >> 16))) >> 16);
}

/*
 * What a field changing from `from` to `to` (`len` bytes, even) adds to a checksum's sum:
 * the complement of each old word plus each new one. Works on the bytes as they sit in the
 * packet, so byte order never matters. 32-bit words sum as their two 16-bit halves would
 * (modulo 0xffff), in half the additions; with a constant len the loops unroll.
 */
static inline uint64_t xlb_csum_diff(const void *from, const void *to, size_t len)
{
    uint64_t sum = 0;
    const uint8_t *a = from, *b = to;
    size_t i = 0;
    for (; i + 3 < len; i += 4) {
        uint32_t old_word, new_word;
        memcpy(&old_word, a + i, 4);
        memcpy(&new_word, b + i, 4);
        sum += (uint32_t)~old_word;
        sum += new_word;
    }
    for (; i + 1 < len; i += 2) {
        uint16_t old_word, new_word;
        memcpy(&old_word, a + i, 2);
        memcpy(&new_word, b + i, 2);
        sum += (uint16_t)~old_word;
        sum += new_word;
    }
    return sum;
}

/* Patch *csum (network order, as stored) by a sum of differences from xlb_csum_diff. */
static inline void xlb_csum_apply(uint16_t *csum, uint64_t diff)
{
    *csum = (uint16_t)~xlb_csum_fold((uint16_t) ~*csum + diff);
}

/* Patch *csum for one field changing from `from` to `to`. */
static inline void xlb_csum_replace(uint16_t *csum, const void *from, const void *to, size_t len)
{
    xlb_csum_apply(csum, xlb_csum_diff(from, to, len));
}

#endif
