/*
 * Packet fixtures for circuit breaking on L4 VIPs (dataplane/nat/nat_track.c): a flow is a
 * request in flight on its cluster from its SYN until the connection closes (FINs from both
 * sides, or a RST), not until its entry expires; a RST that is not taken starts the request
 * again. With max_requests = MAX_REQ, closed connections let new ones in at once.
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

#include "flow/flow.h"
#include "nat_segments.h"

#define MAX_REQ 3 /* the IPv4 cluster's circuit breaker */

static int requests_setup(void **state)
{
    *state = nat_fixture_two_clusters("nat_requests", FLOWS, 0, MAX_REQ);
    return 0;
}

static uint64_t in_flight(struct nat_fixture *n)
{
    return xlb_lb_in_flight(&n->lb, CLUSTER4);
}

/* Send one segment; exactly one frame must come out (checked byte for byte elsewhere). */
static void passes(struct nat_fixture *n, const struct seg *in)
{
    uint8_t frame[256];
    size_t len = tcp_frame(frame, in);
    assert_int_equal(fixture_send(n->f, frame, len), 1);
    fixture_clear_tx(n->f);
}

/* The client's SYN, the backend's SYN-ACK and the client's ACK: an established flow. */
static struct xlb_flow *establish(struct nat_fixture *n, uint16_t client_port)
{
    struct seg syn = from_client4(client_port, RTE_TCP_SYN_FLAG, NULL);
    passes(n, &syn);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, client_port);
    assert_non_null(f);
    struct seg syn_ack = from_backend4(f->snat_port, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    passes(n, &syn_ack);
    struct seg ack = from_client4(client_port, RTE_TCP_ACK_FLAG, NULL);
    passes(n, &ack);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    return f;
}

