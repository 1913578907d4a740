/* Congestion control: NewReno's and CUBIC's windows against the RFCs' formulas. MSS 1000 B. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xlb_tcp_cc.h"

#define MSS 1000u

static void the_initial_window_is_ten_segments(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc;
    xlb_tcp_cc_init(&cc, XLB_TCP_CC_CUBIC, MSS);
    assert_int_equal(cc.cwnd, 10 * MSS); /* RFC 6928 */
    assert_true(cc.ssthresh > 1000000);
}

static void slow_start_counts_bytes_up_to_two_segments_per_ack(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc;
    xlb_tcp_cc_init(&cc, XLB_TCP_CC_NEWRENO, MSS);
    xlb_tcp_cc_on_ack(&cc, 1000, 0, 1);
    assert_int_equal(cc.cwnd, 11000);
    xlb_tcp_cc_on_ack(&cc, 500, 0, 2); /* RFC 3465: by the bytes acknowledged */
    assert_int_equal(cc.cwnd, 11500);
    xlb_tcp_cc_on_ack(&cc, 5000, 0, 3); /* L = 2: at most two segments */
    assert_int_equal(cc.cwnd, 13500);
}

static void newreno_halves_and_grows_a_segment_per_window(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc;
    xlb_tcp_cc_init(&cc, XLB_TCP_CC_NEWRENO, MSS);
    cc.cwnd = 20000;
    xlb_tcp_cc_on_congestion(&cc, 20000, 0); /* RFC 5681 (4): max(flight / 2, 2 MSS) */
    assert_int_equal(cc.ssthresh, 10000);
    assert_int_equal(cc.cwnd, 10000);
    /* Congestion avoidance: one MSS per cwnd's worth of acknowledged bytes. */
    for (int i = 0; i < 9; i++)
        xlb_tcp_cc_on_ack(&cc, 1000, 0, 10);
    assert_int_equal(cc.cwnd, 10000);
    xlb_tcp_cc_on_ack(&cc, 1000, 0, 10);
    assert_int_equal(cc.cwnd, 11000);
    /* Never below two segments. */
    xlb_tcp_cc_on_congestion(&cc, 1000, 0);
    assert_int_equal(cc.ssthresh, 2000);
}

static void an_rto_drops_to_one_segment_and_repeats_do_not_halve_again(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc;
    xlb_tcp_cc_init(&cc, XLB_TCP_CC_NEWRENO, MSS);
    cc.cwnd = 20000;
    xlb_tcp_cc_on_rto(&cc, 20000, 1, 0);
    assert_int_equal(cc.ssthresh, 10000);
    assert_int_equal(cc.cwnd, MSS);
    xlb_tcp_cc_on_rto(&cc, 20000, 2, 0); /* the same loss, timed out again */
    assert_int_equal(cc.ssthresh, 10000);
    assert_int_equal(cc.cwnd, MSS);
    /* And slow start brings it back towards ssthresh. */
    xlb_tcp_cc_on_ack(&cc, 1000, 0, 1);
    assert_int_equal(cc.cwnd, 2 * MSS);
}

/* A CUBIC sender at 100 segments that sees a loss. */
static struct xlb_tcp_cc cubic_after_loss(void)
{
    struct xlb_tcp_cc cc;
    xlb_tcp_cc_init(&cc, XLB_TCP_CC_CUBIC, MSS);
    cc.cwnd = 100000;
    xlb_tcp_cc_on_congestion(&cc, 100000, 0);
    return cc;
}

static void cubic_reduces_by_beta_and_computes_k(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc = cubic_after_loss();
    /* RFC 9438 4.6: ssthresh = 0.7 x flight = 70 segments; W_max = 100 segments. */
    assert_int_equal(cc.ssthresh, 70000);
    assert_int_equal(cc.cwnd, 70000);
    assert_int_equal(cc.cubic.w_max, 100000);
    /* The first ACK starts the epoch: K = cbrt((100 - 70) / 0.4) = cbrt(75) s = 4.2172 s. */
    xlb_tcp_cc_on_ack(&cc, 1000, 100000, 1000000);
    assert_true(fabs(cc.cubic.k_us - cbrt(75.0) * 1e6) < 2.0);
}

