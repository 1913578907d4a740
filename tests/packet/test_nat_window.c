/*
 * Packet fixtures for the TCP sequence windows of the L4 full NAT (dataplane/nat/nat_window.c): a
 * segment of a known flow outside the windows is dropped as tcp_out_of_window and changes
 * nothing, while what real TCP stacks send (retransmissions, keepalives, window probes, pure
 * ACKs, scaled windows) passes. Windows of powers of two keep the edges exact: the flow
 * remembers a window rounded up to one.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "nat/nat.h"
#include "nat_segments.h"
#include "nat/nat_window.h"

#define ACK      RTE_TCP_ACK_FLAG
#define DATA     (RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG)
#define RST      RTE_TCP_RST_FLAG
#define SYN      RTE_TCP_SYN_FLAG
#define SYN_ACK  (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)
#define TEXT     "0123456789abcdef" /* 16 bytes of data */
#define TEXT_LEN 16u
#define FAR      777777u

/* ---- helpers ---- */

/* The window each side advertises on every segment of the test (0: the segments' default). */
static uint16_t client_window_field, backend_window_field;

/* The client's SYN and the backend's SYN-ACK with these windows and offered scales (1 + the
 * shift; 0: none), forwarded; their later segments advertise the same window fields. Returns
 * the flow, which the client's first ACK establishes. */
static struct xlb_flow *handshake(struct nat_fixture *n, uint16_t client_window,
                                  uint8_t client_scale, uint16_t backend_window,
                                  uint8_t backend_scale)
{
    struct seg syn = from_client4(CLIENT_PORT, SYN, NULL);
    syn.window = client_window;
    syn.wscale = client_scale;
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    struct seg syn_ack = from_backend4(PORT_BASE, SYN_ACK, NULL);
    syn_ack.window = backend_window;
    syn_ack.wscale = backend_scale;
    out = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &out);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    /* Half-open until the client's ACK (on the SYN timeout), with both windows known. */
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    client_window_field = client_window;
    backend_window_field = backend_window;
    return f;
}

/* A client segment: flags, the sequence number's offset from the first after the SYN, data. */
static struct seg client(uint8_t flags, int32_t seq_offset, const char *payload)
{
    struct seg s = from_client4(CLIENT_PORT, flags, payload);
    s.seq = SEQ_CLIENT + 1 + (uint32_t)seq_offset;
    s.window = client_window_field;
    return s;
}

static struct seg backend(uint8_t flags, int32_t seq_offset, const char *payload)
{
    struct seg s = from_backend4(PORT_BASE, flags, payload);
    s.seq = SEQ_BACKEND + 1 + (uint32_t)seq_offset;
    s.window = backend_window_field;
    return s;
}

static void passes(struct nat_fixture *n, const struct seg *in)
{
    struct seg out =
        strcmp(in->src, BACKEND4) == 0 ? to_client(*in, CLIENT_PORT) : to_backend(*in, PORT_BASE);
    forward(n, in, &out);
}

static void out_of_window(struct nat_fixture *n, const struct seg *in)
{
    dropped(n, in, XLB_DROP_TCP_OUT_OF_WINDOW);
}

/* ---- the sequence range ---- */

static void segment_beyond_the_receivers_window_is_dropped(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_flow *f = handshake(n, 1024, 0, 2048, 0);
    uint32_t expires = f->expires_s;
    n->f->ctx.now_tsc += 7 * TSC_HZ;

    /* The backend's window reaches 2,048 bytes beyond what the client sent: a segment may fill
     * it, none may start past it. */
    struct seg beyond = client(DATA, 2049, TEXT);
    out_of_window(n, &beyond);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT); /* as the handshake left it */
    assert_int_equal(f->expires_s, expires);       /* a dropped segment keeps nothing alive */
    struct seg filling = client(DATA, 2048 - TEXT_LEN, TEXT);
    passes(n, &filling);

    /* The other way, the client's 1,024. */
    struct seg back_beyond = backend(DATA, 1025, TEXT);
    out_of_window(n, &back_beyond);
    struct seg back_filling = backend(DATA, 1024 - TEXT_LEN, TEXT);
    passes(n, &back_filling);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_TCP_OUT_OF_WINDOW), 2);
}

