/*
 * The TCP endpoint with crafted segments, opening and closing: both handshakes (SYN cookie,
 * active open with retransmitted SYNs), refusals, RSTs and challenge ACKs (RFC 5961), SYNs and
 * segments outside the window, the closing states and TIME-WAIT with its reuse (RFC 9293).
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

static void test_passive_handshake(int family)
{
    struct tf *f = tf_create(family, NULL);
    uint32_t iss;
    struct xlb_tcp_conn *c = tf_passive(f, 5000, true, &iss);
    assert_int_equal(f->connected, 1);
    assert_int_equal(xlb_tcp_counters(f->ep)->passive_opens, 1);
    /* Data in the handshake's ACK's successor, then our ACK carries TS and the window. */
    assert_int_equal(tf_peer_data(f, c, 5000, iss, 0, 100, PSH, 1002), 0);
    assert_int_equal(f->readable, 1);
    tf_check_read(f, c, 0, 100);
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

/* The handshake's ACK and the client's first data segment lost: its second segment opens the
 * connection (its cookie checks one segment back, xlb_syn_cookie_check_flight) instead of
 * being refused as a bad cookie, waits out of order (our ACK asks for the first segment and
 * SACKs it), and the first segment's retransmission puts the bytes in order. */
static void test_accept_after_lost_ack_and_data(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET, NULL);
    const uint32_t irs = 5000, len = 1460 - 12;
    struct rte_mbuf *syn = tf_build(f, &(struct tf_out){.seq = irs,
                                                        .flags = RTE_TCP_SYN_FLAG,
                                                        .win = 65535,
                                                        .syn_opts = true,
                                                        .ts = true,
                                                        .tsval = 1000});
    assert_int_equal(xlb_tcp_answer_syn(f->ep, syn, &f->keys, f->now), 0);
    struct tf_seg sa;
    tf_tx(f, 0, &sa);
    tf_clear_tx(f);
    static uint8_t bytes[2 * 1448];
    memcpy(bytes, tf_pattern_bytes(0, sizeof(bytes)), sizeof(bytes));
    struct tf_out second = {.seq = irs + 1 + len,
                            .ack = sa.seq + 1,
                            .flags = ACK,
                            .win = 1024,
                            .ts = true,
                            .tsval = 1002,
                            .tsecr = sa.opts.tsval,
                            .data = bytes + len,
                            .len = len};
    struct xlb_tcp_conn *c =
        xlb_tcp_accept(f->ep, tf_build(f, &second), &f->keys, f->now, &tf_callbacks, f);
    assert_non_null(c);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    assert_int_equal(xlb_tcp_counters(f->ep)->bad_cookie, 0);
    assert_int_equal(f->n_tx, 1);
    struct tf_seg a;
    tf_tx(f, 0, &a);
    assert_int_equal(a.ack, irs + 1);
    assert_int_equal(a.opts.n_sack, 1);
    assert_int_equal(a.opts.sack_left[0], irs + 1 + len);
    assert_int_equal(a.opts.sack_right[0], irs + 1 + 2 * len);
    tf_clear_tx(f);
    struct tf_out first = second;
    first.seq = irs + 1;
    first.tsval = 1003;
    first.data = bytes;
    assert_int_equal(tf_send(f, c, &first), 0);
    uint8_t got[2 * 1448];
    assert_int_equal(tf_read_all(f, c, got, sizeof(got)), sizeof(got));
    assert_memory_equal(got, bytes, sizeof(got));
    xlb_tcp_abort(f->ep, c);
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

/* The MSS the SYN of an active open to the peer offers (the connection is aborted after). */
static uint16_t syn_mss(struct tf *f)
{
    struct xlb_tcp_tuple t = {
        .family = AF_INET, .local_port = f->peer.remote_port, .remote_port = f->peer.local_port};
    memcpy(t.local, f->peer.remote, 4);
    memcpy(t.remote, f->peer.local, 4);
    tf_clear_tx(f);
    struct xlb_tcp_conn *c = xlb_tcp_connect(f->ep, &t, 1, f->now, &tf_callbacks, f);
    assert_non_null(c);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    xlb_tcp_abort(f->ep, c);
    tf_clear_tx(f);
    return s.opts.mss;
}

/* A path limit set per open (the relay's) and then cleared goes back to the endpoint's
 * configured limit, not the built-in default. */
static void test_mss_limit_cleared_returns_to_configured(void **state)
{
    (void)state;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.mss_limit4 = 1200;
    struct tf *f = tf_create(AF_INET, &cfg);
    assert_int_equal(syn_mss(f), 1200);
    xlb_tcp_set_mss_limit(f->ep, AF_INET, 1000);
    assert_int_equal(syn_mss(f), 1000);
    xlb_tcp_set_mss_limit(f->ep, AF_INET, 0);
    assert_int_equal(syn_mss(f), 1200);
    tf_destroy(f);
}

static void test_active_open_and_refused(void **state)
{
    (void)state;
    struct tf *f = tf_create(AF_INET6, NULL);
    struct xlb_tcp_conn *c = tf_active(f, 1000, 9000);
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
    assert_int_equal(tf_peer_data(f, c, 100, iss, 1000000, 10, 0, 2000), -1);
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
    assert_int_equal(tf_peer_data(f, c, 100, iss, 0, 50, FIN, 2000), 0);
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_CLOSE_WAIT);
    assert_int_equal(f->n_tx, 1); /* the FIN is acknowledged at once */
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.ack, 101 + 50 + 1);
    tf_check_read(f, c, 0, 50);
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
                             .data = tf_pattern_bytes(0, 100),
                             .len = 100});
    assert_int_equal(xlb_tcp_conn_state(c), XLB_TCP_ESTABLISHED);
    struct tf_seg s;
    tf_tx(f, 0, &s);
    assert_int_equal(s.ack, 7001);
    assert_int_equal(f->readable, 0);
    xlb_tcp_abort(f->ep, c);
    tf_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_passive_handshake4),
        cmocka_unit_test(test_passive_handshake6),
        cmocka_unit_test(test_bad_cookie_refused),
        cmocka_unit_test(test_accept_after_lost_ack_and_data),
        cmocka_unit_test(test_pool_full_refused),
        cmocka_unit_test(test_active_syn_retransmit),
        cmocka_unit_test(test_mss_limit_cleared_returns_to_configured),
        cmocka_unit_test(test_active_open_and_refused),
        cmocka_unit_test(test_rst_handling),
        cmocka_unit_test(test_challenge_ack_rate_limit),
        cmocka_unit_test(test_out_of_window_and_syn),
        cmocka_unit_test(test_fin_with_data_then_close),
        cmocka_unit_test(test_simultaneous_close),
        cmocka_unit_test(test_timewait_reuse),
        cmocka_unit_test(test_data_in_synack_ignored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