/* The client's FIN, then the backend's: both sides have closed. */
static void close_by_fins(struct nat_fixture *n, struct xlb_flow *f, uint16_t client_port)
{
    uint64_t before = in_flight(n);
    struct seg fin = from_client4(client_port, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    passes(n, &fin);
    assert_int_equal(f->state, XLB_FLOW_CLOSING);
    assert_int_equal(in_flight(n), before); /* half closed: the backend may still answer */
    passes(n, &fin);                        /* a retransmission is no second FIN */
    assert_int_equal(in_flight(n), before);
    struct seg fin_ack = from_backend4(f->snat_port, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    fin_ack.ack = SEQ_CLIENT + 2;
    passes(n, &fin_ack);
    assert_int_equal(in_flight(n), before - 1);
    assert_int_equal(f->cluster_slot, XLB_CLUSTER_SLOTS); /* nothing left to end */
    passes(n, &fin_ack);                                  /* retransmitted: counted once */
    struct seg last = from_client4(client_port, RTE_TCP_ACK_FLAG, NULL);
    last.seq = SEQ_CLIENT + 2;
    last.ack = SEQ_BACKEND + 2;
    passes(n, &last);
    assert_int_equal(in_flight(n), before - 1);
    assert_int_equal(f->state, XLB_FLOW_CLOSING); /* the entry stays for late segments */
}

static void expire_all(struct nat_fixture *n, uint64_t after_s)
{
    n->f->ctx.now_tsc = START_TSC + after_s * TSC_HZ;
    for (int i = 0; i < 8; i++)
        xlb_flow_expire(&n->f->ctx, n->f->snap);
    assert_int_equal(n->flows->n_used, 0);
}

static void fins_from_both_sides_end_the_request(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_flow *f = establish(n, CLIENT_PORT);
    assert_int_equal(in_flight(n), 1);
    close_by_fins(n, f, CLIENT_PORT);
    assert_int_equal(in_flight(n), 0);
    expire_all(n, XLB_FLOW_CLOSING_TIMEOUT_S + 2); /* the entry goes: nothing ends twice */
    assert_int_equal(n->load->clusters[CLUSTER4].started, 1);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
}

static void backend_fin_first_then_client_fin(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_flow *f = establish(n, CLIENT_PORT);
    struct seg fin = from_backend4(f->snat_port, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    passes(n, &fin);
    assert_int_equal(in_flight(n), 1);
    struct seg fin_ack = from_client4(CLIENT_PORT, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    fin_ack.ack = SEQ_BACKEND + 2;
    passes(n, &fin_ack);
    assert_int_equal(in_flight(n), 0);
    /* A RST after the close ends nothing more. */
    struct seg rst = from_backend4(f->snat_port, RTE_TCP_RST_FLAG, NULL);
    rst.seq = SEQ_BACKEND + 2;
    passes(n, &rst);
    assert_int_equal(f->state, XLB_FLOW_CLOSED);
    expire_all(n, XLB_FLOW_CLOSING_TIMEOUT_S + 2);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
}

static void rst_ends_the_request_and_a_rst_not_taken_restarts_it(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_flow *f = establish(n, CLIENT_PORT);
    struct seg rst = from_backend4(f->snat_port, RTE_TCP_RST_FLAG, NULL);
    passes(n, &rst);
    assert_int_equal(f->state, XLB_FLOW_RESET);
    assert_int_equal(in_flight(n), 0);
    passes(n, &rst); /* again: still one end */
    assert_int_equal(in_flight(n), 0);

    /* The connection goes on: the RST was not taken, the request is in flight again. */
    struct seg data = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, "more");
    passes(n, &data);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(in_flight(n), 1);
    assert_int_equal(f->cluster_slot, CLUSTER4);

    /* A RST nothing follows: ended at the RST, not again when the entry expires. */
    struct seg crst = from_client4(CLIENT_PORT, RTE_TCP_RST_FLAG, NULL);
    crst.seq = SEQ_CLIENT + 5;
    passes(n, &crst);
    assert_int_equal(in_flight(n), 0);
    expire_all(n, XLB_FLOW_RESET_TIMEOUT_S + 2);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 2);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 2);
}

static void an_open_flow_ends_its_request_when_it_expires(void **state)
{
    struct nat_fixture *n = *state;
    establish(n, CLIENT_PORT);
    n->f->ctx.now_tsc = START_TSC + (XLB_FLOW_ESTABLISHED_TIMEOUT_S - 5) * TSC_HZ;
    xlb_flow_expire(&n->f->ctx, n->f->snap);
    assert_int_equal(in_flight(n), 1);
    expire_all(n, XLB_FLOW_ESTABLISHED_TIMEOUT_S + 2);
    assert_int_equal(in_flight(n), 0);
    /* A refused SYN: the request ends at the backend's RST. */
    struct seg syn = from_client4(CLIENT_PORT + 1, RTE_TCP_SYN_FLAG, NULL);
    passes(n, &syn);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT + 1);
    assert_int_equal(in_flight(n), 1);
    struct seg rst = from_backend4(f->snat_port, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, NULL);
    rst.seq = 0;
    passes(n, &rst);
    assert_int_equal(f->state, XLB_FLOW_CLOSED);
    assert_int_equal(in_flight(n), 0);
    expire_all(n, XLB_FLOW_ESTABLISHED_TIMEOUT_S + XLB_FLOW_CLOSED_TIMEOUT_S + 4);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 2);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 2);
}

static void closed_connections_let_the_next_in_at_once(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_flow *f[MAX_REQ];
    for (uint16_t i = 0; i < MAX_REQ; i++)
        f[i] = establish(n, CLIENT_PORT + i);
    assert_int_equal(in_flight(n), MAX_REQ);
    struct seg next = from_client4(CLIENT_PORT + MAX_REQ, RTE_TCP_SYN_FLAG, NULL);
    dropped(n, &next, XLB_DROP_LB_CIRCUIT_OPEN);

    /* One closes by FIN and FIN, its entry still in the table: the next one is let in. */
    close_by_fins(n, f[0], CLIENT_PORT);
    assert_int_equal(n->flows->n_used, MAX_REQ);
    passes(n, &next);
    struct seg another = from_client4(CLIENT_PORT + MAX_REQ + 1, RTE_TCP_SYN_FLAG, NULL);
    dropped(n, &another, XLB_DROP_LB_CIRCUIT_OPEN);

    /* Another is reset: one more. */
    struct seg rst = from_client4(CLIENT_PORT + 1, RTE_TCP_RST_FLAG, NULL);
    passes(n, &rst);
    assert_int_equal(f[1]->state, XLB_FLOW_RESET);
    passes(n, &another);
    assert_int_equal(in_flight(n), MAX_REQ);
    assert_int_equal(n->flows->n_used, MAX_REQ + 2);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_LB_CIRCUIT_OPEN), 2);
}

