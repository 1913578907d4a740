/* TCP options: parsing real option blocks, rejecting malformed ones, writing, translating. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "tcpwire_test.h"
#include "xlb_tcp_options.h"

/* A Linux 6.1 SYN's options as captured: MSS 1460, SACK-permitted, TS, NOP, WS 7. */
static const uint8_t linux_syn[20] = {0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x9a, 0x3b,
                                      0x1c, 0x07, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03, 0x03, 0x07};

static void test_parse_linux_syn(void **state)
{
    struct xlb_tcp_opts o;
    assert_int_equal(xlb_tcp_options_parse(linux_syn, sizeof(linux_syn), &o), 0);
    assert_int_equal(o.mss, 1460);
    assert_true(o.sack_ok);
    assert_true(o.has_ts);
    assert_int_equal(o.tsval, 0x9a3b1c07);
    assert_int_equal(o.tsecr, 0);
    assert_int_equal(o.ts_at, 6);
    assert_true(o.has_wscale);
    assert_int_equal(o.wscale, 7);
    assert_int_equal(o.n_sack, 0);
    assert_int_equal(o.sack_at, -1);
}

static void test_parse_data_segment_ts(void **state)
{
    const uint8_t data[12] = {1, 1, 8, 10, 0x00, 0x00, 0x01, 0x00, 0xff, 0xff, 0xff, 0xfe};
    struct xlb_tcp_opts o;
    assert_int_equal(xlb_tcp_options_parse(data, sizeof(data), &o), 0);
    assert_true(o.has_ts);
    assert_int_equal(o.tsval, 256);
    assert_int_equal(o.tsecr, 0xfffffffe);
    assert_int_equal(o.ts_at, 2);
    assert_int_equal(o.mss, 0);
    assert_false(o.has_wscale);
    assert_false(o.sack_ok);
    assert_int_equal(o.sack_at, -1);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Linux's ACK with SACK: NOP NOP TS NOP NOP SACK(n), or, for 4 blocks (no room for TS), NOP
 * NOP SACK(4). Returns the length, with where the TS and SACK options start. */
static uint32_t build_sack_segment(uint8_t *p, uint8_t n, int *ts_at, int *sack_at)
{
    uint32_t len = 0;
    *ts_at = -1;
    if (n < 4) {
        p[len++] = 1;
        p[len++] = 1;
        *ts_at = (int)len;
        p[len++] = 8;
        p[len++] = 10;
        put32(p + len, 0x11223344);
        put32(p + len + 4, 0x55667788);
        len += 8;
    }
    p[len++] = 1;
    p[len++] = 1;
    *sack_at = (int)len;
    p[len++] = 5;
    p[len++] = (uint8_t)(2 + 8 * n);
    for (uint8_t i = 0; i < n; i++) {
        put32(p + len, 1000u * (i + 1));
        put32(p + len + 4, 1000u * (i + 1) + 500);
        len += 8;
    }
    return len;
}

static void test_parse_sack_blocks(void **state)
{
    for (uint8_t n = 1; n <= XLB_TCP_SACK_MAX; n++) {
        uint8_t p[40];
        int ts_at, sack_at;
        uint32_t len = build_sack_segment(p, n, &ts_at, &sack_at);
        assert_true(len <= 40);
        struct xlb_tcp_opts o;
        assert_int_equal(xlb_tcp_options_parse(p, len, &o), 0);
        assert_int_equal(o.n_sack, n);
        assert_int_equal(o.sack_at, sack_at);
        assert_int_equal(o.ts_at, ts_at);
        assert_int_equal(o.has_ts, ts_at >= 0);
        for (uint8_t i = 0; i < n; i++) {
            assert_int_equal(o.sack_left[i], 1000u * (i + 1));
            assert_int_equal(o.sack_right[i], 1000u * (i + 1) + 500);
        }
    }
}

struct bad_case {
    const char *what;
    uint8_t bytes[44];
    uint32_t len;
};

static const struct bad_case bad_cases[] = {
    {"length byte 0", {2, 0, 5, 0xb4}, 4},
    {"length byte 1", {1, 30, 1}, 3},
    {"unknown kind, length byte 0", {30, 0, 0, 0}, 4},
    {"length byte missing", {1, 1, 1, 2}, 4},
    {"length byte missing after a whole option", {2, 4, 5, 0xb4, 30}, 5},
    {"length past the end", {1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0}, 11},
    {"unknown kind past the end", {30, 6, 0, 0}, 4},
    {"MSS length 3", {2, 3, 5, 1}, 4},
    {"MSS length 5", {2, 5, 5, 0xb4, 0, 1, 1, 1}, 8},
    {"WS length 2", {3, 2, 1, 1}, 4},
    {"WS length 4", {3, 4, 7, 0}, 4},
    {"SACK-permitted length 3", {4, 3, 0, 1}, 4},
    {"TS length 8", {8, 8, 0, 0, 0, 0, 0, 0}, 8},
    {"TS length 12", {8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 12},
    {"SACK length 11", {5, 11, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0}, 12},
    {"SACK length 3", {5, 3, 0, 1}, 4},
    {"SACK length 9", {5, 9, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1}, 12},
    {"two MSS options", {2, 4, 5, 0xb4, 2, 4, 5, 0xb4}, 8},
    {"two TS options", {8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 8, 10, 0, 0, 0, 2, 0, 0, 0, 0}, 20},
    {"two SACK options", {5, 10, 0, 0, 0, 1, 0, 0, 0, 2, 5, 10, 0, 0, 0, 3, 0, 0, 0, 4}, 20},
    {"two WS options", {3, 3, 7, 3, 3, 7, 1, 1}, 8},
    {"two SACK-permitted options", {4, 2, 4, 2}, 4},
    {"area longer than 40 bytes", {1, 1, 1, 1}, 44},
};

static void test_parse_rejects_malformed(void **state)
{
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const struct bad_case *c = &bad_cases[i];
        struct xlb_tcp_opts o;
        if (xlb_tcp_options_parse(c->bytes, c->len, &o) != -EINVAL)
            fail_msg("%s: accepted", c->what);
        /* Nothing for a shift to rewrite after a failure. */
        assert_int_equal(o.ts_at, -1);
        assert_int_equal(o.sack_at, -1);
        assert_false(o.has_ts);
    }
}

/* A malformed option after a well-formed TS must still fail the whole area and clear it. */
static void test_parse_failure_clears_earlier_options(void **state)
{
    const uint8_t p[16] = {1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 2, 3, 5, 1};
    struct xlb_tcp_opts o;
    assert_int_equal(xlb_tcp_options_parse(p, sizeof(p), &o), -EINVAL);
    assert_int_equal(o.ts_at, -1);
    assert_false(o.has_ts);
}

static void test_parse_eol_unknown_and_empty(void **state)
{
    struct xlb_tcp_opts o;
    /* An empty area is valid. */
    assert_int_equal(xlb_tcp_options_parse(NULL, 0, &o), 0);
    assert_int_equal(o.ts_at, -1);
    /* EOL ends parsing: the garbage behind it (an MSS of length 3) is not read. */
    const uint8_t eol[8] = {2, 4, 1, 0, 0, 2, 3, 5};
    assert_int_equal(xlb_tcp_options_parse(eol, sizeof(eol), &o), 0);
    assert_int_equal(o.mss, 256);
    /* Unknown kinds (TFO cookie 34, an experiment 254) are skipped by their length. */
    const uint8_t unknown[16] = {34,   6,    0xaa, 0xbb, 0xcc, 0xdd, 254, 4,
                                 0xf9, 0x89, 2,    4,    0x05, 0x78, 1,   1};
    assert_int_equal(xlb_tcp_options_parse(unknown, sizeof(unknown), &o), 0);
    assert_int_equal(o.mss, 1400);
    /* All NOPs. */
    const uint8_t nops[40] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                              1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(xlb_tcp_options_parse(nops, sizeof(nops), &o), 0);
    assert_int_equal(o.mss, 0);
    /* An empty SACK option (length 2 = 2 + 8 * 0) is well formed. */
    const uint8_t empty_sack[4] = {1, 1, 5, 2};
    assert_int_equal(xlb_tcp_options_parse(empty_sack, sizeof(empty_sack), &o), 0);
    assert_int_equal(o.n_sack, 0);
    assert_int_equal(o.sack_at, 2);
}

static void test_parse_clamps_wscale(void **state)
{
    struct xlb_tcp_opts o;
    const uint8_t ws14[4] = {1, 3, 3, 14}, ws15[4] = {1, 3, 3, 15}, ws255[4] = {1, 3, 3, 255};
    assert_int_equal(xlb_tcp_options_parse(ws14, 4, &o), 0);
    assert_int_equal(o.wscale, 14);
    assert_int_equal(xlb_tcp_options_parse(ws15, 4, &o), 0);
    assert_int_equal(o.wscale, 14);
    assert_int_equal(xlb_tcp_options_parse(ws255, 4, &o), 0);
    assert_int_equal(o.wscale, 14);
    assert_true(o.has_wscale);
}

/* The writer's bytes for Linux's full SYN-ACK are Linux's, byte for byte. */
static void test_write_syn_linux_layout(void **state)
{
    struct xlb_tcp_opts o = {.mss = 1460,
                             .sack_ok = true,
                             .has_ts = true,
                             .tsval = 0x9a3b1c07,
                             .has_wscale = true,
                             .wscale = 7};
    uint8_t out[40];
    assert_int_equal(xlb_tcp_options_write_syn(out, &o), sizeof(linux_syn));
    assert_memory_equal(out, linux_syn, sizeof(linux_syn));
}

static void check_syn_round_trip(const struct xlb_tcp_opts *in)
{
    uint8_t out[40];
    memset(out, 0xee, sizeof(out));
    uint32_t n = xlb_tcp_options_write_syn(out, in);
    assert_true(n <= 40);
    assert_int_equal(n % 4, 0);
    for (uint32_t i = n; i < sizeof(out); i++)
        assert_int_equal(out[i], 0xee); /* nothing written past the returned length */
    struct xlb_tcp_opts o;
    assert_int_equal(xlb_tcp_options_parse(out, n, &o), 0);
    assert_int_equal(o.mss, in->mss);
    assert_int_equal(o.sack_ok, in->sack_ok);
    assert_int_equal(o.has_ts, in->has_ts);
    assert_int_equal(o.has_wscale, in->has_wscale);
    if (in->has_wscale)
        assert_int_equal(o.wscale, in->wscale > 14 ? 14 : in->wscale);
    if (in->has_ts) {
        assert_int_equal(o.tsval, in->tsval);
        assert_int_equal(o.tsecr, in->tsecr);
        /* 4-byte aligned timestamp values, as Linux lays them out. */
        assert_int_equal((o.ts_at + 2) % 4, 0);
    }
    assert_int_equal(o.n_sack, 0);
}

static void test_write_syn_round_trip_all_flags(void **state)
{
    const uint16_t mss[] = {0, 536, 1460, 8960, 65535};
    const uint8_t ws[] = {0, 7, 14, 15, 255};
    for (unsigned f = 0; f < 8; f++) {
        for (size_t m = 0; m < sizeof(mss) / sizeof(mss[0]); m++) {
            for (size_t w = 0; w < sizeof(ws) / sizeof(ws[0]); w++) {
                struct xlb_tcp_opts in = {.mss = mss[m], .wscale = ws[w]};
                in.has_ts = f & 1;
                in.sack_ok = f & 2;
                in.has_wscale = f & 4;
                in.tsval = 0xdeadbeef;
                in.tsecr = 0x01020304u * (uint32_t)(w + 1);
                check_syn_round_trip(&in);
            }
        }
    }
}

static void test_write_ts(void **state)
{
    uint8_t out[12];
    const uint8_t want[12] = {1, 1, 8, 10, 0x80, 0x00, 0x00, 0x01, 0x00, 0x00, 0xff, 0xfe};
    assert_int_equal(xlb_tcp_options_write_ts(out, 0x80000001u, 0xfffe), 12);
    assert_memory_equal(out, want, sizeof(want));
}

/* Every byte outside the TS values and SACK edges is untouched; those get exactly the sums. */
static void test_shift_changes_exactly_the_right_bytes(void **state)
{
    for (uint8_t n = 1; n <= XLB_TCP_SACK_MAX; n++) {
        uint8_t p[40], want[40];
        int ts_at, sack_at;
        uint32_t len = build_sack_segment(p, n, &ts_at, &sack_at);
        memcpy(want, p, len);
        if (ts_at >= 0) {
            put32(want + ts_at + 2, 0x11223344u + 0xf0000000u);
            put32(want + ts_at + 6, 0x55667788u + 0xb0000000u);
        }
        for (uint8_t i = 0; i < n; i++) {
            put32(want + sack_at + 2 + 8 * i, 1000u * (i + 1) - 1500u);
            put32(want + sack_at + 6 + 8 * i, 1000u * (i + 1) + 500 - 1500u);
        }
        struct xlb_tcp_opts o;
        assert_int_equal(xlb_tcp_options_parse(p, len, &o), 0);
        xlb_tcp_options_shift(p, &o, 0xf0000000u, 0xb0000000u, (uint32_t)-1500);
        assert_memory_equal(p, want, len);
    }
}

/* The SYN layout (SACK-permitted in front of TS) and a TS-less area. */
static void test_shift_syn_and_nothing_to_shift(void **state)
{
    uint8_t p[20];
    memcpy(p, linux_syn, sizeof(p));
    struct xlb_tcp_opts o;
    assert_int_equal(xlb_tcp_options_parse(p, sizeof(p), &o), 0);
    xlb_tcp_options_shift(p, &o, 1, 2, 3);
    assert_int_equal(xlb_tcp_options_parse(p, sizeof(p), &o), 0);
    assert_int_equal(o.tsval, 0x9a3b1c08);
    assert_int_equal(o.tsecr, 2);
    assert_memory_equal(p, linux_syn, 8);
    assert_memory_equal(p + 16, linux_syn + 16, 4);

    const uint8_t mss_ws[8] = {2, 4, 5, 0xb4, 1, 3, 3, 7};
    memcpy(p, mss_ws, sizeof(mss_ws));
    assert_int_equal(xlb_tcp_options_parse(p, sizeof(mss_ws), &o), 0);
    xlb_tcp_options_shift(p, &o, 1, 2, 3);
    assert_memory_equal(p, mss_ws, sizeof(mss_ws));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_linux_syn),
        cmocka_unit_test(test_parse_data_segment_ts),
        cmocka_unit_test(test_parse_sack_blocks),
        cmocka_unit_test(test_parse_rejects_malformed),
        cmocka_unit_test(test_parse_failure_clears_earlier_options),
        cmocka_unit_test(test_parse_eol_unknown_and_empty),
        cmocka_unit_test(test_parse_clamps_wscale),
        cmocka_unit_test(test_write_syn_linux_layout),
        cmocka_unit_test(test_write_syn_round_trip_all_flags),
        cmocka_unit_test(test_write_ts),
        cmocka_unit_test(test_shift_changes_exactly_the_right_bytes),
        cmocka_unit_test(test_shift_syn_and_nothing_to_shift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
