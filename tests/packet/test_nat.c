/*
 * Packet fixtures for the TCP full NAT of L4 VIPs (dataplane/nat.c): a client frame in, the
 * exact frame towards the backend out (and back), drops by reason, and the LB load counters
 * the flows feed. The VIPs' LB trees are compiled from round-robin clusters of one endpoint
 * each, so every pick is deterministic.
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

#include "cluster_compile.h"
#include "xlb_flow_table.h"
#include "nat.h"
#include "packet_fixture.h"
#include "xlb_lb.h"

#define VIP_PORT     9001
#define CLIENT_PORT  40000
#define BACKEND4     "198.18.0.21"
#define BACKEND6     "2001:2::21"
#define SNAT4        "198.18.0.11"
#define SNAT6        "2001:2::11"
#define PORT_BASE    1024
#define PORT_COUNT   100
#define FLOWS        8
#define SLOT4        7 /* endpoint slot of the IPv4 backend */
#define SLOT6        8
#define CLUSTER4     3 /* cluster slot of the IPv4 cluster */
#define CLUSTER6     4
#define TSC_HZ       1000000ull
#define START_TSC    5000ull
#define SEQ_CLIENT   0x01020304u
#define SEQ_BACKEND  0x0a0b0c0du
#define PAYLOAD_TEXT "GET / HTTP/1.1\r\nHost: nat.test\r\n\r\n"

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;
static const struct rte_ether_addr client_mac = FIX_PEER_MAC;
static const struct rte_ether_addr gw_mac = FIX_GW_MAC;
static const struct rte_ether_addr gw6_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x61}};
static const struct rte_ether_addr backend_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x21}};
static const struct rte_ether_addr backend6_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x62}};

struct nat_fixture {
    struct fixture *f;
    struct xlb_flow_table *flows;
    struct xlb_worker_load *load;
    struct xlb_lb_worker lb;
    struct xlb_lb_cluster *leaf4, *leaf6;
    struct xlb_lb_target target4, target6;
    struct xlb_lb_vip vip4, vip6;
};

/* ---- set-up ---- */

static uint32_t locality_slot(void *arg, uint32_t priority, const struct xlb_eds_locality *l)
{
    (void)priority;
    (void)l;
    return *(uint32_t *)arg;
}

/* A round-robin cluster with one healthy endpoint. */
static struct xlb_lb_cluster *compile_one(const char *name, const char *endpoint,
                                          uint32_t endpoint_slot, uint32_t cluster_slot,
                                          uint32_t loc_slot)
{
    struct xlb_host_port addr;
    assert_int_equal(xlb_host_port_parse(endpoint, strlen(endpoint), &addr), 0);
    struct xlb_eds_endpoint ep = {
        .addresses = &addr, .n_addresses = 1, .health = XLB_HEALTH_HEALTHY, .weight = 1};
    struct xlb_eds_locality loc = {.region = (char *)"r",
                                   .zone = (char *)"z",
                                   .sub_zone = (char *)"",
                                   .weight = 1,
                                   .endpoints = &ep,
                                   .n_endpoints = 1};
    struct xlb_eds_priority prio = {.localities = &loc, .n_localities = 1};
    struct xlb_endpoint_config eds = {
        .cluster_name = (char *)name, .priorities = &prio, .n_priorities = 1};
    struct xlb_cluster_config cfg = {
        .name = (char *)name,
        .type = XLB_CLUSTER_EDS,
        .eds_service_name = (char *)"",
        .lb_policy = XLB_LB_ROUND_ROBIN,
        .override_host_status = XLB_OVERRIDE_STATUS_DEFAULT,
    };
    xlb_ring_hash_config_default(&cfg.ring_hash);
    struct xlb_cluster_compile_input in = {
        .name = name,
        .config = &cfg,
        .endpoints = &eds,
        .endpoint_slots = &endpoint_slot,
        .cluster_slot = cluster_slot,
        .locality_slot = locality_slot,
        .arg = &loc_slot,
    };
    struct xlb_lb_cluster *c = NULL;
    char err[256] = "";
    if (xlb_cluster_compile(&in, &c, err, sizeof(err)) != 0)
        fail_msg("compile %s: %s", name, err);
    assert_non_null(c);
    assert_int_equal(c->n_endpoints, 1);
    assert_int_equal(c->endpoints[0].slot, endpoint_slot);
    return c;
}

