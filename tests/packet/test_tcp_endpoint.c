/*
 * The TCP endpoint with crafted segments: each test sends the peer's segments and checks what
 * the endpoint sends back, its state and the bytes it delivers, case by case from RFC 9293,
 * 5961, 7323 and 2018.
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

#define ACK RTE_TCP_ACK_FLAG
#define SYN RTE_TCP_SYN_FLAG
#define FIN RTE_TCP_FIN_FLAG
#define RST RTE_TCP_RST_FLAG
#define PSH RTE_TCP_PSH_FLAG

static uint8_t pattern_buf[65536];

static const uint8_t *pattern(uint32_t start, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        pattern_buf[i] = tf_pattern(start + i);
    return pattern_buf;
}

/* A peer data segment with timestamps: bytes [off, off+len) of the pattern at irs + 1 + off. */
static int peer_data(struct tf *f, struct xlb_tcp_conn *c, uint32_t irs, uint32_t iss, uint32_t off,
                     uint32_t len, uint8_t extra, uint32_t tsval)
{
    return tf_send(f, c,
                   &(struct tf_out){.seq = irs + 1 + off,
                                    .ack = iss + 1,
                                    .flags = (uint8_t)(ACK | extra),
                                    .win = 1024,
                                    .ts = true,
                                    .tsval = tsval,
                                    .data = pattern(off, len),
                                    .len = len});
}

static void check_read(struct tf *f, struct xlb_tcp_conn *c, uint32_t off, uint32_t len)
{
    static uint8_t got[1 << 20];
    assert_int_equal(tf_read_all(f, c, got, sizeof(got)), len);
    for (uint32_t i = 0; i < len; i++)
        if (got[i] != tf_pattern(off + i))
            fail_msg("byte %u differs", off + i);
}

static void test_passive_handshake(int family)
{
    struct tf *f = tf_create(family, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 5000, true, &iss);
    assert_int_equal(f->connected, 1);
    assert_int_equal(xlb_tcp_counters(f->ep)->passive_opens, 1);
    /* Data in the handshake's ACK's successor, then our ACK carries TS and the window. */
    assert_int_equal(peer_data(f, c, 5000, iss, 0, 100, PSH, 1002), 0);
    assert_int_equal(f->readable, 1);
    check_read(f, c, 0, 100);
    tf_advance(f, 40); /* the delayed ACK */
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.flags, ACK);
    assert_int_equal(s.ack, 5000 + 1 + 100);
    assert_int_equal(s.seq, iss + 1);
    assert_true(s.opts.has_ts);
    assert_int_equal(s.opts.tsecr, 1002);
    xlb_tcp_abort(f->ep, c);
    assert_int_equal(f->closed, 1);
    assert_int_equal(f->close_reason, XLB_TCP_CLOSE_ABORTED);
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 0);
    tf_destroy(f);
}
static void test_passive_handshake4(void **state)
{
    (void)state;
    test_passive_handshake(AF_INET);
}
static void test_passive_handshake6(void **state)
{
    (void)state;
    test_passive_handshake(AF_INET6);
}

static void test_bad_cookie_refused(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    struct rte_mbuf *bad_ack =
        tf_build(f, &(struct tf_out){.seq = 8, .ack = 12345, .flags = ACK, .win = 100});
    assert_null(xlb_tcp_accept(f->ep, bad_ack, &f->keys, f->now, &tf_callbacks, f));
    assert_int_equal(xlb_tcp_counters(f->ep)->bad_cookie, 1);
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 0);
    tf_destroy(f);
}

