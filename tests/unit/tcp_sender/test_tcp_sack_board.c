/* The RFC 6675 scoreboard. Every test runs twice: from sequence 0 and from just below 2^32,
 * so that the ranges wrap. MSS 1000 B. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xlb_tcp_sack_board.h"

#define MSS 1000u

static const uint32_t bases[] = {0, 0xfffff000u};

static struct xlb_tcp_sack_update apply(struct xlb_tcp_sack_board *b, uint32_t base, uint32_t ack,
                                        uint32_t nxt, const uint32_t (*edges)[2], unsigned n)
{
    struct xlb_tcp_sack_block blocks[4];
    for (unsigned i = 0; i < n; i++)
        blocks[i] = (struct xlb_tcp_sack_block){base + edges[i][0], base + edges[i][1]};
    return xlb_tcp_sack_board_update(b, base + ack, base + nxt, blocks, n);
}

static void blocks_are_kept_merged_and_counted_once(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        uint32_t B = bases[k];
        struct xlb_tcp_sack_board b = {0};
        const uint32_t two[][2] = {{2000, 3000}, {4000, 5000}};
        struct xlb_tcp_sack_update u = apply(&b, B, 1000, 6000, two, 2);
        assert_int_equal(u.newly_sacked, 2000);
        assert_int_equal(b.n, 2);
        assert_true(xlb_tcp_sack_board_has(&b, B + 2500));
        assert_false(xlb_tcp_sack_board_has(&b, B + 3500));
        assert_int_equal(xlb_tcp_sack_board_high(&b, B + 1000), B + 5000);
        /* The gap filled: one range, only the new 1000 bytes counted. */
        const uint32_t fill[][2] = {{2500, 4500}};
        u = apply(&b, B, 1000, 6000, fill, 1);
        assert_int_equal(u.newly_sacked, 1000);
        assert_int_equal(b.n, 1);
        assert_int_equal(b.r[0].start, B + 2000);
        assert_int_equal(b.r[0].end, B + 5000);
        /* A cumulative ACK inside nothing SACKed trims nothing; past a range drops it. */
        u = apply(&b, B, 5000, 6000, NULL, 0);
        assert_int_equal(b.n, 0);
        assert_false(u.reneged);
    }
}

static void dsack_and_invalid_blocks_are_not_believed(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        uint32_t B = bases[k];
        struct xlb_tcp_sack_board b = {0};
        /* RFC 2883: a first block below the cumulative ACK reports a duplicate. */
        const uint32_t dup[][2] = {{500, 1000}, {2000, 3000}};
        struct xlb_tcp_sack_update u = apply(&b, B, 1000, 6000, dup, 2);
        assert_true(u.dsack);
        assert_int_equal(u.newly_sacked, 1000);
        /* Beyond what was sent, empty, or reversed: ignored and counted. */
        const uint32_t bad[][2] = {{5000, 7000}, {4000, 4000}, {4500, 4200}};
        u = apply(&b, B, 1000, 6000, bad, 3);
        assert_int_equal(u.invalid, 3);
        assert_int_equal(xlb_tcp_sack_board_bytes(&b), 1000);
    }
}

static void is_lost_needs_three_ranges_or_more_than_two_segments_above(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        uint32_t B = bases[k];
        struct xlb_tcp_sack_board b = {0};
        const uint32_t two[][2] = {{2000, 3000}, {4000, 5000}};
        apply(&b, B, 1000, 9000, two, 2);
        assert_false(xlb_tcp_sack_board_is_lost(&b, B + 1000, MSS)); /* 2 ranges, 2000 B */
        const uint32_t third[][2] = {{6000, 6100}};
        apply(&b, B, 1000, 9000, third, 1);
        assert_true(xlb_tcp_sack_board_is_lost(&b, B + 1000, MSS));  /* 3 ranges */
        assert_false(xlb_tcp_sack_board_is_lost(&b, B + 3000, MSS)); /* 2 above it */
        struct xlb_tcp_sack_board c = {0};
        const uint32_t big[][2] = {{2000, 4001}};
        apply(&c, B, 1000, 9000, big, 1);
        assert_true(xlb_tcp_sack_board_is_lost(&c, B + 1000, MSS)); /* 2001 B > 2 MSS */
    }
}

static void pipe_counts_holes_not_lost_and_retransmissions(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        uint32_t B = bases[k];
        struct xlb_tcp_sack_board b = {0};
        const uint32_t three[][2] = {{2000, 3000}, {4000, 5000}, {5500, 6000}};
        apply(&b, B, 1000, 7000, three, 3);
        /* Holes: [1000,2000) has 3 ranges above: lost, not in the pipe. [3000,4000) has 2
         * ranges, 1500 B above: in the pipe. [5000,5500) and [6000,7000): in the pipe. */
        assert_int_equal(xlb_tcp_sack_board_pipe(&b, B + 1000, B + 7000, B + 1000, MSS, B + 1000),
                         1000 + 500 + 1000);
        /* Half of the lost hole retransmitted: it counts again. */
        assert_int_equal(xlb_tcp_sack_board_pipe(&b, B + 1000, B + 7000, B + 1500, MSS, B + 1000),
                         2500 + 500);
        /* After an RTO everything below the recovery point is lost. */
        assert_int_equal(xlb_tcp_sack_board_pipe(&b, B + 1000, B + 7000, B + 1000, MSS, B + 7000),
                         0);
        uint32_t s, e;
        assert_true(xlb_tcp_sack_board_next_hole(&b, B + 2500, B + 7000, &s, &e));
        assert_int_equal(s, B + 3000);
        assert_int_equal(e, B + 4000);
        assert_false(xlb_tcp_sack_board_next_hole(&b, B + 4000, B + 5000, &s, &e));
    }
}

static void a_renege_clears_the_board(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        uint32_t B = bases[k];
        struct xlb_tcp_sack_board b = {0};
        const uint32_t one[][2] = {{2000, 3000}};
        apply(&b, B, 1000, 4000, one, 1);
        /* The cumulative ACK reaches 2000 but not 3000: the peer no longer holds 2000..3000. */
        struct xlb_tcp_sack_update u = apply(&b, B, 2000, 4000, NULL, 0);
        assert_true(u.reneged);
        assert_int_equal(b.n, 0);
    }
}

static void many_small_blocks_stay_within_the_bound(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        uint32_t B = bases[k];
        struct xlb_tcp_sack_board b = {0};
        unsigned dropped = 0;
        for (uint32_t i = 0; i < 40; i++) {
            const uint32_t blk[][2] = {{1100 + i * 100, 1110 + i * 100}};
            dropped += apply(&b, B, 1000, 10000, blk, 1).dropped;
        }
        assert_int_equal(b.n, XLB_TCP_SACK_BOARD_MAX);
        assert_int_equal(dropped, 40 - XLB_TCP_SACK_BOARD_MAX);
        /* The lowest ranges are the ones kept: they decide what is lost. */
        assert_int_equal(b.r[0].start, B + 1100);
        for (unsigned i = 1; i < b.n; i++)
            assert_true((int32_t)(b.r[i].start - b.r[i - 1].end) > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blocks_are_kept_merged_and_counted_once),
        cmocka_unit_test(dsack_and_invalid_blocks_are_not_believed),
        cmocka_unit_test(is_lost_needs_three_ranges_or_more_than_two_segments_above),
        cmocka_unit_test(pipe_counts_holes_not_lost_and_retransmissions),
        cmocka_unit_test(a_renege_clears_the_board),
        cmocka_unit_test(many_small_blocks_stay_within_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
