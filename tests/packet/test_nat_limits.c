/*
 * Packet fixtures for the limits of the TCP full NAT of L4 VIPs (dataplane/nat/): segments of
 * no flow (reset or dropped), no backend or an unresolved one, the SYN pool, eviction from a
 * full table, and ICMP errors about flows translated for the client.
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

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;
static const struct rte_ether_addr client_mac = FIX_PEER_MAC;
static const struct rte_ether_addr backend_mac = NAT_BACKEND_MAC;

/* ---- tests ---- */

static void packets_without_flow_are_reset_or_dropped(void **state)
{
    struct nat_fixture *n = *state;
    /* Client segments other than a bare SYN never open a flow: they are answered with RST. */
    struct seg ack = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG, PAYLOAD_TEXT);
    ack.ack = 0x55667788;
    answered_with_reset(n, &ack);
    struct seg syn_ack = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    answered_with_reset(n, &syn_ack);
    struct seg fin6 = from_client6(CLIENT_PORT, RTE_TCP_FIN_FLAG, NULL);
    answered_with_reset(n, &fin6);
    assert_int_equal(n->f->stats.events[XLB_EVENT_TCP_RESETS_SENT], 3);
    /* ... but a RST is never answered. */
    struct seg rst = from_client4(CLIENT_PORT, RTE_TCP_RST_FLAG, NULL);
    dropped(n, &rst, XLB_DROP_TCP_NO_FLOW);
    /* The resets above were checked; the rest must send nothing. */
    rte_pktmbuf_free_bulk(n->f->ctx.tx[0].pkts, n->f->ctx.tx[0].n);
    n->f->ctx.tx[0].n = 0;

    /* The backend to a port of this worker's slice that has no flow. */
    struct seg stray = from_backend4(PORT_BASE + 50, RTE_TCP_ACK_FLAG, NULL);
    dropped(n, &stray, XLB_DROP_TCP_NO_FLOW);
    /* ... and to another worker's port (slice of PORT_COUNT ports each). */
    struct seg other = from_backend4(PORT_BASE + 5000, RTE_TCP_ACK_FLAG, NULL);
    dropped(n, &other, XLB_DROP_FLOW_OTHER_WORKER);
    struct seg other6 = from_backend6(PORT_BASE + PORT_COUNT, RTE_TCP_ACK_FLAG, NULL);
    dropped(n, &other6, XLB_DROP_FLOW_OTHER_WORKER);
    /* Below the SNAT range: nobody's. */
    struct seg low = from_backend4(PORT_BASE - 1, RTE_TCP_ACK_FLAG, NULL);
    dropped(n, &low, XLB_DROP_TCP_NO_FLOW);

    assert_int_equal(fixture_drops(n->f, XLB_DROP_TCP_NO_FLOW), 3);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_FLOW_OTHER_WORKER), 2);
    assert_int_equal(n->f->ctx.tx[0].n, 0);
    assert_int_equal(n->flows->n_used, 0);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 0);
}

static void unresolved_backend_leaves_no_flow(void **state)
{
    struct nat_fixture *n = *state;
    nat_entry(n->f->snap, BACKEND4)->resolved = false;
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    dropped(n, &syn, XLB_DROP_NEXT_HOP_UNRESOLVED);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_null(backend_flow(n, false, PORT_BASE));
    assert_int_equal(n->flows->n_used, 0);
    assert_int_equal(n->flows->n_free_ports[0], PORT_COUNT);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 1);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], 0);
    assert_int_equal(n->f->ctx.tx[0].n, 0);

    /* Resolved again: the next SYN gets the slice's first port. */
    nat_entry(n->f->snap, BACKEND4)->resolved = true;
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
}

