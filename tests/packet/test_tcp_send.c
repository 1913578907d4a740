/*
 * The TCP endpoint with crafted segments, the sending side: zero-window probes, the RTO and
 * its backoff (RFC 6298), fast retransmit and recovery with SACK and NewReno (RFC 6675, 6582),
 * keepalive, a shrinking peer window, cwnd growth and restart after idle, PMTU, writes refused
 * and resumed, the listing and the control block's size.
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

static void test_zero_window_probe(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    /* The peer closes its window. */
    tf_send(f, c,
            &(struct tf_out){
                .seq = 101, .ack = iss + 1, .flags = ACK, .win = 0, .ts = true, .tsval = 2000});
    tf_clear_tx(f);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 500)), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 0);
    tf_advance(f, 1000);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss); /* below the window: the peer must answer */
    assert_int_equal(s.len, 0);
    tf_clear_tx(f);
    tf_advance(f, 1999);
    assert_int_equal(f->n_tx, 0);
    tf_advance(f, 1); /* backed off to 2 s */
    assert_int_equal(f->n_tx, 1);
    assert_int_equal(xlb_tcp_counters(f->ep)->zero_window_probes, 2);
    tf_clear_tx(f);
    /* The window opens: the data goes. */
    tf_send(f, c,
            &(struct tf_out){
                .seq = 101, .ack = iss + 1, .flags = ACK, .win = 100, .ts = true, .tsval = 2001});
    assert_int_equal(f->n_tx, 1);
    tf_tx(f, 0, &s);
    assert_int_equal(s.len, 500);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_rto_retransmits_exact_bytes(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 3000)), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 3);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    uint32_t mss = s.len;
    assert_int_equal(mss, 1460 - 12);
    tf_clear_tx(f);
    /* The first segment is acknowledged; the others are lost. */
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 1 + mss,
                             .flags = ACK,
                             .win = 1024,
                             .ts = true,
                             .tsval = 2000});
    tf_advance(f, 999);
    assert_int_equal(f->n_tx, 0);
    tf_advance(f, 1);
    assert_true(f->n_tx >= 1);
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss + 1 + mss);
    assert_int_equal(s.len, mss);
    for (uint32_t b = 0; b < s.len; b++)
        assert_int_equal(s.data[b], tf_pattern(mss + b));
    assert_int_equal(xlb_tcp_counters(f->ep)->rtos, 1);
    assert_true(xlb_tcp_counters(f->ep)->retransmits >= 1);
    /* Everything acknowledged: the send queue's mbufs go back to the pool. */
    tf_clear_tx(f);
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 1 + 3000,
                             .flags = ACK,
                             .win = 1024,
                             .ts = true,
                             .tsval = 2001});
    assert_int_equal(tf_mbufs_in_use(f), 0 + f->n_tx);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* Data never acknowledged: retransmitted after 1, 2 and 4 s (backoff), then the connection
 * gives up with a RST and on_closed(TIMEOUT). */
static void test_retransmission_gives_up(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.retries = 2;
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 100)), 0);
    xlb_tcp_flush(f->ep, c);
    tf_clear_tx(f);
    tf_advance(f, 1000);
    assert_int_equal(f->n_tx, 1);
    tf_advance(f, 1999);
    assert_int_equal(f->n_tx, 1);
    tf_advance(f, 1);
    assert_int_equal(f->n_tx, 2);
    struct tf_seg s;
    tf_tx(f, 1, &s);
    assert_int_equal(s.seq, iss + 1);
    assert_int_equal(s.len, 100);
    assert_int_equal(f->closed, 0);
    tf_advance(f, 4000);
    assert_int_equal(f->closed, 1);
    assert_int_equal(f->close_reason, XLB_TCP_CLOSE_TIMEOUT);
    tf_tx(f, f->n_tx - 1, &s);
    assert_true(s.flags & RST);
    assert_int_equal(xlb_tcp_counters(f->ep)->rst_out_timeout, 1);
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 0);
    tf_destroy(f);
}

