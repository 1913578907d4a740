/*
 * The HTTP/2 frame scanner on hand-built frames: every error at its byte, control payloads
 * handed to frame_end, SETTINGS tracking, PUSH_PROMISE, a callback stopping the scan, and
 * feeding in any split giving the very callbacks (and errors) of feeding whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_test.h"

#define BLOCK_CAP 4096

static uint8_t block_buf[BLOCK_CAP];
static struct h2t_log log_a, log_b;
static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

static void add_preface(struct h2t_bytes *b)
{
    h2t_append(b, preface, XLB_H2_PREFACE_LEN);
}

static void add_frame(struct h2t_bytes *b, uint8_t type, uint8_t flags, uint32_t stream,
                      const void *payload, uint32_t len)
{
    h2t_frame(b, len, type, flags, stream);
    h2t_append(b, payload, len);
}

static void add_bytes(struct h2t_bytes *b, uint8_t byte, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h2t_append(b, &byte, 1);
}

/* A client stream with every kind of frame, padding and CONTINUATION included. */
static void rich_stream(struct h2t_bytes *b)
{
    add_preface(b);
    uint8_t settings[72];
    for (int i = 0; i < 12; i++) { /* 12 entries: the last two lie past XLB_H2_SMALL_PAYLOAD */
        uint16_t id = i == 10 ? 1 : i == 11 ? 5 : 0x10 + i;
        uint32_t v = i == 10 ? 65536 : i == 11 ? 32768 : (uint32_t)i;
        uint8_t e[6] = {(uint8_t)(id >> 8), (uint8_t)id,       (uint8_t)(v >> 24),
                        (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
        memcpy(settings + 6 * i, e, 6);
    }
    add_frame(b, XLB_H2_SETTINGS, 0, 0, settings, sizeof(settings));
    add_frame(b, XLB_H2_PING, 0, 0, "12345678", 8);
    /* HEADERS: pad length 3, priority 5 bytes, 6 fragment bytes, 3 padding; then 2 CONTINUATIONs */
    add_frame(b, XLB_H2_HEADERS, XLB_H2_FLAG_PADDED | XLB_H2_FLAG_PRIORITY | XLB_H2_FLAG_END_STREAM,
              3, "\x03PPPPPabcdef\0\0\0", 15);
    add_frame(b, XLB_H2_CONTINUATION, 0, 3, "ghij", 4);
    add_frame(b, XLB_H2_CONTINUATION, XLB_H2_FLAG_END_HEADERS, 3, "klm", 3);
    add_frame(b, XLB_H2_DATA, XLB_H2_FLAG_PADDED, 3, "\x05hello world, data!\0\0\0\0\0", 25);
    add_frame(b, 0xfa, 0xff, 7, "unknown!!!", 10);
    add_frame(b, XLB_H2_PRIORITY, 0, 3, "\0\0\0\0\x10", 5);
    add_frame(b, XLB_H2_RST_STREAM, 0, 3, "\0\0\0\x08", 4);
    uint8_t goaway[108] = {0, 0, 0, 3, 0, 0, 0, 2};
    memset(goaway + 8, 'd', 100);
    add_frame(b, XLB_H2_GOAWAY, 0, 0, goaway, sizeof(goaway));
    add_frame(b, XLB_H2_WINDOW_UPDATE, 0, 5, "\0\0\x10\0", 4);
    add_frame(b, XLB_H2_SETTINGS, XLB_H2_FLAG_END_STREAM, 0, NULL, 0);
    add_frame(b, XLB_H2_HEADERS, XLB_H2_FLAG_END_HEADERS, 5, NULL, 0);
    add_frame(b, XLB_H2_PUSH_PROMISE, XLB_H2_FLAG_PADDED | XLB_H2_FLAG_END_HEADERS, 5,
              "\x02\0\0\0\x08pp\0\0", 9);
}

static int scan_whole(const struct h2t_bytes *b, bool preface_, struct h2t_log *log)
{
    h2t_log_reset(log);
    return h2t_scan_split(b->data, b->len, preface_, NULL, 0, block_buf, BLOCK_CAP, log);
}

static void assert_has(const struct h2t_log *log, const char *line)
{
    if (strstr(log->text, line) == NULL)
        fail_msg("missing \"%s\" in:\n%s", line, log->text);
}

static void test_rich_stream(void **state)
{
    struct h2t_bytes b = {0};
    rich_stream(&b);
    assert_int_equal(scan_whole(&b, true, &log_a), 0);
    assert_int_equal(log_a.n_blocks, 3);
    assert_int_equal(log_a.block_len[0], 13);
    assert_memory_equal(log_a.blocks[0], "abcdefghijklm", 13);
    assert_true(log_a.block_end_stream[0]);
    assert_int_equal(log_a.last_frame[0].type, XLB_H2_CONTINUATION);
    assert_int_equal(log_a.append_at[0], log_a.last_frame[0].offset + 9 + 3);
    assert_int_equal(log_a.block_len[1], 0); /* empty HEADERS */
    assert_false(log_a.block_end_stream[1]);
    assert_int_equal(log_a.block_len[2], 2); /* PUSH_PROMISE without pad/promised id */
    assert_memory_equal(log_a.blocks[2], "pp", 2);
    assert_int_equal(log_a.append_at[2], b.len - 2);
    /* control payloads: SETTINGS cut at 64 bytes, GOAWAY too, PING and WINDOW_UPDATE whole */
    assert_has(&log_a, "end type=4 off=24 payload=yes:0010000000000011");
    assert_has(&log_a, "end type=6 off=105 payload=yes:3132333435363738\n");
    assert_has(&log_a, "end type=3 off=");
    assert_has(&log_a, "payload=yes:00000008\n");
    assert_has(&log_a, "payload=yes:00001000\n");
    assert_has(&log_a, "end type=0 off=");
    assert_has(&log_a, "payload=no:\n");
    const char *ga = strstr(log_a.text, "end type=7 ");
    assert_non_null(ga);
    const char *colon = strchr(ga, ':');
    assert_int_equal(strchr(colon, '\n') - colon - 1, 2 * XLB_H2_SMALL_PAYLOAD);
    h2t_free(&b);
}

/* Whole vs every single cut, byte by byte, and random multi-cuts: the same log. */
static void assert_split_equivalent(const struct h2t_bytes *b, bool preface_)
{
    int whole = scan_whole(b, preface_, &log_a);
    size_t cuts[64];
    for (size_t c = 0; c <= b->len; c++) {
        h2t_log_reset(&log_b);
        cuts[0] = c;
        assert_int_equal(
            h2t_scan_split(b->data, b->len, preface_, cuts, 1, block_buf, BLOCK_CAP, &log_b),
            whole);
        assert_int_equal(log_b.len, log_a.len);
        assert_memory_equal(log_b.text, log_a.text, log_a.len);
    }
    uint32_t seed = 12345;
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + round % 63;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            cuts[i] = (seed >> 8) % (b->len + 1);
        }
        for (size_t i = 1; i < n; i++) /* insertion sort: cuts must ascend */
            for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
                size_t t = cuts[j];
                cuts[j] = cuts[j - 1];
                cuts[j - 1] = t;
            }
        h2t_log_reset(&log_b);
        assert_int_equal(
            h2t_scan_split(b->data, b->len, preface_, cuts, n, block_buf, BLOCK_CAP, &log_b),
            whole);
        assert_int_equal(log_b.len, log_a.len);
        assert_memory_equal(log_b.text, log_a.text, log_a.len);
    }
}

