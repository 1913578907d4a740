/* SYN cookies (layout and reasoning in xlb_syn_cookie.h). */
#include <string.h>
#include <sys/socket.h>

#include "xlb_siphash.h"
#include "xlb_syn_cookie.h"

/* ISN fields. */
#define ISN_MSS_MASK   0x7u
#define ISN_CTR_BIT    (1u << 3)
#define ISN_GEN_BIT    (1u << 4)
#define ISN_TS_BIT     (1u << 5)
#define ISN_FIELD_BITS 6u
#define ISN_FIELD_MASK ((1u << ISN_FIELD_BITS) - 1)
#define HASH_MASK      ((1u << XLB_SYN_COOKIE_HASH_BITS) - 1)

/* TSval/TSecr low byte. */
#define TS_WS_MASK     0xfu
#define TS_WS_NONE     0xfu
#define TS_SACK_BIT    (1u << 4)
#define TS_OPT_MASK    0x1fu
#define TS_CHECK_SHIFT 5u
#define TS_CHECK_MASK  0x7u
#define TS_LOW_BITS    8u

/* Common MSS values: IPv4 minimum, IPv6 minimum (1280 - 60), tunnels and PPPoE, IPv6 and IPv4
 * on Ethernet, FDDI-sized, and jumbo frames of 9000 bytes for IPv6 and IPv4. */
static const uint16_t mss_table[XLB_SYN_COOKIE_N_MSS] = {536,  1220, 1360, 1440,
                                                         1460, 4312, 8940, 8960};

static uint32_t mss_index(uint16_t mss)
{
    uint32_t i = XLB_SYN_COOKIE_N_MSS - 1;
    while (i > 0 && mss_table[i] > mss)
        i--;
    return i;
}

uint16_t xlb_syn_cookie_mss_round(uint16_t client_mss)
{
    return mss_table[mss_index(client_mss)];
}

void xlb_syn_cookie_keys_init(struct xlb_syn_cookie_keys *k, const uint8_t seed[16])
{
    xlb_siphash_key(k->key[0], seed);
    k->key[1][0] = k->key[0][0];
    k->key[1][1] = k->key[0][1];
    k->generation = 0;
}