static void l4_vip(struct xlb_lb_vip *vip, struct xlb_lb_target *target,
                   struct xlb_lb_cluster **leaf)
{
    *target =
        (struct xlb_lb_target){.name = (*leaf)->name, .ready = true, .n_leaves = 1, .leaves = leaf};
    *vip = (struct xlb_lb_vip){.routes = NULL, .n_targets = 1, .targets = target};
}

static struct xlb_addr_entry *entry(struct xlb_snapshot *snap, const char *text)
{
    struct xlb_addr a;
    assert_int_equal(xlb_addr_parse(text, &a), 0);
    const struct xlb_addr_entry *e = xlb_snapshot_lookup(snap, &a);
    assert_non_null(e);
    return (struct xlb_addr_entry *)e;
}

static void add(struct xlb_snapshot *snap, const char *text, uint8_t role,
                const struct rte_ether_addr *mac)
{
    struct xlb_addr_entry e = {.role = role, .port_mask = role == XLB_ROLE_NEIGHBOUR ? 0 : 1};
    assert_int_equal(xlb_addr_parse(text, &e.addr), 0);
    if (mac != NULL) {
        e.resolved = true;
        e.mac = *mac;
    }
    assert_int_equal(xlb_snapshot_add_address(snap, &e), 0);
}

static void resolve(struct xlb_snapshot *snap, const char *text, const struct rte_ether_addr *mac)
{
    struct xlb_addr_entry *e = entry(snap, text);
    e->resolved = true;
    e->mac = *mac;
}

/* The packet fixture's snapshot, completed: resolved gateways, backends, SNAT, two L4 VIPs. */
static void complete_snapshot(struct nat_fixture *n)
{
    struct xlb_snapshot *snap = n->f->snap;
    struct xlb_port_view *port = &snap->ports[0];
    port->n_gateways = 2;
    assert_int_equal(xlb_addr_parse(FIX_GW4, &port->gateways[0]), 0);
    assert_int_equal(xlb_addr_parse(FIX_GW6, &port->gateways[1]), 0);
    resolve(snap, FIX_GW4, &gw_mac);
    resolve(snap, FIX_GW6, &gw6_mac);
    add(snap, BACKEND4, XLB_ROLE_NEIGHBOUR, &backend_mac);
    add(snap, BACKEND6, XLB_ROLE_NEIGHBOUR, &backend6_mac);
    add(snap, SNAT4, XLB_ROLE_SNAT, NULL);
    add(snap, SNAT6, XLB_ROLE_SNAT, NULL);

    snap->n_vips = 2;
    assert_int_equal(xlb_addr_parse(FIX_VIP4, &snap->vips[0].addr), 0);
    snap->vips[0].l4_port = VIP_PORT;
    snap->vips[0].l7 = false;
    snap->vips[0].lb = &n->vip4;
    assert_int_equal(xlb_addr_parse(FIX_VIP6, &snap->vips[1].addr), 0);
    snap->vips[1].l4_port = VIP_PORT;
    snap->vips[1].l7 = false;
    snap->vips[1].lb = &n->vip6;
}