static void test_split_equivalence(void **state)
{
    struct h2t_bytes b = {0};
    rich_stream(&b);
    assert_split_equivalent(&b, true);
    /* one byte at a time */
    size_t *cuts = malloc(b.len * sizeof(*cuts));
    for (size_t i = 0; i < b.len; i++)
        cuts[i] = i;
    scan_whole(&b, true, &log_a);
    h2t_log_reset(&log_b);
    assert_int_equal(h2t_scan_split(b.data, b.len, true, cuts, b.len, block_buf, BLOCK_CAP, &log_b),
                     0);
    assert_string_equal(log_b.text, log_a.text);
    free(cuts);
    h2t_free(&b);
}

static void test_settings_tracked(void **state)
{
    struct h2t_bytes b = {0};
    rich_stream(&b);
    struct xlb_h2_scanner s;
    xlb_h2_scan_init(&s, true, block_buf, BLOCK_CAP);
    assert_int_equal(s.settings_header_table_size, UINT32_MAX);
    assert_int_equal(xlb_h2_scan_feed(&s, b.data, b.len, NULL, NULL), 0);
    /* both entries lie past the first 64 bytes of the SETTINGS payload */
    assert_int_equal(s.settings_header_table_size, 65536);
    assert_int_equal(s.settings_max_frame_size, 32768);
    assert_int_equal(s.max_frame_size, 16384); /* the caller's to change */
    assert_int_equal(xlb_h2_scan_offset(&s), b.len);
    h2t_free(&b);
}