static void test_pool_full_refused(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = 1;
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    struct xlb_tcp_tuple t = f->peer;
    assert_null(xlb_tcp_connect(f->ep, &t, 1, f->now, &tf_callbacks, f));
    assert_int_equal(xlb_tcp_counters(f->ep)->pool_full, 1);
    /* The established one is untouched. */
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

/* Active open: the SYN's options, retransmission with backoff, then the SYN-ACK. */
static struct xlb_tcp_conn *active_open(struct tf *f, uint32_t iss, uint32_t peer_isn)
{
    struct xlb_tcp_tuple t = {.family = f->peer.family,
                              .local_port = f->peer.remote_port,
                              .remote_port = f->peer.local_port};
    memcpy(t.local, f->peer.remote, 16);
    memcpy(t.remote, f->peer.local, 16);
    struct xlb_tcp_conn *c = xlb_tcp_connect(f->ep, &t, iss, f->now, &tf_callbacks, f);
    assert_non_null(c);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.flags, SYN);
    assert_int_equal(s.seq, iss);
    assert_int_equal(s.opts.mss, f->peer.family == AF_INET ? 1460 : 1440);
    assert_true(s.opts.has_wscale && s.opts.sack_ok && s.opts.has_ts);
    tf_clear_tx(f);
    assert_int_equal(tf_send(f, c,
                             &(struct tf_out){.seq = peer_isn,
                                              .ack = iss + 1,
                                              .flags = SYN | ACK,
                                              .win = 65535,
                                              .syn_opts = true,
                                              .ts = true,
                                              .tsval = 500,
                                              .tsecr = s.opts.tsval}),
                     0);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    assert_int_equal(f->connected, 1);
    assert_int_equal(f->n_tx, 1);
    tf_tx(f, 0, &s);
    assert_int_equal(s.flags, ACK);
    assert_int_equal(s.seq, iss + 1);
    assert_int_equal(s.ack, peer_isn + 1);
    tf_clear_tx(f);
    return c;
}

static void test_active_syn_retransmit(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    struct xlb_tcp_tuple t = {
        .family = AF_INET, .local_port = f->peer.remote_port, .remote_port = f->peer.local_port};
    memcpy(t.local, f->peer.remote, 4);
    memcpy(t.remote, f->peer.local, 4);
    struct xlb_tcp_conn *c = xlb_tcp_connect(f->ep, &t, 77, f->now, &tf_callbacks, f);
    assert_non_null(c);
    tf_clear_tx(f);
    tf_advance(f, 999);
    assert_int_equal(f->n_tx, 0);
    tf_advance(f, 1); /* 1 s: the first retransmission */
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.flags, SYN);
    assert_int_equal(s.seq, 77);
    tf_clear_tx(f);
    tf_advance(f, 1999);
    assert_int_equal(f->n_tx, 0);
    tf_advance(f, 1); /* then 2 s later */
    assert_int_equal(f->n_tx, 1);
    tf_clear_tx(f);
    /* 4, 8, 16, 32 s, then the seventh expiry gives up. */
    tf_advance(f, 4000 + 8000 + 16000 + 32000);
    assert_int_equal(f->n_tx, 4);
    assert_int_equal(f->closed, 0);
    tf_advance(f, 64000);
    assert_int_equal(f->closed, 1);
    assert_int_equal(f->close_reason, XLB_TCP_CLOSE_TIMEOUT);
    assert_int_equal(xlb_tcp_counters(f->ep)->syn_retransmits, 6);
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 0);
    tf_destroy(f);
}

static void test_active_open_and_refused(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET6, NULL);
    struct xlb_tcp_conn *c = active_open(f, 1000, 9000);
    xlb_tcp_abort(f->ep, c);
    /* A RST answering a SYN: refused. */
    f->connected = 0;
    struct xlb_tcp_tuple t = {
        .family = AF_INET6, .local_port = f->peer.remote_port, .remote_port = f->peer.local_port};
    memcpy(t.local, f->peer.remote, 16);
    memcpy(t.remote, f->peer.local, 16);
    tf_clear_tx(f);
    c = xlb_tcp_connect(f->ep, &t, 50, f->now, &tf_callbacks, f);
    tf_send(f, c, &(struct tf_out){.seq = 0, .ack = 51, .flags = RST | ACK});
    assert_int_equal(f->close_reason, XLB_TCP_CLOSE_REFUSED);
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 0);
    tf_destroy(f);
}