static void test_fast_retransmit(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 5 * 1448)), 0);
    xlb_tcp_flush(f->ep, c);
    tf_clear_tx(f);
    for (unsigned i = 0; i < 3; i++)
        tf_send(f, c,
                &(struct tf_out){.seq = 101,
                                 .ack = iss + 1,
                                 .flags = ACK,
                                 .win = 1024,
                                 .ts = true,
                                 .tsval = 2000,
                                 .n_sack = 1,
                                 .sack_l = {iss + 1 + 1448},
                                 .sack_r = {iss + 1 + 1448 * (2 + i)}});
    /* The hole first (RFC 6675); anything after it is data the peer has not SACKed. */
    assert_true(f->n_tx >= 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss + 1);
    assert_int_equal(s.len, 1448);
    for (unsigned i = 0; i < 1448; i++)
        assert_int_equal(s.data[i], tf_pattern(i));
    for (unsigned k = 1; k < f->n_tx; k++) {
        tf_tx(f, k, &s);
        assert_true(s.seq >= iss + 1 + 4 * 1448);
    }
    assert_int_equal(xlb_tcp_counters(f->ep)->recovery.fast_retransmits, 1);
    assert_int_equal(xlb_tcp_counters(f->ep)->recovery.sack_recoveries, 1);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* A peer without SACK (no timestamps: the cookie keeps only the MSS) and NewReno chosen:
 * three duplicate ACKs resend the first segment, a partial ACK the next hole (RFC 6582). */
static void test_newreno_without_sack(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.cc = XLB_TCP_CC_NEWRENO;
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, false, &iss);
    /* Without window scaling (lost with the timestamps) the peer opens 65,535 bytes. */
    tf_send(f, c, &(struct tf_out){.seq = 101, .ack = iss + 1, .flags = ACK, .win = 65535});
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 5 * 1460)), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 5);
    tf_clear_tx(f);
    for (unsigned i = 0; i < 3; i++)
        tf_send(f, c, &(struct tf_out){.seq = 101, .ack = iss + 1, .flags = ACK, .win = 65535});
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss + 1);
    assert_int_equal(s.len, 1460);
    assert_int_equal(xlb_tcp_counters(f->ep)->recovery.newreno_recoveries, 1);
    tf_clear_tx(f);
    /* The first two segments arrive: a partial ACK, and the third goes at once. */
    tf_send(f, c,
            &(struct tf_out){.seq = 101, .ack = iss + 1 + 2 * 1460, .flags = ACK, .win = 1024});
    assert_true(f->n_tx >= 1);
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss + 1 + 2 * 1460);
    assert_int_equal(xlb_tcp_counters(f->ep)->recovery.partial_acks, 1);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_keepalive_probe(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.keepalive_idle_ms = 5000;
    cfg.keepalive_intvl_ms = 1000;
    cfg.keepalive_probes = 2;
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    tf_advance(f, 4999);
    assert_int_equal(f->n_tx, 0);
    tf_advance(f, 1);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss); /* snd_una - 1: the peer answers with an ACK */
    assert_int_equal(s.len, 0);
    assert_int_equal(s.flags, ACK);
    tf_clear_tx(f);
    /* The peer answers: idle again from now. */
    tf_send(f, c,
            &(struct tf_out){
                .seq = 101, .ack = iss + 1, .flags = ACK, .win = 1024, .ts = true, .tsval = 2000});
    tf_advance(f, 4999);
    assert_int_equal(f->n_tx, 0);
    /* Unanswered: two probes, then a RST and the connection ends. */
    tf_advance(f, 1 + 1000 + 1000);
    assert_int_equal(f->closed, 1);
    assert_int_equal(f->close_reason, XLB_TCP_CLOSE_TIMEOUT);
    tf_tx(f, f->n_tx - 1, &s);
    assert_true(s.flags & RST);
    assert_int_equal(xlb_tcp_counters(f->ep)->keepalive_probes, 3);
    tf_destroy(f);
}

