/*
 * Packet fixtures for the flow cache in front of the flow table's hash
 * (dataplane/flow_table/xlb_flow_cache.h): its slots are only hints, so a flow that has gone,
 * or whose index another connection now holds, must never receive a segment through a slot
 * that still names it. And a burst whose
 * own segments change the table (an eviction, a new IPv6 VIP's first flow) must look later
 * segments up afresh.
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

/* The flow index the cache's slot for a client's key names, or -1. */
static int64_t cached_index(struct nat_fixture *n, uint16_t client_port)
{
    struct xlb_flow_key key = {.family = AF_INET,
                               .proto = IPPROTO_TCP,
                               .src_port = htons(client_port),
                               .dst_port = htons(VIP_PORT)};
    assert_int_equal(inet_pton(AF_INET, FIX_PEER4, key.src), 1);
    assert_int_equal(inet_pton(AF_INET, FIX_VIP4, key.dst), 1);
    struct xlb_flow_hkey h;
    assert_true(xlb_flow_hkey_of(&n->flows->vip6, &key, &h));
    uint32_t sig = xlb_flow_table_hash(n->flows, &h);
    return xlb_flow_cache_probe(n->flows->cache, sig);
}

static int64_t index_of(struct nat_fixture *n, const struct xlb_flow *f)
{
    assert_non_null(f);
    return f - n->flows->flows;
}

