/*
 * Packet fixtures for the TCP full NAT of L4 VIPs (dataplane/nat/), the rewrite and the flow
 * states: a client frame in, the exact frame towards the backend out (and back), the flow's
 * state and timeouts, and the LB load counters the flows feed. The VIPs' LB trees are compiled
 * from round-robin clusters of one endpoint each, so every pick is deterministic.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "nat/nat.h"
#include "nat_segments.h"

/* The second of the flow table's clock a TSC reading falls in. */
static uint32_t second_at(uint64_t tsc)
{
    return (uint32_t)(tsc / TSC_HZ);
}

/* ---- tests ---- */

static void syn4_goes_to_backend_from_snat(void **state)
{
    struct nat_fixture *n = *state;
    client_syn4(n, CLIENT_PORT, PORT_BASE);

    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_ptr_equal(backend_flow(n, false, PORT_BASE), f);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    assert_int_equal(f->snat_port, PORT_BASE);
    assert_int_equal(f->endpoint_slot, SLOT4);
    assert_int_equal(f->cluster_slot, CLUSTER4);
    assert_int_equal(f->expires_s, second_at(START_TSC) + XLB_FLOW_SYN_TIMEOUT_S);
    assert_int_equal(n->flows->n_used, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], 1);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 1);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 0);

    /* A data segment on the flow: same rewrite, payload untouched, no second flow. */
    struct seg data = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    data.seq = SEQ_CLIENT + 1;
    data.ack = SEQ_BACKEND + 1;
    struct seg out = to_backend(data, PORT_BASE);
    forward(n, &data, &out);
    size_t len;
    const uint8_t *frame = fixture_tx(n->f, 1, &len);
    assert_memory_equal(frame + len - strlen(PAYLOAD_TEXT), PAYLOAD_TEXT, strlen(PAYLOAD_TEXT));
    assert_int_equal(n->flows->n_used, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], 1);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 1);
}

static void syn_ack4_returns_to_client_from_vip(void **state)
{
    struct nat_fixture *n = *state;
    client_syn4(n, CLIENT_PORT, PORT_BASE);

    struct seg syn_ack = backend_syn_ack4(n, PORT_BASE, CLIENT_PORT);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    /* A backend answers spoofed SYNs too: until the client's ACK the flow stays half-open, on
     * the SYN timeout, in the SYN pool. */
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    assert_int_equal(f->expires_s, second_at(START_TSC) + XLB_FLOW_SYN_TIMEOUT_S);
    assert_int_equal(n->flows->n_syn, 1);
    client_ack4(n, CLIENT_PORT, PORT_BASE);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(f->expires_s, second_at(START_TSC) + XLB_FLOW_ESTABLISHED_TIMEOUT_S);
    assert_int_equal(n->flows->n_syn, 0);
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 1);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 0);

    /* The backend's data comes back too, and a retransmitted SYN-ACK counts nothing more. */
    struct seg data =
        from_backend4(PORT_BASE, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, "HTTP/1.1 200 OK\r\n");
    struct seg out = to_client(data, CLIENT_PORT);
    forward(n, &data, &out);
    out = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &out);
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 1);
    assert_int_equal(fixture_total_drops(n->f), 0);
}

static void ipv6_flow_both_ways(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    struct xlb_flow *f = client_flow(n, FIX_PEER6, CLIENT_PORT);
    assert_non_null(f);
    assert_ptr_equal(backend_flow(n, true, PORT_BASE), f);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    assert_int_equal(f->endpoint_slot, SLOT6);
    assert_int_equal(n->load->clusters[CLUSTER6].started, 1);

    struct seg syn_ack = from_backend6(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    out = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &out);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    struct seg ack = from_client6(CLIENT_PORT, RTE_TCP_ACK_FLAG, NULL);
    out = to_backend(ack, PORT_BASE);
    forward(n, &ack, &out);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(n->load->endpoints[SLOT6].succeeded, 1);

    struct seg data = from_client6(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    data.seq = SEQ_CLIENT + 1;
    data.ack = SEQ_BACKEND + 1;
    out = to_backend(data, PORT_BASE);
    forward(n, &data, &out);
    struct seg reply = from_backend6(PORT_BASE, RTE_TCP_ACK_FLAG, "HTTP/1.1 204 No Content\r\n");
    out = to_client(reply, CLIENT_PORT);
    forward(n, &reply, &out);

    /* The IPv4 VIP's counters saw none of it. */
    assert_int_equal(n->load->clusters[CLUSTER4].started, 0);
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 0);
    assert_int_equal(n->flows->n_used, 1);
}