/* SYN flood policy: half-open flows take at most a quarter of the table. */
static void syn_flood_is_held_to_its_pool(void **state)
{
    struct nat_fixture *n = *state;
    uint32_t cap = n->flows->syn_cap;
    assert_int_equal(cap, FLOWS / 4);
    for (uint16_t i = 0; i < cap; i++)
        client_syn4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
    struct seg flood = from_client4(CLIENT_PORT + 100, RTE_TCP_SYN_FLAG, NULL);
    dropped(n, &flood, XLB_DROP_SYN_POOL_FULL);
    assert_int_equal(n->flows->n_used, cap);
    assert_int_equal(n->load->clusters[CLUSTER4].started, cap); /* refused before the pick */

    /* A SYN the backend answered stays in the pool (a spoofed one is answered too); the
     * client's ACK takes it out: room for new ones again. */
    backend_syn_ack4(n, PORT_BASE, CLIENT_PORT);
    assert_int_equal(n->flows->n_syn, cap);
    client_ack4(n, CLIENT_PORT, PORT_BASE);
    assert_int_equal(n->flows->n_syn, cap - 1);
    struct seg out = to_backend(flood, (uint16_t)(PORT_BASE + cap));
    forward(n, &flood, &out);
}

/* xlb.l4_syn_proxy "auto" (the default): SYNs make flows as without the proxy until the pool is
 * half full; from then on a SYN gets a cookie SYN-ACK and no flow, so a flood fills nothing
 * more; the ACK of such a cookie opens the backend connection, whatever the pool's state. */
static void auto_proxy_takes_over_when_the_pool_fills(void **state)
{
    struct nat_fixture *n = *state;
    n->f->snap->l4_syn_proxy = XLB_SYN_PROXY_AUTO;
    n->f->snap->l4_syn_proxy_percent = 50;
    uint32_t half = n->flows->syn_cap / 2;
    for (uint16_t i = 0; i < half; i++)
        client_syn4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
    assert_int_equal(n->flows->n_syn, half);
    assert_int_equal(n->f->stats.events[XLB_EVENT_SYN_PROXY_COOKIES_SENT], 0);

    uint32_t cookie = 0;
    for (uint16_t i = 0; i < 3 * half; i++) { /* a flood: cookies, no flow */
        struct seg syn = from_client4((uint16_t)(CLIENT_PORT + 1000 + i), RTE_TCP_SYN_FLAG, NULL);
        uint8_t frame[256];
        size_t len = tcp_frame(frame, &syn);
        unsigned before = n->f->ctx.tx[0].n;
        assert_int_equal(fixture_send(n->f, frame, len), 1);
        size_t out_len;
        const uint8_t *out = fixture_tx(n->f, before, &out_len);
        const struct rte_ether_hdr *eth = (const void *)out;
        const struct rte_tcp_hdr *tcp =
            (const void *)((const uint8_t *)(eth + 1) + sizeof(struct rte_ipv4_hdr));
        assert_memory_equal(&eth->dst_addr, &client_mac, 6);
        assert_int_equal(tcp->tcp_flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
        cookie = rte_be_to_cpu_32(tcp->sent_seq);
    }
    assert_int_equal(n->f->stats.events[XLB_EVENT_SYN_PROXY_COOKIES_SENT], 3 * half);
    assert_int_equal(n->flows->n_syn, half);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_SYN_POOL_FULL), 0);
    rte_pktmbuf_free_bulk(n->f->ctx.tx[0].pkts, n->f->ctx.tx[0].n);
    n->f->ctx.tx[0].n = 0;

    /* Below the threshold again (100 %): the last flooder's ACK of its cookie still opens its
     * backend connection (a SYN to the backend, a flow). That fills the pool: the next SYN gets
     * a cookie, where without the proxy it would be dropped (syn_pool_full). */
    n->f->snap->l4_syn_proxy_percent = 100;
    struct seg ack =
        from_client4((uint16_t)(CLIENT_PORT + 1000 + 3 * half - 1), RTE_TCP_ACK_FLAG, NULL);
    ack.ack = cookie + 1;
    uint8_t frame[256];
    size_t len = tcp_frame(frame, &ack);
    assert_int_equal(fixture_send(n->f, frame, len), 1);
    size_t out_len;
    const struct rte_ether_hdr *eth = (const void *)fixture_tx(n->f, 0, &out_len);
    const struct rte_tcp_hdr *tcp =
        (const void *)((const uint8_t *)(eth + 1) + sizeof(struct rte_ipv4_hdr));
    assert_memory_equal(&eth->dst_addr, &backend_mac, 6);
    assert_int_equal(tcp->tcp_flags, RTE_TCP_SYN_FLAG);
    assert_int_equal(n->f->stats.events[XLB_EVENT_SYN_PROXY_VALID_ACKS], 1);
    assert_int_equal(n->flows->n_syn, half + 1);
    rte_pktmbuf_free_bulk(n->f->ctx.tx[0].pkts, n->f->ctx.tx[0].n);
    n->f->ctx.tx[0].n = 0;
    struct seg syn = from_client4((uint16_t)(CLIENT_PORT + half), RTE_TCP_SYN_FLAG, NULL);
    len = tcp_frame(frame, &syn);
    assert_int_equal(fixture_send(n->f, frame, len), 1);
    assert_int_equal(n->flows->n_syn, n->flows->syn_cap);
    assert_int_equal(n->f->stats.events[XLB_EVENT_SYN_PROXY_COOKIES_SENT], 3 * half + 1);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_SYN_POOL_FULL), 0);
}

