/*
 * Fuzz target for SYN cookies, with fixed keys. Two kinds of input, by the first byte's low
 * bit:
 *   0: an arbitrary ACK (tuple, seq, ack, timestamp, clock) for check(), which must not crash
 *      and must essentially never accept (the count of accepts aborts the run when it goes
 *      past a handful: at 2^-26 per try, even the fuzzer's millions of runs expect none);
 *   1: a SYN (tuple, ISN, options, clock) whose cookie must check back to what make reported,
 *      and whose ACK altered only in the cookie's hash bits must always fail.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "xlb_syn_cookie.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

/* The input's fields, read at fixed offsets (little-endian) from its first 72 bytes, zero
 * padded: mode 0, family 1, client 2-17, vip 18-33, ports 34-37, seq 38, ack 42, tsecr 46,
 * flags 50, wscale 51, mss 52-53, now_ms 54-61, delta 62-65. */
struct input {
    uint8_t mode, family;
    uint8_t client[16], vip[16];
    uint16_t client_port, vip_port;
    uint32_t seq, ack, tsecr;
    uint8_t flags, wscale;
    uint16_t mss;
    uint64_t now_ms;
    uint32_t delta;
};

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void read_input(const uint8_t *data, size_t size, struct input *in)
{
    uint8_t b[72] = {0};
    memcpy(b, data, size < sizeof(b) ? size : sizeof(b));
    in->mode = b[0];
    in->family = b[1];
    memcpy(in->client, b + 2, 16);
    memcpy(in->vip, b + 18, 16);
    memcpy(&in->client_port, b + 34, 2); /* network order: kept as the bytes are */
    memcpy(&in->vip_port, b + 36, 2);
    in->seq = (uint32_t)le(b + 38, 4);
    in->ack = (uint32_t)le(b + 42, 4);
    in->tsecr = (uint32_t)le(b + 46, 4);
    in->flags = b[50];
    in->wscale = b[51];
    in->mss = (uint16_t)le(b + 52, 2);
    in->now_ms = le(b + 54, 8);
    in->delta = (uint32_t)le(b + 62, 4);
}

static struct xlb_syn_cookie_keys keys;
static unsigned long accepts;

static void init_keys(void)
{
    static bool done;
    if (done)
        return;
    const uint8_t seed[16] = "fuzz seed one..", fresh[16] = "fuzz seed two..";
    xlb_syn_cookie_keys_init(&keys, seed);
    xlb_syn_cookie_rotate(&keys, fresh); /* two distinct live generations */
    done = true;
}

static void to_tuple(const struct input *in, struct xlb_syn_cookie_tuple *t)
{
    memset(t, 0, sizeof(*t));
    /* Mostly the two real families, sometimes a wrong one. */
    t->family = (in->family & 3) == 3 ? in->family : (in->family & 1) ? AF_INET6 : AF_INET;
    memcpy(t->client, in->client, sizeof(t->client));
    memcpy(t->vip, in->vip, sizeof(t->vip));
    t->client_port = in->client_port;
    t->vip_port = in->vip_port;
}

static void forged_ack(const struct input *in, const struct xlb_syn_cookie_tuple *t)
{
    struct xlb_syn_cookie_opts out;
    if (xlb_syn_cookie_check(&keys, t, in->seq, in->ack, in->flags & 1, in->tsecr, in->now_ms,
                             &out) != 0)
        return;
    CHECK(out.mss >= 536 && out.mss <= 8960);
    CHECK(!out.has_wscale || out.wscale <= 14);
    CHECK(++accepts < 4);
}

static void real_handshake(const struct input *in, const struct xlb_syn_cookie_tuple *t)
{
    struct xlb_syn_cookie_opts syn = {.mss = in->mss, .wscale = in->wscale};
    syn.has_ts = in->flags & 1;
    syn.has_wscale = in->flags & 2;
    syn.sack_ok = in->flags & 4;
    struct xlb_syn_cookie_opts made, out;
    uint32_t tsval;
    uint32_t isn = xlb_syn_cookie_make(&keys, t, in->seq, &syn, in->now_ms, &tsval, &made);
    CHECK(!syn.has_ts || (int32_t)(tsval - (uint32_t)in->now_ms) <= 0);
    if (t->family != AF_INET && t->family != AF_INET6)
        return;
    CHECK(xlb_syn_cookie_check(&keys, t, in->seq + 1, isn + 1, syn.has_ts, tsval, in->now_ms,
                               &out) == 0);
    CHECK(out.mss == made.mss && out.has_ts == made.has_ts && out.sack_ok == made.sack_ok);
    CHECK(out.has_wscale == made.has_wscale && out.wscale == made.wscale);
    /* Only the hash bits altered (bits 6-31): the same fields, so the same hash, so a miss. */
    uint32_t delta = in->delta << 6;
    if (delta)
        CHECK(xlb_syn_cookie_check(&keys, t, in->seq + 1, isn + 1 + delta, syn.has_ts, tsval,
                                   in->now_ms, &out) != 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_keys();
    struct input in;
    read_input(data, size, &in);
    struct xlb_syn_cookie_tuple t;
    to_tuple(&in, &t);
    if (in.mode & 1)
        real_handshake(&in, &t);
    else
        forged_ack(&in, &t);
    return 0;
}
