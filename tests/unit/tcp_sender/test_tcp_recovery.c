/*
 * Loss recovery, driven as the endpoint core drives it: a sender with ten segments of 1000 B
 * in flight, scripted ACKs from a peer that lost some of them, and what the module says to
 * send after each. Each scenario runs from sequence 0 and from just below 2^32.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xlb_tcp_recovery.h"

#define MSS 1000u

static const uint32_t bases[] = {0, 0xfffff000u};

/* The core's side: sequence variables, the queue, and the counters. */
struct sender {
    struct xlb_tcp_recovery r;
    struct xlb_tcp_recovery_stats st;
    uint32_t base, una, nxt, unsent;
};

static void start(struct sender *s, uint32_t base, bool sack, enum xlb_tcp_cc_kind cc)
{
    *s = (struct sender){.base = base, .una = base + 1, .nxt = base + 10001, .unsent = 50000};
    xlb_tcp_recovery_init(&s->r, cc, sack, MSS, base);
}

static struct xlb_tcp_send_view view(const struct sender *s)
{
    return (struct xlb_tcp_send_view){
        .snd_una = s->una, .snd_nxt = s->nxt, .snd_wnd = 1 << 20, .unsent = s->unsent, .mss = MSS};
}

/* An ACK of `ack` (relative) with SACK blocks [l, r) relative, as the core reports it. */
static void ack(struct sender *s, uint32_t rel_ack, const uint32_t (*blocks)[2], unsigned n)
{
    struct xlb_tcp_sack_block b[4];
    for (unsigned i = 0; i < n; i++)
        b[i] = (struct xlb_tcp_sack_block){s->base + blocks[i][0], s->base + blocks[i][1]};
    uint32_t a = s->base + rel_ack;
    struct xlb_tcp_ack_event ev = {.ack = a,
                                   .snd_una = s->una,
                                   .snd_nxt = s->nxt,
                                   .sack = b,
                                   .n_sack = n,
                                   .duplicate = a == s->una,
                                   .srtt_us = 1000,
                                   .now_us = 1000000};
    xlb_tcp_recovery_on_ack(&s->r, &ev, &s->st);
    s->una = a;
}

/* Ask what to send, send it (as the core would), and return it relative to the base. */
static struct xlb_tcp_send_choice next(struct sender *s)
{
    struct xlb_tcp_send_view v = view(s);
    struct xlb_tcp_send_choice c = xlb_tcp_recovery_next(&s->r, &v, &s->st);
    if (c.what == XLB_TCP_SEND_NOTHING)
        return c;
    xlb_tcp_recovery_sent(&s->r, c.seq, c.len, c.what == XLB_TCP_SEND_RETRANSMIT);
    if (c.what == XLB_TCP_SEND_NEW) {
        assert_int_equal(c.seq, s->nxt);
        s->nxt += c.len;
        s->unsent -= c.len;
    }
    c.seq -= s->base;
    return c;
}

static void expect(struct sender *s, enum xlb_tcp_send_what what, uint32_t rel_seq, uint32_t len)
{
    struct xlb_tcp_send_choice c = next(s);
    assert_int_equal(c.what, what);
    if (what != XLB_TCP_SEND_NOTHING) {
        assert_int_equal(c.seq, rel_seq);
        assert_int_equal(c.len, len);
    }
}

static void one_loss_with_sack_is_repaired_by_one_retransmission(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        struct sender s;
        start(&s, bases[k], true, XLB_TCP_CC_NEWRENO);
        /* Segment 1..1001 lost; the peer SACKs what follows, one segment per ACK. */
        for (uint32_t got = 2; got <= 3; got++) {
            const uint32_t blk[][2] = {{1001, 1 + got * 1000}};
            ack(&s, 1, blk, 1);
            assert_false(s.r.in_recovery);
            /* Limited transmit (RFC 3042): one new segment per duplicate. */
            expect(&s, XLB_TCP_SEND_NEW, 10001 + (got - 2) * 1000, MSS);
        }
        assert_int_equal(s.st.limited_transmits, 2);
        const uint32_t third[][2] = {{1001, 4001}};
        ack(&s, 1, third, 1);
        assert_true(s.r.in_recovery);
        assert_int_equal(s.st.fast_retransmits, 1);
        assert_int_equal(s.st.sack_recoveries, 1);
        /* NewReno's reduction from the 12 segments in flight: ssthresh 6 segments. */
        assert_int_equal(s.r.cc.cwnd, 6000);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        /* pipe: 1000 retransmitted + 8000 not SACKed above 4001 > cwnd: nothing more. */
        expect(&s, XLB_TCP_SEND_NOTHING, 0, 0);
        /* More SACKs drain the pipe; once cwnd - pipe >= 1 MSS, new data goes. */
        const uint32_t more[][2] = {{1001, 8001}};
        ack(&s, 1, more, 1); /* pipe = 1000 + 4000 */
        expect(&s, XLB_TCP_SEND_NEW, 12001, MSS);
        expect(&s, XLB_TCP_SEND_NOTHING, 0, 0);
        /* The retransmission arrives: the full ACK ends recovery at cwnd = ssthresh. */
        ack(&s, 12001, NULL, 0);
        assert_false(s.r.in_recovery);
        assert_int_equal(s.r.cc.cwnd, 6000);
    }
}

