/*
 * Packet fixtures for the L7 handshake (dataplane/l7/l7_handshake.c, docs/l7.md "A connection's
 * life" 1 and 2): the SYN of an L7 VIP is answered with a SYN cookie and nothing is kept; the
 * ACK returning a valid cookie takes a connection and a flow, and xlb sends its SETTINGS at
 * once; a forged cookie gets a RST. Every frame is checked byte for byte (l7_fixture.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "l7_fixture.h"

static const uint8_t xlb_settings[9] = {0, 0, 0, 4, 0, 0, 0, 0, 0};

/* SYN with MSS 1460, SACK-permitted, TS and WS 7 -> one SYN-ACK out of the same port:
 * addresses and ports swapped, ACK = ISN + 1, MSS/SACK-permitted/TS (TSecr = the SYN's TSval)/
 * WS 7 in Linux's layout; no flow, no connection (l7_syn checks it all). A retransmitted SYN
 * gets the same cookie: nothing was kept, the cookie is a function of the SYN and the clock. */
static void syn_gets_a_syn_cookie(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c, again;
    l7_conn_init(&c, false);
    again = c;
    l7_syn(x, &c);
    l7_syn(x, &again);
    assert_int_equal(again.cookie, c.cookie);
    assert_int_equal(again.x_tsval, c.x_tsval);
    assert_int_equal(x->n->flows->n_used, 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SYN_COOKIES_SENT), 2);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_CONNECTIONS), 0);
    assert_int_equal(fixture_total_drops(x->n->f), 0);
}

static void ipv6_syn_gets_a_syn_cookie(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    l7_conn_init(&c, true);
    l7_syn(x, &c); /* MSS 1440, IPv6 checksum */
    assert_int_equal(x->n->flows->n_used, 0);
}

/* A SYN without options: the SYN-ACK carries xlb's MSS only (without timestamps the cookie
 * cannot carry window scale or SACK), the cookie says MSS 536 and no timestamps. Its ACK (no
 * options either) is accepted: xlb's SETTINGS come without options, the window unscaled. */
/* A SYN without options from c; xlb's SYN-ACK must carry only an MSS option of `mss`. Returns
 * the SYN-ACK as read. */
static struct l7_out bare_syn_gets_mss(struct l7_fixture *x, struct l7_conn *c, uint16_t mss)
{
    struct l7_seg syn = l7_from_client(c, RTE_TCP_SYN_FLAG, c->c_isn, 0, NULL, 0);
    syn.opts_len = 0;
    syn.ip_id = 0;
    syn.window = 29200;
    assert_int_equal(l7_send(x, &syn), 1);
    struct l7_out o;
    l7_read(x, 0, &o);
    struct l7_seg want = l7_by_xlb_to_client(c, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, o.seq,
                                             c->c_isn + 1, 65535, NULL, 0);
    const uint8_t option[4] = {2, 4, (uint8_t)(mss >> 8), (uint8_t)mss};
    memcpy(want.opts, option, 4);
    want.opts_len = 4;
    l7_expect(x, 0, &want);
    return o;
}

static void syn_without_options_gets_mss_only(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    l7_conn_init(&c, false);
    struct l7_out o = bare_syn_gets_mss(x, &c, 1460);
    assert_int_equal(o.seq & 7, 0);         /* 536: the MSS of a SYN without one */
    assert_int_equal(o.seq & (1u << 5), 0); /* no timestamps */
    l7_clear(x);
    assert_int_equal(x->n->flows->n_used, 0);

    struct l7_seg ack = l7_from_client(&c, RTE_TCP_ACK_FLAG, c.c_isn + 1, o.seq + 1, NULL, 0);
    ack.opts_len = 0;
    assert_int_equal(l7_send(x, &ack), 1);
    assert_int_equal(x->n->flows->n_used, 1);
    struct l7_seg want = l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, o.seq + 1,
                                             c.c_isn + 1, L7_IN_MAX, xlb_settings, 9);
    l7_expect(x, 0, &want);
}

/* On a port whose MTU carries less (xlb.tcp_mss_clamp, or the port's mtu), xlb's SYN-ACK
 * offers what the port carries, not a 1500-byte path's 1460. */
static void syn_ack_offers_what_the_port_carries(void **state)
{
    struct l7_fixture *x = *state;
    x->n->f->snap->ports[0].mss_max_ipv4 = 1400;
    struct l7_conn c;
    l7_conn_init(&c, false);
    bare_syn_gets_mss(x, &c, 1400);
}

/* The ACK returning the cookie carries the 24-byte preface and a SETTINGS frame: a flow
 * appears (the table has one used entry, an L7 one), and xlb sends ACK + its own empty
 * SETTINGS (00 00 00 04 00 00 00 00 00) with seq = cookie + 1, ack = the client's seq after
 * the data, its window the room left of 8 KiB scaled by 7 (l7_hello checks the frame). */
static void cookie_ack_with_preface_opens_a_connection(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    l7_conn_init(&c, false);
    l7_syn(x, &c);
    struct h2_bytes hello = {.len = 0};
    h2_client_hello(&hello);
    assert_int_equal(hello.len, 45);
    l7_advance_ms(x, 3); /* xlb's TSval is its clock, not the SYN-ACK's */
    l7_hello(x, &c, hello.b, hello.len);
    assert_int_equal(x->n->flows->n_used, 1);
    struct xlb_flow *f = l7_flow(x, &c);
    assert_non_null(f);
    assert_int_equal(f->kind, XLB_FLOW_KIND_L7_SPLICE);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_CONNECTIONS), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BAD_COOKIES), 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BOUND), 0);
    assert_int_equal(fixture_total_drops(x->n->f), 0);
}