static void cubic_follows_w_cubic_one_rtt_ahead(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc = cubic_after_loss();
    uint64_t t0 = 1000000;
    xlb_tcp_cc_on_ack(&cc, 1000, 100000, t0);
    double cwnd = cc.cwnd;
    /* Two seconds later, RTT 100 ms: target = W_cubic(2.1 s) = 0.4 x (2.1 - K)^3 + 100 segments,
     * and one ACK of a segment moves cwnd by (target - cwnd) / cwnd of a segment's bytes. */
    double k = cbrt(75.0);
    double target = (0.4 * pow(2.1 - k, 3) + 100.0) * MSS;
    double expect = cwnd + (target - cwnd) * 1000 / cwnd;
    xlb_tcp_cc_on_ack(&cc, 1000, 100000, t0 + 2000000);
    assert_true(fabs(cc.cwnd - expect) <= 2.0); /* a carried fraction */
    /* Well past K the window is above the old maximum: the convex region. */
    for (int i = 0; i < 2000; i++)
        xlb_tcp_cc_on_ack(&cc, 1000, 100000, t0 + 6000000 + (uint64_t)i * 1000);
    assert_true(cc.cwnd > 100000);
}

static void cubic_growth_is_capped_at_half_a_window_per_rtt(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc = cubic_after_loss();
    xlb_tcp_cc_on_ack(&cc, 1000, 100000, 1000000);
    uint32_t before = cc.cwnd;
    /* 100 s later W_cubic is huge; a whole window of ACKs may add at most 0.5 x cwnd. */
    uint32_t acks = before / MSS;
    for (uint32_t i = 0; i < acks; i++)
        xlb_tcp_cc_on_ack(&cc, 1000, 100000, 101000000);
    assert_true(cc.cwnd > before);
    assert_true(cc.cwnd <= before + before / 2 + 2 * MSS);
}

static void cubic_grows_like_reno_on_short_rtts(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc = cubic_after_loss();
    /* RTT 1 ms, 100 round trips of a window of ACKs: 0.1 s, in which W_cubic grows about two
     * segments, while Reno's estimate grows alpha = 3 x 0.3 / 1.7 = 0.53 segment per RTT
     * until it passes the old window of 100 segments (57 RTTs), then 1 per RTT (43 more):
     * about 70 + 30 + 43 = 143 segments. */
    uint64_t now = 1000000;
    for (int rtt = 0; rtt < 100; rtt++, now += 1000) {
        uint32_t acks = cc.cwnd / MSS;
        for (uint32_t i = 0; i < acks; i++)
            xlb_tcp_cc_on_ack(&cc, MSS, 1000, now);
    }
    assert_true(cc.cwnd > 130000);
    assert_true(cc.cwnd < 150000);
}

static void fast_convergence_lowers_the_remembered_maximum(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc = cubic_after_loss(); /* W_max 100 segments */
    cc.cwnd = 90000;
    xlb_tcp_cc_on_congestion(&cc, 90000, 0); /* below W_max: W_max = 90 x (1 + 0.7) / 2 */
    assert_int_equal(cc.cubic.w_max, 76500);
    assert_int_equal(cc.ssthresh, 63000);
}

static void idle_restarts_from_the_initial_window(void **state)
{
    (void)state;
    struct xlb_tcp_cc cc;
    xlb_tcp_cc_init(&cc, XLB_TCP_CC_CUBIC, MSS);
    cc.cwnd = 50000;
    xlb_tcp_cc_on_idle(&cc);
    assert_int_equal(cc.cwnd, 10 * MSS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_initial_window_is_ten_segments),
        cmocka_unit_test(slow_start_counts_bytes_up_to_two_segments_per_ack),
        cmocka_unit_test(newreno_halves_and_grows_a_segment_per_window),
        cmocka_unit_test(an_rto_drops_to_one_segment_and_repeats_do_not_halve_again),
        cmocka_unit_test(cubic_reduces_by_beta_and_computes_k),
        cmocka_unit_test(cubic_follows_w_cubic_one_rtt_ahead),
        cmocka_unit_test(cubic_growth_is_capped_at_half_a_window_per_rtt),
        cmocka_unit_test(cubic_grows_like_reno_on_short_rtts),
        cmocka_unit_test(fast_convergence_lowers_the_remembered_maximum),
        cmocka_unit_test(idle_restarts_from_the_initial_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