/* One erroneous stream: the error, the offset it is found at, and the same under any split. */
static void assert_error(const struct h2t_bytes *b, bool preface_, int expected, uint64_t at)
{
    struct xlb_h2_scanner s;
    xlb_h2_scan_init(&s, preface_, block_buf, BLOCK_CAP);
    assert_int_equal(xlb_h2_scan_feed(&s, b->data, b->len, NULL, NULL), expected);
    assert_int_equal(xlb_h2_scan_offset(&s), at);
    /* sticky */
    assert_int_equal(xlb_h2_scan_feed(&s, b->data, b->len, NULL, NULL), expected);
    assert_int_equal(xlb_h2_scan_offset(&s), at);
    assert_split_equivalent(b, preface_);
}

static void test_bad_preface(void **state)
{
    struct h2t_bytes b = {0};
    h2t_append(&b, "PRI * HTTP/1.1\r\n\r\nSM\r\n\r\n", 24);
    assert_error(&b, true, XLB_H2_E_PREFACE, 12);
    h2t_free(&b);
    /* An HTTP/1.1 request where a server-side stream (no preface) expects frames: "GET / HT"
     * reads as a 4.7 MB frame. */
    h2t_append(&b, "GET / HTTP/1.1\r\n\r\n", 18);
    assert_error(&b, false, XLB_H2_E_FRAME_SIZE, 9);
    h2t_free(&b);
}

static void test_frame_too_large(void **state)
{
    struct h2t_bytes b = {0};
    add_preface(&b);
    h2t_frame(&b, 16385, XLB_H2_DATA, 0, 1);
    add_bytes(&b, 'x', 16385);
    assert_error(&b, true, XLB_H2_E_FRAME_SIZE, 24 + 9);
    /* The peer raised SETTINGS_MAX_FRAME_SIZE: the caller raises the limit. */
    struct xlb_h2_scanner s;
    xlb_h2_scan_init(&s, true, block_buf, BLOCK_CAP);
    s.max_frame_size = 1 << 20;
    assert_int_equal(xlb_h2_scan_feed(&s, b.data, b.len, NULL, NULL), 0);
    h2t_free(&b);
}

static void test_block_too_big(void **state)
{
    struct h2t_bytes b = {0};
    h2t_frame(&b, BLOCK_CAP + 1, XLB_H2_HEADERS, XLB_H2_FLAG_END_HEADERS, 1);
    add_bytes(&b, 'h', BLOCK_CAP + 1);
    assert_error(&b, false, XLB_H2_E_BLOCK_TOO_BIG, 9);
    h2t_free(&b);
    /* exactly the cap is fine; one more byte in a CONTINUATION is not (found after its header) */
    h2t_frame(&b, BLOCK_CAP - 10, XLB_H2_HEADERS, 0, 1);
    add_bytes(&b, 'h', BLOCK_CAP - 10);
    h2t_frame(&b, 10, XLB_H2_CONTINUATION, 0, 1);
    add_bytes(&b, 'c', 10);
    h2t_frame(&b, 1, XLB_H2_CONTINUATION, XLB_H2_FLAG_END_HEADERS, 1);
    add_bytes(&b, 'c', 1);
    assert_error(&b, false, XLB_H2_E_BLOCK_TOO_BIG, b.len - 1);
    h2t_free(&b);
    /* padding does not count: a padded frame is checked once its pad length is in */
    h2t_frame(&b, BLOCK_CAP + 11, XLB_H2_HEADERS, XLB_H2_FLAG_END_HEADERS | XLB_H2_FLAG_PADDED, 1);
    add_bytes(&b, 10, 1);
    add_bytes(&b, 'h', BLOCK_CAP + 10);
    struct xlb_h2_scanner s;
    xlb_h2_scan_init(&s, false, block_buf, BLOCK_CAP);
    assert_int_equal(xlb_h2_scan_feed(&s, b.data, b.len, NULL, NULL), 0);
    b.data[9] = 9; /* one byte less padding: one byte too many */
    assert_error(&b, false, XLB_H2_E_BLOCK_TOO_BIG, 10);
    h2t_free(&b);
}