/*
 * A whole connection in one burst: the burst's segments are looked up together before any is
 * handled, so the SYN-ACK, ACK and data must still find the flow the SYN created in front of
 * them, and come out in order.
 */
static void one_burst_holds_a_whole_connection(void **state)
{
    struct nat_fixture *n = *state;
    struct seg in[5], out[5];
    in[0] = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    in[1] = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    in[2] = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG, NULL);
    in[2].seq = SEQ_CLIENT + 1;
    in[2].ack = SEQ_BACKEND + 1;
    in[3] = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    in[3].seq = SEQ_CLIENT + 1;
    in[3].ack = SEQ_BACKEND + 1;
    in[4] = from_backend4(PORT_BASE, RTE_TCP_ACK_FLAG, "HTTP/1.1 204 No Content\r\n");
    for (int i = 0; i < 5; i++)
        out[i] = i == 1 || i == 4 ? to_client(in[i], CLIENT_PORT) : to_backend(in[i], PORT_BASE);
    forward_burst(n, in, out, 5);

    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(n->flows->n_used, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], 1);
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_TCP_RESETS_SENT], 0);
}

/*
 * In one burst, a client resets its connection, then reuses the port for a new one and sends
 * data. The SYN removes the old flow and creates another; the data looked up before that must
 * not land on the removed entry, which stays free and off the timer wheel.
 */
static void one_burst_replaces_a_closed_connection(void **state)
{
    struct nat_fixture *n = *state;
    client_syn4(n, CLIENT_PORT, PORT_BASE);
    struct xlb_flow *old = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(old);

    struct seg in[3], want[3];
    in[0] = from_client4(CLIENT_PORT, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, NULL);
    in[0].seq = SEQ_CLIENT + 1;
    in[1] = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    in[1].seq = SEQ_CLIENT + 100000;
    in[2] = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    in[2].seq = SEQ_CLIENT + 100001;
    for (int i = 0; i < 3; i++)
        want[i] = to_backend(in[i], PORT_BASE);
    forward_burst(n, in, want, 3);

    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    assert_true(f->scheduled);
    assert_int_equal(n->flows->n_used, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], 2);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CLOSED], 1);
    if (old != f) {
        assert_false(old->used);
        assert_false(old->scheduled);
    }
}

/*
 * A RST in the window may still be one the endpoint discards (RFC 5961 wants the exact
 * sequence number, or it answers with a challenge ACK). The flow is kept in "reset" for 10 s;
 * traffic after it shows the connection went on and makes it established again; otherwise it
 * goes. (Out-of-window RSTs are dropped: test_nat_window.c.)
 */
static void rst_in_the_window_is_not_taken_on_trust(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    struct seg syn_ack = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    out = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &out);
    client_ack4(n, CLIENT_PORT, PORT_BASE);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);

    struct seg rst = from_client4(CLIENT_PORT, RTE_TCP_RST_FLAG, NULL);
    rst.seq = SEQ_CLIENT + 1000; /* in the window, not exact */
    out = to_backend(rst, PORT_BASE);
    forward(n, &rst, &out);
    assert_int_equal(f->state, XLB_FLOW_RESET);
    assert_int_equal(f->expires_s, second_at(START_TSC) + XLB_FLOW_RESET_TIMEOUT_S);

    /* The backend ignored it and goes on: so does the flow. */
    n->f->ctx.now_tsc = START_TSC + 5 * TSC_HZ;
    struct seg data = from_backend4(PORT_BASE, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, "more");
    out = to_client(data, CLIENT_PORT);
    forward(n, &data, &out);
    assert_ptr_equal(client_flow(n, FIX_PEER4, CLIENT_PORT), f);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(f->expires_s,
                     second_at(START_TSC + 5 * TSC_HZ) + XLB_FLOW_ESTABLISHED_TIMEOUT_S);

    /* A RST nothing follows: the flow goes once its 10 s are over. */
    out = to_backend(rst, PORT_BASE);
    forward(n, &rst, &out);
    assert_int_equal(f->state, XLB_FLOW_RESET);
    n->f->ctx.now_tsc = START_TSC + (5 + XLB_FLOW_RESET_TIMEOUT_S + 1) * TSC_HZ;
    for (int i = 0; i < 4; i++)
        xlb_flow_expire(&n->f->ctx, n->f->snap);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(n->flows->n_used, 0);
}