/* The peer shrinks its window (RFC 9293 3.8.6 discourages it, but it happens): nothing goes
 * beyond the new right edge, and the rest follows exactly when it reopens. */
static void test_peer_window_shrink(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 1,
                             .flags = ACK,
                             .win = 24,
                             .ts = true,
                             .tsval = 2000}); /* 24 << 7 = 3,072 bytes */
    tf_clear_tx(f);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 6000)), 0);
    xlb_tcp_flush(f->ep, c);
    /* Two full segments; no runt of the 176 bytes left while data is in flight (sender SWS
     * avoidance, RFC 9293 3.8.6.2.1). */
    assert_int_equal(f->n_tx, 2);
    tf_clear_tx(f);
    /* One segment acknowledged, and the window shrinks to 0: the right edge moves left. */
    tf_send(
        f, c,
        &(struct tf_out){
            .seq = 101, .ack = iss + 1 + 1448, .flags = ACK, .win = 0, .ts = true, .tsval = 2001});
    assert_int_equal(f->n_tx, 0);
    /* It reopens: the rest, from 2,896 on, byte for byte. */
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 1 + 2896,
                             .flags = ACK,
                             .win = 1024,
                             .ts = true,
                             .tsval = 2002});
    uint32_t sent = 0;
    for (unsigned i = 0; i < f->n_tx; i++) {
        struct tf_seg s;
        tf_tx(f, i, &s);
        assert_int_equal(s.seq, iss + 1 + 2896 + sent);
        for (uint32_t b = 0; b < s.len; b++)
            assert_int_equal(s.data[b], tf_pattern(2896 + sent + b));
        sent += s.len;
    }
    assert_int_equal(sent, 6000 - 2896);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* Slow start grows cwnd one segment per ACK; after more than an RTO idle it starts again from
 * the initial window (RFC 5681 section 4.1). */
static void test_cwnd_grows_and_restarts_after_idle(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 10 * 1448)), 0);
    xlb_tcp_flush(f->ep, c);
    for (uint32_t i = 1; i <= 10; i++)
        tf_send(f, c,
                &(struct tf_out){.seq = 101,
                                 .ack = iss + 1 + i * 1448,
                                 .flags = ACK,
                                 .win = 1024,
                                 .ts = true,
                                 .tsval = 2000 + i});
    struct xlb_tcp_conn_info info;
    xlb_tcp_conn_info(c, &info);
    assert_int_equal(info.cwnd, 20 * 1448);
    tf_advance(f, 1500); /* idle longer than the RTO (1 s: no RTT sample) */
    tf_clear_tx(f);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 30 * 1448)), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 10);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_pmtu_lowers_mss(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 3000)), 0);
    xlb_tcp_flush(f->ep, c);
    tf_clear_tx(f);
    /* A quoted sequence number outside what is in flight: ignored. */
    xlb_tcp_pmtu(f->ep, c, 1000, iss + 100000);
    assert_int_equal(xlb_tcp_counters(f->ep)->pmtu_ignored, 1);
    assert_int_equal(f->n_tx, 0);
    xlb_tcp_pmtu(f->ep, c, 1000, iss + 1);
    assert_int_equal(xlb_tcp_counters(f->ep)->pmtu_lowered, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.seq, iss + 1);
    assert_int_equal(s.len, 1000 - 40 - 12);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* A write the send buffer cannot take is refused, and on_writable follows the ACK that frees
 * room; the retried write then goes out. */
