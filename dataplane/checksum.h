/*
 * Incremental Internet checksum updates (RFC 1624, eqn. 3): when a NAT rewrites addresses and
 * ports, the TCP checksum is patched for the changed 16-bit words instead of recomputed over
 * the whole segment.
 */
#ifndef XLB_CHECKSUM_H
#define XLB_CHECKSUM_H

#include <stdint.h>
#include <string.h>

/* One's-complement sum folded to 16 bits. */
static inline uint16_t xlb_csum_fold(uint32_t sum)
{
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

/*
 * Patch *csum (network order, as stored) for `len` bytes (even) at a field that changes from
 * `from` to `to`. Works on the bytes as they sit in the packet, so byte order never matters.
 */
static inline void xlb_csum_replace(uint16_t *csum, const void *from, const void *to, size_t len)
{
    uint32_t sum = (uint16_t) ~*csum;
    const uint8_t *a = from, *b = to;
    for (size_t i = 0; i + 1 < len; i += 2) {
        uint16_t old_word, new_word;
        memcpy(&old_word, a + i, 2);
        memcpy(&new_word, b + i, 2);
        sum += (uint16_t)~old_word;
        sum += new_word;
    }
    *csum = (uint16_t)~xlb_csum_fold(sum);
}

#endif