/* A full table makes room for a new connection by evicting the flow nearest its timeout. */
static void full_table_evicts_the_oldest_idle_flow(void **state)
{
    struct nat_fixture *n = *state;
    n->flows->syn_cap = FLOWS; /* this test is about the table, not the SYN pool */
    for (uint16_t i = 0; i < FLOWS; i++) {
        n->f->ctx.now_tsc = START_TSC + i * TSC_HZ; /* flow i idles out one second after i-1 */
        client_syn4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
        backend_syn_ack4(n, (uint16_t)(PORT_BASE + i), (uint16_t)(CLIENT_PORT + i));
        client_ack4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
    }
    assert_int_equal(n->flows->n_used, FLOWS);
    struct seg syn = from_client4(CLIENT_PORT + FLOWS, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE); /* the evicted flow's port */
    forward(n, &syn, &out);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_EVICTED], 1);
    assert_int_equal(n->flows->n_used, FLOWS);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT)); /* the first, oldest, went */
    assert_non_null(client_flow(n, FIX_PEER4, CLIENT_PORT + 1));
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
}

/*
 * An ICMP error whose quote is `quoted` (an IP packet xlb sent), from `from` to `to`, with the
 * outer header of `family`; returns the frame length.
 */
static size_t icmp_error_frame(uint8_t *buf, int family, const struct rte_ether_addr *src_mac,
                               const char *from, const char *to, const uint8_t *quoted,
                               size_t quoted_len)
{
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
    eth->dst_addr = port_mac;
    eth->src_addr = *src_mac;
    uint8_t *icmp;
    size_t icmp_len = 8 + quoted_len;
    if (family == AF_INET) {
        eth->ether_type = htons(RTE_ETHER_TYPE_IPV4);
        struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
        memset(ip, 0, sizeof(*ip));
        ip->version_ihl = 0x45;
        ip->total_length = htons((uint16_t)(sizeof(*ip) + icmp_len));
        ip->time_to_live = 64;
        ip->next_proto_id = IPPROTO_ICMP;
        assert_int_equal(inet_pton(AF_INET, from, &ip->src_addr), 1);
        assert_int_equal(inet_pton(AF_INET, to, &ip->dst_addr), 1);
        ip->hdr_checksum = rte_ipv4_cksum(ip);
        icmp = (uint8_t *)(ip + 1);
        const uint8_t head[8] = {3, 4, 0, 0, 0, 0, 0x05, 0x78}; /* frag needed, MTU 1400 */
        memcpy(icmp, head, 8);
        memcpy(icmp + 8, quoted, quoted_len);
        uint16_t csum = (uint16_t)~rte_raw_cksum(icmp, icmp_len);
        memcpy(icmp + 2, &csum, 2);
        return sizeof(*eth) + sizeof(*ip) + icmp_len;
    }
    eth->ether_type = htons(RTE_ETHER_TYPE_IPV6);
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + 1);
    memset(ip, 0, sizeof(*ip));
    ip->vtc_flow = htonl(6u << 28);
    ip->payload_len = htons((uint16_t)icmp_len);
    ip->proto = IPPROTO_ICMPV6;
    ip->hop_limits = 64;
    assert_int_equal(inet_pton(AF_INET6, from, ip->src_addr), 1);
    assert_int_equal(inet_pton(AF_INET6, to, ip->dst_addr), 1);
    icmp = (uint8_t *)(ip + 1);
    const uint8_t head[8] = {2, 0, 0, 0, 0, 0, 0x05, 0x00}; /* packet too big, MTU 1280 */
    memcpy(icmp, head, 8);
    memcpy(icmp + 8, quoted, quoted_len);
    uint16_t csum = rte_ipv6_udptcp_cksum(ip, icmp);
    memcpy(icmp + 2, &csum, 2);
    return sizeof(*eth) + sizeof(*ip) + icmp_len;
}