static void test_write_refused_then_writable(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.snd_buf = 4000;
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 3000)), 0);
    xlb_tcp_flush(f->ep, c);
    struct rte_mbuf *more = tf_payload(f, 3000, 2000);
    assert_int_equal(xlb_tcp_write(f->ep, c, more), -EAGAIN);
    assert_int_equal(f->writable, 0);
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 1 + 1448,
                             .flags = ACK,
                             .win = 1024,
                             .ts = true,
                             .tsval = 2000});
    assert_int_equal(f->writable, 1);
    assert_int_equal(xlb_tcp_write(f->ep, c, more), 0);
    tf_clear_tx(f);
    xlb_tcp_flush(f->ep, c);
    assert_true(f->n_tx >= 1);
    /* A write after shutdown is refused for good. */
    xlb_tcp_shutdown(f->ep, c);
    struct rte_mbuf *late = tf_payload(f, 0, 10);
    assert_int_equal(xlb_tcp_write(f->ep, c, late), -EPIPE);
    rte_pktmbuf_free(late);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_listing_and_size(void **state)
{
    (void)state;
    assert_true(xlb_tcp_conn_size() <= 4096);
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 2000)), 0);
    xlb_tcp_flush(f->ep, c);
    struct xlb_tcp_conn_info info[4];
    assert_int_equal(xlb_tcp_list(f->ep, info, 4), 1);
    assert_int_equal(info[0].state, XLB_TCP_ESTABLISHED);
    assert_int_equal(info[0].snd_queue, 2000);
    assert_int_equal(info[0].unacked, 2000);
    assert_int_equal(info[0].mss, 1448);
    assert_int_equal(info[0].cwnd, 10 * 1448); /* RFC 6928's initial window */
    assert_int_equal(info[0].rto_ms, 1000);    /* no RTT sample yet: RFC 6298's 1 s */
    assert_true(info[0].memory > xlb_tcp_conn_size());
    assert_string_equal(xlb_tcp_state_name(info[0].state), "ESTABLISHED");
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* With the port's checksum offloads, every segment (SYN-ACK, data, ACK) leaves the TCP checksum
 * (and with ip, the IPv4 header's) to the NIC, flagged as DPDK asks; the fixture's tf_tx fills
 * them in as the NIC would and checks them. Without, none is flagged: the checksums are
 * complete (tf_tx verifies them). The workers set them from their ports (xlb_tcp_set_tx_offloads,
 * as here). */
static void check_offload(int family, bool offload, bool ip)
{
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    struct tf *f = tf_create(family, &cfg);
    xlb_tcp_set_tx_offloads(f->ep, offload, ip);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 3000)), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 3);
    uint32_t bytes = 0;
    for (unsigned i = 0; i < f->n_tx; i++) {
        struct tf_seg s;
        tf_tx(f, i, &s);
        assert_int_equal(s.seq, iss + 1 + bytes);
        assert_memory_equal(s.data, tf_pattern_bytes(bytes, s.len), s.len);
        bytes += s.len;
        assert_int_equal((f->tx[i]->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM) != 0, offload);
        assert_int_equal((f->tx[i]->ol_flags & RTE_MBUF_F_TX_IP_CKSUM) != 0,
                         ip && family == AF_INET);
    }
    assert_int_equal(bytes, 3000);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_tx_checksum_offload(void **state)
{
    (void)state;
    check_offload(AF_INET, true, false);
    check_offload(AF_INET6, true, false);
    check_offload(AF_INET, false, false);
    check_offload(AF_INET, true, true);
    check_offload(AF_INET6, true, true); /* IPv6 has no header checksum: nothing more asked */
    check_offload(AF_INET, false, true);
}

/* A segment larger than the header mbuf's room (a jumbo MSS): its payload is attached from the
 * send queue, not copied, and still leaves byte for byte; the queue's mbufs go back to the pool
 * once acknowledged and the sent packets freed. A full 1,448-byte segment is copied into its one
 * header mbuf. */