static void segment_far_behind_is_dropped(void **state)
{
    struct nat_fixture *n = *state;
    handshake(n, 1024, 0, 2048, 0);
    struct seg data = client(DATA, 0, TEXT);
    passes(n, &data);

    /* Ending more than the backend's window behind what the client has sent. */
    struct seg old = client(DATA, -2049, TEXT);
    out_of_window(n, &old);
    struct seg far = client(DATA, -(int32_t)FAR, TEXT);
    out_of_window(n, &far);
    /* Within a window behind: an old retransmission, passed on for the backend to judge. */
    struct seg late = client(DATA, -2048, TEXT);
    passes(n, &late);
}

/* ---- acknowledgments ---- */

static void ack_for_data_never_sent_is_dropped(void **state)
{
    struct nat_fixture *n = *state;
    handshake(n, 1024, 0, 2048, 0);

    /* The backend has sent its SYN and nothing else. */
    struct seg ahead = client(ACK, 0, NULL);
    ahead.ack = SEQ_BACKEND + 2;
    out_of_window(n, &ahead);
    struct seg data_ahead = client(DATA, 0, TEXT);
    data_ahead.ack = SEQ_BACKEND + 1 + FAR;
    out_of_window(n, &data_ahead);
    struct seg back_ahead = backend(ACK, 0, NULL);
    back_ahead.ack = SEQ_CLIENT + 2;
    out_of_window(n, &back_ahead);

    /* Nor older than the sender's own window (the client's: 1,024). */
    struct seg old = client(ACK, 0, NULL);
    old.ack = SEQ_BACKEND + 1 - 1025;
    out_of_window(n, &old);
    old.ack = SEQ_BACKEND + 1 - 1024;
    passes(n, &old);

    /* Once sent, the data may be acknowledged. */
    struct seg reply = backend(DATA, 0, TEXT);
    passes(n, &reply);
    struct seg ack = client(ACK, 0, NULL);
    ack.ack = SEQ_BACKEND + 1 + TEXT_LEN;
    passes(n, &ack);
}

/* A segment dropped for its ACK takes nothing in: what it carried counts as never sent. */
static void segment_refused_for_its_ack_moves_nothing(void **state)
{
    struct nat_fixture *n = *state;
    handshake(n, 1024, 0, 2048, 0);
    struct seg data = client(DATA, 0, TEXT);
    data.ack = SEQ_BACKEND + 1 + FAR;
    out_of_window(n, &data);

    struct seg ack_of_it = backend(ACK, 0, NULL);
    ack_of_it.ack = SEQ_CLIENT + 1 + TEXT_LEN;
    out_of_window(n, &ack_of_it);
    /* Sent again with a good ACK, it is. */
    data.ack = SEQ_BACKEND + 1;
    passes(n, &data);
    passes(n, &ack_of_it);
}

/* ---- resets ---- */

static void out_of_window_rst_is_dropped_and_the_flow_goes_on(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_flow *f = handshake(n, 0, 0, 0, 0);
    uint32_t expires = f->expires_s;
    n->f->ctx.now_tsc += 3 * TSC_HZ;

    struct seg rst = client(RST, FAR, NULL);
    out_of_window(n, &rst);
    struct seg rst_ack = client(RST | ACK, -(int32_t)FAR, NULL);
    out_of_window(n, &rst_ack);
    struct seg back_rst = backend(RST, FAR, NULL);
    out_of_window(n, &back_rst);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT); /* as the handshake left it */
    assert_int_equal(f->expires_s, expires);

    /* The connection goes on, both ways. */
    struct seg data = client(DATA, 0, TEXT);
    passes(n, &data);
    struct seg reply = backend(DATA, 0, TEXT);
    passes(n, &reply);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_TCP_OUT_OF_WINDOW), 3);

    /* One at the sender's next sequence number resets the flow as before (test_nat_rewrite). */
    struct seg exact = backend(RST, TEXT_LEN, NULL);
    passes(n, &exact);
    assert_int_equal(f->state, XLB_FLOW_RESET);
}