static int setup(void **state)
{
    static unsigned serial;
    struct nat_fixture *n = calloc(1, sizeof(*n));
    assert_non_null(n);
    n->f = fixture_create();

    n->leaf4 = compile_one("backends4", BACKEND4 ":9001", SLOT4, CLUSTER4, 1);
    n->leaf6 = compile_one("backends6", "[" BACKEND6 "]:9001", SLOT6, CLUSTER6, 2);
    l4_vip(&n->vip4, &n->target4, &n->leaf4);
    l4_vip(&n->vip6, &n->target6, &n->leaf6);
    complete_snapshot(n);

    struct xlb_addr snat[2];
    assert_int_equal(xlb_addr_parse(SNAT4, &snat[0]), 0);
    assert_int_equal(xlb_addr_parse(SNAT6, &snat[1]), 0);
    char name[32];
    snprintf(name, sizeof(name), "nat_flows_%u", serial++);
    n->flows = xlb_flow_table_create(name, FLOWS, SOCKET_ID_ANY, snat, 2, PORT_BASE, PORT_COUNT);
    assert_non_null(n->flows);
    n->load = calloc(1, sizeof(*n->load));
    assert_non_null(n->load);
    assert_int_equal(xlb_lb_worker_init(&n->lb, 42, n->load, n->load, 1), 0);

    struct xlb_burst_ctx *ctx = &n->f->ctx;
    ctx->flows = n->flows;
    ctx->lb = &n->lb;
    ctx->worker_id = 0;
    ctx->snat_port_base = PORT_BASE;
    ctx->now_tsc = START_TSC;
    ctx->tsc_hz = TSC_HZ;
    *state = n;
    return 0;
}

static int teardown(void **state)
{
    struct nat_fixture *n = *state;
    n->f->snap->n_vips = 0; /* the VIPs' LB trees are ours, not reference counted */
    xlb_flow_table_free(n->flows);
    xlb_lb_worker_fini(&n->lb);
    free(n->load);
    xlb_lb_cluster_release(n->leaf4);
    xlb_lb_cluster_release(n->leaf6);
    fixture_destroy(n->f);
    free(n);
    return 0;
}

/* ---- frames ---- */

struct seg {
    const struct rte_ether_addr *eth_src, *eth_dst;
    const char *src, *dst;
    uint16_t sport, dport;
    uint8_t flags;
    uint32_t seq, ack;
    const char *payload; /* NULL: none */
};

static size_t put_eth(uint8_t *buf, const struct seg *s, uint16_t type)
{
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
    eth->dst_addr = *s->eth_dst;
    eth->src_addr = *s->eth_src;
    eth->ether_type = htons(type);
    return sizeof(*eth);
}

/* TCP header with a 4-byte option (MSS) on SYNs, then the payload; returns its length. */
static size_t put_tcp(uint8_t *l4, const struct seg *s)
{
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)l4;
    bool syn = s->flags & RTE_TCP_SYN_FLAG;
    size_t hlen = sizeof(*tcp) + (syn ? 4 : 0);
    memset(tcp, 0, sizeof(*tcp));
    tcp->src_port = htons(s->sport);
    tcp->dst_port = htons(s->dport);
    tcp->sent_seq = htonl(s->seq);
    tcp->recv_ack = htonl(s->ack);
    tcp->data_off = (uint8_t)((hlen / 4) << 4);
    tcp->tcp_flags = s->flags;
    tcp->rx_win = htons(29200);
    tcp->tcp_urp = 0;
    if (syn) {
        const uint8_t mss[4] = {2, 4, 0x05, 0xb4};
        memcpy(l4 + sizeof(*tcp), mss, 4);
    }
    size_t plen = s->payload != NULL ? strlen(s->payload) : 0;
    if (plen > 0)
        memcpy(l4 + hlen, s->payload, plen);
    return hlen + plen;
}

