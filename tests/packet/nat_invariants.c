#include "nat_invariants.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "nat/nat.h"

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;

static bool is_addr(const uint8_t *a, const uint8_t *b, size_t len)
{
    return memcmp(a, b, len) == 0;
}

static bool owned_source(const struct robust *r, const uint8_t *src, uint8_t family)
{
    if (family == AF_INET)
        return is_addr(src, r->vip4_b, 4) || is_addr(src, r->snat4_b, 4) ||
               is_addr(src, r->port4_b, 4);
    return is_addr(src, r->vip6_b, 16) || is_addr(src, r->snat6_b, 16) ||
           is_addr(src, r->port6_b, 16);
}

/* The datagram quoted by a translated ICMP error (clean input): its IPv4 header checksum, and
 * the TCP checksum when the whole segment is quoted. */
static void check_quote(const uint8_t *q, size_t len, uint8_t family)
{
    if (family == AF_INET) {
        const struct rte_ipv4_hdr *ip = (const void *)q;
        assert_true(len >= sizeof(*ip));
        size_t hlen = rte_ipv4_hdr_len(ip);
        assert_true(len >= hlen);
        assert_int_equal(rte_raw_cksum(ip, hlen), 0xffff);
        if (ntohs(ip->total_length) == len)
            assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, q + hlen), 0);
    } else {
        const struct rte_ipv6_hdr *ip = (const void *)q;
        assert_true(len >= sizeof(*ip));
        if (ntohs(ip->payload_len) + sizeof(*ip) == len)
            assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);
    }
}

/*
 * A transmitted frame: from the port's MAC; TCP and ICMP (but neighbour discovery) from a
 * VIP, SNAT or port address of xlb's, TCP only from a VIP or SNAT address; when the input was
 * clean, every length and checksum right, down to the segment an ICMP error quotes.
 */
static void check_tx_frame(struct robust *r, const struct rte_mbuf *m, bool clean)
{
    const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
    size_t len = rte_pktmbuf_data_len(m);
    assert_true(len >= RTE_ETHER_HDR_LEN);
    assert_memory_equal(d + 6, port_mac.addr_bytes, 6);
    size_t off = 12;
    uint16_t type = get16(d + off);
    for (int tags = 0;
         tags < 2 && (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ) && off + 6 <= len;
         tags++) {
        off += 4;
        type = get16(d + off);
    }
    off += 2;
    if (type == RTE_ETHER_TYPE_IPV4 && off + sizeof(struct rte_ipv4_hdr) <= len) {
        const struct rte_ipv4_hdr *ip = (const void *)(d + off);
        size_t hlen = rte_ipv4_hdr_len(ip), total = ntohs(ip->total_length);
        const uint8_t *src = (const uint8_t *)&ip->src_addr;
        if (clean) {
            assert_int_equal(len, off + total);
            assert_int_equal(rte_raw_cksum(ip, hlen), 0xffff);
        }
        if (ip->next_proto_id == IPPROTO_TCP && off + total <= len) {
            assert_true(is_addr(src, r->vip4_b, 4) || is_addr(src, r->snat4_b, 4));
            if (clean)
                assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, d + off + hlen), 0);
        } else if (ip->next_proto_id == IPPROTO_ICMP && off + total <= len && total >= hlen + 8) {
            const uint8_t *icmp = d + off + hlen;
            assert_true(owned_source(r, src, AF_INET));
            if (clean) {
                assert_int_equal(rte_raw_cksum(icmp, total - hlen), 0xffff);
                if (icmp[0] == 3 || icmp[0] == 11)
                    check_quote(icmp + 8, total - hlen - 8, AF_INET);
            }
        }
        if (clean)
            r->clean_checked++;
    } else if (type == RTE_ETHER_TYPE_IPV6 && off + sizeof(struct rte_ipv6_hdr) <= len) {
        const struct rte_ipv6_hdr *ip = (const void *)(d + off);
        size_t payload = ntohs(ip->payload_len);
        const uint8_t *l4 = (const uint8_t *)(ip + 1);
        bool whole = off + sizeof(*ip) + payload <= len;
        if (clean)
            assert_int_equal(len, off + sizeof(*ip) + payload);
        if (ip->proto == IPPROTO_TCP && whole) {
            assert_true(is_addr(ip->src_addr, r->vip6_b, 16) ||
                        is_addr(ip->src_addr, r->snat6_b, 16));
            if (clean)
                assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);
        } else if (ip->proto == IPPROTO_ICMPV6 && whole && payload >= 8 && l4[0] < 133) {
            assert_true(owned_source(r, ip->src_addr, AF_INET6));
            if (clean) {
                assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);
                if (l4[0] < 128)
                    check_quote(l4 + 8, payload - 8, AF_INET6);
            }
        }
        if (clean)
            r->clean_checked++;
    } else {
        assert_false(clean); /* the clean mix is all IP */
    }
}