/* Before its SYN-ACK, the backend's word counts only if it acknowledges the client's SYN, as the
 * client's TCP would take it (RFC 9293 3.10.7.3). */
static void backend_rst_before_the_syn_ack_must_acknowledge_the_syn(void **state)
{
    struct nat_fixture *n = *state;
    client_syn4(n, CLIENT_PORT, PORT_BASE);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);

    struct seg bare = from_backend4(PORT_BASE, RST, NULL);
    out_of_window(n, &bare);
    struct seg wrong = from_backend4(PORT_BASE, RST | ACK, NULL);
    wrong.ack = SEQ_CLIENT + 5;
    out_of_window(n, &wrong);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 0);

    struct seg refused = from_backend4(PORT_BASE, RST | ACK, NULL);
    refused.seq = 0;
    passes(n, &refused);
    assert_int_equal(f->state, XLB_FLOW_CLOSED);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 1);
}

/*
 * The SNAT port of a new flow may be one the backend still holds in TIME-WAIT from an earlier
 * connection: it answers the SYN with that connection's ACK. The ACK reaches the client, whose
 * RST at the ACK's number clears the TIME-WAIT (RFC 9293 3.10.7.3), and its next SYN connects.
 */
static void stale_ack_before_the_syn_ack_passes_with_the_clients_rst(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = client_syn4(n, CLIENT_PORT, PORT_BASE);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);

    struct seg stale = from_backend4(PORT_BASE, ACK, NULL);
    stale.seq = 0x12345678;
    stale.ack = 0x77777777;
    passes(n, &stale);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    struct seg spoofed = from_client4(CLIENT_PORT, RST, NULL);
    spoofed.seq = SEQ_CLIENT + FAR;
    out_of_window(n, &spoofed);
    struct seg rst = from_client4(CLIENT_PORT, RST, NULL);
    rst.seq = 0x77777777;
    passes(n, &rst);
    assert_int_equal(f->state, XLB_FLOW_CLOSED);

    struct seg out = to_backend(syn, PORT_BASE); /* the same port comes back: the stack is LIFO */
    forward(n, &syn, &out);
    backend_syn_ack4(n, PORT_BASE, CLIENT_PORT);
    client_ack4(n, CLIENT_PORT, PORT_BASE);
    assert_int_equal(client_flow(n, FIX_PEER4, CLIENT_PORT)->state, XLB_FLOW_ESTABLISHED);
}

/* ---- window scaling ---- */

static void window_scale_is_honoured(void **state)
{
    struct nat_fixture *n = *state;
    handshake(n, 1024, 1 + 7, 1024, 1 + 7);

    /* A SYN's window is never scaled: 1,024 bytes each way until a side says more. */
    struct seg data = client(DATA, 100000, TEXT);
    out_of_window(n, &data);
    struct seg reply = backend(DATA, 100000, TEXT);
    out_of_window(n, &reply);

    /* 1,024 << 7 = 131,072 bytes from the client's first ACK on, and the backend's. */
    struct seg ack = client(ACK, 0, NULL);
    passes(n, &ack);
    passes(n, &reply);
    passes(n, &data);
    struct seg beyond = backend(DATA, 100000 + TEXT_LEN + 131073, TEXT);
    out_of_window(n, &beyond);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_TCP_OUT_OF_WINDOW), 3);
}

/* RFC 7323: scaling holds only if both SYNs offered it. */
static void window_scale_needs_both_sides(void **state)
{
    struct nat_fixture *n = *state;
    handshake(n, 1024, 1 + 7, 1024, 0);
    struct seg ack = client(ACK, 0, NULL);
    passes(n, &ack);
    struct seg far = backend(DATA, 100000, TEXT);
    out_of_window(n, &far);
    struct seg near = backend(DATA, 1000, TEXT);
    passes(n, &near);
}

/* ---- what real stacks send ---- */