/* Send an ICMP error quoting `sent` (what xlb forwarded) and check it reaches the client as an
 * error about the client's own segment `original`, all checksums valid. */
static void icmp_error_reaches_client(struct nat_fixture *n, const struct seg *original,
                                      const struct seg *sent, bool v6)
{
    uint8_t sent_frame[256], orig_frame[256], frame[512];
    size_t sent_len = tcp_frame(sent_frame, sent), orig_len = tcp_frame(orig_frame, original);
    size_t eth = sizeof(struct rte_ether_hdr);
    size_t len =
        icmp_error_frame(frame, v6 ? AF_INET6 : AF_INET, sent->eth_dst, v6 ? BACKEND6 : BACKEND4,
                         v6 ? SNAT6 : SNAT4, sent_frame + eth, sent_len - eth);
    unsigned before = n->f->ctx.tx[0].n;
    assert_int_equal(fixture_send(n->f, frame, len), 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(n->f, before, &out_len);
    assert_int_equal(out_len, len);
    const struct rte_ether_hdr *e = (const void *)out;
    assert_memory_equal(&e->dst_addr, &client_mac, 6);
    assert_memory_equal(&e->src_addr, &port_mac, 6);
    size_t outer = v6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
    const uint8_t *icmp = out + eth + outer;
    /* The quote is now exactly the client's own segment (with the TTL/hop limit it had). */
    const uint8_t *quote = icmp + 8;
    if (v6) {
        const struct rte_ipv6_hdr *ip = (const void *)(e + 1);
        assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);
        assert_memory_equal(quote + 8, orig_frame + eth + 8, 32); /* addresses */
    } else {
        const struct rte_ipv4_hdr *ip = (const void *)(e + 1);
        assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
        assert_int_equal(rte_raw_cksum(icmp, out_len - eth - outer), 0xffff);
        const struct rte_ipv4_hdr *q = (const void *)quote;
        assert_int_equal(rte_raw_cksum(q, sizeof(*q)), 0xffff);
        assert_int_equal(rte_ipv4_udptcp_cksum_verify(q, q + 1), 0);
        assert_memory_equal(quote + 12, orig_frame + eth + 12, 8); /* addresses */
    }
    size_t q_ip = v6 ? 40 : 20;
    assert_memory_equal(quote + q_ip, orig_frame + eth + q_ip, 4); /* ports */
    (void)orig_len;
}

