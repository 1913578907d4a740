/* SYN cookies: round trips, forgeries, age, key rotation, timestamps and the MSS table. */
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "tcpwire_test.h"
#include "xlb_syn_cookie.h"

#define P XLB_SYN_COOKIE_PERIOD_MS

static const uint8_t seed_a[16] = "xlb test seed A";
static const uint8_t seed_b[16] = "xlb test seed B";
static const uint8_t seed_c[16] = "xlb test seed C";

static void random_tuple(uint64_t *rng, struct xlb_syn_cookie_tuple *t)
{
    memset(t, 0, sizeof(*t));
    t->family = (test_rand(rng) & 1) ? AF_INET6 : AF_INET;
    size_t alen = t->family == AF_INET ? 4 : 16;
    for (size_t i = 0; i < alen; i++) {
        t->client[i] = (uint8_t)test_rand(rng);
        t->vip[i] = (uint8_t)test_rand(rng);
    }
    t->client_port = (uint16_t)test_rand(rng);
    t->vip_port = (uint16_t)test_rand(rng);
}

static void random_opts(uint64_t *rng, struct xlb_syn_cookie_opts *o)
{
    uint64_t r = test_rand(rng);
    memset(o, 0, sizeof(*o));
    o->mss = (uint16_t)(r >> 16);
    o->wscale = (uint8_t)((r >> 32) % 20);
    o->has_wscale = r & 1;
    o->sack_ok = r & 2;
    o->has_ts = r & 4;
}

static void assert_opts_equal(const struct xlb_syn_cookie_opts *a,
                              const struct xlb_syn_cookie_opts *b)
{
    assert_int_equal(a->mss, b->mss);
    assert_int_equal(a->has_ts, b->has_ts);
    assert_int_equal(a->sack_ok, b->sack_ok);
    assert_int_equal(a->has_wscale, b->has_wscale);
    if (a->has_wscale)
        assert_int_equal(a->wscale, b->wscale);
}

/* A cookie as the engine would make and the client would answer it. */
struct handshake {
    struct xlb_syn_cookie_tuple t;
    struct xlb_syn_cookie_opts in, made;
    uint32_t client_isn, isn, tsval;
    uint64_t now;
};

static void make(const struct xlb_syn_cookie_keys *k, struct handshake *h)
{
    h->isn = xlb_syn_cookie_make(k, &h->t, h->client_isn, &h->in, h->now, &h->tsval, &h->made);
}

static int check_at(const struct xlb_syn_cookie_keys *k, const struct handshake *h, uint64_t now,
                    struct xlb_syn_cookie_opts *out)
{
    return xlb_syn_cookie_check(k, &h->t, h->client_isn + 1, h->isn + 1, h->in.has_ts, h->tsval,
                                now, out);
}

static void random_handshake(uint64_t *rng, const struct xlb_syn_cookie_keys *k,
                             struct handshake *h)
{
    random_tuple(rng, &h->t);
    random_opts(rng, &h->in);
    h->client_isn = (uint32_t)test_rand(rng);
    h->now = test_rand(rng) >> 20; /* up to 2^44 ms: 550 years */
    make(k, h);
}

/* What make must report: the table MSS; wscale (clamped) and SACK only with timestamps. */
static void assert_made_as_documented(const struct handshake *h)
{
    assert_int_equal(h->made.mss, xlb_syn_cookie_mss_round(h->in.mss));
    assert_int_equal(h->made.has_ts, h->in.has_ts);
    assert_int_equal(h->made.sack_ok, h->in.has_ts && h->in.sack_ok);
    assert_int_equal(h->made.has_wscale, h->in.has_ts && h->in.has_wscale);
    if (h->made.has_wscale)
        assert_int_equal(h->made.wscale, h->in.wscale > 14 ? 14 : h->in.wscale);
    if (!h->in.has_ts)
        assert_int_equal(h->tsval, 0);
}