static void test_continuation_errors(void **state)
{
    struct h2t_bytes b = {0};
    /* DATA inside a header block */
    add_frame(&b, XLB_H2_HEADERS, 0, 1, "ab", 2);
    add_frame(&b, XLB_H2_DATA, 0, 1, "x", 1);
    assert_error(&b, false, XLB_H2_E_CONTINUATION, 11 + 9);
    h2t_free(&b);
    /* CONTINUATION of another stream */
    add_frame(&b, XLB_H2_HEADERS, 0, 1, "ab", 2);
    add_frame(&b, XLB_H2_CONTINUATION, XLB_H2_FLAG_END_HEADERS, 3, "c", 1);
    assert_error(&b, false, XLB_H2_E_CONTINUATION, 20);
    h2t_free(&b);
    /* CONTINUATION on stream 0 inside a block: the sequence error comes first */
    add_frame(&b, XLB_H2_HEADERS, 0, 1, "ab", 2);
    add_frame(&b, XLB_H2_CONTINUATION, XLB_H2_FLAG_END_HEADERS, 0, "c", 1);
    assert_error(&b, false, XLB_H2_E_CONTINUATION, 20);
    h2t_free(&b);
    /* CONTINUATION with no block open, also after a complete one */
    add_frame(&b, XLB_H2_CONTINUATION, XLB_H2_FLAG_END_HEADERS, 1, "c", 1);
    assert_error(&b, false, XLB_H2_E_CONTINUATION, 9);
    h2t_free(&b);
    add_frame(&b, XLB_H2_HEADERS, XLB_H2_FLAG_END_HEADERS, 1, "ab", 2);
    add_frame(&b, XLB_H2_CONTINUATION, XLB_H2_FLAG_END_HEADERS, 1, "c", 1);
    assert_error(&b, false, XLB_H2_E_CONTINUATION, 20);
    h2t_free(&b);
    /* a PING inside a block is an error too (RFC 9113 §6.10) */
    add_frame(&b, XLB_H2_PUSH_PROMISE, 0, 1, "\0\0\0\x02pp", 6);
    add_frame(&b, XLB_H2_PING, 0, 0, "12345678", 8);
    assert_error(&b, false, XLB_H2_E_CONTINUATION, 24);
    h2t_free(&b);
}

static void test_padding_errors(void **state)
{
    struct h2t_bytes b = {0};
    /* pad length 4 with 3 bytes left after it */
    add_frame(&b, XLB_H2_HEADERS, XLB_H2_FLAG_PADDED | XLB_H2_FLAG_END_HEADERS, 1, "\x04\0\0\0", 4);
    assert_error(&b, false, XLB_H2_E_PADDING, 10);
    /* pad length 3: an empty fragment, allowed */
    b.data[9] = 3;
    assert_int_equal(scan_whole(&b, false, &log_a), 0);
    assert_int_equal(log_a.n_blocks, 1);
    assert_int_equal(log_a.block_len[0], 0);
    assert_int_equal(log_a.append_at[0], 10);
    h2t_free(&b);
    /* PADDED with no room for the pad length */
    add_frame(&b, XLB_H2_DATA, XLB_H2_FLAG_PADDED, 1, NULL, 0);
    assert_error(&b, false, XLB_H2_E_PADDING, 9);
    h2t_free(&b);
    /* DATA: padding of the payload's length */
    add_frame(&b, XLB_H2_DATA, XLB_H2_FLAG_PADDED, 1, "\x05zzzz", 5);
    assert_error(&b, false, XLB_H2_E_PADDING, 10);
    h2t_free(&b);
    /* priority and padding: 1 + 5 fixed bytes, then pad length 3 with 2 bytes left */
    add_frame(&b, XLB_H2_HEADERS,
              XLB_H2_FLAG_PADDED | XLB_H2_FLAG_PRIORITY | XLB_H2_FLAG_END_HEADERS, 1, "\x03PPPPPzz",
              8);
    assert_error(&b, false, XLB_H2_E_PADDING, 15);
    h2t_free(&b);
    /* PRIORITY flag without room for its 5 bytes; PUSH_PROMISE without its promised id */
    add_frame(&b, XLB_H2_HEADERS, XLB_H2_FLAG_PRIORITY | XLB_H2_FLAG_END_HEADERS, 1, "PPP", 3);
    assert_error(&b, false, XLB_H2_E_FRAME_SIZE, 9);
    h2t_free(&b);
    add_frame(&b, XLB_H2_PUSH_PROMISE, XLB_H2_FLAG_END_HEADERS, 1, "\0\0", 2);
    assert_error(&b, false, XLB_H2_E_FRAME_SIZE, 9);
    h2t_free(&b);
}

