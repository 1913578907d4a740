/*
 * TCP options (RFC 9293 section 3.1, RFC 7323 timestamps and window scale, RFC 2018 SACK):
 * parsing what a segment carries, writing what xlb sends itself, and translating a spliced
 * segment's timestamps and SACK edges in place. Pure and bounded: the options area is at most
 * 40 bytes, so every function here does at most a few dozen byte operations.
 */
#ifndef XLB_TCP_OPTIONS_H
#define XLB_TCP_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#define XLB_TCP_SACK_MAX     4  /* 2 + 8 * 4 = 34 bytes: a fifth block cannot fit in 40 */
#define XLB_TCP_OPTS_MAX_LEN 40 /* data offset 15 words, minus the 20-byte header */
#define XLB_TCP_WSCALE_MAX   14 /* RFC 7323 section 2.3 */

/* Option kinds and lengths xlb understands. */
enum {
    XLB_TCPOPT_EOL = 0,
    XLB_TCPOPT_NOP = 1,
    XLB_TCPOPT_MSS = 2,
    XLB_TCPOPT_WSCALE = 3,
    XLB_TCPOPT_SACK_PERM = 4,
    XLB_TCPOPT_SACK = 5,
    XLB_TCPOPT_TS = 8,
};
enum {
    XLB_TCPOLEN_MSS = 4,
    XLB_TCPOLEN_WSCALE = 3,
    XLB_TCPOLEN_SACK_PERM = 2,
    XLB_TCPOLEN_TS = 10,
    XLB_TCPOLEN_SACK_BASE = 2,
    XLB_TCPOLEN_SACK_BLOCK = 8,
};

struct xlb_tcp_opts {
    uint16_t mss;   /* 0: no MSS option */
    uint8_t wscale; /* shift, when has_wscale (values > 14 are clamped to 14, RFC 7323) */
    bool has_wscale, sack_ok, has_ts;
    uint32_t tsval, tsecr; /* host order, when has_ts */
    uint8_t n_sack;        /* SACK blocks present */
    uint32_t sack_left[XLB_TCP_SACK_MAX], sack_right[XLB_TCP_SACK_MAX]; /* host order */
    /* Byte offset in the options area of the TS option's kind byte / the SACK option's kind
     * byte; -1 none. */
    int16_t ts_at, sack_at;
};

/*
 * Parse the options area (the bytes after the 20-byte header, len = data_off*4 - 20 <= 40).
 * Returns 0, or -EINVAL when malformed: an option whose length byte is missing, < 2 or runs
 * past the area; MSS/WS/SACK-permitted/TS with the wrong length; SACK length not 2+8n (n = 0,
 * length 2, is accepted as an empty SACK); len > 40; and, beyond RFC 9293's list, a second
 * MSS/WS/SACK-permitted/TS/SACK option -- shift rewrites one TS and one SACK option, so a
 * duplicate would slip through a splice untranslated. EOL ends parsing; unknown kinds are
 * skipped by their length. On -EINVAL *out is cleared (ts_at = sack_at = -1), so a careless
 * shift after a failed parse rewrites nothing.
 */
int xlb_tcp_options_parse(const uint8_t *opts, uint32_t len, struct xlb_tcp_opts *out);

/*
 * Options for a SYN or SYN-ACK from o (MSS, SACK-permitted, timestamps, window scale, padded
 * with NOPs to a multiple of 4, the usual Linux layout). Returns bytes written (<= 20, so
 * always <= 40). mss == 0 leaves MSS out; wscale above 14 is written as 14.
 */
uint32_t xlb_tcp_options_write_syn(uint8_t out[40], const struct xlb_tcp_opts *o);

/* NOP NOP TS(tsval, tsecr): 12 bytes, for data and ACK segments xlb makes itself. */
uint32_t xlb_tcp_options_write_ts(uint8_t out[12], uint32_t tsval, uint32_t tsecr);

/*
 * Rewrite in place what parse found: TSval += tsval_add, TSecr += tsecr_add, every SACK edge
 * += sack_add (all mod 2^32). Used to translate a spliced segment's options. opts must be the
 * area parsed, unchanged since in length and layout; the values are read from the bytes. The
 * caller fixes the TCP checksum.
 */
void xlb_tcp_options_shift(uint8_t *opts, const struct xlb_tcp_opts *parsed, uint32_t tsval_add,
                           uint32_t tsecr_add, uint32_t sack_add);

#endif