static void test_large_segments_attach(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.mss_limit4 = 3000;
    struct tf *f = tf_create(AF_INET, &cfg);
    f->peer_mss = 3000;
    uint32_t iss = 5000;
    struct xlb_tcp_conn *c = tf_active(f, iss, 100); /* a cookie's MSS table stops at 1,460 */
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 7000)), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 3);
    uint32_t bytes = 0;
    for (unsigned i = 0; i < f->n_tx; i++) {
        struct tf_seg s;
        tf_tx(f, i, &s);
        assert_int_equal(s.seq, iss + 1 + bytes);
        assert_memory_equal(s.data, tf_pattern_bytes(bytes, s.len), s.len);
        if (i < 2) {
            assert_int_equal(s.len, 3000 - 12);
            assert_true(f->tx[i]->nb_segs > 1); /* attached */
        } else {
            assert_int_equal(f->tx[i]->nb_segs, 1); /* fits: copied */
        }
        bytes += s.len;
    }
    assert_int_equal(bytes, 7000);
    tf_clear_tx(f);
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 1 + 7000,
                             .flags = ACK,
                             .win = 1024,
                             .ts = true,
                             .tsval = 501});
    assert_int_equal(tf_mbufs_in_use(f), 0 + f->n_tx);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* An IPv4 connection accepted from a peer with timestamps (MSS 1,460: 1,448 bytes a segment),
 * its handshake's output cleared. */
static struct xlb_tcp_conn *accepted_with_timestamps(struct tf **f, uint32_t *iss)
{
    *f = tf_create(AF_INET, NULL);
    struct xlb_tcp_conn *c = tf_passive(*f, 100, true, iss);
    tf_clear_tx(*f);
    return c;
}

/* The bytes of segment i sent: its sequence number and payload. */
static void check_sent(struct tf *f, unsigned i, uint32_t seq, uint32_t off, uint32_t len)
{
    struct tf_seg s;
    tf_tx(f, i, &s);
    assert_int_equal(s.seq, seq);
    assert_int_equal(s.len, len);
    assert_memory_equal(s.data, tf_pattern_bytes(off, len), len);
}

/* Mbufs of one segment's payload each (as the relay writes what it received) leave as they
 * are, headers written in their headroom: no copy. A retransmission while the wire still holds
 * the first copy is copied, leaving that copy untouched; once the wire gave it back, it goes
 * in place again. Acknowledged while on the wire, an mbuf returns to the pool when the wire
 * frees it, not before. */
static void test_segments_sent_in_place(void **state)
{
    (void)state;
    uint32_t iss;
    struct tf *f = NULL;
    struct xlb_tcp_conn *c = accepted_with_timestamps(&f, &iss);
    const uint32_t mss = 1460 - 12;
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload_pieces(f, 0, 3 * mss, mss)), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 3);
    const struct xlb_tcp_counters *ctr = xlb_tcp_counters(f->ep);
    assert_int_equal(ctr->segs_in_place, 3);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(f->tx[i]->nb_segs, 1);
        check_sent(f, i, iss + 1 + i * mss, i * mss, mss);
    }
    /* The first segment times out while the wire still holds all three: copied. */
    struct rte_mbuf *first = f->tx[0];
    tf_advance(f, 1000);
    assert_int_equal(f->n_tx, 4);
    assert_ptr_not_equal(f->tx[3], first);
    assert_int_equal(ctr->segs_in_place, 3);
    check_sent(f, 3, iss + 1, 0, mss);
    check_sent(f, 0, iss + 1, 0, mss); /* the copy on the wire is as it was */
    /* The wire is done with them: the next timeout sends the queue's mbuf itself again. */
    tf_clear_tx(f);
    tf_advance(f, 2000);
    assert_int_equal(f->n_tx, 1);
    assert_int_equal(ctr->segs_in_place, 4);
    check_sent(f, 0, iss + 1, 0, mss);
    /* Everything acknowledged while that packet is still on the wire: the queue lets go of its
     * mbufs; the one on the wire stays taken until the wire frees it. */
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 1 + 3 * mss,
                             .flags = ACK,
                             .win = 1024,
                             .ts = true,
                             .tsval = 3000});
    assert_int_equal(tf_mbufs_in_use(f), f->n_tx);
    check_sent(f, 0, iss + 1, 0, mss);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static uint32_t send_queue_bytes(struct xlb_tcp_conn *c)
{
    struct xlb_tcp_conn_info info;
    xlb_tcp_conn_info(c, &info);
    return info.snd_queue;
}