static void icmp_errors_are_translated_for_the_client(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg sent = to_backend(syn, PORT_BASE);
    forward(n, &syn, &sent);
    icmp_error_reaches_client(n, &syn, &sent, false);

    struct seg syn6 = from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg sent6 = to_backend(syn6, PORT_BASE);
    forward(n, &syn6, &sent6);
    icmp_error_reaches_client(n, &syn6, &sent6, true);
    assert_int_equal(n->f->stats.events[XLB_EVENT_ICMP_ERRORS_TRANSLATED], 2);

    /* An error about a segment of no flow goes nowhere. */
    uint8_t frame[512], quoted[64] = {0x45, 0, 0, 40, 0, 0, 0, 0, 64, IPPROTO_TCP};
    size_t len = icmp_error_frame(frame, AF_INET, &backend_mac, BACKEND4, SNAT4, quoted, 28);
    uint64_t drops = fixture_drops(n->f, XLB_DROP_TCP_NO_FLOW);
    fixture_send(n->f, frame, len);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_TCP_NO_FLOW), drops + 1);
}

/* Send an ICMP error from the backend quoting `sent` with its sequence number moved by delta;
 * expect it dropped as out of window. */
static void icmp_error_quoting_seq_dropped(struct nat_fixture *n, struct seg sent, uint32_t delta)
{
    sent.seq += delta;
    uint8_t sent_frame[256], frame[512];
    size_t eth = sizeof(struct rte_ether_hdr), sent_len = tcp_frame(sent_frame, &sent);
    size_t len = icmp_error_frame(frame, AF_INET, sent.eth_dst, BACKEND4, SNAT4, sent_frame + eth,
                                  sent_len - eth);
    uint64_t drops = fixture_drops(n->f, XLB_DROP_ICMP_SEQ_OUT_OF_WINDOW);
    unsigned before = n->f->ctx.tx[0].n;
    fixture_send(n->f, frame, len);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_ICMP_SEQ_OUT_OF_WINDOW), drops + 1);
    assert_int_equal(n->f->ctx.tx[0].n, before);
}

static void icmp_errors_quoting_unsent_sequence_numbers_are_dropped(void **state)
{
    struct nat_fixture *n = *state;
    client_syn4(n, CLIENT_PORT, PORT_BASE);
    backend_syn_ack4(n, PORT_BASE, CLIENT_PORT);
    struct seg data = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    data.ack = SEQ_BACKEND + 1;
    struct seg sent = to_backend(data, PORT_BASE);
    forward(n, &data, &sent);

    /* Beyond what the client sent, and further behind it than the backend's window: a guess. */
    icmp_error_quoting_seq_dropped(n, sent, (uint32_t)strlen(PAYLOAD_TEXT));
    icmp_error_quoting_seq_dropped(n, sent, 0x40000000u);
    icmp_error_quoting_seq_dropped(n, sent, (uint32_t)-0x100000);
    assert_int_equal(n->f->stats.events[XLB_EVENT_ICMP_ERRORS_TRANSLATED], 0);

    /* The data segment itself, not acknowledged yet: a frag-needed about it is translated. */
    icmp_error_reaches_client(n, &data, &sent, false);
    assert_int_equal(n->f->stats.events[XLB_EVENT_ICMP_ERRORS_TRANSLATED], 1);
}

static void vip_without_lb_tree_has_no_backend(void **state)
{
    struct nat_fixture *n = *state;
    n->f->snap->vips[0].lb = NULL; /* configuration not complete yet */
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    dropped(n, &syn, XLB_DROP_NO_BACKEND);
    assert_int_equal(n->flows->n_used, 0);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 0);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 0);

    /* Another port of the VIP address is no service at all. */
    struct seg other = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    other.dport = VIP_PORT + 1;
    dropped(n, &other, XLB_DROP_TCP_NO_SERVICE);
    assert_int_equal(n->f->ctx.tx[0].n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(packets_without_flow_are_reset_or_dropped, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(unresolved_backend_leaves_no_flow, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(vip_without_lb_tree_has_no_backend, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(syn_flood_is_held_to_its_pool, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(auto_proxy_takes_over_when_the_pool_fills, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(icmp_errors_are_translated_for_the_client, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(icmp_errors_quoting_unsent_sequence_numbers_are_dropped,
                                        nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(full_table_evicts_the_oldest_idle_flow, nat_setup,
                                        nat_teardown),
    };
    return cmocka_run_group_tests_name("nat_limits", tests, NULL, NULL);
}
