/*
 * TCP sequence-number arithmetic (RFC 9293 section 3.4): comparisons mod 2^32, so that a
 * connection whose numbers wrap past 2^32 orders them as it sent them. Valid while the two
 * numbers compared are less than 2^31 apart, which the windows (at most 2^30, RFC 7323)
 * guarantee.
 */
#ifndef XLB_TCP_SEQ_H
#define XLB_TCP_SEQ_H

#include <stdbool.h>
#include <stdint.h>

static inline bool xlb_seq_lt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}
static inline bool xlb_seq_le(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) <= 0;
}
static inline bool xlb_seq_gt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}
static inline bool xlb_seq_ge(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) >= 0;
}
static inline uint32_t xlb_seq_max(uint32_t a, uint32_t b)
{
    return xlb_seq_gt(a, b) ? a : b;
}
static inline uint32_t xlb_seq_min(uint32_t a, uint32_t b)
{
    return xlb_seq_lt(a, b) ? a : b;
}
/* lo <= x < hi */
static inline bool xlb_seq_in(uint32_t x, uint32_t lo, uint32_t hi)
{
    return xlb_seq_le(lo, x) && xlb_seq_lt(x, hi);
}

#endif