/* A client data segment on an established connection, and what the backend must get. */
static struct seg client_data(uint16_t client_port)
{
    struct seg data = from_client4(client_port, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    data.ack = SEQ_BACKEND + 1;
    return data;
}

/* Fill the table (FLOWS established connections, client port CLIENT_PORT + i on SNAT port
 * PORT_BASE + i), the first one idling out first; its data goes through once, so the cache
 * names it. Returns the first flow's index. */
static int64_t fill_table(struct nat_fixture *n)
{
    n->flows->syn_cap = FLOWS; /* about the table, not the SYN pool */
    for (uint16_t i = 0; i < FLOWS; i++) {
        n->f->ctx.now_tsc = START_TSC + i * TSC_HZ;
        client_syn4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
        backend_syn_ack4(n, (uint16_t)(PORT_BASE + i), (uint16_t)(CLIENT_PORT + i));
        client_ack4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
        if (i == 0) {
            struct seg data = client_data(CLIENT_PORT);
            struct seg out = to_backend(data, PORT_BASE);
            forward(n, &data, &out);
        }
    }
    assert_int_equal(n->flows->n_used, FLOWS);
    int64_t first = index_of(n, client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(cached_index(n, CLIENT_PORT), first);
    return first;
}

/* ---- tests ---- */

static void evicted_flow_index_taken_by_another_client_is_not_reached(void **state)
{
    struct nat_fixture *n = *state;
    int64_t first = fill_table(n);
    /* A new connection evicts the first flow and, the table being full, takes its index. */
    struct seg syn = from_client4(CLIENT_PORT + FLOWS, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_EVICTED], 1);
    assert_int_equal(index_of(n, client_flow(n, FIX_PEER4, CLIENT_PORT + FLOWS)), first);
    assert_int_equal(cached_index(n, CLIENT_PORT), first); /* the slot still names it */

    /* The evicted client's next segment is answered with a RST, not sent to the new flow's
     * backend from its port. */
    struct seg stale = client_data(CLIENT_PORT);
    stale.seq += strlen(PAYLOAD_TEXT);
    answered_with_reset(n, &stale);
    assert_int_equal(n->f->stats.events[XLB_EVENT_TCP_RESETS_SENT], 1);

    /* The new connection is not disturbed, and the index's checksum patches (kept with its
     * key, dataplane/nat/nat_forward.c) are its own: its SYN-ACK and data come out with the
     * checksums the fixture computes in full. */
    backend_syn_ack4(n, PORT_BASE, CLIENT_PORT + FLOWS);
    client_ack4(n, CLIENT_PORT + FLOWS, PORT_BASE);
    struct seg data = client_data(CLIENT_PORT + FLOWS);
    struct seg sent = to_backend(data, PORT_BASE);
    forward(n, &data, &sent);
}

static void removed_flow_is_not_reached_through_its_slot(void **state)
{
    struct nat_fixture *n = *state;
    int64_t first = fill_table(n);
    /* The client resets; the flow ends when its short timeout runs out. */
    struct seg rst = client_data(CLIENT_PORT);
    rst.flags = RTE_TCP_RST_FLAG;
    rst.payload = NULL;
    rst.seq += strlen(PAYLOAD_TEXT);
    struct seg rst_out = to_backend(rst, PORT_BASE);
    forward(n, &rst, &rst_out);
    n->f->ctx.now_tsc += (XLB_FLOW_CLOSED_TIMEOUT_S + 10) * TSC_HZ;
    for (int i = 0; i < 4 && n->flows->n_used == FLOWS; i++)
        xlb_flow_expire(&n->f->ctx, n->f->snap);
    assert_int_equal(n->flows->n_used, FLOWS - 1);
    assert_false(n->flows->flows[first].used);
    assert_int_equal(cached_index(n, CLIENT_PORT), first);

    /* A late segment of the connection finds no flow. */
    struct seg late = client_data(CLIENT_PORT);
    late.seq += strlen(PAYLOAD_TEXT);
    answered_with_reset(n, &late);
}

static void eviction_within_a_burst_is_seen_by_its_later_segments(void **state)
{
    struct nat_fixture *n = *state;
    int64_t first = fill_table(n);
    /* One burst: a SYN that evicts the first client's flow (its index going to the new flow),
     * then that client's data, whose flow was looked up with the burst's before the SYN was
     * handled: it must find no flow now. */
    struct seg in[2] = {from_client4(CLIENT_PORT + FLOWS, RTE_TCP_SYN_FLAG, NULL),
                        client_data(CLIENT_PORT)};
    in[1].seq += strlen(PAYLOAD_TEXT);
    struct rte_mbuf *burst[2];
    for (unsigned i = 0; i < 2; i++) {
        uint8_t frame[256];
        size_t len = tcp_frame(frame, &in[i]);
        burst[i] = rte_pktmbuf_alloc(n->f->pool);
        assert_non_null(burst[i]);
        memcpy(rte_pktmbuf_append(burst[i], (uint16_t)len), frame, len);
    }
    unsigned before = n->f->ctx.tx[0].n;
    xlb_burst_process(&n->f->ctx, n->f->snap, 0, burst, 2);
    assert_int_equal(n->f->ctx.tx[0].n - before, 2);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_EVICTED], 1);
    assert_int_equal(index_of(n, client_flow(n, FIX_PEER4, CLIENT_PORT + FLOWS)), first);
    size_t len;
    const uint8_t *last = fixture_tx(n->f, before + 1, &len);
    const struct rte_tcp_hdr *tcp =
        (const void *)(last + sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr));
    assert_int_equal(tcp->tcp_flags, RTE_TCP_RST_FLAG);
    assert_int_equal(ntohs(tcp->dst_port), CLIENT_PORT);
    assert_int_equal(n->f->stats.events[XLB_EVENT_TCP_RESETS_SENT], 1);
}

static void retransmitted_syn_to_a_new_ipv6_vip_in_one_burst_makes_one_flow(void **state)
{
    struct nat_fixture *n = *state;
    /* The IPv6 VIP has no flow yet, so the table has not numbered it: neither SYN has a compact
     * key when the burst's flows are looked up. The first makes the flow (and numbers the
     * VIP); the second must find that flow, not make another. */
    struct seg syn = from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg in[2] = {syn, syn};
    struct seg out[2] = {to_backend(syn, PORT_BASE), to_backend(syn, PORT_BASE)};
    forward_burst(n, in, out, 2);
    assert_int_equal(n->flows->n_used, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], 1);
    assert_non_null(client_flow(n, FIX_PEER6, CLIENT_PORT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(evicted_flow_index_taken_by_another_client_is_not_reached,
                                        nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(removed_flow_is_not_reached_through_its_slot, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(eviction_within_a_burst_is_seen_by_its_later_segments,
                                        nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(
            retransmitted_syn_to_a_new_ipv6_vip_in_one_burst_makes_one_flow, nat_setup,
            nat_teardown),
    };
    return cmocka_run_group_tests_name("nat_flow_cache", tests, NULL, NULL);
}
