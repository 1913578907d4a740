/* TCP option parsing, writing and in-place translation (see xlb_tcp_options.h). */
#include <errno.h>
#include <string.h>

#include "xlb_tcp_options.h"

/* Options are byte-aligned inside the header, so every multi-byte field goes through these. */
static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void clear(struct xlb_tcp_opts *out)
{
    memset(out, 0, sizeof(*out));
    out->ts_at = -1;
    out->sack_at = -1;
}

static int parse_sack(const uint8_t *opt, uint8_t olen, int16_t at, struct xlb_tcp_opts *out)
{
    if ((olen - XLB_TCPOLEN_SACK_BASE) % XLB_TCPOLEN_SACK_BLOCK != 0)
        return -EINVAL;
    /* The area's 40-byte cap bounds n to XLB_TCP_SACK_MAX. */
    out->n_sack = (uint8_t)((olen - XLB_TCPOLEN_SACK_BASE) / XLB_TCPOLEN_SACK_BLOCK);
    for (uint8_t i = 0; i < out->n_sack; i++) {
        const uint8_t *block = opt + XLB_TCPOLEN_SACK_BASE + XLB_TCPOLEN_SACK_BLOCK * i;
        out->sack_left[i] = get32(block);
        out->sack_right[i] = get32(block + 4);
    }
    out->sack_at = at;
    return 0;
}

/* The exact length each fixed-size option must have; 0 for kinds without one. */
static uint8_t fixed_len(uint8_t kind)
{
    switch (kind) {
    case XLB_TCPOPT_MSS:
        return XLB_TCPOLEN_MSS;
    case XLB_TCPOPT_WSCALE:
        return XLB_TCPOLEN_WSCALE;
    case XLB_TCPOPT_SACK_PERM:
        return XLB_TCPOLEN_SACK_PERM;
    case XLB_TCPOPT_TS:
        return XLB_TCPOLEN_TS;
    default:
        return 0;
    }
}

/* One option of a known kind, whose length is already known to fit in the area. */
static int parse_one(const uint8_t *opt, uint8_t olen, int16_t at, struct xlb_tcp_opts *out)
{
    uint8_t want = fixed_len(opt[0]);
    if (want && olen != want)
        return -EINVAL;
    switch (opt[0]) {
    case XLB_TCPOPT_MSS:
        out->mss = get16(opt + 2);
        break;
    case XLB_TCPOPT_WSCALE:
        out->has_wscale = true;
        out->wscale = opt[2] > XLB_TCP_WSCALE_MAX ? XLB_TCP_WSCALE_MAX : opt[2];
        break;
    case XLB_TCPOPT_SACK_PERM:
        out->sack_ok = true;
        break;
    case XLB_TCPOPT_TS:
        out->has_ts = true;
        out->tsval = get32(opt + 2);
        out->tsecr = get32(opt + 6);
        out->ts_at = at;
        break;
    case XLB_TCPOPT_SACK:
        return parse_sack(opt, olen, at, out);
    }
    return 0;
}

/* Kinds that may appear once; a bit per kind (all of them are below 32). */
static int note_once(uint8_t kind, uint32_t *seen)
{
    if (kind != XLB_TCPOPT_SACK && !fixed_len(kind))
        return 0;
    if (*seen & (1u << kind))
        return -EINVAL;
    *seen |= 1u << kind;
    return 0;
}

static int parse_area(const uint8_t *opts, uint32_t len, struct xlb_tcp_opts *out)
{
    uint32_t seen = 0;
    uint32_t i = 0;
    while (i < len && opts[i] != XLB_TCPOPT_EOL) {
        if (opts[i] == XLB_TCPOPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= len)
            return -EINVAL; /* the length byte is missing */
        uint8_t olen = opts[i + 1];
        if (olen < 2 || olen > len - i)
            return -EINVAL;
        if (note_once(opts[i], &seen) != 0 || parse_one(opts + i, olen, (int16_t)i, out) != 0)
            return -EINVAL;
        i += olen;
    }
    return 0;
}

int xlb_tcp_options_parse(const uint8_t *opts, uint32_t len, struct xlb_tcp_opts *out)
{
    clear(out);
    if (len > XLB_TCP_OPTS_MAX_LEN || parse_area(opts, len, out) != 0) {
        clear(out);
        return -EINVAL;
    }
    return 0;
}

/* The TS option's kind, length and values: 10 bytes. */
static uint32_t write_ts_body(uint8_t *p, uint32_t tsval, uint32_t tsecr)
{
    p[0] = XLB_TCPOPT_TS;
    p[1] = XLB_TCPOLEN_TS;
    put32(p + 2, tsval);
    put32(p + 6, tsecr);
    return XLB_TCPOLEN_TS;
}

/*
 * Linux's layout: MSS; then SACK-permitted in the 2 bytes in front of TS that would otherwise
 * be NOP padding (or NOP NOP SACK-permitted alone); then NOP WS. Each piece is a multiple of
 * 4 bytes, so the timestamp values stay 4-byte aligned relative to the header.
 */
uint32_t xlb_tcp_options_write_syn(uint8_t out[40], const struct xlb_tcp_opts *o)
{
    uint32_t n = 0;
    if (o->mss) {
        out[n++] = XLB_TCPOPT_MSS;
        out[n++] = XLB_TCPOLEN_MSS;
        put16(out + n, o->mss);
        n += 2;
    }
    if (o->has_ts) {
        out[n++] = o->sack_ok ? XLB_TCPOPT_SACK_PERM : XLB_TCPOPT_NOP;
        out[n++] = o->sack_ok ? XLB_TCPOLEN_SACK_PERM : XLB_TCPOPT_NOP;
        n += write_ts_body(out + n, o->tsval, o->tsecr);
    } else if (o->sack_ok) {
        out[n++] = XLB_TCPOPT_NOP;
        out[n++] = XLB_TCPOPT_NOP;
        out[n++] = XLB_TCPOPT_SACK_PERM;
        out[n++] = XLB_TCPOLEN_SACK_PERM;
    }
    if (o->has_wscale) {
        out[n++] = XLB_TCPOPT_NOP;
        out[n++] = XLB_TCPOPT_WSCALE;
        out[n++] = XLB_TCPOLEN_WSCALE;
        out[n++] = o->wscale > XLB_TCP_WSCALE_MAX ? XLB_TCP_WSCALE_MAX : o->wscale;
    }
    return n;
}

uint32_t xlb_tcp_options_write_ts(uint8_t out[12], uint32_t tsval, uint32_t tsecr)
{
    out[0] = XLB_TCPOPT_NOP;
    out[1] = XLB_TCPOPT_NOP;
    return 2 + write_ts_body(out + 2, tsval, tsecr);
}

static void add32(uint8_t *p, uint32_t add)
{
    put32(p, get32(p) + add);
}

void xlb_tcp_options_shift(uint8_t *opts, const struct xlb_tcp_opts *parsed, uint32_t tsval_add,
                           uint32_t tsecr_add, uint32_t sack_add)
{
    if (parsed->ts_at >= 0) {
        add32(opts + parsed->ts_at + 2, tsval_add);
        add32(opts + parsed->ts_at + 6, tsecr_add);
    }
    if (parsed->sack_at < 0)
        return;
    uint8_t *edge = opts + parsed->sack_at + XLB_TCPOLEN_SACK_BASE;
    for (uint32_t i = 0; i < 2u * parsed->n_sack && i < 2u * XLB_TCP_SACK_MAX; i++)
        add32(edge + 4 * i, sack_add);
}