static void a_second_hole_goes_once_sacks_prove_it_lost(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        struct sender s;
        start(&s, bases[k], true, XLB_TCP_CC_CUBIC);
        s.unsent = 0; /* nothing new to send: only retransmissions */
        /* Lost: 1..1001 and 3001..4001. */
        const uint32_t a1[][2] = {{1001, 3001}, {4001, 5001}};
        ack(&s, 1, a1, 2);
        const uint32_t a2[][2] = {{4001, 6001}, {1001, 3001}};
        ack(&s, 1, a2, 2);
        assert_true(s.r.in_recovery); /* IsLost(1): 4000 B SACKed above > 2 MSS */
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        /* 3001 has 2000 B above it: not lost yet; rule 3 may not run before rule 2 fails,
         * and with no new data and cwnd 7000 - pipe (1000 + 1000 + 4000) it does: it goes. */
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 3001, MSS);
        expect(&s, XLB_TCP_SEND_NOTHING, 0, 0);
        ack(&s, 3001, (const uint32_t[][2]){{4001, 9001}}, 1); /* partial ACK */
        assert_true(s.r.in_recovery);
        ack(&s, 10001, NULL, 0);
        assert_false(s.r.in_recovery);
        assert_int_equal(s.st.fast_retransmits, 1);
    }
}

static void newreno_without_sack_retransmits_each_hole_on_partial_acks(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        struct sender s;
        start(&s, bases[k], false, XLB_TCP_CC_NEWRENO);
        s.unsent = 0;
        for (int i = 0; i < 3; i++)
            ack(&s, 1, NULL, 0);
        assert_true(s.r.in_recovery);
        assert_int_equal(s.st.newreno_recoveries, 1);
        assert_int_equal(s.r.cc.ssthresh, 5000);
        assert_int_equal(xlb_tcp_recovery_cwnd(&s.r), 8000); /* ssthresh + 3 MSS */
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        /* The partial ACK (RFC 6582 step 5) names the next hole: it goes at once. */
        ack(&s, 3001, NULL, 0);
        assert_int_equal(s.st.partial_acks, 1);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 3001, MSS);
        ack(&s, 10001, NULL, 0);
        assert_false(s.r.in_recovery);
        assert_int_equal(xlb_tcp_recovery_cwnd(&s.r), 5000);
    }
}

static void after_an_rto_everything_goes_again_from_snd_una_in_slow_start(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        struct sender s;
        start(&s, bases[k], true, XLB_TCP_CC_NEWRENO);
        s.unsent = 0;
        xlb_tcp_recovery_on_rto(&s.r, s.una, s.nxt, 1, 2000000, &s.st);
        assert_int_equal(s.st.rto_recoveries, 1);
        assert_int_equal(s.r.cc.cwnd, MSS);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        expect(&s, XLB_TCP_SEND_NOTHING, 0, 0); /* one segment of window */
        ack(&s, 1001, NULL, 0);                 /* slow start: two now */
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1001, MSS);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 2001, MSS);
        expect(&s, XLB_TCP_SEND_NOTHING, 0, 0);
        /* A further expiry of the same loss does not count as a new one. */
        xlb_tcp_recovery_on_rto(&s.r, s.una, s.nxt, 2, 3000000, &s.st);
        assert_int_equal(s.st.rto_recoveries, 1);
        ack(&s, 10001, NULL, 0);
        assert_false(s.r.after_rto);
    }
}

