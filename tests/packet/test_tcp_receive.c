/*
 * The TCP endpoint with crafted segments, the receiving side: sequence numbers wrapping,
 * PAWS (RFC 7323), the right edge of the window, reassembly, SACK and D-SACK blocks (RFC 2018,
 * 2883), reassembly budgets, the receive window a slow reader closes, delayed ACKs, and
 * malformed segments counted by reason.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "tcp_fixture.h"

/* Sequence numbers wrapping past 2^32 on both sides: exact bytes each way. */
static void test_wrapped_sequence(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss = 0xfffffc00u, irs = 0xfffffe00u;
    struct xlb_tcp_conn *c = tf_active(f, iss, irs);
    /* Peer -> us: 3 segments of 400 crossing 2^32. */
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(tf_peer_data(f, c, irs, iss, i * 400, 400, 0, 600 + i), 0);
    tf_check_read(f, c, 0, 1200);
    /* Us -> peer: 3000 bytes from iss + 1 = 2^32 - 1023. */
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 3000)), 0);
    tf_clear_tx(f);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 3);
    uint32_t expect = iss + 1, total = 0;
    for (unsigned i = 0; i < 3; i++) {
        struct tf_seg s;
        tf_tx(f, i, &s);
        assert_int_equal(s.seq, expect);
        for (uint32_t b = 0; b < s.len; b++)
            assert_int_equal(s.data[b], tf_pattern(total + b));
        expect += s.len;
        total += s.len;
    }
    assert_int_equal(total, 3000);
    tf_clear_tx(f);
    /* The ACK past the wrap frees the send queue. */
    tf_send(
        f, c,
        &(struct tf_out){
            .seq = irs + 1201, .ack = expect, .flags = ACK, .win = 1024, .ts = true, .tsval = 700});
    struct xlb_tcp_conn_info info;
    xlb_tcp_conn_info(c, &info);
    assert_int_equal(info.snd_queue, 0);
    assert_int_equal(info.unacked, 0);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_paws_drops_old_timestamp(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    assert_int_equal(tf_peer_data(f, c, 100, iss, 0, 10, 0, 5000), 0);
    tf_clear_tx(f);
    /* Next bytes, but a TSval older than the last one: dropped with an ACK. */
    assert_int_equal(tf_peer_data(f, c, 100, iss, 10, 10, 0, 4000), -1);
    assert_int_equal(xlb_tcp_counters(f->ep)->paws_drops, 1);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.ack, 100 + 1 + 10);
    assert_int_equal(s.opts.tsecr, 5000);
    tf_check_read(f, c, 0, 10);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_straddling_right_edge_trimmed(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.rcv_buf = 4000; /* the SYN-ACK advertises 4,000 bytes */
    cfg.wscale = 0;     /* so that our window is exact to the byte */
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    /* 3,000 then 1,400: the second straddles the right edge at 4,000. */
    assert_int_equal(tf_peer_data(f, c, 100, iss, 0, 1400, 0, 2000), 0);
    assert_int_equal(tf_peer_data(f, c, 100, iss, 1400, 1400, 0, 2000), 0);
    assert_int_equal(tf_peer_data(f, c, 100, iss, 2800, 1400, 0, 2000), 0);
    struct xlb_tcp_conn_info info;
    xlb_tcp_conn_info(c, &info);
    assert_int_equal(info.rcv_queue, 4000);
    tf_check_read(f, c, 0, 4000);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_reassembly_with_overlaps(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    /* Pieces of [0, 1000) out of order and overlapping, then the first. */
    assert_int_equal(tf_peer_data(f, c, 100, iss, 600, 300, 0, 2000), 0);
    assert_int_equal(tf_peer_data(f, c, 100, iss, 300, 400, 0, 2000), 0); /* overlaps 600..700 */
    assert_int_equal(tf_peer_data(f, c, 100, iss, 650, 350, 0, 2000), 0); /* inside and beyond */
    assert_int_equal(tf_peer_data(f, c, 100, iss, 350, 50, 0, 2000), 0);  /* a duplicate */
    assert_int_equal(f->readable, 0);
    assert_int_equal(xlb_tcp_ooo_bytes(f->ep), 700);
    assert_int_equal(tf_peer_data(f, c, 100, iss, 0, 320, 0, 2000), 0); /* fills the gap */
    assert_int_equal(f->readable, 1);
    tf_check_read(f, c, 0, 1000);
    assert_int_equal(xlb_tcp_ooo_bytes(f->ep), 0);
    /* The gap fill is acknowledged at once, to 1,000. */
    struct tf_seg s;
    tf_tx(f, f->n_tx - 1, &s);
    assert_int_equal(s.ack, 101 + 1000);
    assert_int_equal(s.opts.n_sack, 0);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_sack_blocks_most_recent_first(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    tf_peer_data(f, c, 100, iss, 1000, 100, 0, 2000);
    tf_peer_data(f, c, 100, iss, 3000, 100, 0, 2000);
    tf_peer_data(f, c, 100, iss, 2000, 100, 0, 2000);
    tf_peer_data(f, c, 100, iss, 5000, 100, 0, 2000);
    assert_int_equal(f->n_tx, 4); /* each one ACKed at once */
    struct tf_seg s;
    tf_tx(f, 3, &s);
    assert_int_equal(s.ack, 101);
    assert_int_equal(s.opts.n_sack, 3);
    assert_int_equal(s.opts.sack_left[0], 101 + 5000);
    assert_int_equal(s.opts.sack_right[0], 101 + 5100);
    assert_int_equal(s.opts.sack_left[1], 101 + 2000);
    assert_int_equal(s.opts.sack_left[2], 101 + 3000);
    /* Joining 1000..1100 and 1100..2000 and 2000..2100 makes one block. */
    tf_peer_data(f, c, 100, iss, 1100, 900, 0, 2000);
    tf_tx(f, 4, &s);
    assert_int_equal(s.opts.sack_left[0], 101 + 1000);
    assert_int_equal(s.opts.sack_right[0], 101 + 2100);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* A segment received twice: the ACK reports it first as a D-SACK block (RFC 2883), once. */
static void test_dsack_for_duplicates(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_peer_data(f, c, 100, iss, 0, 500, 0, 2000);
    tf_peer_data(f, c, 100, iss, 2000, 100, 0, 2000); /* a hole at 500..2000 */
    tf_clear_tx(f);
    tf_peer_data(f, c, 100, iss, 0, 500, 0, 2000); /* the first one again */
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.ack, 101 + 500);
    assert_int_equal(s.opts.n_sack, 2);
    assert_int_equal(s.opts.sack_left[0], 101);
    assert_int_equal(s.opts.sack_right[0], 101 + 500);
    assert_int_equal(s.opts.sack_left[1], 101 + 2000);
    /* Out of order and duplicate: the block held is reported as the D-SACK. */
    tf_clear_tx(f);
    tf_peer_data(f, c, 100, iss, 2000, 100, 0, 2000);
    tf_tx(f, 0, &s);
    assert_int_equal(s.opts.n_sack, 2);
    assert_int_equal(s.opts.sack_left[0], 101 + 2000);
    assert_int_equal(s.opts.sack_right[0], 101 + 2100);
    /* Once: the next ACK has the ordinary block only. */
    tf_clear_tx(f);
    tf_peer_data(f, c, 100, iss, 3000, 100, 0, 2000);
    tf_tx(f, 0, &s);
    assert_int_equal(s.opts.sack_left[0], 101 + 3000);
    assert_int_equal(s.opts.n_sack, 2);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_reassembly_budgets(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.ooo_max_bytes = 1000;
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_peer_data(f, c, 100, iss, 1000, 800, 0, 2000);
    tf_peer_data(f, c, 100, iss, 3000, 800, 0, 2000); /* over the connection's 1,000 */
    assert_int_equal(xlb_tcp_counters(f->ep)->ooo_dropped_conn, 1);
    assert_int_equal(xlb_tcp_ooo_bytes(f->ep), 800);
    /* Slots (XLB_TCP_OOO_SLOTS, 64): the segment above and 63 one-byte holes fill them, the
     * 64th hole is dropped. */
    for (uint32_t i = 0; i < 64; i++)
        tf_peer_data(f, c, 100, iss, 10 + 2 * i, 1, 0, 2000);
    assert_int_equal(xlb_tcp_counters(f->ep)->ooo_dropped_slots, 1);
    xlb_tcp_abort(f->ep, c);
    assert_int_equal(xlb_tcp_ooo_bytes(f->ep), 0);
    tf_destroy(f);
    /* The worker's budget: two connections share 1,000 bytes. */
    cfg.ooo_max_bytes_worker = 1000;
    f = tf_create(AF_INET, &cfg);
    struct xlb_tcp_conn *c1 = tf_passive(f, 100, true, &iss);
    tf_peer_data(f, c1, 100, iss, 1000, 800, 0, 2000);
    f->peer.local_port = htons(40002); /* a second client connection */
    uint32_t iss2;
    struct xlb_tcp_conn *c2 = tf_passive(f, 100, true, &iss2);
    tf_peer_data(f, c2, 100, iss2, 1000, 800, 0, 2000);
    assert_int_equal(xlb_tcp_counters(f->ep)->ooo_dropped_worker, 1);
    assert_int_equal(xlb_tcp_ooo_bytes(f->ep), 800);
    xlb_tcp_abort(f->ep, c1);
    xlb_tcp_abort(f->ep, c2);
    tf_destroy(f);
}

static void test_slow_reader_closes_window(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.rcv_buf = 8192;
    cfg.wscale = 0;
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    uint32_t off = 0;
    for (unsigned i = 0; i < 8; i++, off += 1024)
        tf_peer_data(f, c, 100, iss, off, 1024, 0, 2000);
    tf_advance(f, 50);
    struct tf_seg s;
    tf_tx(f, f->n_tx - 1, &s);
    assert_int_equal(s.ack, 101 + 8192);
    assert_int_equal(s.win, 0); /* nobody read: the window is closed */
    assert_true(xlb_tcp_counters(f->ep)->zero_windows_sent >= 1);
    /* More data is out of the window now. */
    assert_int_equal(tf_peer_data(f, c, 100, iss, off, 100, 0, 2000), -1);
    tf_clear_tx(f);
    /* Reading reopens it, and a window update says so without waiting for the peer. */
    tf_check_read(f, c, 0, 8192);
    assert_true(f->n_tx >= 1);
    tf_tx(f, f->n_tx - 1, &s);
    /* SWS avoidance: updates move the edge in steps of at least two segments. */
    assert_true(s.win >= 8192 - 2 * 1448 && s.win <= 8192);
    assert_int_equal(s.ack, 101 + 8192);
    assert_int_equal(xlb_tcp_counters(f->ep)->window_updates, f->n_tx);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_delayed_ack(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    tf_peer_data(f, c, 100, iss, 0, 1000, 0, 2000);
    assert_int_equal(f->n_tx, 0);
    tf_peer_data(f, c, 100, iss, 1000, 1000, 0, 2000); /* every second segment */
    assert_int_equal(f->n_tx, 1);
    tf_peer_data(f, c, 100, iss, 2000, 1000, 0, 2000);
    tf_advance(f, 39);
    assert_int_equal(f->n_tx, 1);
    tf_advance(f, 1);
    assert_int_equal(f->n_tx, 2);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* Malformed segments: dropped, counted by reason, the connection untouched. */
static void test_bad_segments_counted(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    const struct tf_out ok = {.seq = 101,
                              .ack = iss + 1,
                              .flags = ACK,
                              .win = 1024,
                              .ts = true,
                              .tsval = 2000,
                              .data = tf_pattern_bytes(0, 10),
                              .len = 10};
    /* A flipped payload bit: bad checksum. */
    struct rte_mbuf *m = tf_build(f, &ok);
    rte_pktmbuf_mtod(m, uint8_t *)[m->data_len - 1] ^= 1;
    assert_int_equal(xlb_tcp_receive(f->ep, c, m, f->now), -1);
    assert_int_equal(xlb_tcp_counters(f->ep)->bad_checksum, 1);
    /* Cut inside the TCP header (the IP length says more than there is). */
    m = tf_build(f, &ok);
    rte_pktmbuf_trim(m, (uint16_t)(m->data_len - 30));
    assert_int_equal(xlb_tcp_receive(f->ep, c, m, f->now), -1);
    assert_int_equal(xlb_tcp_counters(f->ep)->bad_header, 1);
    /* An option running past the header: the TS length byte says 40. */
    m = tf_build(f, &ok);
    uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
    p[20 + 20 + 3] = 40;
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;
    struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(p + 20);
    th->cksum = 0;
    th->cksum = rte_ipv4_udptcp_cksum(ip, th);
    assert_int_equal(xlb_tcp_receive(f->ep, c, m, f->now), -1);
    assert_int_equal(xlb_tcp_counters(f->ep)->bad_options, 1);
    /* Not an ACK (and not a RST or SYN): dropped. */
    struct tf_out no_ack = ok;
    no_ack.flags = PSH;
    assert_int_equal(tf_send(f, c, &no_ack), -1);
    assert_int_equal(xlb_tcp_counters(f->ep)->bad_no_ack, 1);
    assert_int_equal(f->readable, 0);
    assert_int_equal(f->n_tx, 0);
    /* The connection goes on: the good segment is delivered. */
    assert_int_equal(tf_send(f, c, &ok), 0);
    tf_check_read(f, c, 0, 10);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* A reader that keeps up: the window the peer knows never falls below half of what it could be,
 * so reading sends no window update, and the ACKs stay at one per two segments (RFC 9293's
 * delayed ACK, Linux's window-update rule). */
static void test_reader_keeping_up_sends_no_updates(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    uint32_t off = 0;
    for (unsigned i = 0; i < 32; i++) {
        for (unsigned k = 0; k < 2; k++, off += 1448)
            assert_int_equal(tf_peer_data(f, c, 100, iss, off, 1448, 0, 2000), 0);
        tf_check_read(f, c, off - 2 * 1448, 2 * 1448);
    }
    assert_int_equal(xlb_tcp_counters(f->ep)->window_updates, 0);
    assert_int_equal(f->n_tx, 32);
    struct tf_seg s;
    tf_tx(f, f->n_tx - 1, &s);
    assert_int_equal(s.ack, 101 + off);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* The NIC's verdict on the TCP checksum stands where it gave one: a segment it flagged bad is
 * dropped and counted however it sums, one it flagged good is taken without a second pass. */
static void test_nic_checksum_verdict(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    struct tf_out o = {.seq = 101,
                       .ack = iss + 1,
                       .flags = ACK,
                       .win = 1024,
                       .ts = true,
                       .tsval = 2000,
                       .data = tf_pattern_bytes(0, 10),
                       .len = 10};
    struct rte_mbuf *m = tf_build(f, &o);
    m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_BAD;
    assert_int_equal(xlb_tcp_receive(f->ep, c, m, f->now), -1);
    assert_int_equal(xlb_tcp_counters(f->ep)->bad_checksum, 1);
    assert_int_equal(f->readable, 0);
    /* Flagged good: the field is not read (a NIC would have dropped or flagged a bad one). */
    m = tf_build(f, &o);
    struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, 20);
    th->cksum = (uint16_t)~th->cksum;
    m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
    assert_int_equal(xlb_tcp_receive(f->ep, c, m, f->now), 0);
    assert_int_equal(xlb_tcp_counters(f->ep)->bad_checksum, 1);
    tf_check_read(f, c, 0, 10);
    /* No verdict (UNKNOWN): verified here, so the same segment is dropped. */
    o.seq += 10;
    o.data = tf_pattern_bytes(10, 10);
    m = tf_build(f, &o);
    th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, 20);
    th->cksum = (uint16_t)~th->cksum;
    assert_int_equal(xlb_tcp_receive(f->ep, c, m, f->now), -1);
    assert_int_equal(xlb_tcp_counters(f->ep)->bad_checksum, 2);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrapped_sequence),
        cmocka_unit_test(test_paws_drops_old_timestamp),
        cmocka_unit_test(test_straddling_right_edge_trimmed),
        cmocka_unit_test(test_reassembly_with_overlaps),
        cmocka_unit_test(test_sack_blocks_most_recent_first),
        cmocka_unit_test(test_dsack_for_duplicates),
        cmocka_unit_test(test_reassembly_budgets),
        cmocka_unit_test(test_slow_reader_closes_window),
        cmocka_unit_test(test_delayed_ack),
        cmocka_unit_test(test_bad_segments_counted),
        cmocka_unit_test(test_reader_keeping_up_sends_no_updates),
        cmocka_unit_test(test_nic_checksum_verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