static void test_round_trip_random(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    uint64_t rng = 1;
    unsigned seen[2][8] = {{0}}; /* per family, per (ts, ws, sack) combination */
    for (int i = 0; i < 50000; i++) {
        struct handshake h;
        random_handshake(&rng, &k, &h);
        assert_made_as_documented(&h);
        struct xlb_syn_cookie_opts out;
        uint64_t delay = test_rand(&rng) % (P + 1);
        assert_int_equal(check_at(&k, &h, h.now + delay, &out), 0);
        assert_opts_equal(&out, &h.made);
        seen[h.t.family == AF_INET6][h.in.has_ts | h.in.has_wscale << 1 | h.in.sack_ok << 2]++;
    }
    for (int f = 0; f < 2; f++)
        for (int c = 0; c < 8; c++)
            assert_true(seen[f][c] > 1000);
}

/* Linux behaviour: options come only from a TSecr that is present. */
static void test_ack_without_ts_keeps_only_mss(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    struct handshake h = {
        .t = {.family = AF_INET, .client = {198, 18, 0, 1}},
        .in = {.mss = 1460, .wscale = 7, .has_wscale = true, .sack_ok = true, .has_ts = true},
        .client_isn = 12345,
        .now = 10 * P + 777};
    make(&k, &h);
    struct xlb_syn_cookie_opts out;
    assert_int_equal(
        xlb_syn_cookie_check(&k, &h.t, h.client_isn + 1, h.isn + 1, false, 0, h.now, &out), 0);
    assert_int_equal(out.mss, 1460);
    assert_false(out.has_ts);
    assert_false(out.has_wscale);
    assert_false(out.sack_ok);

    /* A SYN-ACK without TS, answered with one: timestamps were not negotiated. */
    h.in.has_ts = false;
    make(&k, &h);
    assert_int_equal(
        xlb_syn_cookie_check(&k, &h.t, h.client_isn + 1, h.isn + 1, true, 0xffffff0f, h.now, &out),
        0);
    assert_false(out.has_ts);
    assert_false(out.has_wscale);
    assert_int_equal(out.mss, 1460);
}

/* Flip each bit of the tuple, seq and ack in turn: every flip is rejected. */
static void test_flipped_bits_rejected(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    uint64_t rng = 2;
    struct xlb_syn_cookie_opts out;
    for (int i = 0; i < 200; i++) {
        struct handshake h;
        random_handshake(&rng, &k, &h);
        struct handshake f = h;
        size_t alen = h.t.family == AF_INET ? 4 : 16;
        for (size_t b = 0; b < alen * 8; b++) {
            f.t = h.t;
            f.t.client[b / 8] ^= (uint8_t)(1u << (b % 8));
            assert_int_equal(check_at(&k, &f, h.now, &out), -1);
            f.t = h.t;
            f.t.vip[b / 8] ^= (uint8_t)(1u << (b % 8));
            assert_int_equal(check_at(&k, &f, h.now, &out), -1);
        }
        f.t = h.t;
        for (int b = 0; b < 16; b++) {
            f.t.client_port = h.t.client_port ^ (uint16_t)(1u << b);
            assert_int_equal(check_at(&k, &f, h.now, &out), -1);
        }
        f.t = h.t;
        for (int b = 0; b < 16; b++) {
            f.t.vip_port = h.t.vip_port ^ (uint16_t)(1u << b);
            assert_int_equal(check_at(&k, &f, h.now, &out), -1);
        }
        f.t = h.t;
        f.t.family = h.t.family == AF_INET ? AF_INET6 : AF_INET;
        assert_int_equal(check_at(&k, &f, h.now, &out), -1);
        f.t = h.t;
        for (int b = 0; b < 32; b++) {
            f.client_isn = h.client_isn ^ (1u << b);
            f.isn = h.isn;
            assert_int_equal(check_at(&k, &f, h.now, &out), -1);
            f.client_isn = h.client_isn;
            f.isn = h.isn ^ (1u << b);
            assert_int_equal(check_at(&k, &f, h.now, &out), -1);
        }
    }
}