static size_t tcp4_frame(uint8_t *buf, const struct seg *s)
{
    size_t off = put_eth(buf, s, RTE_ETHER_TYPE_IPV4);
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + off);
    uint8_t *l4 = (uint8_t *)(ip + 1);
    size_t l4_len = put_tcp(l4, s);
    memset(ip, 0, sizeof(*ip));
    ip->version_ihl = 0x45;
    ip->type_of_service = 0x28;
    ip->total_length = htons((uint16_t)(sizeof(*ip) + l4_len));
    ip->packet_id = htons(0x4d2e);
    ip->fragment_offset = htons(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 61;
    ip->next_proto_id = IPPROTO_TCP;
    assert_int_equal(inet_pton(AF_INET, s->src, &ip->src_addr), 1);
    assert_int_equal(inet_pton(AF_INET, s->dst, &ip->dst_addr), 1);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    ((struct rte_tcp_hdr *)l4)->cksum = rte_ipv4_udptcp_cksum(ip, l4);
    return off + sizeof(*ip) + l4_len;
}

static size_t tcp6_frame(uint8_t *buf, const struct seg *s)
{
    size_t off = put_eth(buf, s, RTE_ETHER_TYPE_IPV6);
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(buf + off);
    uint8_t *l4 = (uint8_t *)(ip + 1);
    size_t l4_len = put_tcp(l4, s);
    memset(ip, 0, sizeof(*ip));
    ip->vtc_flow = htonl(6u << 28 | 0x28u << 20 | 0xbeefu); /* traffic class and flow label */
    ip->payload_len = htons((uint16_t)l4_len);
    ip->proto = IPPROTO_TCP;
    ip->hop_limits = 63;
    assert_int_equal(inet_pton(AF_INET6, s->src, &ip->src_addr), 1);
    assert_int_equal(inet_pton(AF_INET6, s->dst, &ip->dst_addr), 1);
    ((struct rte_tcp_hdr *)l4)->cksum = rte_ipv6_udptcp_cksum(ip, l4);
    return off + sizeof(*ip) + l4_len;
}

static bool is_v6(const struct seg *s)
{
    return strchr(s->src, ':') != NULL;
}

static size_t tcp_frame(uint8_t *buf, const struct seg *s)
{
    return is_v6(s) ? tcp6_frame(buf, s) : tcp4_frame(buf, s);
}

/* The segment as the client sends it to the VIP, and as the backend sends it to the SNAT. */
static struct seg from_client4(uint16_t sport, uint8_t flags, const char *payload)
{
    return (struct seg){&client_mac, &port_mac, FIX_PEER4,  FIX_VIP4, sport,
                        VIP_PORT,    flags,     SEQ_CLIENT, 0,        payload};
}

static struct seg from_client6(uint16_t sport, uint8_t flags, const char *payload)
{
    return (struct seg){&client_mac, &port_mac, FIX_PEER6,  FIX_VIP6, sport,
                        VIP_PORT,    flags,     SEQ_CLIENT, 0,        payload};
}

static struct seg from_backend4(uint16_t snat_port, uint8_t flags, const char *payload)
{
    return (struct seg){&backend_mac, &port_mac, BACKEND4,    SNAT4,          VIP_PORT,
                        snat_port,    flags,     SEQ_BACKEND, SEQ_CLIENT + 1, payload};
}

static struct seg from_backend6(uint16_t snat_port, uint8_t flags, const char *payload)
{
    return (struct seg){&backend6_mac, &port_mac, BACKEND6,    SNAT6,          VIP_PORT,
                        snat_port,     flags,     SEQ_BACKEND, SEQ_CLIENT + 1, payload};
}

/* What xlb must emit for a client segment: SNAT:port -> backend, from the port's MAC. */
static struct seg to_backend(struct seg s, uint16_t snat_port)
{
    bool v6 = is_v6(&s);
    s.eth_src = &port_mac;
    s.eth_dst = v6 ? &backend6_mac : &backend_mac;
    s.src = v6 ? SNAT6 : SNAT4;
    s.dst = v6 ? BACKEND6 : BACKEND4;
    s.sport = snat_port;
    s.dport = VIP_PORT;
    return s;
}

