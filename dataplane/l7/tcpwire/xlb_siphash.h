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

#endif