/* Check, count and free every queued frame; in[] are the frames of the burst just processed. */
void collect_tx(struct robust *r, struct rte_mbuf *const *in, const bool *clean, unsigned n)
{
    struct xlb_burst_ctx *ctx = &r->f->ctx;
    for (unsigned p = 0; p < XLB_MAX_PORTS; p++) {
        for (unsigned i = 0; i < ctx->tx[p].n; i++) {
            struct rte_mbuf *m = ctx->tx[p].pkts[i];
            bool was_clean = false;
            for (unsigned j = 0; j < n; j++)
                if (in[j] == m)
                    was_clean = clean[j];
            check_tx_frame(r, m, was_clean);
        }
        r->tx += ctx->tx[p].n;
    }
    fixture_clear_tx(r->f);
}

/*
 * Every used flow sits in exactly one timer wheel slot, and one that is examined no later than
 * its deadline's second (or, after a long pause, in the lap that catches up with the clock):
 * nothing can outlive its timeout.
 */
static void check_wheel(const struct xlb_flow_table *t, uint64_t now_tsc)
{
    static uint8_t on_wheel[FLOWS];
    uint32_t n = 0;
    if (t->wheel_hz == 0) {
        assert_int_equal(t->n_used, 0); /* the first flow starts the wheel */
        return;
    }
    memset(on_wheel, 0, sizeof(on_wheel));
    uint64_t now = now_tsc / t->wheel_hz, w = t->wheel_second;
    for (uint32_t slot = 0; slot < XLB_FLOW_WHEEL_SLOTS; slot++) {
        uint32_t prev = XLB_FLOW_NONE;
        uint64_t examined =
            w + (slot + XLB_FLOW_WHEEL_SLOTS - w % XLB_FLOW_WHEEL_SLOTS) % XLB_FLOW_WHEEL_SLOTS;
        for (uint32_t i = t->wheel[slot]; i != XLB_FLOW_NONE; i = t->flows[i].wheel_next) {
            assert_true(i < t->capacity);
            const struct xlb_flow *f = &t->flows[i];
            assert_true(f->used);
            assert_true(f->scheduled);
            assert_int_equal(f->wheel_slot, slot);
            assert_int_equal(f->wheel_prev, prev);
            assert_int_equal(on_wheel[i], 0);
            on_wheel[i] = 1;
            uint64_t deadline = f->expires_s;
            if (examined > RTE_MAX(deadline, now))
                fail_msg("flow %u (state %u) expires at second %" PRIu64 " but its slot %u is "
                         "only examined at second %" PRIu64 " (wheel at %" PRIu64 ", now %" PRIu64
                         ")",
                         i, f->state, deadline, slot, examined, w, now);
            prev = i;
            n++;
        }
    }
    assert_int_equal(n, t->n_used);
    for (uint32_t i = 0; i < t->capacity; i++)
        assert_int_equal(t->flows[i].scheduled, on_wheel[i]);
}

/*
 * The table is whole: used entries == n_used, each found by both keys and holding a SNAT port
 * of the slice that no other flow holds; the free list holds every other entry once; each
 * SNAT address's free ports and used flows make up its slice, with no port twice; n_syn counts
 * the half-open flows; the timer wheel holds every used flow.
 */