static void test_unknown_family_rejected(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    struct handshake h = {.t = {.family = 99}, .in = {.mss = 1460}, .now = 5 * P};
    make(&k, &h);
    struct xlb_syn_cookie_opts out;
    assert_int_equal(check_at(&k, &h, h.now, &out), -1);
}

/* 200k random ACKs, half against a live handshake's tuple and seq (only ack guessed), half
 * with everything random: at 2^-26 each, the expected count is 0.003, so with a fixed seed 0. */
static void test_random_forgeries_rejected(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    xlb_syn_cookie_rotate(&k, seed_b); /* both key slots distinct and live */
    uint64_t rng = 3;
    struct handshake h;
    random_handshake(&rng, &k, &h);
    unsigned accepted = 0;
    struct xlb_syn_cookie_opts out;
    for (int i = 0; i < 100000; i++) {
        uint32_t ack = (uint32_t)test_rand(&rng);
        bool ts = test_rand(&rng) & 1;
        accepted += xlb_syn_cookie_check(&k, &h.t, h.client_isn + 1, ack, ts,
                                         (uint32_t)test_rand(&rng), h.now, &out) == 0;
    }
    for (int i = 0; i < 100000; i++) {
        struct xlb_syn_cookie_tuple t;
        random_tuple(&rng, &t);
        uint64_t r = test_rand(&rng);
        accepted +=
            xlb_syn_cookie_check(&k, &t, (uint32_t)r, (uint32_t)(r >> 32), r & 1,
                                 (uint32_t)test_rand(&rng), test_rand(&rng) >> 20, &out) == 0;
    }
    assert_int_equal(accepted, 0);
}

/* All 26 hash bits vary: each of ISN bits 6-31 is set in half the cookies (5 sigma), so no
 * part of the ISN a forger must guess is constant. */
static void test_isn_hash_bits_vary(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    uint64_t rng = 6;
    unsigned set[32] = {0};
    const unsigned n = 20000;
    for (unsigned i = 0; i < n; i++) {
        struct handshake h;
        random_handshake(&rng, &k, &h);
        for (int b = 0; b < 32; b++)
            set[b] += (h.isn >> b) & 1;
    }
    for (int b = 32 - XLB_SYN_COOKIE_HASH_BITS; b < 32; b++)
        assert_true(set[b] > n / 2 - 354 && set[b] < n / 2 + 354); /* sd = 70.7 */
}

/* Accepted up to one period after making whatever the phase; rejected after two. */
static void test_age(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    const uint64_t phases[] = {0, 1, P / 2, P - 1};
    struct xlb_syn_cookie_opts out;
    for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
        for (int ts = 0; ts < 2; ts++) {
            struct handshake h = {.t = {.family = AF_INET6, .vip = {0x20, 0x01, 0, 2}},
                                  .in = {.mss = 1440, .has_ts = ts},
                                  .client_isn = 7,
                                  .now = 1000 * P + phases[i]};
            make(&k, &h);
            assert_int_equal(check_at(&k, &h, h.now, &out), 0);
            assert_int_equal(check_at(&k, &h, h.now + P, &out), 0);
            assert_int_equal(check_at(&k, &h, h.now + 2 * P, &out), -1);
            assert_int_equal(check_at(&k, &h, h.now + 2 * P + 1, &out), -1);
            assert_int_equal(check_at(&k, &h, h.now + 3 * P, &out), -1);
            assert_int_equal(check_at(&k, &h, h.now + 1000 * P, &out), -1);
            /* A clock that went back a period (parity points two periods back) rejects too. */
            assert_int_equal(check_at(&k, &h, h.now - P, &out), -1);
        }
    }
    /* The very first period: the parity may point before time zero. */
    struct handshake h = {.t = {.family = AF_INET}, .in = {.mss = 536}, .now = P + 5};
    make(&k, &h);
    assert_int_equal(check_at(&k, &h, 3, &out), -1);
}