static void old_duplicates_do_not_start_a_second_recovery(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        struct sender s;
        start(&s, bases[k], false, XLB_TCP_CC_NEWRENO);
        s.unsent = 0;
        xlb_tcp_recovery_on_rto(&s.r, s.una, s.nxt, 1, 2000000, &s.st);
        ack(&s, 5001, NULL, 0); /* still below the recovery point (10001) */
        for (int i = 0; i < 5; i++)
            ack(&s, 5001, NULL, 0);
        assert_false(s.r.in_recovery);
        assert_int_equal(s.st.fast_retransmits, 0);
    }
}

/* A recovery ends with the cumulative ACK exactly at its recovery point; the very next segment,
 * sent after that recovery began, is lost. That is a new loss (RFC 6582's "recover" is the
 * highest byte sent, one below our recovery point): three duplicates must start a second
 * recovery, not leave the hole to the retransmission timer. */
static void a_loss_right_at_the_recovery_point_starts_a_new_recovery(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        struct sender s;
        start(&s, bases[k], true, XLB_TCP_CC_CUBIC);
        s.unsent = 0;
        const uint32_t a1[][2] = {{1001, 5001}};
        ack(&s, 1, a1, 1);
        assert_true(s.r.in_recovery);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        ack(&s, 10001, NULL, 0); /* the full ACK: exactly the recovery point */
        assert_false(s.r.in_recovery);
        s.unsent = 5 * MSS;
        for (uint32_t i = 0; i < 5; i++)
            expect(&s, XLB_TCP_SEND_NEW, 10001 + i * MSS, MSS);
        /* 10001..11001 lost; the peer SACKs the three after it. */
        for (uint32_t got = 1; got <= 3; got++) {
            const uint32_t blk[][2] = {{11001, 11001 + got * MSS}};
            ack(&s, 10001, blk, 1);
        }
        assert_true(s.r.in_recovery);
        assert_int_equal(s.st.fast_retransmits, 2);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 10001, MSS);
    }
}

/* Send what the module allows, as the core does after each ACK (bounded). */
static void drain(struct sender *s)
{
    for (int i = 0; i < 100 && next(s).what != XLB_TCP_SEND_NOTHING; i++)
        ;
}

/* The retransmission of the first segment is lost as well. Data sent for the first time after
 * it is SACKed, more than DupThresh segments of it, while the segment is still missing: it
 * goes again at once instead of waiting for the RTO. */
static void a_lost_retransmission_is_sent_again_without_an_rto(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        struct sender s;
        start(&s, bases[k], true, XLB_TCP_CC_CUBIC);
        const uint32_t a1[][2] = {{1001, 5001}};
        ack(&s, 1, a1, 1);
        assert_true(s.r.in_recovery);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        drain(&s);
        /* Everything sent before the retransmission arrives, except the first segment. */
        const uint32_t a2[][2] = {{1001, 10001}};
        ack(&s, 1, a2, 1);
        drain(&s);
        assert_int_equal(s.st.lost_retransmits, 0);
        assert_true(s.nxt - s.base > 10001 + 3 * MSS);
        /* Now the new data sent after it too: the retransmission was lost. */
        const uint32_t a3[][2] = {{1001, s.nxt - s.base}};
        ack(&s, 1, a3, 1);
        assert_int_equal(s.st.lost_retransmits, 1);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        assert_true(s.r.in_recovery);
        assert_int_equal(s.st.fast_retransmits, 1); /* the same recovery, no second reduction */
    }
}

/* Two holes, 1 and 5001, each retransmitted once. The retransmission of 5001 is lost too,
 * and so is the one of 1: once new data sent after both is SACKed, beyond the reordering
 * margin, both go again (the segment at snd_una first), in the same recovery. */
static void a_lost_retransmission_above_snd_una_is_sent_again_without_an_rto(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        struct sender s;
        start(&s, bases[k], true, XLB_TCP_CC_CUBIC);
        const uint32_t a1[][2] = {{1001, 5001}, {6001, 10001}};
        ack(&s, 1, a1, 2);
        assert_true(s.r.in_recovery);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 5001, MSS); /* 4,000 B SACKed above: lost */
        drain(&s);
        uint32_t sent_after = s.nxt - s.base;
        assert_true(sent_after > 10001 + 3 * MSS);
        /* Every new segment arrives; neither retransmission does. */
        const uint32_t a2[][2] = {{1001, 5001}, {6001, sent_after}};
        ack(&s, 1, a2, 2);
        assert_int_equal(s.st.lost_retransmits, 2);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 5001, MSS);
        assert_true(s.r.in_recovery);
        assert_int_equal(s.st.fast_retransmits, 1); /* no second reduction */
        /* The third copy of 5001 arrives: it is watched no more. */
        const uint32_t a3[][2] = {{1001, sent_after}};
        ack(&s, 1, a3, 1);
        assert_int_equal(s.st.lost_retransmits, 2);
        ack(&s, sent_after, NULL, 0);
        assert_false(s.r.in_recovery);
    }
}