static void test_stream_id_errors(void **state)
{
    static const struct {
        uint8_t type, flags;
        uint32_t stream;
    } cases[] = {
        {XLB_H2_HEADERS, XLB_H2_FLAG_END_HEADERS, 0},
        {XLB_H2_PUSH_PROMISE, XLB_H2_FLAG_END_HEADERS, 0},
        {XLB_H2_SETTINGS, 0, 1},
        {XLB_H2_PING, 0, 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct h2t_bytes b = {0};
        add_frame(&b, cases[i].type, cases[i].flags, cases[i].stream, "\0\0\0\0\0\0\0\0", 8);
        assert_error(&b, false, XLB_H2_E_STREAM_ID, 9);
        h2t_free(&b);
    }
    /* the reserved bit of the stream id is ignored */
    struct h2t_bytes b = {0};
    add_frame(&b, XLB_H2_SETTINGS, 0, 0x80000000u, NULL, 0);
    assert_int_equal(scan_whole(&b, false, &log_a), 0);
    h2t_free(&b);
}

static void test_callback_stops(void **state)
{
    struct h2t_bytes b = {0};
    rich_stream(&b);
    for (int stop = 1; stop <= 40; stop++) {
        log_a.stop_after = log_b.stop_after = stop;
        h2t_log_reset(&log_a);
        struct xlb_h2_scanner s;
        xlb_h2_scan_init(&s, true, block_buf, BLOCK_CAP);
        int rc = xlb_h2_scan_feed(&s, b.data, b.len, &h2t_log_events, &log_a);
        if (log_a.calls < stop) { /* fewer callbacks than that: ran to the end */
            assert_int_equal(rc, 0);
            break;
        }
        assert_int_equal(rc, -1);
        assert_int_equal(log_a.calls, stop);
        assert_int_equal(xlb_h2_scan_feed(&s, b.data, 1, &h2t_log_events, &log_a), -1);
        assert_int_equal(log_a.calls, stop);
        assert_split_equivalent(&b, true);
    }
    log_a.stop_after = log_b.stop_after = 0;
    h2t_free(&b);
}

/* During header_block the scanner tells PUSH_PROMISE from HEADERS and gives the promised id. */
static int check_kind(void *user, uint32_t stream_id, bool end_stream, const uint8_t *block,
                      uint32_t len, uint64_t append_at, const struct xlb_h2_frame *last)
{
    const struct xlb_h2_scanner *s = user;
    if (s->block_type == XLB_H2_PUSH_PROMISE)
        return s->promised_id == 8 && stream_id == 5 && len == 2 ? 0 : -7;
    return s->block_type == XLB_H2_HEADERS ? 0 : -8;
}

static void test_push_promise_kind(void **state)
{
    struct h2t_bytes b = {0};
    rich_stream(&b);
    struct xlb_h2_scanner s;
    const struct xlb_h2_scan_events ev = {NULL, NULL, check_kind};
    xlb_h2_scan_init(&s, true, block_buf, BLOCK_CAP);
    assert_int_equal(xlb_h2_scan_feed(&s, b.data, b.len, &ev, &s), 0);
    h2t_free(&b);
}

static void test_error_names(void **state)
{
    assert_string_equal(xlb_h2_scan_error_name(XLB_H2_E_PREFACE), "bad preface");
    assert_string_equal(xlb_h2_scan_error_name(XLB_H2_E_FRAME_SIZE), "frame too large");
    assert_string_equal(xlb_h2_scan_error_name(XLB_H2_E_BLOCK_TOO_BIG), "header block too big");
    assert_string_equal(xlb_h2_scan_error_name(XLB_H2_E_CONTINUATION), "bad CONTINUATION sequence");
    assert_string_equal(xlb_h2_scan_error_name(XLB_H2_E_PADDING), "bad padding");
    assert_string_equal(xlb_h2_scan_error_name(XLB_H2_E_STREAM_ID), "bad stream id");
    assert_string_equal(xlb_h2_scan_error_name(-5), "callback error");
    assert_string_equal(xlb_h2_scan_error_name(0), "ok");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rich_stream),         cmocka_unit_test(test_split_equivalence),
        cmocka_unit_test(test_settings_tracked),    cmocka_unit_test(test_bad_preface),
        cmocka_unit_test(test_frame_too_large),     cmocka_unit_test(test_block_too_big),
        cmocka_unit_test(test_continuation_errors), cmocka_unit_test(test_padding_errors),
        cmocka_unit_test(test_stream_id_errors),    cmocka_unit_test(test_callback_stops),
        cmocka_unit_test(test_push_promise_kind),   cmocka_unit_test(test_error_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