static void test_rotation(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    struct xlb_syn_cookie_opts out;
    struct handshake g0 = {.t = {.family = AF_INET, .client = {198, 18, 1, 2}},
                           .in = {.mss = 1460, .has_ts = true, .sack_ok = true},
                           .client_isn = 99,
                           .now = 77 * P};
    make(&k, &g0);
    xlb_syn_cookie_rotate(&k, seed_b);
    assert_int_equal(check_at(&k, &g0, g0.now, &out), 0);
    struct handshake g1 = g0;
    make(&k, &g1);
    assert_int_not_equal(g1.isn, g0.isn);
    assert_int_equal(check_at(&k, &g1, g1.now, &out), 0);

    xlb_syn_cookie_rotate(&k, seed_c);
    assert_int_equal(check_at(&k, &g0, g0.now, &out), -1);
    assert_int_equal(check_at(&k, &g1, g1.now, &out), 0);
    xlb_syn_cookie_rotate(&k, seed_a);
    assert_int_equal(check_at(&k, &g1, g1.now, &out), -1);

    /* Another host's keys know nothing of ours. */
    struct xlb_syn_cookie_keys other;
    xlb_syn_cookie_keys_init(&other, seed_b);
    struct handshake h = g0;
    xlb_syn_cookie_keys_init(&k, seed_a);
    make(&k, &h);
    assert_int_equal(check_at(&other, &h, h.now, &out), -1);
}

/* TSval encodes, never runs ahead of the clock (mod 2^32), and stays within 511 ms of it. */
static void test_tsval_never_ahead(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    uint64_t rng = 4;
    for (int i = 0; i < 20000; i++) {
        struct handshake h;
        random_tuple(&rng, &h.t);
        random_opts(&rng, &h.in);
        h.in.has_ts = true;
        h.client_isn = (uint32_t)test_rand(&rng);
        switch (i % 4) {
        case 0:
            h.now = test_rand(&rng) % 600; /* around zero */
            break;
        case 1:
            h.now = 0xffffffffull - test_rand(&rng) % 600; /* around the 32-bit wrap */
            break;
        case 2:
            h.now = test_rand(&rng) % 0xffffffffull;
            break;
        default:
            h.now = test_rand(&rng) >> 16;
        }
        make(&k, &h);
        uint32_t now32 = (uint32_t)h.now;
        int32_t ahead = (int32_t)(h.tsval - now32);
        assert_true(ahead <= 0);
        assert_true(ahead > -512);
        if (h.now >= 512 && h.now <= 0xffffffffull)
            assert_true(h.tsval <= h.now);
        struct xlb_syn_cookie_opts out;
        assert_int_equal(check_at(&k, &h, h.now, &out), 0);
        assert_opts_equal(&out, &h.made);
    }
}

/* The TSecr's check bits: altering one always fails; altering an option bit fails about 7 in
 * 8; a TSecr from the future fails. */
static void test_tsecr_consistency(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    uint64_t rng = 5;
    unsigned tries = 0, rejected = 0;
    struct xlb_syn_cookie_opts out;
    for (int i = 0; i < 4000; i++) {
        struct handshake h;
        random_handshake(&rng, &k, &h);
        h.in.has_ts = true;
        make(&k, &h);
        uint32_t good = h.tsval;
        for (int b = 5; b < 8; b++) {
            h.tsval = good ^ (1u << b);
            assert_int_equal(check_at(&k, &h, h.now, &out), -1);
        }
        for (int b = 0; b < 5; b++) {
            h.tsval = good ^ (1u << b);
            tries++;
            rejected += check_at(&k, &h, h.now, &out) != 0;
        }
        h.tsval = good + 512; /* same low bits, so only its being later than now fails it */
        assert_int_equal(check_at(&k, &h, h.now, &out), -1);
    }
    /* 7/8 within 5 standard deviations (sd = sqrt(20000 * 7/8 * 1/8) = 47). */
    assert_true(rejected > tries * 7 / 8 - 235 && rejected < tries * 7 / 8 + 235);
}

