/* gRPC message framing, connection backoff and the keepalive schedule: the pure parts of the gRPC
 * client. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "grpc_backoff.h"
#include "grpc_frame.h"
#include "grpc_keepalive.h"

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

/* A stream that ends here lost a message: the reader says how much of it had come. */
static void truncation_is_described(void **state)
{
    uint8_t wire[13];
    char why[96];
    two_messages(wire);
    struct xlb_grpc_reader r;
    struct collected c = {0};
    xlb_grpc_reader_init(&r, 1024);
    assert_false(xlb_grpc_reader_truncation(&r, why, sizeof(why)));
    xlb_grpc_reader_feed(&r, wire, 2, collect, &c);
    assert_true(xlb_grpc_reader_truncation(&r, why, sizeof(why)));
    assert_string_equal(why, "truncated message: 2 of 5 prefix bytes received");
    xlb_grpc_reader_feed(&r, wire + 2, 4, collect, &c);
    assert_true(xlb_grpc_reader_truncation(&r, why, sizeof(why)));
    assert_string_equal(why, "truncated message: 1 of 3 bytes received");
    xlb_grpc_reader_feed(&r, wire + 6, 7, collect, &c);
    assert_false(xlb_grpc_reader_truncation(&r, why, sizeof(why)));
    assert_int_equal(c.n, 2);
    xlb_grpc_reader_free(&r);
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

/* The keepalive timer on a virtual clock: the times at which PINGs go out. */
static void keepalive_pings_every_interval(void **state)
{
    struct xlb_grpc_keepalive k;
    uint64_t now = xlb_grpc_keepalive_start(&k), next = 0;
    uint64_t pings[4];
    unsigned n = 0;
    while (n < 4) {
        enum xlb_keepalive_action a = xlb_grpc_keepalive_fire(&k, &next);
        assert_int_not_equal(a, XLB_KEEPALIVE_DEAD);
        if (a == XLB_KEEPALIVE_PING) {
            pings[n++] = now;
            xlb_grpc_keepalive_acked(&k); /* the ACK comes at once */
        }
        now += next;
    }
    /* Every 5 minutes from the connection's start, no more often: gRPC servers' minimum. */
    assert_int_equal(XLB_GRPC_KEEPALIVE_MS, 300000);
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(pings[i], (uint64_t)(i + 1) * XLB_GRPC_KEEPALIVE_MS);
}

static void keepalive_without_ack_is_dead_after_the_timeout(void **state)
{
    struct xlb_grpc_keepalive k;
    uint64_t now = xlb_grpc_keepalive_start(&k), next = 0;
    assert_int_equal(xlb_grpc_keepalive_fire(&k, &next), XLB_KEEPALIVE_PING);
    now += next;
    assert_int_equal(xlb_grpc_keepalive_fire(&k, &next), XLB_KEEPALIVE_DEAD);
    assert_int_equal(now, XLB_GRPC_KEEPALIVE_MS + XLB_GRPC_KEEPALIVE_ACK_MS);
    /* An ACK that arrives before any PING was sent does not count for the next one. */
    xlb_grpc_keepalive_start(&k);
    xlb_grpc_keepalive_acked(&k);
    assert_int_equal(xlb_grpc_keepalive_fire(&k, &next), XLB_KEEPALIVE_PING);
    assert_int_equal(xlb_grpc_keepalive_fire(&k, &next), XLB_KEEPALIVE_DEAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(messages_survive_any_chunking),
        cmocka_unit_test(partial_message_is_not_idle),
        cmocka_unit_test(truncation_is_described),
        cmocka_unit_test(oversized_and_compressed_are_refused),
        cmocka_unit_test(backoff_follows_grpc_schedule),
        cmocka_unit_test(backoff_jitter_varies),
        cmocka_unit_test(keepalive_pings_every_interval),
        cmocka_unit_test(keepalive_without_ack_is_dead_after_the_timeout),
    };
    return cmocka_run_group_tests_name("grpc_frame", tests, NULL, NULL);
}
