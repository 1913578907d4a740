/*
 * The TCP endpoint with crafted segments, losses at the tail of a flight (RFC 8985 section 7):
 * the last segments of a flight are lost and no SACK comes after them. A tail loss probe,
 * about two round trips later, makes the peer's ACK tell what is missing, and SACK recovery
 * repairs it; the retransmission timer (200 ms at least) never fires.
 */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "tcp_fixture.h"

#define SEG 1448u /* MSS 1460 less the timestamps option */

/* The peer's ACK of everything below iss + 1 + acked, echoing our clock (an RTT sample), with
 * one SACK block [l, r) relative to iss + 1 when l != r. */
static void peer_ack(struct tf *f, struct xlb_tcp_conn *c, uint32_t iss, uint32_t acked, uint32_t l,
                     uint32_t r)
{
    static uint32_t tsval = 2000;
    tsval++;
    struct tf_out o = {.seq = 101,
                       .ack = iss + 1 + acked,
                       .flags = ACK,
                       .win = 2048,
                       .ts = true,
                       .tsval = tsval,
                       .tsecr = (uint32_t)f->now};
    if (l != r) {
        o.n_sack = 1;
        o.sack_l[0] = iss + 1 + l;
        o.sack_r[0] = iss + 1 + r;
    }
    tf_send(f, c, &o);
}

static bool sent_seq(const struct tf *f, uint32_t seq, uint32_t len)
{
    for (unsigned i = 0; i < f->n_tx; i++) {
        struct tf_seg s;
        tf_tx(f, i, &s);
        if (s.seq == seq && s.len == len)
            return true;
    }
    return false;
}

/* Five segments; the peer gets the first two, the last three are lost. Nothing more to send:
 * the probe is the last segment again, its SACK proves the two below it lost. */
static void test_lost_tail_recovered_by_a_probe(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 5 * SEG)), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 5);
    tf_clear_tx(f);
    peer_ack(f, c, iss, 2 * SEG, 0, 0);
    assert_int_equal(f->n_tx, 0);
    /* Well before the RTO: one probe, the last segment with its bytes. */
    tf_advance(f, 50);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss + 1 + 4 * SEG);
    assert_int_equal(s.len, SEG);
    for (uint32_t b = 0; b < SEG; b++)
        assert_int_equal(s.data[b], tf_pattern(4 * SEG + b));
    assert_int_equal(xlb_tcp_counters(f->ep)->recovery.tlp_probes, 1);
    assert_int_equal(xlb_tcp_counters(f->ep)->rtos, 0);
    /* The peer SACKs the probe: segments 3 and 4 go again at once. */
    tf_clear_tx(f);
    peer_ack(f, c, iss, 2 * SEG, 4 * SEG, 5 * SEG);
    assert_true(sent_seq(f, iss + 1 + 2 * SEG, SEG));
    assert_true(sent_seq(f, iss + 1 + 3 * SEG, SEG));
    assert_int_equal(xlb_tcp_counters(f->ep)->recovery.tlp_recoveries, 1);
    /* Everything arrives: no timer fires any more, and no RTO ever did. */
    peer_ack(f, c, iss, 5 * SEG, 0, 0);
    tf_clear_tx(f);
    tf_advance(f, 2000);
    assert_int_equal(f->n_tx, 0);
    assert_int_equal(xlb_tcp_counters(f->ep)->rtos, 0);
    assert_int_equal(xlb_tcp_counters(f->ep)->recovery.tlp_probes, 1);
    assert_int_equal(tf_mbufs_in_use(f), 0);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* Data waits behind the congestion window and the peer's window has room: the probe is a new
 * segment (RFC 8985 section 7.3), sent although cwnd is full. */
static void test_probe_sends_new_data_when_it_can(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 20 * SEG)), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 10); /* the initial window */
    tf_clear_tx(f);
    peer_ack(f, c, iss, SEG, 0, 0); /* slow start: two more go */
    assert_int_equal(f->n_tx, 2);
    tf_clear_tx(f);
    tf_advance(f, 50);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss + 1 + 12 * SEG);
    assert_int_equal(s.len, SEG);
    assert_int_equal(xlb_tcp_counters(f->ep)->recovery.tlp_probes, 1);
    /* Only the probe arrived: the first hole goes first. */
    tf_clear_tx(f);
    peer_ack(f, c, iss, SEG, 12 * SEG, 13 * SEG);
    assert_true(f->n_tx >= 1);
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss + 1 + SEG);
    assert_int_equal(xlb_tcp_counters(f->ep)->rtos, 0);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* A peer without SACK could not say what the probe found: no probe, the RTO as before. */
static void test_no_probe_without_sack(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, false, &iss);
    tf_send(f, c, &(struct tf_out){.seq = 101, .ack = iss + 1, .flags = ACK, .win = 65535});
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 3 * 1460)), 0);
    xlb_tcp_flush(f->ep, c);
    tf_advance(f, 5);
    tf_send(f, c, &(struct tf_out){.seq = 101, .ack = iss + 1 + 1460, .flags = ACK, .win = 65535});
    tf_clear_tx(f);
    tf_advance(f, 150);
    assert_int_equal(f->n_tx, 0);
    assert_int_equal(xlb_tcp_counters(f->ep)->recovery.tlp_probes, 0);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_tail_recovered_by_a_probe),
        cmocka_unit_test(test_probe_sends_new_data_when_it_can),
        cmocka_unit_test(test_no_probe_without_sack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
