/*
 * The watch over a recovery's retransmissions (xlb_tcp_rxt_watch.h): what it forgets, what it
 * finds lost, and its bound. Sequence numbers from 0 and from just below 2^32.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xlb_tcp_rxt_watch.h"

#define MSS 1000u

static const uint32_t bases[] = {0, 0xfffff000u};

static void sack(struct xlb_tcp_sack_board *b, uint32_t base, uint32_t ack, uint32_t nxt,
                 uint32_t left, uint32_t right)
{
    struct xlb_tcp_sack_block blk = {base + left, base + right};
    xlb_tcp_sack_board_update(b, base + ack, base + nxt, &blk, 1);
}

static void delivered_copies_are_forgotten_and_missing_ones_become_due(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        uint32_t base = bases[k];
        struct xlb_tcp_rxt_watch x = {0};
        struct xlb_tcp_sack_board b = {0};
        /* Holes at 0 and 2000 retransmitted with 10000 sent; then 4000 more sent. */
        xlb_tcp_rxt_watch_sent(&x, base + 0, MSS, base + 10000);
        xlb_tcp_rxt_watch_sent(&x, base + 2000, MSS, base + 10000);
        assert_int_equal(x.n, 2);
        /* The copy of 2000 arrives, and 2000 B sent after both: within the margin. */
        sack(&b, base, 0, 14000, 1000, 12000);
        bool head;
        assert_int_equal(xlb_tcp_rxt_watch_on_ack(&x, &b, base + 0, MSS, &head), 0);
        assert_int_equal(x.n, 1); /* 2000 is delivered */
        uint32_t s, e;
        assert_false(xlb_tcp_rxt_watch_next(&x, &b, base + 0, &s, &e));
        assert_int_equal(xlb_tcp_rxt_watch_due_bytes(&x, base + 0), 0);
        /* 3000 B after it: the copy of 0 is lost, and it is the segment at snd_una. */
        sack(&b, base, 0, 14000, 1000, 13001);
        assert_int_equal(xlb_tcp_rxt_watch_on_ack(&x, &b, base + 0, MSS, &head), 1);
        assert_true(head);
        assert_true(xlb_tcp_rxt_watch_next(&x, &b, base + 0, &s, &e));
        assert_int_equal(s, base + 0);
        assert_int_equal(e, base + MSS);
        assert_int_equal(xlb_tcp_rxt_watch_due_bytes(&x, base + 0), MSS);
        /* Found once: the next ACK does not count it again. */
        assert_int_equal(xlb_tcp_rxt_watch_on_ack(&x, &b, base + 0, MSS, &head), 0);
        /* Sent again: watched from the new copy, no longer due. */
        xlb_tcp_rxt_watch_sent(&x, base + 0, MSS, base + 14000);
        assert_false(xlb_tcp_rxt_watch_next(&x, &b, base + 0, &s, &e));
        /* Acknowledged: forgotten. */
        assert_int_equal(xlb_tcp_rxt_watch_on_ack(&x, &b, base + 14000, MSS, &head), 0);
        assert_int_equal(x.n, 0);
    }
}

static void the_watch_is_bounded_and_forgets_the_oldest_copy(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        uint32_t base = bases[k];
        struct xlb_tcp_rxt_watch x = {0};
        for (uint32_t i = 0; i < XLB_TCP_RXT_WATCH + 3; i++)
            xlb_tcp_rxt_watch_sent(&x, base + 2 * i * MSS, MSS, base + 100000 + i);
        assert_int_equal(x.n, XLB_TCP_RXT_WATCH);
        for (unsigned i = 0; i < x.n; i++) /* the three oldest went */
            assert_true(x.w[i].seq - base >= 6 * MSS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(delivered_copies_are_forgotten_and_missing_ones_become_due),
        cmocka_unit_test(the_watch_is_bounded_and_forgets_the_oldest_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