/* The answer to one client segment: its TCP header (one frame must come out). */
static const struct rte_tcp_hdr *answer(struct nat_fixture *n, const struct seg *in,
                                        struct rte_ether_addr *to)
{
    uint8_t frame[256];
    size_t len = tcp_frame(frame, in);
    fixture_clear_tx(n->f);
    assert_int_equal(fixture_send(n->f, frame, len), 1);
    size_t out_len;
    const struct rte_ether_hdr *eth = (const void *)fixture_tx(n->f, 0, &out_len);
    *to = eth->dst_addr;
    return (const void *)((const uint8_t *)(eth + 1) + sizeof(struct rte_ipv4_hdr));
}

/* "auto" SYN proxy: once half the circuit breaker is in flight, SYNs get cookies instead of
 * flows, so half-open connections (a flood's) cannot fill max_requests and refuse everyone
 * (lb_circuit_open); a client that returns its cookie is picked against the half left. */
static void auto_proxy_keeps_half_the_circuit_breaker(void **state)
{
    struct nat_fixture *n = *state;
    n->f->snap->l4_syn_proxy = XLB_SYN_PROXY_AUTO;
    n->f->snap->l4_syn_proxy_percent = 50;
    /* The whole (8-entry) table for half-open flows: the pool's threshold stays out of it. */
    n->flows->syn_cap = FLOWS;
    static const struct rte_ether_addr client = FIX_PEER_MAC, backend = NAT_BACKEND_MAC;
    struct rte_ether_addr to;
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    const struct rte_tcp_hdr *out = answer(n, &syn, &to);
    assert_memory_equal(&to, &backend, 6); /* below half: a flow, its SYN to the backend */
    assert_int_equal(in_flight(n), 1);
    uint32_t cookie = 0;
    for (uint16_t i = 1; i <= 20; i++) { /* a flood: cookies, nothing more in flight */
        syn = from_client4((uint16_t)(CLIENT_PORT + i), RTE_TCP_SYN_FLAG, NULL);
        out = answer(n, &syn, &to);
        assert_memory_equal(&to, &client, 6);
        assert_int_equal(out->tcp_flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
        cookie = rte_be_to_cpu_32(out->sent_seq);
        assert_int_equal(in_flight(n), 1);
    }
    assert_int_equal(n->f->stats.events[XLB_EVENT_SYN_PROXY_CIRCUIT_COOKIES], 20);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_LB_CIRCUIT_OPEN), 0);
    /* The last one was a real client: its ACK opens its backend connection. */
    struct seg ack = from_client4((uint16_t)(CLIENT_PORT + 20), RTE_TCP_ACK_FLAG, NULL);
    ack.ack = cookie + 1;
    out = answer(n, &ack, &to);
    assert_memory_equal(&to, &backend, 6);
    assert_int_equal(out->tcp_flags, RTE_TCP_SYN_FLAG);
    assert_int_equal(in_flight(n), 2);
    fixture_clear_tx(n->f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fins_from_both_sides_end_the_request, requests_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(backend_fin_first_then_client_fin, requests_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(rst_ends_the_request_and_a_rst_not_taken_restarts_it,
                                        requests_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(an_open_flow_ends_its_request_when_it_expires,
                                        requests_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(auto_proxy_keeps_half_the_circuit_breaker, requests_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(closed_connections_let_the_next_in_at_once, requests_setup,
                                        nat_teardown),
    };
    return cmocka_run_group_tests_name("nat_requests", tests, NULL, NULL);
}