/* Sequence numbers wrapping past 2^32 on both sides: exact bytes each way. */
static void test_wrapped_sequence(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss = 0xfffffc00u, irs = 0xfffffe00u;
    struct xlb_tcp_conn *c = active_open(f, iss, irs);
    /* Peer -> us: 3 segments of 400 crossing 2^32. */
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(peer_data(f, c, irs, iss, i * 400, 400, 0, 600 + i), 0);
    check_read(f, c, 0, 1200);
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
    assert_int_equal(peer_data(f, c, 100, iss, 0, 10, 0, 5000), 0);
    tf_clear_tx(f);
    /* Next bytes, but a TSval older than the last one: dropped with an ACK. */
    assert_int_equal(peer_data(f, c, 100, iss, 10, 10, 0, 4000), -1);
    assert_int_equal(xlb_tcp_counters(f->ep)->paws_drops, 1);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.ack, 100 + 1 + 10);
    assert_int_equal(s.opts.tsecr, 5000);
    check_read(f, c, 0, 10);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_rst_handling(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    /* In the window but not exact: challenge ACK, connection stays. */
    tf_send(f, c, &(struct tf_out){.seq = 101 + 500, .flags = RST});
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.flags, ACK);
    assert_int_equal(s.ack, 101);
    assert_int_equal(xlb_tcp_counters(f->ep)->challenge_acks, 1);
    tf_clear_tx(f);
    /* Out of the window: ignored silently. */
    tf_send(f, c, &(struct tf_out){.seq = 101 + 10000000, .flags = RST});
    assert_int_equal(f->n_tx, 0);
    assert_int_equal(xlb_tcp_counters(f->ep)->rst_in_out_of_window, 1);
    /* Exact: reset. */
    tf_send(f, c, &(struct tf_out){.seq = 101, .flags = RST});
    assert_int_equal(f->closed, 1);
    assert_int_equal(f->close_reason, XLB_TCP_CLOSE_RESET);
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 0);
    tf_destroy(f);
}

static void test_challenge_ack_rate_limit(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.challenge_acks_per_s = 3;
    struct tf *f = tf_create(AF_INET, &cfg);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    for (unsigned i = 0; i < 10; i++)
        tf_send(f, c, &(struct tf_out){.seq = 200 + i, .flags = RST});
    assert_int_equal(f->n_tx, 3);
    assert_int_equal(xlb_tcp_counters(f->ep)->challenge_acks_suppressed, 7);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_out_of_window_and_syn(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    /* Data far beyond the window: an ACK, nothing delivered. */
    assert_int_equal(peer_data(f, c, 100, iss, 1000000, 10, 0, 2000), -1);
    assert_int_equal(f->n_tx, 1);
    assert_int_equal(xlb_tcp_counters(f->ep)->out_of_window, 1);
    tf_clear_tx(f);
    /* A SYN on the established connection: challenge ACK (RFC 5961 section 4). */
    tf_send(f, c,
            &(struct tf_out){
                .seq = 101, .flags = SYN, .win = 100, .syn_opts = true, .ts = true, .tsval = 2001});
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    assert_int_equal(f->n_tx, 1);
    assert_int_equal(xlb_tcp_counters(f->ep)->syn_in_sync, 1);
    /* An ACK of something we never sent: ACK back, dropped. */
    tf_clear_tx(f);
    tf_send(f, c,
            &(struct tf_out){
                .seq = 101, .ack = iss + 5000, .flags = ACK, .win = 10, .ts = true, .tsval = 2002});
    assert_int_equal(xlb_tcp_counters(f->ep)->ack_too_new, 1);
    assert_int_equal(f->n_tx, 1);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

static void test_fin_with_data_then_close(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    assert_int_equal(peer_data(f, c, 100, iss, 0, 50, FIN, 2000), 0);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_CLOSE_WAIT);
    assert_int_equal(f->n_tx, 1); /* the FIN is acknowledged at once */
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.ack, 101 + 50 + 1);
    check_read(f, c, 0, 50);
    const uint8_t *d;
    uint32_t len;
    bool eof;
    assert_int_equal(xlb_tcp_peek(c, &d, &len, &eof), 0);
    assert_true(eof);
    /* Our answer and FIN, then the peer's ACK: CLOSED. */
    tf_clear_tx(f);
    assert_int_equal(xlb_tcp_write(f->ep, c, tf_payload(f, 0, 20)), 0);
    xlb_tcp_shutdown(f->ep, c);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_LAST_ACK);
    assert_int_equal(f->n_tx, 1);
    tf_tx(f, 0, &s);
    assert_int_equal(s.flags, ACK | PSH | FIN);
    assert_int_equal(s.len, 20);
    tf_send(
        f, c,
        &(struct tf_out){
            .seq = 152, .ack = iss + 1 + 21, .flags = ACK, .win = 1024, .ts = true, .tsval = 2001});
    assert_int_equal(f->closed, 1);
    assert_int_equal(f->close_reason, XLB_TCP_CLOSE_NORMAL);
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 0);
    tf_destroy(f);
}