/* What xlb must emit for a backend segment: VIP -> client, to the client's MAC. */
static struct seg to_client(struct seg s, uint16_t client_port)
{
    bool v6 = is_v6(&s);
    s.eth_src = &port_mac;
    s.eth_dst = &client_mac;
    s.src = v6 ? FIX_VIP6 : FIX_VIP4;
    s.dst = v6 ? FIX_PEER6 : FIX_PEER4;
    s.sport = VIP_PORT;
    s.dport = client_port;
    return s;
}

/*
 * Send `in`; exactly one frame must come out, byte for byte `expected` (so TTL, TOS, ID, DF,
 * flow label, sequence numbers, options and payload are all unchanged), with valid checksums.
 */
static void forward(struct nat_fixture *n, const struct seg *in, const struct seg *expected)
{
    uint8_t frame[256], want[256];
    size_t len = tcp_frame(frame, in);
    size_t want_len = tcp_frame(want, expected);
    unsigned before = n->f->ctx.tx[0].n;
    uint64_t drops_before = fixture_total_drops(n->f);
    assert_int_equal(fixture_send(n->f, frame, len), 1);
    assert_int_equal(fixture_total_drops(n->f), drops_before);

    size_t out_len;
    const uint8_t *out = fixture_tx(n->f, before, &out_len);
    assert_int_equal(out_len, want_len);
    const struct rte_ether_hdr *eth = (const void *)out;
    assert_memory_equal(&eth->src_addr, &port_mac, 6);
    assert_memory_equal(&eth->dst_addr, expected->eth_dst, 6);
    if (is_v6(in)) {
        const struct rte_ipv6_hdr *ip = (const void *)(eth + 1);
        assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);
    } else {
        const struct rte_ipv4_hdr *ip = (const void *)(eth + 1);
        assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
        assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, ip + 1), 0);
    }
    if (memcmp(out, want, want_len) != 0) {
        for (size_t i = 0; i < want_len; i++)
            if (out[i] != want[i])
                print_message("byte %zu: got %02x want %02x\n", i, out[i], want[i]);
        fail_msg("forwarded frame differs from the expected one");
    }
}

/* Send `in` and expect it dropped, with this reason counted once more. */
static void dropped(struct nat_fixture *n, const struct seg *in, enum xlb_drop_reason reason)
{
    uint8_t frame[256];
    size_t len = tcp_frame(frame, in);
    uint64_t before = fixture_drops(n->f, reason), total = fixture_total_drops(n->f);
    assert_int_equal(fixture_send(n->f, frame, len), 0);
    assert_int_equal(fixture_drops(n->f, reason), before + 1);
    assert_int_equal(fixture_total_drops(n->f), total + 1);
}

static struct xlb_flow *client_flow(struct nat_fixture *n, const char *client, uint16_t sport)
{
    struct xlb_flow_key key = {
        .proto = IPPROTO_TCP, .src_port = htons(sport), .dst_port = htons(VIP_PORT)};
    bool v6 = strchr(client, ':') != NULL;
    key.family = v6 ? AF_INET6 : AF_INET;
    assert_int_equal(inet_pton(key.family, client, key.src), 1);
    assert_int_equal(inet_pton(key.family, v6 ? FIX_VIP6 : FIX_VIP4, key.dst), 1);
    return xlb_flow_lookup(n->flows, &key);
}

static struct xlb_flow *backend_flow(struct nat_fixture *n, bool v6, uint16_t snat_port)
{
    struct xlb_flow_key key = {.family = v6 ? AF_INET6 : AF_INET,
                               .proto = IPPROTO_TCP,
                               .src_port = htons(VIP_PORT),
                               .dst_port = htons(snat_port)};
    assert_int_equal(inet_pton(key.family, v6 ? BACKEND6 : BACKEND4, key.src), 1);
    assert_int_equal(inet_pton(key.family, v6 ? SNAT6 : SNAT4, key.dst), 1);
    return xlb_flow_lookup(n->flows, &key);
}