void check_table(struct robust *r)
{
    const struct xlb_flow_table *t = r->flows;
    static uint8_t port_seen[2][65536];
    uint32_t used = 0, syn = 0, per_snat[2] = {0, 0};
    memset(port_seen, 0, sizeof(port_seen));
    assert_int_equal(t->capacity, FLOWS);
    assert_true(t->n_used <= t->capacity);
    assert_int_equal(t->n_snat, 2);
    for (uint32_t i = 0; i < t->capacity; i++) {
        const struct xlb_flow *f = &t->flows[i];
        if (!f->used)
            continue;
        used++;
        assert_true(f->snat_index < 2);
        struct xlb_flow_key client, reply;
        xlb_flow_client_key(t, f, &client);
        xlb_flow_reply_key(t, f, &reply);
        assert_ptr_equal(xlb_flow_lookup_client(t, &client), f);
        assert_ptr_equal(xlb_flow_lookup_reply(t, &reply), f);
        assert_ptr_equal(xlb_flow_lookup(t, &client), f);
        assert_ptr_equal(xlb_flow_lookup(t, &reply), f);
        assert_true(f->state <= XLB_FLOW_RESUMING);
        assert_int_equal(client.family, t->snat[f->snat_index].family);
        assert_true(f->snat_port >= PORT_BASE && f->snat_port < PORT_BASE + PORT_COUNT);
        assert_int_equal(t->port_flow[f->snat_index][f->snat_port - PORT_BASE], i);
        assert_int_equal(ntohs(reply.dst_port), f->snat_port);
        assert_memory_equal(reply.dst, t->snat[f->snat_index].bytes, alen(client.family));
        assert_int_equal(port_seen[f->snat_index][f->snat_port], 0);
        port_seen[f->snat_index][f->snat_port] = 1;
        per_snat[f->snat_index]++;
        syn += xlb_flow_half_open(f->state);
    }
    assert_int_equal(used, t->n_used);
    assert_int_equal(syn, t->n_syn);
    assert_true(t->n_syn <= t->syn_cap);
    assert_int_equal(rte_hash_count(t->hash), t->n_used);

    for (unsigned s = 0; s < 2; s++) {
        assert_int_equal(t->n_free_ports[s] + per_snat[s], PORT_COUNT);
        for (uint32_t i = 0; i < t->n_free_ports[s]; i++) {
            uint16_t port = t->free_ports[s][i];
            assert_true(port >= PORT_BASE && port < PORT_BASE + PORT_COUNT);
            assert_int_equal(port_seen[s][port], 0);
            port_seen[s][port] = 1;
            assert_int_equal(t->port_flow[s][port - PORT_BASE], XLB_FLOW_NONE);
            assert_int_equal(t->free_at[s][port - PORT_BASE], i); /* its place, for take_port */
        }
    }
    check_wheel(t, r->f->ctx.now_tsc);
}

/* Every frame in is accounted for: sent, dropped by reason, handled silently or handed on. */
void check_accounting(const struct robust *r)
{
    const struct xlb_worker_stats *s = &r->f->stats;
    assert_int_equal(s->rx_packets, r->frames_rx);
    assert_int_equal(event(r, XLB_EVENT_REDIRECTED_IN), r->frames_redirected);
    uint64_t in = s->rx_packets + event(r, XLB_EVENT_REDIRECTED_IN);
    uint64_t out = r->tx + fixture_total_drops(r->f) + event(r, XLB_EVENT_CONSUMED) +
                   event(r, XLB_EVENT_REDIRECTED_OUT);
    assert_int_equal(in, out);
    assert_int_equal(s->drops[XLB_DROP_TX_FULL], 0);
    assert_int_equal(s->drops[XLB_DROP_NO_MBUF], 0);
    /* Flows open == flows created or resumed - flows closed - flows evicted to make room. */
    assert_int_equal(event(r, XLB_EVENT_FLOWS_CREATED) + event(r, XLB_EVENT_FLOWS_RESUMED) -
                         event(r, XLB_EVENT_FLOWS_CLOSED) - event(r, XLB_EVENT_FLOWS_EVICTED),
                     r->flows->n_used);
    assert_true(event(r, XLB_EVENT_FLOWS_FLUSHED) <= event(r, XLB_EVENT_FLOWS_CLOSED));
}