static void backend_rst_to_syn_is_a_failure(void **state)
{
    struct nat_fixture *n = *state;
    client_syn4(n, CLIENT_PORT, PORT_BASE);

    /* Connection refused: the RST still reaches the client, rewritten. */
    struct seg rst = from_backend4(PORT_BASE, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, NULL);
    rst.seq = 0;
    struct seg out = to_client(rst, CLIENT_PORT);
    forward(n, &rst, &out);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_CLOSED);
    assert_int_equal(f->expires_s, second_at(START_TSC) + XLB_FLOW_CLOSED_TIMEOUT_S);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 1);
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 0);

    /* Closed flows go after their short timeout; the SYN is not counted as failed twice. */
    n->f->ctx.now_tsc = START_TSC + (XLB_FLOW_CLOSED_TIMEOUT_S + 1) * TSC_HZ;
    xlb_flow_expire(&n->f->ctx, n->f->snap);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(n->load->endpoints[SLOT4].failed, 1);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CLOSED], 1);
}

static void syn_on_a_closed_flow_starts_a_new_connection(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = client_syn4(n, CLIENT_PORT, PORT_BASE);
    struct seg rst = from_backend4(PORT_BASE, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, NULL);
    rst.seq = 0;
    struct seg out = to_client(rst, CLIENT_PORT);
    forward(n, &rst, &out);

    /* The client tries again from the same port a second later: a fresh connection, not a
     * segment of the closed one (which would expire under it after 2 s). */
    n->f->ctx.now_tsc = START_TSC + TSC_HZ;
    out = to_backend(syn, PORT_BASE); /* the freed port is handed out again */
    forward(n, &syn, &out);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 2);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CLOSED], 1);

    backend_syn_ack4(n, PORT_BASE, CLIENT_PORT);
    client_ack4(n, CLIENT_PORT, PORT_BASE);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 1);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 1);
}

static void syn_timeout_expires_flow_and_frees_port(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_burst_ctx *ctx = &n->f->ctx;
    client_syn4(n, CLIENT_PORT, PORT_BASE);
    /* A second client, established: it must survive the first one's SYN timeout. */
    client_syn4(n, CLIENT_PORT + 2, PORT_BASE + 1);
    backend_syn_ack4(n, PORT_BASE + 1, CLIENT_PORT + 2);
    client_ack4(n, CLIENT_PORT + 2, PORT_BASE + 1);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 2);

    /* Not yet: just before the deadline nothing goes. */
    ctx->now_tsc = START_TSC + XLB_FLOW_SYN_TIMEOUT_S * TSC_HZ - 1;
    xlb_flow_expire(ctx, n->f->snap);
    assert_non_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(n->flows->n_used, 2);

    ctx->now_tsc = START_TSC + (XLB_FLOW_SYN_TIMEOUT_S + 1) * TSC_HZ;
    xlb_flow_expire(ctx, n->f->snap);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_null(backend_flow(n, false, PORT_BASE));
    assert_non_null(client_flow(n, FIX_PEER4, CLIENT_PORT + 2));
    assert_int_equal(n->flows->n_used, 1);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 1); /* the SYN timed out */
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CLOSED], 1);

    /* The backend's late answer on the freed port finds nothing. */
    struct seg late = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    dropped(n, &late, XLB_DROP_TCP_NO_FLOW);

    /* Its SNAT port is handed out again (the slice's free ports are a stack). */
    client_syn4(n, CLIENT_PORT + 1, PORT_BASE);
    assert_int_equal(client_flow(n, FIX_PEER4, CLIENT_PORT + 1)->snat_port, PORT_BASE);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 3);

    /* The established one lasts until its own timeout. */
    ctx->now_tsc = START_TSC + (XLB_FLOW_ESTABLISHED_TIMEOUT_S + 1) * TSC_HZ;
    xlb_flow_expire(ctx, n->f->snap);
    assert_int_equal(n->flows->n_used, 0);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 3);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 2); /* syn3 timed out as well */
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CLOSED], 3);
}