/* ---- tests ---- */

static void syn4_goes_to_backend_from_snat(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);

    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_ptr_equal(backend_flow(n, false, PORT_BASE), f);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    assert_int_equal(f->snat_port, PORT_BASE);
    assert_int_equal(f->endpoint_slot, SLOT4);
    assert_int_equal(f->cluster_slot, CLUSTER4);
    assert_int_equal(f->expires_tsc, START_TSC + XLB_NAT_SYN_TIMEOUT_S * TSC_HZ);
    assert_int_equal(n->flows->n_used, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], 1);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 1);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 0);

    /* A data segment on the flow: same rewrite, payload untouched, no second flow. */
    struct seg data = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    data.seq = SEQ_CLIENT + 1;
    data.ack = SEQ_BACKEND + 1;
    out = to_backend(data, PORT_BASE);
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
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);

    struct seg syn_ack = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    out = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &out);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(f->expires_tsc, START_TSC + XLB_NAT_ESTABLISHED_TIMEOUT_S * TSC_HZ);
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 1);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 0);

    /* The backend's data comes back too, and a retransmitted SYN-ACK counts nothing more. */
    struct seg data =
        from_backend4(PORT_BASE, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, "HTTP/1.1 200 OK\r\n");
    out = to_client(data, CLIENT_PORT);
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
 * Send a client segment of no known connection and check the RST that comes back: to the
 * client's MAC, VIP -> client, no payload, checksums valid, RFC 9293's sequence numbers.
 */
static void answered_with_reset(struct nat_fixture *n, const struct seg *in)
{
    uint8_t frame[256];
    size_t len = tcp_frame(frame, in);
    unsigned before = n->f->ctx.tx[0].n;
    assert_int_equal(fixture_send(n->f, frame, len), 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(n->f, before, &out_len);
    const struct rte_ether_hdr *eth = (const void *)out;
    assert_memory_equal(&eth->dst_addr, in->eth_src, 6);
    assert_memory_equal(&eth->src_addr, &port_mac, 6);
    const struct rte_tcp_hdr *tcp;
    if (is_v6(in)) {
        const struct rte_ipv6_hdr *ip = (const void *)(eth + 1);
        assert_int_equal(ntohs(ip->payload_len), sizeof(*tcp));
        assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);
        tcp = (const void *)(ip + 1);
    } else {
        const struct rte_ipv4_hdr *ip = (const void *)(eth + 1);
        uint32_t dst;
        assert_int_equal(inet_pton(AF_INET, in->src, &dst), 1);
        assert_int_equal(ip->dst_addr, dst);
        assert_int_equal(ntohs(ip->total_length), sizeof(*ip) + sizeof(*tcp));
        assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
        assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, ip + 1), 0);
        tcp = (const void *)(ip + 1);
    }
    assert_int_equal(ntohs(tcp->src_port), in->dport);
    assert_int_equal(ntohs(tcp->dst_port), in->sport);
    if (in->flags & RTE_TCP_ACK_FLAG) {
        assert_int_equal(tcp->tcp_flags, RTE_TCP_RST_FLAG);
        assert_int_equal(ntohl(tcp->sent_seq), in->ack);
    } else {
        size_t plen = in->payload ? strlen(in->payload) : 0;
        assert_int_equal(tcp->tcp_flags, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
        assert_int_equal(ntohl(tcp->recv_ack), in->seq + plen + !!(in->flags & RTE_TCP_FIN_FLAG));
    }
}

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