/*
 * While the wheel is behind the clock, every call of xlb_flow_expire frees a flow or moves the
 * wheel on within a few calls: a slot holds at most FLOWS entries and each call takes up to
 * 2 * XLB_FLOW_EXPIRE_BUDGET of them off it, freed or moved to a later slot.
 */
#define STALL_CALLS (4 * FLOWS / XLB_FLOW_EXPIRE_BUDGET)

void check_expiry_progress(struct robust *r, uint64_t closed_before)
{
    const struct xlb_flow_table *t = r->flows;
    if (t->wheel_hz == 0)
        return;
    bool behind = t->wheel_second < r->f->ctx.now_tsc / t->wheel_hz;
    bool progress = t->wheel_second != r->last_wheel_second ||
                    event(r, XLB_EVENT_FLOWS_CLOSED) != closed_before;
    r->last_wheel_second = t->wheel_second;
    if (!behind || progress) {
        r->stuck_calls = 0;
        return;
    }
    if (++r->stuck_calls > r->longest_stall)
        r->longest_stall = r->stuck_calls;
    if (r->stuck_calls < STALL_CALLS)
        return;
    uint32_t head = t->wheel[t->wheel_second % XLB_FLOW_WHEEL_SLOTS];
    fail_msg("burst %" PRIu64 ", frame %" PRIu64 ": expiry stalled: %" PRIu64
             " calls of xlb_flow_expire freed nothing and the wheel "
             "stayed at second %" PRIu64 " (now %" PRIu64 ", %u flows open); its slot's first flow "
             "%d expires at second %" PRIu64 " (state %d)",
             r->bursts, r->frames_rx, r->stuck_calls, t->wheel_second,
             r->f->ctx.now_tsc / t->wheel_hz, t->n_used, head == XLB_FLOW_NONE ? -1 : (int)head,
             head == XLB_FLOW_NONE ? 0 : (uint64_t)t->flows[head].expires_s,
             head == XLB_FLOW_NONE ? -1 : t->flows[head].state);
}

/* Past every timeout, a bounded number of expiry calls frees every flow and port. */
void expire_everything(struct robust *r)
{
    struct xlb_burst_ctx *ctx = &r->f->ctx;
    uint32_t open = r->flows->n_used;
    ctx->now_tsc += (XLB_FLOW_ESTABLISHED_TIMEOUT_S + 1) * TSC_HZ;
    /* Each call frees up to XLB_FLOW_EXPIRE_BUDGET flows: allow for empty slots and flows moved
     * on once (refreshed since they were put in their slot). */
    unsigned calls = 0, bound = 4 * (FLOWS / XLB_FLOW_EXPIRE_BUDGET + XLB_FLOW_WHEEL_SLOTS);
    while (r->flows->n_used > 0 && calls < bound) {
        xlb_flow_expire(ctx, r->f->snap);
        calls++;
    }
    print_message("%u open flows expired in %u calls of xlb_flow_expire\n", open, calls);
    assert_int_equal(r->flows->n_used, 0);
    assert_int_equal(rte_hash_count(r->flows->hash), 0);
    for (unsigned s = 0; s < 2; s++)
        assert_int_equal(r->flows->n_free_ports[s], PORT_COUNT);
    check_table(r);
    assert_int_equal(event(r, XLB_EVENT_FLOWS_CREATED) + event(r, XLB_EVENT_FLOWS_RESUMED),
                     event(r, XLB_EVENT_FLOWS_CLOSED) + event(r, XLB_EVENT_FLOWS_EVICTED));
    static const uint32_t clusters[] = {CLUSTER4, CLUSTER6, CLUSTERMIX};
    for (unsigned c = 0; c < 3; c++)
        assert_int_equal(r->load->clusters[clusters[c]].started,
                         r->load->clusters[clusters[c]].finished);
    /* Least request (A48) reads each endpoint's calls in flight: once every flow has ended,
     * whatever RSTs, resumes and evictions it went through, none may be left over. */
    uint64_t left = 0;
    for (uint32_t e = 0; e < XLB_ENDPOINT_LOAD_SLOTS; e++)
        left += r->load->endpoints[e].in_flight;
    assert_int_equal(left, 0);
}
