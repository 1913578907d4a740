/*
 * Fuzz target for TCP option parsing: the input's first (up to) 40 bytes are an options area,
 * the next 12 the three amounts to shift by. Whenever parse accepts, what it reports must lie
 * inside the area, a shift must change only the timestamp values and SACK edges (by exactly
 * the amounts), and what write_syn and write_ts make of it must parse back to the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_tcp_options.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void check_bounds(const struct xlb_tcp_opts *o, uint32_t len, const uint8_t *area)
{
    CHECK(o->has_ts == (o->ts_at >= 0));
    if (o->ts_at >= 0) {
        CHECK((uint32_t)o->ts_at + XLB_TCPOLEN_TS <= len);
        CHECK(area[o->ts_at] == XLB_TCPOPT_TS && area[o->ts_at + 1] == XLB_TCPOLEN_TS);
    }
    CHECK(o->n_sack <= XLB_TCP_SACK_MAX);
    CHECK(o->sack_at >= 0 || o->n_sack == 0);
    if (o->sack_at >= 0)
        CHECK((uint32_t)o->sack_at + 2 + 8u * o->n_sack <= len && area[o->sack_at] == 5);
    CHECK(!o->has_wscale || o->wscale <= XLB_TCP_WSCALE_MAX);
}

/* Shift a copy (in a buffer of exactly len bytes, so ASan sees any overrun), then compare
 * byte by byte with what the shift may touch. */
static void check_shift(const uint8_t *area, uint32_t len, const struct xlb_tcp_opts *o,
                        const uint8_t *adds)
{
    uint32_t tsval_add = get32(adds), tsecr_add = get32(adds + 4), sack_add = get32(adds + 8);
    uint8_t *copy = malloc(len ? len : 1);
    CHECK(copy != NULL);
    memcpy(copy, area, len);
    xlb_tcp_options_shift(copy, o, tsval_add, tsecr_add, sack_add);

    struct xlb_tcp_opts s;
    CHECK(xlb_tcp_options_parse(copy, len, &s) == 0);
    CHECK(s.ts_at == o->ts_at && s.sack_at == o->sack_at && s.n_sack == o->n_sack);
    CHECK(s.mss == o->mss && s.wscale == o->wscale && s.sack_ok == o->sack_ok);
    if (o->has_ts)
        CHECK(s.tsval == o->tsval + tsval_add && s.tsecr == o->tsecr + tsecr_add);
    for (uint8_t i = 0; i < o->n_sack; i++)
        CHECK(s.sack_left[i] == o->sack_left[i] + sack_add &&
              s.sack_right[i] == o->sack_right[i] + sack_add);
    for (uint32_t i = 0; i < len; i++) {
        bool in_ts = o->ts_at >= 0 && i >= (uint32_t)o->ts_at + 2 && i < (uint32_t)o->ts_at + 10;
        bool in_sack = o->sack_at >= 0 && i >= (uint32_t)o->sack_at + 2 &&
                       i < (uint32_t)o->sack_at + 2 + 8u * o->n_sack;
        CHECK(in_ts || in_sack || copy[i] == area[i]);
    }
    free(copy);
}

static void check_writers(const struct xlb_tcp_opts *o)
{
    uint8_t out[40];
    uint32_t n = xlb_tcp_options_write_syn(out, o);
    CHECK(n <= 40 && n % 4 == 0);
    struct xlb_tcp_opts w;
    CHECK(xlb_tcp_options_parse(out, n, &w) == 0);
    CHECK(w.mss == o->mss && w.sack_ok == o->sack_ok && w.has_ts == o->has_ts);
    CHECK(w.has_wscale == o->has_wscale && (!o->has_wscale || w.wscale == o->wscale));
    CHECK(!o->has_ts || (w.tsval == o->tsval && w.tsecr == o->tsecr));
    check_bounds(&w, n, out);

    CHECK(xlb_tcp_options_write_ts(out, o->tsval, o->tsecr) == 12);
    CHECK(xlb_tcp_options_parse(out, 12, &w) == 0 && w.ts_at == 2 && w.tsval == o->tsval);
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t len = size < XLB_TCP_OPTS_MAX_LEN ? (uint32_t)size : XLB_TCP_OPTS_MAX_LEN;
    uint8_t adds[12] = {0};
    if (size > len)
        memcpy(adds, data + len, size - len < sizeof(adds) ? size - len : sizeof(adds));

    struct xlb_tcp_opts o;
    if (xlb_tcp_options_parse(data, len, &o) != 0) {
        CHECK(o.ts_at == -1 && o.sack_at == -1);
        return 0;
    }
    check_bounds(&o, len, data);
    check_shift(data, len, &o, adds);
    check_writers(&o);
    return 0;
}