/* A bare cookie ACK (the usual handshake): xlb's SETTINGS go out at once; the preface that
 * follows, acknowledging them, gets a bare ACK: nothing of xlb's is left to send. */
static void bare_cookie_ack_gets_settings_then_preface_an_ack(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    l7_conn_init(&c, false);
    l7_syn(x, &c);
    l7_hello(x, &c, NULL, 0);
    struct h2_bytes hello = {.len = 0};
    h2_client_hello(&hello);
    uint32_t tsval = c.c_tsval;
    struct l7_seg seg = l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq, c.x_seq,
                                       hello.b, hello.len);
    assert_int_equal(l7_send(x, &seg), 1);
    c.c_seq += hello.len;
    struct l7_seg want =
        l7_by_xlb_to_client(&c, RTE_TCP_ACK_FLAG, c.x_seq, c.c_seq, l7_receive_window(&c), NULL, 0);
    opts_ts(&want, l7_now_ms(x), tsval);
    l7_expect(x, 0, &want);
    assert_int_equal(x->n->flows->n_used, 1);
}

/* The RST the NAT answers an ACK of no connection with: seq = its ACK, no ACK, no options. */
static struct l7_seg rst_for(const struct l7_conn *c, const struct l7_seg *ack)
{
    struct l7_seg rst = l7_by_xlb_to_client(c, RTE_TCP_RST_FLAG, ack->ack, 0, 0, NULL, 0);
    rst.ip_id = ack->ip_id; /* rewritten in place */
    return rst;
}

/* An ACK with a cookie that is not ours, carrying the preface: a RST, no flow, counted. */
static void forged_cookie_gets_a_rst(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    l7_conn_init(&c, false);
    l7_syn(x, &c);
    struct h2_bytes hello = {.len = 0};
    h2_client_hello(&hello);
    struct l7_seg ack = l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq,
                                       c.cookie + 1 + (1u << 6), hello.b, hello.len);
    assert_int_equal(l7_send(x, &ack), 1);
    struct l7_seg rst = rst_for(&c, &ack);
    l7_expect(x, 0, &rst);
    assert_int_equal(x->n->flows->n_used, 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BAD_COOKIES), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_CONNECTIONS), 0);
    assert_int_equal(l7_event(x, XLB_EVENT_TCP_RESETS_SENT), 1);
    l7_clear(x);

    /* The right cookie from another client port is not a cookie either. */
    struct l7_conn other = c;
    other.port = L7_CLIENT_PORT + 1;
    ack = l7_from_client(&other, RTE_TCP_ACK_FLAG, c.c_seq, c.cookie + 1, NULL, 0);
    assert_int_equal(l7_send(x, &ack), 1);
    rst = rst_for(&other, &ack);
    l7_expect(x, 0, &rst);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BAD_COOKIES), 2);
    l7_clear(x);

    /* The right cookie with a TSecr whose check bits are wrong (it carries the options). */
    ack = l7_from_client(&c, RTE_TCP_ACK_FLAG, c.c_seq, c.cookie + 1, NULL, 0);
    opts_ts(&ack, c.c_tsval, c.x_tsval ^ 0xe0u);
    assert_int_equal(l7_send(x, &ack), 1);
    rst = rst_for(&c, &ack);
    l7_expect(x, 0, &rst);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BAD_COOKIES), 3);
    assert_int_equal(x->n->flows->n_used, 0);
    l7_clear(x);

    /* The genuine ACK still opens the connection. */
    l7_hello(x, &c, hello.b, hello.len);
    assert_int_equal(x->n->flows->n_used, 1);
}

/* An ACK to an L7 VIP whose cookie has expired: two 64-s periods later it is refused. */
static void old_cookie_gets_a_rst(void **state)
{
    struct l7_fixture *x = *state;
    struct l7_conn c;
    l7_conn_init(&c, false);
    l7_syn(x, &c);
    l7_advance_ms(x, 2 * 64000 + 1000);
    struct l7_seg ack = l7_from_client(&c, RTE_TCP_ACK_FLAG, c.c_seq, c.x_seq, NULL, 0);
    assert_int_equal(l7_send(x, &ack), 1);
    struct l7_seg rst = rst_for(&c, &ack);
    l7_expect(x, 0, &rst);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BAD_COOKIES), 1);
    assert_int_equal(x->n->flows->n_used, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(syn_gets_a_syn_cookie, l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(ipv6_syn_gets_a_syn_cookie, l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(syn_without_options_gets_mss_only, l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(syn_ack_offers_what_the_port_carries, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(cookie_ack_with_preface_opens_a_connection, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(bare_cookie_ack_gets_settings_then_preface_an_ack, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(forged_cookie_gets_a_rst, l7_setup, l7_teardown),
        cmocka_unit_test_setup_teardown(old_cookie_gets_a_rst, l7_setup, l7_teardown),
    };
    return cmocka_run_group_tests_name("l7_handshake", tests, NULL, NULL);
}