static void backend_rst_to_syn_is_a_failure(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);

    /* Connection refused: the RST still reaches the client, rewritten. */
    struct seg rst = from_backend4(PORT_BASE, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, NULL);
    rst.seq = 0;
    out = to_client(rst, CLIENT_PORT);
    forward(n, &rst, &out);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_CLOSED);
    assert_int_equal(f->expires_tsc, START_TSC + XLB_NAT_CLOSED_TIMEOUT_S * TSC_HZ);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 1);
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 0);

    /* Closed flows go after their short timeout; the SYN is not counted as failed twice. */
    n->f->ctx.now_tsc = START_TSC + (XLB_NAT_CLOSED_TIMEOUT_S + 1) * TSC_HZ;
    xlb_nat_expire(&n->f->ctx);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(n->load->endpoints[SLOT4].failed, 1);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CLOSED], 1);
}

static void syn_on_a_closed_flow_starts_a_new_connection(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    struct seg rst = from_backend4(PORT_BASE, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, NULL);
    rst.seq = 0;
    out = to_client(rst, CLIENT_PORT);
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

    struct seg syn_ack = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    out = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &out);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(n->load->endpoints[SLOT4].succeeded, 1);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 1);
}

static void syn_timeout_expires_flow_and_frees_port(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_burst_ctx *ctx = &n->f->ctx;
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    /* A second client, established: it must survive the first one's SYN timeout. */
    struct seg syn2 = from_client4(CLIENT_PORT + 2, RTE_TCP_SYN_FLAG, NULL);
    out = to_backend(syn2, PORT_BASE + 1);
    forward(n, &syn2, &out);
    struct seg syn_ack = from_backend4(PORT_BASE + 1, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    out = to_client(syn_ack, CLIENT_PORT + 2);
    forward(n, &syn_ack, &out);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 2);

    /* Not yet: just before the deadline nothing goes. */
    ctx->now_tsc = START_TSC + XLB_NAT_SYN_TIMEOUT_S * TSC_HZ - 1;
    xlb_nat_expire(ctx);
    assert_non_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(n->flows->n_used, 2);

    ctx->now_tsc = START_TSC + (XLB_NAT_SYN_TIMEOUT_S + 1) * TSC_HZ;
    xlb_nat_expire(ctx);
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
    struct seg syn3 = from_client4(CLIENT_PORT + 1, RTE_TCP_SYN_FLAG, NULL);
    out = to_backend(syn3, PORT_BASE);
    forward(n, &syn3, &out);
    assert_int_equal(client_flow(n, FIX_PEER4, CLIENT_PORT + 1)->snat_port, PORT_BASE);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 3);

    /* The established one lasts until its own timeout. */
    ctx->now_tsc = START_TSC + (XLB_NAT_ESTABLISHED_TIMEOUT_S + 1) * TSC_HZ;
    xlb_nat_expire(ctx);
    assert_int_equal(n->flows->n_used, 0);
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 3);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 2); /* syn3 timed out as well */
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CLOSED], 3);
}

static void unresolved_backend_leaves_no_flow(void **state)
{
    struct nat_fixture *n = *state;
    entry(n->f->snap, BACKEND4)->resolved = false;
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
    entry(n->f->snap, BACKEND4)->resolved = true;
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
}

static void padding_and_ip_options_are_handled(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);

    /* A bare ACK is 54 bytes, padded to 60 on the wire: it goes out without the padding. */
    uint8_t frame[256], want[256];
    struct seg ack = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG, NULL);
    size_t len = tcp_frame(frame, &ack);
    assert_int_equal(len, 54);
    memset(frame + len, 0xee, 60 - len);
    out = to_backend(ack, PORT_BASE);
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
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    struct seg syn_ack = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    out = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &out);
    struct seg fin = from_client4(CLIENT_PORT, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    out = to_backend(fin, PORT_BASE);
    forward(n, &fin, &out);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_int_equal(f->state, XLB_FLOW_CLOSING);
    assert_int_equal(f->expires_tsc, START_TSC + XLB_NAT_CLOSING_TIMEOUT_S * TSC_HZ);
    n->f->ctx.now_tsc = START_TSC + (XLB_NAT_CLOSING_TIMEOUT_S + 1) * TSC_HZ;
    xlb_nat_expire(&n->f->ctx);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(n->load->endpoints[SLOT4].failed, 0); /* a clean close is no failure */
    assert_int_equal(n->load->clusters[CLUSTER4].finished, 1);
}