/* Bytes written by copy (an HTTP/2 session's output) fill mbufs of one segment's payload,
 * topping up the last one while it is unsent: small writes share an mbuf, and every segment
 * goes in place, bytes intact. A write after the last mbuf went starts a new one. Refused
 * writes take nothing: the send buffer full (-EAGAIN), the pool empty (-ENOBUFS). */
static void test_write_copy_fills_segments(void **state)
{
    (void)state;
    uint32_t iss;
    struct tf *f = NULL;
    struct xlb_tcp_conn *c = accepted_with_timestamps(&f, &iss);
    const uint32_t mss = 1460 - 12;
    static uint8_t bytes[6000]; /* tf_pattern_bytes' buffer is reused by check_sent */
    memcpy(bytes, tf_pattern_bytes(0, sizeof(bytes)), sizeof(bytes));
    assert_int_equal(xlb_tcp_write_copy(f->ep, c, bytes, 100), 0);
    assert_int_equal(xlb_tcp_write_copy(f->ep, c, bytes + 100, 4900), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 4); /* 1,448 x 3 + 656 */
    const struct xlb_tcp_counters *ctr = xlb_tcp_counters(f->ep);
    assert_int_equal(ctr->segs_in_place, 4);
    for (unsigned i = 0; i < 3; i++)
        check_sent(f, i, iss + 1 + i * mss, i * mss, mss);
    check_sent(f, 3, iss + 1 + 3 * mss, 3 * mss, 5000 - 3 * mss);
    /* The last mbuf was sent: the next bytes start another, also sent in place. */
    assert_int_equal(xlb_tcp_write_copy(f->ep, c, bytes + 5000, 1000), 0);
    xlb_tcp_flush(f->ep, c);
    assert_int_equal(f->n_tx, 5);
    assert_int_equal(ctr->segs_in_place, 5);
    check_sent(f, 4, iss + 1 + 5000, 5000, 1000);
    /* The pool empty: refused, nothing queued. */
    struct rte_mbuf *taken[4096];
    unsigned n_taken = 0;
    while (n_taken < 4096 && (taken[n_taken] = rte_pktmbuf_alloc(f->pool)) != NULL)
        n_taken++;
    assert_int_equal(xlb_tcp_write_copy(f->ep, c, bytes, 3000), -ENOBUFS);
    assert_int_equal(send_queue_bytes(c), 6000);
    for (unsigned i = 0; i < n_taken; i++)
        rte_pktmbuf_free(taken[i]);
    /* The send buffer full: refused, nothing queued. */
    uint32_t queued = 6000;
    int r;
    for (int i = 0; i < 1000 && (r = xlb_tcp_write_copy(f->ep, c, bytes, 6000)) == 0; i++)
        queued += 6000;
    assert_int_equal(r, -EAGAIN);
    assert_int_equal(send_queue_bytes(c), queued);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_window_probe),
        cmocka_unit_test(test_rto_retransmits_exact_bytes),
        cmocka_unit_test(test_retransmission_gives_up),
        cmocka_unit_test(test_fast_retransmit),
        cmocka_unit_test(test_newreno_without_sack),
        cmocka_unit_test(test_keepalive_probe),
        cmocka_unit_test(test_peer_window_shrink),
        cmocka_unit_test(test_cwnd_grows_and_restarts_after_idle),
        cmocka_unit_test(test_pmtu_lowers_mss),
        cmocka_unit_test(test_write_refused_then_writable),
        cmocka_unit_test(test_listing_and_size),
        cmocka_unit_test(test_tx_checksum_offload),
        cmocka_unit_test(test_large_segments_attach),
        cmocka_unit_test(test_segments_sent_in_place),
        cmocka_unit_test(test_write_copy_fills_segments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