void xlb_syn_cookie_rotate(struct xlb_syn_cookie_keys *k, const uint8_t fresh[16])
{
    xlb_siphash_key(k->key[(k->generation + 1) & 1], fresh);
    k->generation++;
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The keyed hash over everything a cookie vouches for, as one fixed 48-byte message. */
static uint64_t cookie_hash(const struct xlb_syn_cookie_keys *k,
                            const struct xlb_syn_cookie_tuple *t, uint32_t client_isn,
                            uint64_t counter, uint32_t fields)
{
    uint8_t m[48] = {0};
    size_t alen = t->family == AF_INET ? 4 : 16;
    memcpy(m, t->client, alen);
    memcpy(m + 16, t->vip, alen);
    memcpy(m + 32, &t->client_port, 2);
    memcpy(m + 34, &t->vip_port, 2);
    put_le(m + 36, client_isn, 4);
    /* The counter keeps 48 bits: enough for 570 000 years of periods. */
    put_le(m + 40, counter << 16 | (uint64_t)t->family << 8 | fields, 8);
    uint32_t gen = (fields & ISN_GEN_BIT) ? 1 : 0;
    return xlb_siphash24(k->key[gen], m, sizeof(m));
}

/* Three hash bits for the TS option bits, from bits of h the ISN does not use; each option
 * value picks its own window, so altered option bits miss 7 times in 8. */
static uint32_t ts_check(uint64_t h, uint32_t ts_opts)
{
    return (uint32_t)(h >> (XLB_SYN_COOKIE_HASH_BITS + ts_opts)) & TS_CHECK_MASK;
}

static uint32_t ts_encode(const struct xlb_syn_cookie_opts *o, uint64_t h, uint64_t now_ms)
{
    uint32_t opts = o->has_wscale ? o->wscale : TS_WS_NONE;
    if (o->sack_ok)
        opts |= TS_SACK_BIT;
    uint32_t low = opts | ts_check(h, opts) << TS_CHECK_SHIFT;
    uint32_t now = (uint32_t)now_ms;
    uint32_t ts = (now & ~((1u << TS_LOW_BITS) - 1)) | low;
    /* Never ahead of the clock, in TCP's mod 2^32 order. */
    if ((int32_t)(ts - now) > 0)
        ts -= 1u << TS_LOW_BITS;
    return ts;
}

/* Options of the SYN as the cookie carries them: the table MSS, wscale clamped, and window
 * scale and SACK only with timestamps. */
static void carried_opts(const struct xlb_syn_cookie_opts *in, uint32_t mss_idx,
                         struct xlb_syn_cookie_opts *out)
{
    memset(out, 0, sizeof(*out));
    out->mss = mss_table[mss_idx];
    if (!in->has_ts)
        return;
    out->has_ts = true;
    out->sack_ok = in->sack_ok;
    out->has_wscale = in->has_wscale;
    if (in->has_wscale)
        out->wscale = in->wscale > 14 ? 14 : in->wscale;
}

uint32_t xlb_syn_cookie_make(const struct xlb_syn_cookie_keys *k,
                             const struct xlb_syn_cookie_tuple *t, uint32_t client_isn,
                             const struct xlb_syn_cookie_opts *in, uint64_t now_ms,
                             uint32_t *tsval_out, struct xlb_syn_cookie_opts *out)
{
    uint64_t counter = now_ms / XLB_SYN_COOKIE_PERIOD_MS;
    uint32_t mss_idx = mss_index(in->mss);
    uint32_t fields = mss_idx;
    fields |= (counter & 1) ? ISN_CTR_BIT : 0;
    fields |= (k->generation & 1) ? ISN_GEN_BIT : 0;
    fields |= in->has_ts ? ISN_TS_BIT : 0;
    uint64_t h = cookie_hash(k, t, client_isn, counter, fields);

    carried_opts(in, mss_idx, out);
    *tsval_out = in->has_ts ? ts_encode(out, h, now_ms) : 0;
    return (uint32_t)(h & HASH_MASK) << ISN_FIELD_BITS | fields;
}

/* Decode the option bits of a TSecr that echoes our TSval; -1 when they do not check out. */
static int ts_decode(uint64_t h, uint32_t tsecr, uint64_t now_ms, struct xlb_syn_cookie_opts *out)
{
    uint32_t opts = tsecr & TS_OPT_MASK;
    if (((tsecr >> TS_CHECK_SHIFT) & TS_CHECK_MASK) != ts_check(h, opts))
        return -1;
    if ((int32_t)(tsecr - (uint32_t)now_ms) > 0)
        return -1; /* we never sent a TSval from the future */
    out->has_ts = true;
    out->sack_ok = (opts & TS_SACK_BIT) != 0;
    out->has_wscale = (opts & TS_WS_MASK) != TS_WS_NONE;
    out->wscale = out->has_wscale ? (uint8_t)(opts & TS_WS_MASK) : 0;
    return 0;
}

int xlb_syn_cookie_check(const struct xlb_syn_cookie_keys *k, const struct xlb_syn_cookie_tuple *t,
                         uint32_t seq, uint32_t ack, bool has_ts, uint32_t tsecr, uint64_t now_ms,
                         struct xlb_syn_cookie_opts *out)
{
    if (t->family != AF_INET && t->family != AF_INET6)
        return -1;
    uint32_t isn = ack - 1;
    uint32_t fields = isn & ISN_FIELD_MASK;
    uint64_t now_counter = now_ms / XLB_SYN_COOKIE_PERIOD_MS;
    /* The latest counter with the cookie's parity: now's, or the previous period's. */
    uint64_t back = (now_counter ^ (fields & ISN_CTR_BIT ? 1 : 0)) & 1;
    if (back > now_counter)
        return -1;
    uint64_t h = cookie_hash(k, t, seq - 1, now_counter - back, fields);
    if ((isn >> ISN_FIELD_BITS) != (uint32_t)(h & HASH_MASK))
        return -1;

    memset(out, 0, sizeof(*out));
    out->mss = mss_table[fields & ISN_MSS_MASK];
    if (has_ts && (fields & ISN_TS_BIT))
        return ts_decode(h, tsecr, now_ms, out);
    return 0;
}

int xlb_syn_cookie_check_flight(const struct xlb_syn_cookie_keys *k,
                                const struct xlb_syn_cookie_tuple *t, uint32_t seq, uint32_t len,
                                uint32_t ack, bool has_ts, uint32_t tsecr, uint64_t now_ms,
                                uint32_t *client_isn, struct xlb_syn_cookie_opts *out)
{
    uint32_t tries = len >= XLB_SYN_COOKIE_FLIGHT_MIN_LEN ? XLB_SYN_COOKIE_FLIGHT_SEGS : 1;
    for (uint32_t i = 0; i < tries; i++) {
        uint32_t first = seq - i * len; /* the flight's first byte, were i segments lost */
        if (xlb_syn_cookie_check(k, t, first, ack, has_ts, tsecr, now_ms, out) == 0) {
            *client_isn = first - 1;
            return 0;
        }
    }
    return -1;
}