/* Reordering within the margin: new data SACKed, but no more than (DupThresh - 1) segments
 * of what was sent after the retransmission. It is not sent again. */
static void a_retransmission_overtaken_by_two_segments_is_not_sent_again(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        struct sender s;
        start(&s, bases[k], true, XLB_TCP_CC_CUBIC);
        s.unsent = 2 * MSS; /* two new segments after the retransmissions, no more */
        const uint32_t a1[][2] = {{1001, 5001}, {6001, 10001}};
        ack(&s, 1, a1, 2);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 1, MSS);
        expect(&s, XLB_TCP_SEND_RETRANSMIT, 5001, MSS);
        drain(&s);
        assert_int_equal(s.nxt - s.base, 12001);
        const uint32_t a2[][2] = {{1001, 5001}, {6001, 12001}};
        ack(&s, 1, a2, 2);
        assert_int_equal(s.st.lost_retransmits, 0);
        struct xlb_tcp_send_choice c = next(&s);
        assert_int_not_equal(c.what, XLB_TCP_SEND_RETRANSMIT);
    }
}

static void without_loss_the_window_limits_new_data(void **state)
{
    (void)state;
    struct sender s;
    start(&s, 0, true, XLB_TCP_CC_CUBIC);
    /* Ten segments in flight fill the initial window. */
    expect(&s, XLB_TCP_SEND_NOTHING, 0, 0);
    ack(&s, 2001, NULL, 0); /* two acknowledged, slow start adds two: four may go */
    for (int i = 0; i < 4; i++)
        expect(&s, XLB_TCP_SEND_NEW, 10001 + (uint32_t)i * MSS, MSS);
    expect(&s, XLB_TCP_SEND_NOTHING, 0, 0);
    assert_int_equal(s.st.limited_transmits, 0);
}

/* The run the core may send without asking for each segment: what the choices would give one
 * by one, within both windows; nothing while a duplicate ACK calls for limited transmit. */
static void a_run_of_new_data_is_what_the_choices_would_give(void **state)
{
    (void)state;
    struct sender s;
    start(&s, 0, true, XLB_TCP_CC_CUBIC);
    struct xlb_tcp_send_view v = view(&s);
    assert_int_equal(xlb_tcp_recovery_new_run(&s.r, &v), 0); /* the initial window is full */
    ack(&s, 2001, NULL, 0);
    v = view(&s);
    assert_int_equal(xlb_tcp_recovery_new_run(&s.r, &v), 4 * MSS); /* the four segments above */
    v.snd_wnd = (s.nxt - s.una) + 2500; /* the peer's window ends first */
    assert_int_equal(xlb_tcp_recovery_new_run(&s.r, &v), 2500);
    const uint32_t blk[][2] = {{3001, 4001}};
    ack(&s, 2001, blk, 1);
    v = view(&s);
    assert_int_equal(s.r.dupacks, 1);
    assert_int_equal(xlb_tcp_recovery_new_run(&s.r, &v), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_loss_with_sack_is_repaired_by_one_retransmission),
        cmocka_unit_test(a_second_hole_goes_once_sacks_prove_it_lost),
        cmocka_unit_test(newreno_without_sack_retransmits_each_hole_on_partial_acks),
        cmocka_unit_test(after_an_rto_everything_goes_again_from_snd_una_in_slow_start),
        cmocka_unit_test(old_duplicates_do_not_start_a_second_recovery),
        cmocka_unit_test(a_loss_right_at_the_recovery_point_starts_a_new_recovery),
        cmocka_unit_test(a_lost_retransmission_is_sent_again_without_an_rto),
        cmocka_unit_test(a_lost_retransmission_above_snd_una_is_sent_again_without_an_rto),
        cmocka_unit_test(a_retransmission_overtaken_by_two_segments_is_not_sent_again),
        cmocka_unit_test(without_loss_the_window_limits_new_data),
        cmocka_unit_test(a_run_of_new_data_is_what_the_choices_would_give),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
