/* gRPC message framing and connection backoff: the pure parts of the gRPC client. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "grpc_backoff.h"
#include "grpc_frame.h"

struct collected {
    unsigned n;
    size_t len[8];
    uint8_t data[8][64];
};

static void collect(const uint8_t *msg, size_t len, void *arg)
{
    struct collected *c = arg;
    assert_true(c->n < 8 && len <= 64);
    c->len[c->n] = len;
    memcpy(c->data[c->n++], msg, len);
}

/* Two messages (one empty) framed back to back. */
static size_t two_messages(uint8_t *out)
{
    xlb_grpc_frame_prefix(out, 3);
    memcpy(out + 5, "abc", 3);
    xlb_grpc_frame_prefix(out + 8, 0);
    return 13;
}

static void messages_survive_any_chunking(void **state)
{
    uint8_t wire[13];
    size_t len = two_messages(wire);
    /* Every split point, and byte by byte. */
    for (size_t cut = 0; cut <= len; cut++) {
        struct xlb_grpc_reader r;
        struct collected c = {0};
        xlb_grpc_reader_init(&r, 1024);
        assert_int_equal(xlb_grpc_reader_feed(&r, wire, cut, collect, &c), XLB_GRPC_FRAME_OK);
        assert_int_equal(xlb_grpc_reader_feed(&r, wire + cut, len - cut, collect, &c),
                         XLB_GRPC_FRAME_OK);
        assert_int_equal(c.n, 2);
        assert_int_equal(c.len[0], 3);
        assert_memory_equal(c.data[0], "abc", 3);
        assert_int_equal(c.len[1], 0);
        assert_true(xlb_grpc_reader_idle(&r));
        xlb_grpc_reader_free(&r);
    }
    struct xlb_grpc_reader r;
    struct collected c = {0};
    xlb_grpc_reader_init(&r, 1024);
    for (size_t i = 0; i < len; i++)
        xlb_grpc_reader_feed(&r, wire + i, 1, collect, &c);
    assert_int_equal(c.n, 2);
    xlb_grpc_reader_free(&r);
}

static void partial_message_is_not_idle(void **state)
{
    uint8_t wire[13];
    two_messages(wire);
    struct xlb_grpc_reader r;
    struct collected c = {0};
    xlb_grpc_reader_init(&r, 1024);
    xlb_grpc_reader_feed(&r, wire, 6, collect, &c);
    assert_false(xlb_grpc_reader_idle(&r));
    assert_int_equal(c.n, 0);
    xlb_grpc_reader_free(&r); /* frees the partial message */
}

static void oversized_and_compressed_are_refused(void **state)
{
    uint8_t prefix[5];
    struct xlb_grpc_reader r;
    struct collected c = {0};
    xlb_grpc_reader_init(&r, 100);
    xlb_grpc_frame_prefix(prefix, 101);
    assert_int_equal(xlb_grpc_reader_feed(&r, prefix, 5, collect, &c), XLB_GRPC_FRAME_TOO_LARGE);
    xlb_grpc_reader_free(&r);

    xlb_grpc_reader_init(&r, 100);
    xlb_grpc_frame_prefix(prefix, 100);
    assert_int_equal(xlb_grpc_reader_feed(&r, prefix, 5, collect, &c), XLB_GRPC_FRAME_OK);
    xlb_grpc_reader_free(&r);

    xlb_grpc_reader_init(&r, 100);
    xlb_grpc_frame_prefix(prefix, 1);
    prefix[0] = 1;
    assert_int_equal(xlb_grpc_reader_feed(&r, prefix, 5, collect, &c), XLB_GRPC_FRAME_COMPRESSED);
    xlb_grpc_reader_free(&r);
    assert_string_equal(xlb_grpc_frame_error_text(XLB_GRPC_FRAME_TOO_LARGE),
                        "message larger than the limit");
}

static void backoff_follows_grpc_schedule(void **state)
{
    struct xlb_grpc_backoff b;
    xlb_grpc_backoff_init(&b, 7);
    double base = 1000;
    for (int attempt = 0; attempt < 30; attempt++) {
        uint64_t delay = xlb_grpc_backoff_next(&b);
        /* Within +-20 % of 1 s x 1.6^n, capped at 120 s. */
        assert_true((double)delay >= base * 0.8 - 1 && (double)delay <= base * 1.2 + 1);
        base = base * 1.6 < 120000 ? base * 1.6 : 120000;
    }
    assert_true(base == 120000);
    xlb_grpc_backoff_reset(&b);
    uint64_t first = xlb_grpc_backoff_next(&b);
    assert_true(first >= 800 && first <= 1200);
}

static void backoff_jitter_varies(void **state)
{
    struct xlb_grpc_backoff b;
    xlb_grpc_backoff_init(&b, 1);
    uint64_t seen_low = 0, seen_high = 0;
    for (int i = 0; i < 200; i++) {
        xlb_grpc_backoff_reset(&b);
        uint64_t d = xlb_grpc_backoff_next(&b);
        seen_low += d < 950;
        seen_high += d > 1050;
    }
    /* Jitter spreads over the whole +-20 % band, not one point. */
    assert_true(seen_low > 20 && seen_high > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(messages_survive_any_chunking),
        cmocka_unit_test(partial_message_is_not_idle),
        cmocka_unit_test(oversized_and_compressed_are_refused),
        cmocka_unit_test(backoff_follows_grpc_schedule),
        cmocka_unit_test(backoff_jitter_varies),
    };
    return cmocka_run_group_tests_name("grpc_frame", tests, NULL, NULL);
}