static void retransmissions_keepalives_and_probes_pass(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_flow *f = handshake(n, 0, 0, 0, 0);
    struct seg data = client(DATA, 0, TEXT);
    passes(n, &data);
    passes(n, &data); /* a retransmission */

    /* Keepalives: one before the next sequence number, empty or with one byte. */
    struct seg keepalive = client(ACK, TEXT_LEN - 1, NULL);
    passes(n, &keepalive);
    keepalive.payload = "k";
    passes(n, &keepalive);

    /* The backend closes its window; the client probes it with a byte. */
    struct seg closed = backend(ACK, 0, NULL);
    closed.ack = SEQ_CLIENT + 1 + TEXT_LEN;
    closed.zero_window = true;
    passes(n, &closed);
    struct seg probe = client(DATA, TEXT_LEN, "p");
    passes(n, &probe);

    /* A pure ACK is judged by its ACK alone, and moves nothing. */
    struct seg odd = client(ACK, FAR, NULL);
    passes(n, &odd);
    passes(n, &data);

    /* A SYN on the connection (the client restarted): the endpoints settle it. */
    struct seg syn = from_client4(CLIENT_PORT, SYN, NULL);
    syn.seq = SEQ_CLIENT + FAR;
    passes(n, &syn);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_TCP_OUT_OF_WINDOW), 0);
}

static void ipv6_windows_are_checked_too(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = from_client6(CLIENT_PORT, SYN, NULL);
    syn.window = 4096;
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    struct seg syn_ack = from_backend6(PORT_BASE, SYN_ACK, NULL);
    syn_ack.window = 4096;
    out = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &out);

    struct seg beyond = from_client6(CLIENT_PORT, DATA, TEXT);
    beyond.seq += 4097;
    dropped(n, &beyond, XLB_DROP_TCP_OUT_OF_WINDOW);
    struct seg data = from_client6(CLIENT_PORT, DATA, TEXT);
    out = to_backend(data, PORT_BASE);
    forward(n, &data, &out);
}

/* ---- the SYN's window scale option ---- */

/* The window scale a SYN with these option bytes offers. */
static uint8_t scale_of(const uint8_t *options, size_t len)
{
    uint8_t buf[60] = {0};
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)buf;
    assert_true(len % 4 == 0 && len <= 40);
    tcp->data_off = (uint8_t)(((sizeof(*tcp) + len) / 4) << 4);
    if (len > 0)
        memcpy(tcp + 1, options, len);
    return xlb_window_syn_scale(tcp);
}

static void syn_window_scale_option_is_read(void **state)
{
    (void)state;
    assert_int_equal(scale_of(NULL, 0), XLB_FLOW_WSCALE_NONE);
    const uint8_t linux_syn[20] = {2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};
    assert_int_equal(scale_of(linux_syn, 20), 7);
    const uint8_t large[4] = {3, 3, 20, 0};
    assert_int_equal(scale_of(large, 4), 14); /* RFC 7323 2.3 */
    const uint8_t after_end[8] = {0, 1, 1, 1, 3, 3, 5, 0};
    assert_int_equal(scale_of(after_end, 8), XLB_FLOW_WSCALE_NONE);
    const uint8_t bad_length[8] = {2, 0, 1, 1, 3, 3, 5, 0};
    assert_int_equal(scale_of(bad_length, 8), XLB_FLOW_WSCALE_NONE);
    const uint8_t overrun[4] = {1, 1, 3, 3}; /* its shift would be past the header */
    assert_int_equal(scale_of(overrun, 4), XLB_FLOW_WSCALE_NONE);
    assert_string_equal(xlb_drop_reason_name(XLB_DROP_TCP_OUT_OF_WINDOW), "tcp_out_of_window");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(segment_beyond_the_receivers_window_is_dropped, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(segment_far_behind_is_dropped, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(ack_for_data_never_sent_is_dropped, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(segment_refused_for_its_ack_moves_nothing, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(out_of_window_rst_is_dropped_and_the_flow_goes_on,
                                        nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(backend_rst_before_the_syn_ack_must_acknowledge_the_syn,
                                        nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(stale_ack_before_the_syn_ack_passes_with_the_clients_rst,
                                        nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(window_scale_is_honoured, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(window_scale_needs_both_sides, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(retransmissions_keepalives_and_probes_pass, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(ipv6_windows_are_checked_too, nat_setup, nat_teardown),
        cmocka_unit_test(syn_window_scale_option_is_read),
    };
    return cmocka_run_group_tests_name("nat_window", tests, NULL, NULL);
}
