/*
 * Hand-made HPACK input for tests (RFC 7541 §5, §6): integers, raw strings, and Huffman strings
 * made of the longest code (30 bits, byte 0x0a), which make nghttp2 allocate the most memory
 * per decoded byte. Encoding only: decoding is nghttp2's.
 */
#ifndef HPACK_CRAFT_H
#define HPACK_CRAFT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HPACK_INDEXED     0x80 /* 1xxxxxxx, 7-bit index */
#define HPACK_INCREMENTAL 0x40 /* 01xxxxxx, 6-bit name index, 0 = new name */
#define HPACK_LITERAL     0x00 /* 0000xxxx without indexing, 4-bit name index */
#define HPACK_TABLE_SIZE  0x20 /* 001xxxxx dynamic table size update, 5-bit */

static inline size_t hpack_int(uint8_t *out, uint32_t v, int prefix, uint8_t first)
{
    uint32_t max = (1u << prefix) - 1;
    size_t n = 0;
    if (v < max) {
        out[n++] = (uint8_t)(first | v);
        return n;
    }
    out[n++] = (uint8_t)(first | max);
    v -= max;
    while (v >= 128) {
        out[n++] = (uint8_t)((v & 0x7f) | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static inline size_t hpack_raw(uint8_t *out, const void *s, size_t len)
{
    size_t n = hpack_int(out, (uint32_t)len, 7, 0);
    memcpy(out + n, s, len);
    return n + len;
}

/* d newlines, Huffman-coded: 30 bits each, padded with 1 bits. */
static inline size_t hpack_huff_newlines(uint8_t *out, size_t d)
{
    size_t enc = (30 * d + 7) / 8;
    size_t n = hpack_int(out, (uint32_t)enc, 7, 0x80);
    uint64_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < d; i++) {
        acc = (acc << 30) | 0x3ffffffcu;
        bits += 30;
        while (bits >= 8) {
            out[n++] = (uint8_t)(acc >> (bits - 8));
            bits -= 8;
        }
        acc &= (1ull << bits) - 1;
    }
    if (bits > 0)
        out[n++] = (uint8_t)((acc << (8 - bits)) | ((1u << (8 - bits)) - 1));
    return n;
}

/* A literal with incremental indexing and a new one-character name: an entry of 33 + value. */
static inline size_t hpack_add_entry_raw(uint8_t *out, char name, const char *value, size_t len)
{
    size_t n = 0;
    out[n++] = HPACK_INCREMENTAL;
    n += hpack_raw(out + n, &name, 1);
    return n + hpack_raw(out + n, value, len);
}

static inline size_t hpack_add_entry_huff(uint8_t *out, char name, size_t newlines)
{
    size_t n = 0;
    out[n++] = HPACK_INCREMENTAL;
    n += hpack_raw(out + n, &name, 1);
    return n + hpack_huff_newlines(out + n, newlines);
}

#endif