static void padding_and_ip_options_are_handled(void **state)
{
    struct nat_fixture *n = *state;
    client_syn4(n, CLIENT_PORT, PORT_BASE);

    /* A bare ACK is 54 bytes, padded to 60 on the wire: it goes out without the padding. */
    uint8_t frame[256], want[256];
    struct seg ack = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG, NULL);
    size_t len = tcp_frame(frame, &ack);
    assert_int_equal(len, 54);
    memset(frame + len, 0xee, 60 - len);
    struct seg out = to_backend(ack, PORT_BASE);
    size_t want_len = tcp_frame(want, &out);
    assert_int_equal(fixture_send(n->f, frame, 60), 1);
    size_t out_len;
    const uint8_t *sent = fixture_tx(n->f, 1, &out_len);
    assert_int_equal(out_len, want_len);
    assert_memory_equal(sent, want, want_len);

    /* IPv4 options (a 4-byte NOP/EOL word): kept, and the longer header's checksum is right. */
    len = tcp_frame(frame, &ack);
    memmove(frame + 14 + 24, frame + 14 + 20, len - 34);
    const uint8_t options[4] = {1, 1, 1, 0};
    memcpy(frame + 14 + 20, options, 4);
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + 14);
    ip->version_ihl = 0x46;
    ip->total_length = htons(ntohs(ip->total_length) + 4);
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    assert_int_equal(fixture_send(n->f, frame, len + 4), 1);
    sent = fixture_tx(n->f, 2, &out_len);
    assert_int_equal(out_len, len + 4);
    const struct rte_ipv4_hdr *oip = (const void *)(sent + 14);
    assert_int_equal(oip->version_ihl, 0x46);
    assert_memory_equal(sent + 14 + 20, options, 4);
    assert_int_equal(rte_raw_cksum(oip, 24), 0xffff);
    assert_int_equal(rte_ipv4_udptcp_cksum_verify(oip, sent + 14 + 24), 0);
    /* Addresses as in the frame without options. */
    assert_memory_equal(sent + 14 + 12, want + 14 + 12, 8);
    assert_memory_equal(sent + 14 + 24, want + 14 + 20, want_len - 34); /* the TCP segment */
}

static void fin_moves_flow_to_closing(void **state)
{
    struct nat_fixture *n = *state;
    client_syn4(n, CLIENT_PORT, PORT_BASE);
    backend_syn_ack4(n, PORT_BASE, CLIENT_PORT);
    struct seg fin = from_client4(CLIENT_PORT, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    struct seg out = to_backend(fin, PORT_BASE);
    forward(n, &fin, &out);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_int_equal(f->state, XLB_FLOW_CLOSING);
    assert_int_equal(f->expires_s, second_at(START_TSC) + XLB_FLOW_CLOSING_TIMEOUT_S);
    n->f->ctx.now_tsc = START_TSC + (XLB_FLOW_CLOSING_TIMEOUT_S + 1) * TSC_HZ;
    xlb_flow_expire(&n->f->ctx, n->f->snap);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(n->load->endpoints[SLOT4].failed, 0); /* a clean close is no failure */
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(syn4_goes_to_backend_from_snat, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(syn_on_a_closed_flow_starts_a_new_connection, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(syn_ack4_returns_to_client_from_vip, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(ipv6_flow_both_ways, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(one_burst_holds_a_whole_connection, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(one_burst_replaces_a_closed_connection, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(rst_in_the_window_is_not_taken_on_trust, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(backend_rst_to_syn_is_a_failure, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(syn_timeout_expires_flow_and_frees_port, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(padding_and_ip_options_are_handled, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(fin_moves_flow_to_closing, nat_setup, nat_teardown),
    };
    return cmocka_run_group_tests_name("nat_rewrite", tests, NULL, NULL);
}