/* SYN flood policy: half-open flows take at most a quarter of the table. */
static void syn_flood_is_held_to_its_pool(void **state)
{
    struct nat_fixture *n = *state;
    uint32_t cap = n->flows->syn_cap;
    assert_int_equal(cap, FLOWS / 4);
    for (uint16_t i = 0; i < cap; i++) {
        struct seg syn = from_client4((uint16_t)(CLIENT_PORT + i), RTE_TCP_SYN_FLAG, NULL);
        struct seg out = to_backend(syn, (uint16_t)(PORT_BASE + i));
        forward(n, &syn, &out);
    }
    struct seg flood = from_client4(CLIENT_PORT + 100, RTE_TCP_SYN_FLAG, NULL);
    dropped(n, &flood, XLB_DROP_SYN_POOL_FULL);
    assert_int_equal(n->flows->n_used, cap);
    assert_int_equal(n->load->clusters[CLUSTER4].started, cap); /* refused before the pick */

    /* Answered SYNs leave the pool: room for new ones again. */
    struct seg syn_ack = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    struct seg back = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &back);
    assert_int_equal(n->flows->n_syn, cap - 1);
    struct seg out = to_backend(flood, (uint16_t)(PORT_BASE + cap));
    forward(n, &flood, &out);
}

/* A full table makes room for a new connection by evicting the flow nearest its timeout. */
static void full_table_evicts_the_oldest_idle_flow(void **state)
{
    struct nat_fixture *n = *state;
    n->flows->syn_cap = FLOWS; /* this test is about the table, not the SYN pool */
    for (uint16_t i = 0; i < FLOWS; i++) {
        n->f->ctx.now_tsc = START_TSC + i * TSC_HZ; /* flow i idles out one second after i-1 */
        struct seg syn = from_client4((uint16_t)(CLIENT_PORT + i), RTE_TCP_SYN_FLAG, NULL);
        struct seg out = to_backend(syn, (uint16_t)(PORT_BASE + i));
        forward(n, &syn, &out);
        struct seg syn_ack =
            from_backend4((uint16_t)(PORT_BASE + i), RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
        struct seg back = to_client(syn_ack, (uint16_t)(CLIENT_PORT + i));
        forward(n, &syn_ack, &back);
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
        cmocka_unit_test_setup_teardown(syn4_goes_to_backend_from_snat, setup, teardown),
        cmocka_unit_test_setup_teardown(syn_on_a_closed_flow_starts_a_new_connection, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(syn_ack4_returns_to_client_from_vip, setup, teardown),
        cmocka_unit_test_setup_teardown(ipv6_flow_both_ways, setup, teardown),
        cmocka_unit_test_setup_teardown(packets_without_flow_are_reset_or_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(backend_rst_to_syn_is_a_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(syn_timeout_expires_flow_and_frees_port, setup, teardown),
        cmocka_unit_test_setup_teardown(unresolved_backend_leaves_no_flow, setup, teardown),
        cmocka_unit_test_setup_teardown(vip_without_lb_tree_has_no_backend, setup, teardown),
        cmocka_unit_test_setup_teardown(padding_and_ip_options_are_handled, setup, teardown),
        cmocka_unit_test_setup_teardown(fin_moves_flow_to_closing, setup, teardown),
        cmocka_unit_test_setup_teardown(syn_flood_is_held_to_its_pool, setup, teardown),
        cmocka_unit_test_setup_teardown(icmp_errors_are_translated_for_the_client, setup, teardown),
        cmocka_unit_test_setup_teardown(full_table_evicts_the_oldest_idle_flow, setup, teardown),
    };
    return cmocka_run_group_tests_name("nat", tests, NULL, NULL);
}