static void test_mss_table(void **state)
{
    const uint16_t cases[][2] = {
        {0, 536},     {1, 536},     {500, 536},   {535, 536},    {536, 536},   {1219, 536},
        {1220, 1220}, {1359, 1220}, {1360, 1360}, {1400, 1360},  {1440, 1440}, {1452, 1440},
        {1459, 1440}, {1460, 1460}, {4311, 1460}, {4312, 4312},  {8939, 4312}, {8940, 8940},
        {8959, 8940}, {8960, 8960}, {9000, 8960}, {65535, 8960},
    };
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(xlb_syn_cookie_mss_round(cases[i][0]), cases[i][1]);
        /* and through a real cookie, both with and without timestamps */
        for (int ts = 0; ts < 2; ts++) {
            struct handshake h = {
                .t = {.family = AF_INET}, .in = {.mss = cases[i][0], .has_ts = ts}, .now = 3 * P};
            make(&k, &h);
            assert_int_equal(h.made.mss, cases[i][1]);
            struct xlb_syn_cookie_opts out;
            assert_int_equal(check_at(&k, &h, h.now, &out), 0);
            assert_int_equal(out.mss, cases[i][1]);
        }
    }
}

/* For AF_INET only the first 4 address bytes count, whatever the caller left in the rest. */
static void test_ipv4_ignores_unused_address_bytes(void **state)
{
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    struct handshake h = {
        .t = {.family = AF_INET, .client = {198, 18, 0, 9}}, .in = {.mss = 1460}, .now = 9 * P};
    make(&k, &h);
    h.t.client[12] = 0xff;
    h.t.vip[4] = 0x01;
    struct xlb_syn_cookie_opts out;
    assert_int_equal(check_at(&k, &h, h.now, &out), 0);
}

/* A later segment of the client's first flight, its ACK and the segments before it lost,
 * checks with the client's ISN found, up to XLB_SYN_COOKIE_FLIGHT_SEGS segments back, for
 * segments of a full segment's size; a small one, or one further back, does not. */
static void test_first_flight_after_losses(void **state)
{
    (void)state;
    struct xlb_syn_cookie_keys k;
    xlb_syn_cookie_keys_init(&k, seed_a);
    uint64_t rng = 99;
    for (int round = 0; round < 200; round++) {
        struct handshake h;
        random_handshake(&rng, &k, &h);
        const uint32_t len = 1448;
        for (uint32_t lost = 0; lost <= XLB_SYN_COOKIE_FLIGHT_SEGS; lost++) {
            uint32_t seq = h.client_isn + 1 + lost * len, isn = 0;
            struct xlb_syn_cookie_opts out;
            int r = xlb_syn_cookie_check_flight(&k, &h.t, seq, len, h.isn + 1, h.in.has_ts, h.tsval,
                                                h.now, &isn, &out);
            if (lost < XLB_SYN_COOKIE_FLIGHT_SEGS) {
                assert_int_equal(r, 0);
                assert_int_equal(isn, h.client_isn);
                assert_opts_equal(&out, &h.made);
            } else {
                assert_int_equal(r, -1);
            }
        }
        uint32_t isn;
        struct xlb_syn_cookie_opts out;
        assert_int_equal(xlb_syn_cookie_check_flight(&k, &h.t, h.client_isn + 1 + 100, 100,
                                                     h.isn + 1, h.in.has_ts, h.tsval, h.now, &isn,
                                                     &out),
                         -1);
        assert_int_equal(xlb_syn_cookie_check_flight(&k, &h.t, h.client_isn + 1 + len, len,
                                                     h.isn + 2, h.in.has_ts, h.tsval, h.now, &isn,
                                                     &out),
                         -1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_random),
        cmocka_unit_test(test_ack_without_ts_keeps_only_mss),
        cmocka_unit_test(test_flipped_bits_rejected),
        cmocka_unit_test(test_unknown_family_rejected),
        cmocka_unit_test(test_random_forgeries_rejected),
        cmocka_unit_test(test_isn_hash_bits_vary),
        cmocka_unit_test(test_age),
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_tsval_never_ahead),
        cmocka_unit_test(test_tsecr_consistency),
        cmocka_unit_test(test_mss_table),
        cmocka_unit_test(test_ipv4_ignores_unused_address_bytes),
        cmocka_unit_test(test_first_flight_after_losses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