static void test_simultaneous_close(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    xlb_tcp_shutdown(f->ep, c);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_FIN_WAIT_1);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.flags, ACK | FIN);
    assert_int_equal(s.seq, iss + 1);
    tf_clear_tx(f);
    /* The peer's FIN crossed ours: it does not acknowledge ours. */
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 1,
                             .flags = ACK | FIN,
                             .win = 1024,
                             .ts = true,
                             .tsval = 2000});
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_CLOSING);
    tf_tx(f, 0, &s);
    assert_int_equal(s.ack, 102);
    tf_send(f, c,
            &(struct tf_out){
                .seq = 102, .ack = iss + 2, .flags = ACK, .win = 1024, .ts = true, .tsval = 2001});
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_TIME_WAIT);
    assert_int_equal(f->closed, 1);
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 1);
    /* The peer's FIN again (our ACK lost): ACKed again from TIME-WAIT. */
    tf_clear_tx(f);
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 2,
                             .flags = ACK | FIN,
                             .win = 1024,
                             .ts = true,
                             .tsval = 2002});
    assert_int_equal(f->n_tx, 1);
    tf_advance(f, f->cfg.timewait_ms + 1);
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 0);
    tf_destroy(f);
}

static void test_timewait_reuse(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    xlb_tcp_shutdown(f->ep, c);
    tf_send(f, c,
            &(struct tf_out){.seq = 101,
                             .ack = iss + 2,
                             .flags = ACK | FIN,
                             .win = 1024,
                             .ts = true,
                             .tsval = 2000});
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_TIME_WAIT);
    assert_false(xlb_tcp_timewait_reuse(f->ep, c, f->now + 500));
    assert_true(xlb_tcp_timewait_reuse(f->ep, c, f->now + 1000));
    assert_int_equal(xlb_tcp_conns_in_use(f->ep), 0);
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
    assert_int_equal(peer_data(f, c, 100, iss, 0, 1400, 0, 2000), 0);
    assert_int_equal(peer_data(f, c, 100, iss, 1400, 1400, 0, 2000), 0);
    assert_int_equal(peer_data(f, c, 100, iss, 2800, 1400, 0, 2000), 0);
    struct xlb_tcp_conn_info info;
    xlb_tcp_conn_info(c, &info);
    assert_int_equal(info.rcv_queue, 4000);
    check_read(f, c, 0, 4000);
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
    assert_int_equal(peer_data(f, c, 100, iss, 600, 300, 0, 2000), 0);
    assert_int_equal(peer_data(f, c, 100, iss, 300, 400, 0, 2000), 0); /* overlaps 600..700 */
    assert_int_equal(peer_data(f, c, 100, iss, 650, 350, 0, 2000), 0); /* inside and beyond */
    assert_int_equal(peer_data(f, c, 100, iss, 350, 50, 0, 2000), 0);  /* a duplicate */
    assert_int_equal(f->readable, 0);
    assert_int_equal(xlb_tcp_ooo_bytes(f->ep), 700);
    assert_int_equal(peer_data(f, c, 100, iss, 0, 320, 0, 2000), 0); /* fills the gap */
    assert_int_equal(f->readable, 1);
    check_read(f, c, 0, 1000);
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
    peer_data(f, c, 100, iss, 1000, 100, 0, 2000);
    peer_data(f, c, 100, iss, 3000, 100, 0, 2000);
    peer_data(f, c, 100, iss, 2000, 100, 0, 2000);
    peer_data(f, c, 100, iss, 5000, 100, 0, 2000);
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
    peer_data(f, c, 100, iss, 1100, 900, 0, 2000);
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
    peer_data(f, c, 100, iss, 0, 500, 0, 2000);
    peer_data(f, c, 100, iss, 2000, 100, 0, 2000); /* a hole at 500..2000 */
    tf_clear_tx(f);
    peer_data(f, c, 100, iss, 0, 500, 0, 2000); /* the first one again */
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
    peer_data(f, c, 100, iss, 2000, 100, 0, 2000);
    tf_tx(f, 0, &s);
    assert_int_equal(s.opts.n_sack, 2);
    assert_int_equal(s.opts.sack_left[0], 101 + 2000);
    assert_int_equal(s.opts.sack_right[0], 101 + 2100);
    /* Once: the next ACK has the ordinary block only. */
    tf_clear_tx(f);
    peer_data(f, c, 100, iss, 3000, 100, 0, 2000);
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
    peer_data(f, c, 100, iss, 1000, 800, 0, 2000);
    peer_data(f, c, 100, iss, 3000, 800, 0, 2000); /* over the connection's 1,000 */
    assert_int_equal(xlb_tcp_counters(f->ep)->ooo_dropped_conn, 1);
    assert_int_equal(xlb_tcp_ooo_bytes(f->ep), 800);
    /* Slots: 16 one-byte holes fill them, the 17th is dropped. */
    for (uint32_t i = 0; i < 16; i++)
        peer_data(f, c, 100, iss, 10 + 2 * i, 1, 0, 2000);
    assert_int_equal(xlb_tcp_counters(f->ep)->ooo_dropped_slots, 1);
    xlb_tcp_abort(f->ep, c);
    assert_int_equal(xlb_tcp_ooo_bytes(f->ep), 0);
    tf_destroy(f);
    /* The worker's budget: two connections share 1,000 bytes. */
    cfg.ooo_max_bytes_worker = 1000;
    f = tf_create(AF_INET, &cfg);
    struct xlb_tcp_conn *c1 = tf_passive(f, 100, true, &iss);
    peer_data(f, c1, 100, iss, 1000, 800, 0, 2000);
    f->peer.local_port = htons(40002); /* a second client connection */
    uint32_t iss2;
    struct xlb_tcp_conn *c2 = tf_passive(f, 100, true, &iss2);
    peer_data(f, c2, 100, iss2, 1000, 800, 0, 2000);
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
        peer_data(f, c, 100, iss, off, 1024, 0, 2000);
    tf_advance(f, 50);
    struct tf_seg s;
    tf_tx(f, f->n_tx - 1, &s);
    assert_int_equal(s.ack, 101 + 8192);
    assert_int_equal(s.win, 0); /* nobody read: the window is closed */
    assert_true(xlb_tcp_counters(f->ep)->zero_windows_sent >= 1);
    /* More data is out of the window now. */
    assert_int_equal(peer_data(f, c, 100, iss, off, 100, 0, 2000), -1);
    tf_clear_tx(f);
    /* Reading reopens it, and a window update says so without waiting for the peer. */
    check_read(f, c, 0, 8192);
    assert_true(f->n_tx >= 1);
    tf_tx(f, f->n_tx - 1, &s);
    /* SWS avoidance: updates move the edge in steps of at least two segments. */
    assert_true(s.win >= 8192 - 2 * 1448 && s.win <= 8192);
    assert_int_equal(s.ack, 101 + 8192);
    assert_int_equal(xlb_tcp_counters(f->ep)->window_updates, f->n_tx);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

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

static void test_delayed_ack(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 100, true, &iss);
    tf_clear_tx(f);
    peer_data(f, c, 100, iss, 0, 1000, 0, 2000);
    assert_int_equal(f->n_tx, 0);
    peer_data(f, c, 100, iss, 1000, 1000, 0, 2000); /* every second segment */
    assert_int_equal(f->n_tx, 1);
    peer_data(f, c, 100, iss, 2000, 1000, 0, 2000);
    tf_advance(f, 39);
    assert_int_equal(f->n_tx, 1);
    tf_advance(f, 1);
    assert_int_equal(f->n_tx, 2);
    xlb_tcp_abort(f->ep, c);
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

/* Data on a SYN-ACK is not taken (xlb keeps no data before the handshake completes): the ACK
 * covers the SYN only, and the peer sends the bytes again. */
static void test_data_in_synack_ignored(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    struct xlb_tcp_tuple t = {
        .family = AF_INET, .local_port = f->peer.remote_port, .remote_port = f->peer.local_port};
    memcpy(t.local, f->peer.remote, 4);
    memcpy(t.remote, f->peer.local, 4);
    struct xlb_tcp_conn *c = xlb_tcp_connect(f->ep, &t, 1000, f->now, &tf_callbacks, f);
    tf_clear_tx(f);
    tf_send(f, c,
            &(struct tf_out){.seq = 7000,
                             .ack = 1001,
                             .flags = SYN | ACK,
                             .win = 65535,
                             .syn_opts = true,
                             .data = pattern(0, 100),
                             .len = 100});
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.ack, 7001);
    assert_int_equal(f->readable, 0);
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
                              .data = pattern(0, 10),
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
    check_read(f, c, 0, 10);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_passive_handshake4),
        cmocka_unit_test(test_passive_handshake6),
        cmocka_unit_test(test_bad_cookie_refused),
        cmocka_unit_test(test_pool_full_refused),
        cmocka_unit_test(test_active_syn_retransmit),
        cmocka_unit_test(test_active_open_and_refused),
        cmocka_unit_test(test_wrapped_sequence),
        cmocka_unit_test(test_paws_drops_old_timestamp),
        cmocka_unit_test(test_rst_handling),
        cmocka_unit_test(test_challenge_ack_rate_limit),
        cmocka_unit_test(test_out_of_window_and_syn),
        cmocka_unit_test(test_fin_with_data_then_close),
        cmocka_unit_test(test_simultaneous_close),
        cmocka_unit_test(test_timewait_reuse),
        cmocka_unit_test(test_straddling_right_edge_trimmed),
        cmocka_unit_test(test_reassembly_with_overlaps),
        cmocka_unit_test(test_sack_blocks_most_recent_first),
        cmocka_unit_test(test_dsack_for_duplicates),
        cmocka_unit_test(test_reassembly_budgets),
        cmocka_unit_test(test_slow_reader_closes_window),
        cmocka_unit_test(test_zero_window_probe),
        cmocka_unit_test(test_rto_retransmits_exact_bytes),
        cmocka_unit_test(test_retransmission_gives_up),
        cmocka_unit_test(test_fast_retransmit),
        cmocka_unit_test(test_newreno_without_sack),
        cmocka_unit_test(test_keepalive_probe),
        cmocka_unit_test(test_delayed_ack),
        cmocka_unit_test(test_peer_window_shrink),
        cmocka_unit_test(test_data_in_synack_ignored),
        cmocka_unit_test(test_bad_segments_counted),
        cmocka_unit_test(test_cwnd_grows_and_restarts_after_idle),
        cmocka_unit_test(test_pmtu_lowers_mss),
        cmocka_unit_test(test_write_refused_then_writable),
        cmocka_unit_test(test_listing_and_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
