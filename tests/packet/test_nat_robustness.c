/*
 * NAT robustness: for 30 s of wall clock (or 200M frames, whichever comes first) a seeded random
 * mix of traffic goes through the burst function with a live flow table, LB trees and redirect
 * rings: client SYNs from many addresses and ports to an IPv4 and an IPv6 L4 VIP, backend
 * replies (SYN-ACK, data, FIN, RST) on flows that exist and to random SNAT ports, client
 * segments on flows that exist and that do not, ICMP errors about flows, other traffic to the
 * VIPs, hostile noise, and mutations of all of these (byte flips, truncation at every length,
 * bad data offsets, bad IP lengths, IPv4 options, VLAN tags, wrong checksums, fragments,
 * extension headers). The virtual clock advances every burst, with now and then a long pause,
 * and xlb_nat_expire and xlb_nat_flush_step run once per burst, as in the worker's loop. Phases
 * change the SYN rate, the clock speed, the address family mix and the configuration (an
 * unresolved backend, a VIP without LB tree, a backend of the wrong family, a flush of a
 * backend's flows), so the table fills and evicts, the SYN pool fills, SNAT ports run out, the
 * circuit breaker opens, and the table drains again.
 *
 * Checked: no crash (and no ASan/UBSan report in sanitized builds); every frame accounted for
 * (rx + redirected in == tx + drops + handled silently + redirected out); every mbuf back in the
 * pool after each burst; what is sent leaves from the port's MAC and, for TCP, from a VIP or
 * SNAT address, with every checksum right when the input was valid; the table's used entries,
 * hash keys, free list, SNAT port stacks, half-open count and timer wheel consistent (walked
 * periodically and at the end); expiry never stalls while flows are due; and once the clock
 * passes every timeout a bounded number of expiry calls leaves no flow, every port free, flows
 * created == flows closed + evicted and every cluster's started == finished.
 *
 * XLB_NAT_ROBUSTNESS_SEED and XLB_NAT_ROBUSTNESS_SECONDS override the seed and the duration
 * (to replay a failure, or for a shorter local run).
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_ring.h>
#include <rte_tcp.h>

#include "cluster_compile.h"
#include "hostile_frames.h"
#include "nat.h"
#include "packet_fixture.h"
#include "xlb_flow_table.h"
#include "xlb_lb.h"
#include "xlb_msg.h"

#define VIP_PORT    9001
#define BACKEND4A   "198.18.0.21"
#define BACKEND4B   "198.18.0.22"
#define BACKEND6A   "2001:2::21"
#define BACKEND6B   "2001:2::22"
#define SNAT4       "198.18.0.11"
#define SNAT6       "2001:2::11"
#define FLOWS       4096
#define PORT_BASE   1024
#define PORT_COUNT  3000 /* per SNAT address: v4 alone can exhaust its ports before the table */
#define N_WORKERS   2    /* ports of worker 1's slice are redirected; above it, nobody's */
#define CLUSTER4    3
#define CLUSTER6    4
#define CLUSTERMIX  5
#define MAX_REQ6    2500 /* circuit breaker of the IPv6 cluster: opens before the table fills */
#define TSC_HZ      1000000ull
#define START_TSC   1000000ull
#define DURATION_S  30.0
#define MAX_FRAMES  200000000ull
#define PHASE_BURST 4096 /* bursts per phase */
#define CHECK_EVERY 2048 /* bursts between full table walks */
#define REMEMBERED  8192 /* client connections kept to send more segments on */
#define MAX_PAYLOAD 1200
#define POOL_SIZE   1023 /* the packet fixture's pool */

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;
static const struct rte_ether_addr peer_mac = FIX_PEER_MAC;
static const struct rte_ether_addr gw_mac = FIX_GW_MAC;
static const struct rte_ether_addr gw6_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x61}};
static const struct rte_ether_addr backend_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x21}};

enum kind {
    K_SYN_NEW,        /* a new client connects to a VIP */
    K_SYN_AGAIN,      /* a remembered client sends a SYN again (retransmit or port reuse) */
    K_BACKEND_FLOW,   /* a backend answers on a flow that exists */
    K_CLIENT_FLOW,    /* a remembered client sends a segment (its flow may have gone) */
    K_CLIENT_NOFLOW,  /* a client segment of no connection */
    K_BACKEND_RANDOM, /* a backend segment to a random SNAT port */
    K_OTHER,          /* other traffic to the VIPs and owned addresses */
    K_ICMP_ERROR,     /* a router's ICMP error about a segment xlb sent */
    K_NOISE,          /* hostile_frames: noise, flipped and truncated templates */
    K_MAX
};

static const char *const kind_names[K_MAX] = {
    "syn_new",        "syn_again", "backend_flow", "client_flow", "client_noflow",
    "backend_random", "other",     "icmp_error",   "noise",
};

struct conn {
    uint8_t family;
    uint8_t addr[16];
    uint16_t port; /* host order */
    struct rte_ether_addr mac;
};

struct phase {
    unsigned syn_pct, noise_pct, mutate_pct, v4_pct;
    uint64_t step; /* mean virtual TSC ticks per burst */
    unsigned burst_max;
};

struct robust {
    struct fixture *f;
    struct xlb_flow_table *flows;
    struct xlb_worker_load *load;
    struct xlb_lb_worker lb;
    struct xlb_lb_cluster *leaf4, *leaf6, *leafmix;
    struct xlb_lb_target target4, target6, targetmix;
    struct xlb_lb_vip vip4, vip6, vipmix;
    struct rte_ring *redirect[N_WORKERS];
    struct hostile_gen noise;
    uint8_t templates[6][256];
    uint64_t rng;
    struct phase phase;
    /* Addresses, as bytes. */
    uint8_t vip4_b[16], vip6_b[16], snat4_b[16], snat6_b[16], port4_b[16], port6_b[16];
    uint8_t backend4_b[16], backend6_b[16];
    struct conn remembered[REMEMBERED];
    uint32_t n_remembered, next_remembered;
    uint32_t truncate_at; /* cycles through every length */
    /* Totals. */
    uint64_t frames_rx, frames_redirected, tx, clean_checked, bursts, mutated;
    uint32_t max_used;
    /* Expiry progress: the wheel's second after the last call, calls since it last moved on. */
    uint64_t last_wheel_second, stuck_calls, longest_stall;
    uint64_t kinds[K_MAX];
};

/* ---- random numbers ---- */

static uint64_t rnd(struct robust *r)
{
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    return r->rng * 0x2545f4914f6cdd1dull;
}

static unsigned below(struct robust *r, unsigned n)
{
    return (unsigned)(rnd(r) % n);
}

static bool chance(struct robust *r, unsigned percent)
{
    return below(r, 100) < percent;
}

/* ---- set-up ---- */

static uint32_t locality_slot(void *arg, uint32_t priority, const struct xlb_eds_locality *l)
{
    (void)priority;
    (void)l;
    return *(uint32_t *)arg;
}

/* A cluster of healthy endpoints of weight 1 in one locality. */
static struct xlb_lb_cluster *compile_cluster(const char *name, enum xlb_lb_policy policy,
                                              const char *const *endpoints, uint32_t n,
                                              const uint32_t *slots, uint32_t cluster_slot,
                                              uint32_t loc_slot, uint32_t max_requests)
{
    struct xlb_host_port addr[4];
    struct xlb_eds_endpoint ep[4];
    assert_true(n <= 4);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(xlb_host_port_parse(endpoints[i], strlen(endpoints[i]), &addr[i]), 0);
        ep[i] = (struct xlb_eds_endpoint){
            .addresses = &addr[i], .n_addresses = 1, .health = XLB_HEALTH_HEALTHY, .weight = 1};
    }
    struct xlb_eds_locality loc = {.region = (char *)"r",
                                   .zone = (char *)"z",
                                   .sub_zone = (char *)"",
                                   .weight = 1,
                                   .endpoints = ep,
                                   .n_endpoints = n};
    struct xlb_eds_priority prio = {.localities = &loc, .n_localities = 1};
    struct xlb_endpoint_config eds = {
        .cluster_name = (char *)name, .priorities = &prio, .n_priorities = 1};
    struct xlb_cluster_config cfg = {
        .name = (char *)name,
        .type = XLB_CLUSTER_EDS,
        .eds_service_name = (char *)"",
        .lb_policy = policy,
        .override_host_status = XLB_OVERRIDE_STATUS_DEFAULT,
        .max_requests = max_requests,
    };
    xlb_ring_hash_config_default(&cfg.ring_hash);
    struct xlb_cluster_compile_input in = {
        .name = name,
        .config = &cfg,
        .endpoints = &eds,
        .endpoint_slots = slots,
        .cluster_slot = cluster_slot,
        .locality_slot = locality_slot,
        .arg = &loc_slot,
    };
    struct xlb_lb_cluster *c = NULL;
    char err[256] = "";
    if (xlb_cluster_compile(&in, &c, err, sizeof(err)) != 0)
        fail_msg("compile %s: %s", name, err);
    assert_non_null(c);
    assert_int_equal(c->n_endpoints, n);
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

static void bytes_of(const char *text, uint8_t *out)
{
    int family = strchr(text, ':') != NULL ? AF_INET6 : AF_INET;
    assert_int_equal(inet_pton(family, text, out), 1);
}

static void complete_snapshot(struct robust *r)
{
    struct xlb_snapshot *snap = r->f->snap;
    struct xlb_port_view *port = &snap->ports[0];
    port->n_gateways = 2;
    assert_int_equal(xlb_addr_parse(FIX_GW4, &port->gateways[0]), 0);
    assert_int_equal(xlb_addr_parse(FIX_GW6, &port->gateways[1]), 0);
    entry(snap, FIX_GW4)->resolved = true;
    entry(snap, FIX_GW4)->mac = gw_mac;
    entry(snap, FIX_GW6)->resolved = true;
    entry(snap, FIX_GW6)->mac = gw6_mac;
    add(snap, BACKEND4A, XLB_ROLE_NEIGHBOUR, &backend_mac);
    add(snap, BACKEND4B, XLB_ROLE_NEIGHBOUR, &backend_mac);
    add(snap, BACKEND6A, XLB_ROLE_NEIGHBOUR, &backend_mac);
    add(snap, BACKEND6B, XLB_ROLE_NEIGHBOUR, &backend_mac);
    add(snap, SNAT4, XLB_ROLE_SNAT, NULL);
    add(snap, SNAT6, XLB_ROLE_SNAT, NULL);

    snap->n_vips = 2;
    assert_int_equal(xlb_addr_parse(FIX_VIP4, &snap->vips[0].addr), 0);
    snap->vips[0].l4_port = VIP_PORT;
    snap->vips[0].l7 = false;
    snap->vips[0].lb = &r->vip4;
    assert_int_equal(xlb_addr_parse(FIX_VIP6, &snap->vips[1].addr), 0);
    snap->vips[1].l4_port = VIP_PORT;
    snap->vips[1].l7 = false;
    snap->vips[1].lb = &r->vip6;
}

static void add_templates(struct robust *r);

static uint64_t env_u64(const char *name, uint64_t fallback)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtoull(v, NULL, 0) : fallback;
}

static int setup(void **state)
{
    struct robust *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    r->f = fixture_create();

    static const char *const ep4[] = {BACKEND4A ":9001", BACKEND4B ":9001"};
    static const char *const ep6[] = {"[" BACKEND6A "]:9001", "[" BACKEND6B "]:9001"};
    static const char *const epmix[] = {"[" BACKEND6A "]:9001"};
    static const uint32_t slots4[] = {7, 8}, slots6[] = {9, 10}, slotsmix[] = {11};
    r->leaf4 = compile_cluster("backends4", XLB_LB_ROUND_ROBIN, ep4, 2, slots4, CLUSTER4, 1, 0);
    r->leaf6 =
        compile_cluster("backends6", XLB_LB_RING_HASH, ep6, 2, slots6, CLUSTER6, 2, MAX_REQ6);
    r->leafmix =
        compile_cluster("wrong_family", XLB_LB_ROUND_ROBIN, epmix, 1, slotsmix, CLUSTERMIX, 3, 0);
    l4_vip(&r->vip4, &r->target4, &r->leaf4);
    l4_vip(&r->vip6, &r->target6, &r->leaf6);
    l4_vip(&r->vipmix, &r->targetmix, &r->leafmix);
    complete_snapshot(r);

    bytes_of(FIX_VIP4, r->vip4_b);
    bytes_of(FIX_VIP6, r->vip6_b);
    bytes_of(SNAT4, r->snat4_b);
    bytes_of(SNAT6, r->snat6_b);
    bytes_of(FIX_PORT4, r->port4_b);
    bytes_of(FIX_PORT6, r->port6_b);
    bytes_of(BACKEND4A, r->backend4_b);
    bytes_of(BACKEND6A, r->backend6_b);

    struct xlb_addr snat[2];
    assert_int_equal(xlb_addr_parse(SNAT4, &snat[0]), 0);
    assert_int_equal(xlb_addr_parse(SNAT6, &snat[1]), 0);
    r->flows =
        xlb_flow_table_create("natrob_flows", FLOWS, SOCKET_ID_ANY, snat, 2, PORT_BASE, PORT_COUNT);
    assert_non_null(r->flows);
    r->load = calloc(1, sizeof(*r->load));
    assert_non_null(r->load);
    assert_int_equal(xlb_lb_worker_init(&r->lb, 7, r->load, r->load, 1), 0);
    for (unsigned w = 0; w < N_WORKERS; w++) {
        char name[32];
        snprintf(name, sizeof(name), "natrob_redirect_%u", w);
        r->redirect[w] = rte_ring_create(name, 1024, SOCKET_ID_ANY, RING_F_SC_DEQ);
        assert_non_null(r->redirect[w]);
    }

    struct xlb_burst_ctx *ctx = &r->f->ctx;
    ctx->flows = r->flows;
    ctx->lb = &r->lb;
    ctx->redirect = r->redirect;
    ctx->n_workers = N_WORKERS;
    ctx->worker_id = 0;
    ctx->snat_port_base = PORT_BASE;
    ctx->now_tsc = START_TSC;
    ctx->tsc_hz = TSC_HZ;

    uint64_t seed = env_u64("XLB_NAT_ROBUSTNESS_SEED", 0x5eed);
    r->rng = seed != 0 ? seed : 1;
    hostile_init(&r->noise, seed ^ 0x9e3779b97f4a7c15ull, port_mac.addr_bytes);
    add_templates(r);
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    struct robust *r = *state;
    r->f->snap->n_vips = 0; /* the VIPs' LB trees are ours, not reference counted */
    for (unsigned w = 0; w < N_WORKERS; w++) {
        assert_int_equal(rte_ring_count(r->redirect[w]), 0);
        rte_ring_free(r->redirect[w]);
    }
    xlb_flow_table_free(r->flows);
    xlb_lb_worker_fini(&r->lb);
    free(r->load);
    xlb_lb_cluster_release(r->leaf4);
    xlb_lb_cluster_release(r->leaf6);
    xlb_lb_cluster_release(r->leafmix);
    fixture_destroy(r->f); /* asserts every mbuf is back in the pool */
    free(r);
    return 0;
}

/* ---- frames ---- */

struct spec {
    uint8_t family;
    uint8_t proto; /* IPPROTO_TCP, or UDP */
    struct rte_ether_addr eth_src, eth_dst;
    uint8_t src[16], dst[16];
    uint16_t sport, dport; /* host order */
    uint8_t flags;
    uint32_t seq, ack;
    uint16_t payload;
    uint8_t tcp_opt; /* bytes of TCP options: a multiple of 4, at most 40 */
    uint8_t ip_opt;  /* bytes of IPv4 options: a multiple of 4, at most 40 */
    uint8_t vlans;   /* 0, 1 or 2 (802.1ad outer) */
    bool fragment;   /* IPv4: MF and an offset; IPv6: a hop-by-hop header first */
};

struct layout {
    uint8_t family;
    size_t l3, l4, len;
};

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static size_t alen(uint8_t family)
{
    return family == AF_INET ? 4 : 16;
}

/* The frame as a sender puts it on the wire: every length and checksum right. */
static size_t build(uint8_t *buf, const struct spec *s, struct layout *lo)
{
    memcpy(buf, s->eth_dst.addr_bytes, 6);
    memcpy(buf + 6, s->eth_src.addr_bytes, 6);
    size_t off = 12;
    for (unsigned v = 0; v < s->vlans; v++) {
        put16(buf + off, v == 0 && s->vlans == 2 ? RTE_ETHER_TYPE_QINQ : RTE_ETHER_TYPE_VLAN);
        put16(buf + off + 2, (uint16_t)(100 + v));
        off += 4;
    }
    put16(buf + off, s->family == AF_INET ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
    off += 2;
    lo->family = s->family;
    lo->l3 = off;
    size_t l4_hlen = s->proto == IPPROTO_TCP ? sizeof(struct rte_tcp_hdr) + s->tcp_opt : 8;
    size_t l4_len = l4_hlen + s->payload;
    void *ip = buf + off;
    if (s->family == AF_INET) {
        struct rte_ipv4_hdr *h = ip;
        size_t hlen = sizeof(*h) + s->ip_opt;
        memset(h, 0, sizeof(*h));
        memset(buf + off + sizeof(*h), 1, s->ip_opt); /* NOPs */
        h->version_ihl = (uint8_t)(0x40 | hlen / 4);
        h->total_length = htons((uint16_t)(hlen + l4_len));
        h->packet_id = htons((uint16_t)s->seq);
        h->fragment_offset = htons(s->fragment ? RTE_IPV4_HDR_MF_FLAG | 10 : RTE_IPV4_HDR_DF_FLAG);
        h->time_to_live = 64;
        h->next_proto_id = s->proto;
        memcpy(&h->src_addr, s->src, 4);
        memcpy(&h->dst_addr, s->dst, 4);
        h->hdr_checksum = rte_ipv4_cksum(h);
        off += hlen;
    } else {
        struct rte_ipv6_hdr *h = ip;
        size_t ext = s->fragment ? 8 : 0;
        memset(h, 0, sizeof(*h));
        h->vtc_flow = htonl(6u << 28 | (s->seq & 0xfffff));
        h->payload_len = htons((uint16_t)(ext + l4_len));
        h->proto = s->fragment ? IPPROTO_HOPOPTS : s->proto;
        h->hop_limits = 64;
        memcpy(h->src_addr, s->src, 16);
        memcpy(h->dst_addr, s->dst, 16);
        off += sizeof(*h);
        if (ext) {
            const uint8_t hbh[8] = {s->proto, 0, 1, 4, 0, 0, 0, 0}; /* PadN */
            memcpy(buf + off, hbh, 8);
            off += 8;
        }
    }
    lo->l4 = off;
    uint8_t *l4 = buf + off;
    if (s->proto == IPPROTO_TCP) {
        struct rte_tcp_hdr *t = (struct rte_tcp_hdr *)l4;
        memset(t, 0, sizeof(*t));
        t->src_port = htons(s->sport);
        t->dst_port = htons(s->dport);
        t->sent_seq = htonl(s->seq);
        t->recv_ack = htonl(s->ack);
        t->data_off = (uint8_t)((l4_hlen / 4) << 4);
        t->tcp_flags = s->flags;
        t->rx_win = htons(29200);
        uint8_t *opt = l4 + sizeof(*t);
        memset(opt, 1, s->tcp_opt); /* NOPs after an MSS */
        if (s->tcp_opt >= 4) {
            const uint8_t mss[4] = {2, 4, 0x05, 0xb4};
            memcpy(opt, mss, 4);
        }
    } else {
        put16(l4, s->sport);
        put16(l4 + 2, s->dport);
        put16(l4 + 4, (uint16_t)l4_len);
        put16(l4 + 6, 0);
    }
    for (size_t i = 0; i < s->payload; i++)
        l4[l4_hlen + i] = (uint8_t)(i * 31 + s->seq);
    uint16_t csum = s->family == AF_INET ? rte_ipv4_udptcp_cksum(ip, l4)
                                         : rte_ipv6_udptcp_cksum(ip, l4); /* wrong after ext */
    memcpy(l4 + (s->proto == IPPROTO_TCP ? 16 : 6), &csum, 2);
    lo->len = off + l4_len;
    return lo->len;
}

static void random_payload_and_shape(struct robust *r, struct spec *s)
{
    s->payload = 0;
    s->tcp_opt = (uint8_t)(chance(r, 20) ? 4 * below(r, 11) : 0);
    s->ip_opt = (uint8_t)(s->family == AF_INET && chance(r, 10) ? 4 * below(r, 11) : 0);
    s->vlans = (uint8_t)(chance(r, 10) ? 1 + below(r, 2) : 0);
}

static void data_payload(struct robust *r, struct spec *s)
{
    unsigned p = below(r, 100);
    s->payload = (uint16_t)(p < 50 ? below(r, 64) : p < 90 ? below(r, 600) : below(r, MAX_PAYLOAD));
}

static void random_mac(struct robust *r, struct rte_ether_addr *mac)
{
    uint64_t v = rnd(r);
    memcpy(mac->addr_bytes, &v, 6);
    mac->addr_bytes[0] = (uint8_t)((mac->addr_bytes[0] & 0xfe) | 0x02); /* unicast, local */
}

static void new_client(struct robust *r, struct conn *c)
{
    c->family = chance(r, r->phase.v4_pct) ? AF_INET : AF_INET6;
    memset(c->addr, 0, sizeof(c->addr));
    uint64_t v = rnd(r);
    if (c->family == AF_INET) {
        c->addr[0] = 10;
        /* Some clients open many connections: a small address pool half of the time. */
        memcpy(c->addr + 1, &v, 3);
        if (v >> 63)
            c->addr[1] = c->addr[2] = 0;
    } else {
        const uint8_t prefix[8] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1};
        memcpy(c->addr, prefix, 8);
        memcpy(c->addr + 8, &v, 8);
        if (v >> 63)
            memset(c->addr + 8, 0, 6);
    }
    c->port = (uint16_t)(1024 + below(r, 65536 - 1024));
    if (chance(r, 80))
        c->mac = peer_mac;
    else
        random_mac(r, &c->mac);
}

static const struct conn *remembered(struct robust *r)
{
    if (r->n_remembered == 0)
        return NULL;
    return &r->remembered[below(r, r->n_remembered)];
}

static void remember(struct robust *r, const struct conn *c)
{
    r->remembered[r->next_remembered] = *c;
    r->next_remembered = (r->next_remembered + 1) % REMEMBERED;
    if (r->n_remembered < REMEMBERED)
        r->n_remembered++;
}

static void client_key(const struct robust *r, const struct conn *c, struct xlb_flow_key *key)
{
    memset(key, 0, sizeof(*key));
    key->family = c->family;
    key->proto = IPPROTO_TCP;
    key->src_port = htons(c->port);
    key->dst_port = htons(VIP_PORT);
    memcpy(key->src, c->addr, alen(c->family));
    memcpy(key->dst, c->family == AF_INET ? r->vip4_b : r->vip6_b, alen(c->family));
}

static void from_client(struct robust *r, const struct conn *c, struct spec *s)
{
    memset(s, 0, sizeof(*s));
    s->family = c->family;
    s->proto = IPPROTO_TCP;
    s->eth_src = c->mac;
    s->eth_dst = port_mac;
    memcpy(s->src, c->addr, 16);
    memcpy(s->dst, c->family == AF_INET ? r->vip4_b : r->vip6_b, alen(c->family));
    s->sport = c->port;
    s->dport = VIP_PORT;
    s->seq = (uint32_t)rnd(r);
    s->ack = (uint32_t)rnd(r);
    random_payload_and_shape(r, s);
}

/* A backend segment to the SNAT side, from the backend key's point of view. */
static void from_backend_key(struct robust *r, const struct xlb_flow_key *k, struct spec *s)
{
    memset(s, 0, sizeof(*s));
    s->family = k->family;
    s->proto = IPPROTO_TCP;
    s->eth_src = backend_mac;
    s->eth_dst = port_mac;
    memcpy(s->src, k->src, 16);
    memcpy(s->dst, k->dst, 16);
    s->sport = ntohs(k->src_port);
    s->dport = ntohs(k->dst_port);
    s->seq = (uint32_t)rnd(r);
    s->ack = (uint32_t)rnd(r);
    random_payload_and_shape(r, s);
}

static uint8_t client_flags(struct robust *r)
{
    static const uint8_t flags[] = {
        RTE_TCP_ACK_FLAG,
        RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
        RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
        RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG,
        RTE_TCP_RST_FLAG,
        RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG,
        RTE_TCP_SYN_FLAG,
        RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
        RTE_TCP_FIN_FLAG,
        0,
    };
    return chance(r, 3) ? (uint8_t)rnd(r) : flags[below(r, sizeof(flags))];
}

static uint8_t backend_flags(struct robust *r)
{
    static const uint8_t flags[] = {
        RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
        RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, RTE_TCP_ACK_FLAG,
        RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
        RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, RTE_TCP_RST_FLAG,
        RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG,
    };
    return chance(r, 3) ? (uint8_t)rnd(r) : flags[below(r, sizeof(flags))];
}

/* A used flow: a remembered client's, else the first used entry of a few random probes. */
static const struct xlb_flow *existing_flow(struct robust *r)
{
    const struct conn *c = remembered(r);
    if (c != NULL) {
        struct xlb_flow_key key;
        client_key(r, c, &key);
        const struct xlb_flow *f = xlb_flow_lookup(r->flows, &key);
        if (f != NULL)
            return f;
    }
    for (int i = 0; i < 16 && r->flows->n_used > 0; i++) {
        const struct xlb_flow *f = &r->flows->flows[below(r, FLOWS)];
        if (f->used)
            return f;
    }
    return NULL;
}

static void backend_random(struct robust *r, struct spec *s)
{
    struct xlb_flow_key k = {.family = chance(r, 50) ? AF_INET : AF_INET6,
                             .proto = IPPROTO_TCP,
                             .src_port = htons(chance(r, 80) ? VIP_PORT : (uint16_t)rnd(r))};
    bool v4 = k.family == AF_INET;
    memcpy(k.src, v4 ? r->backend4_b : r->backend6_b, alen(k.family));
    if (chance(r, 10))
        k.src[alen(k.family) - 1] = (uint8_t)rnd(r); /* some other host */
    memcpy(k.dst, v4 ? r->snat4_b : r->snat6_b, alen(k.family));
    unsigned where = below(r, 5);
    uint16_t port = where == 0   ? (uint16_t)below(r, PORT_BASE)
                    : where <= 2 ? (uint16_t)(PORT_BASE + below(r, PORT_COUNT))
                    : where == 3 ? (uint16_t)(PORT_BASE + PORT_COUNT + below(r, PORT_COUNT))
                                 : (uint16_t)(PORT_BASE + N_WORKERS * PORT_COUNT +
                                              below(r, 65536 - PORT_BASE - N_WORKERS * PORT_COUNT));
    k.dst_port = htons(port);
    from_backend_key(r, &k, s);
    s->flags = backend_flags(r);
}

/* Traffic to the VIPs and owned addresses that is not a NAT flow. Returns 0 if s is built, or
 * the length of a frame written into buf directly. */
static size_t other(struct robust *r, struct spec *s, uint8_t *buf)
{
    struct conn c;
    new_client(r, &c);
    from_client(r, &c, s);
    s->flags = RTE_TCP_SYN_FLAG;
    bool v4 = c.family == AF_INET;
    switch (below(r, 9)) {
    case 0: /* another port of the VIP */
        s->dport = (uint16_t)(VIP_PORT + 1 + below(r, 100));
        break;
    case 1: /* the port's own address serves no TCP */
        memcpy(s->dst, v4 ? r->port4_b : r->port6_b, alen(c.family));
        break;
    case 2:
        s->proto = IPPROTO_UDP;
        break;
    case 3:
        return build_icmp4_echo(buf, FIX_PEER4, FIX_VIP4, below(r, 100), 60);
    case 4:
        return build_icmp6_echo(buf, FIX_PEER6, FIX_VIP6, below(r, 100));
    case 5: /* an address that is not ours */
        s->dst[alen(c.family) - 1] ^= 0x80;
        break;
    case 6: /* a client's SYN to the SNAT address */
        memcpy(s->dst, v4 ? r->snat4_b : r->snat6_b, alen(c.family));
        s->dport = (uint16_t)(PORT_BASE + below(r, PORT_COUNT));
        break;
    case 7:
    case 8:
        s->fragment = true;
        break;
    }
    return 0;
}

/*
 * An ICMP error about a segment xlb sent on flow f (or on no flow when f is NULL): a router
 * tells the SNAT address about SNAT -> backend, or the VIP about VIP -> client. The quote is
 * short, the IP header and 8 bytes (RFC 792), a TCP header, or the whole segment.
 */
static size_t icmp_error(struct robust *r, const struct xlb_flow *f, uint8_t *buf,
                         struct layout *lo)
{
    static uint8_t seg[HOSTILE_MAX_FRAME];
    bool to_snat = chance(r, 50);
    struct spec in = {.proto = IPPROTO_TCP, .eth_src = port_mac, .eth_dst = backend_mac};
    if (f != NULL) {
        const struct xlb_flow_key *k = to_snat ? &f->backend_key : &f->client_key;
        in.family = k->family;
        memcpy(in.src, k->dst, 16);
        memcpy(in.dst, k->src, 16);
        in.sport = ntohs(k->dst_port);
        in.dport = ntohs(k->src_port);
        if (chance(r, 10))
            in.dport ^= (uint16_t)(1 + below(r, 0xffff)); /* about no flow of ours */
    } else {
        in.family = chance(r, 50) ? AF_INET : AF_INET6;
        bool v4 = in.family == AF_INET;
        if (to_snat) {
            memcpy(in.src, v4 ? r->snat4_b : r->snat6_b, alen(in.family));
            memcpy(in.dst, v4 ? r->backend4_b : r->backend6_b, alen(in.family));
            in.sport = (uint16_t)(PORT_BASE + below(r, PORT_COUNT));
            in.dport = VIP_PORT;
        } else {
            struct conn c;
            new_client(r, &c);
            in.family = c.family;
            memcpy(in.src, c.family == AF_INET ? r->vip4_b : r->vip6_b, alen(c.family));
            memcpy(in.dst, c.addr, 16);
            in.sport = VIP_PORT;
            in.dport = c.port;
        }
    }
    bool v4 = in.family == AF_INET;
    in.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
    in.seq = (uint32_t)rnd(r);
    in.ack = (uint32_t)rnd(r);
    in.payload = (uint16_t)below(r, 300);
    in.tcp_opt = (uint8_t)(4 * below(r, 3));
    in.ip_opt = (uint8_t)(v4 && chance(r, 10) ? 4 : 0);
    struct layout il;
    size_t seg_len = build(seg, &in, &il) - il.l3;
    size_t l4_at = il.l4 - il.l3;
    unsigned q = below(r, 10);
    size_t quote = q < 4   ? l4_at + 8
                   : q < 7 ? l4_at + 20
                   : q < 9 ? seg_len
                           : below(r, (unsigned)(l4_at + 8));
    quote = RTE_MIN(quote, seg_len);

    memcpy(buf, port_mac.addr_bytes, 6);
    memcpy(buf + 6, gw_mac.addr_bytes, 6);
    put16(buf + 12, v4 ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
    lo->family = in.family;
    lo->l3 = RTE_ETHER_HDR_LEN;
    uint8_t *ip = buf + lo->l3;
    size_t hlen = v4 ? sizeof(struct rte_ipv4_hdr) : sizeof(struct rte_ipv6_hdr);
    uint8_t *icmp = ip + hlen;
    size_t icmp_len = 8 + quote;
    memset(icmp, 0, 8);
    memcpy(icmp + 8, seg + il.l3, quote);
    uint8_t router[16];
    memcpy(router, v4 ? r->backend4_b : r->backend6_b, 16);
    router[alen(in.family) - 1] = (uint8_t)(0x80 | below(r, 0x7f)); /* some hop on the way */
    if (v4) {
        struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;
        memset(h, 0, sizeof(*h));
        h->version_ihl = 0x45;
        h->total_length = htons((uint16_t)(hlen + icmp_len));
        h->time_to_live = 64;
        h->next_proto_id = IPPROTO_ICMP;
        memcpy(&h->src_addr, router, 4);
        memcpy(&h->dst_addr, in.src, 4);
        h->hdr_checksum = rte_ipv4_cksum(h);
        icmp[0] = chance(r, 70) ? 3 : 11;
        icmp[1] = (uint8_t)(icmp[0] == 3 ? (chance(r, 50) ? 4 : below(r, 16)) : below(r, 2));
        if (icmp[0] == 3 && icmp[1] == 4)
            put16(icmp + 6, 1400); /* next-hop MTU */
        uint16_t csum = (uint16_t)~rte_raw_cksum(icmp, icmp_len);
        memcpy(icmp + 2, &csum, 2);
    } else {
        struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;
        memset(h, 0, sizeof(*h));
        h->vtc_flow = htonl(6u << 28);
        h->payload_len = htons((uint16_t)icmp_len);
        h->proto = IPPROTO_ICMPV6;
        h->hop_limits = 64;
        memcpy(h->src_addr, router, 16);
        memcpy(h->dst_addr, in.src, 16);
        icmp[0] = (uint8_t)(1 + below(r, 3));
        icmp[1] = (uint8_t)below(r, 5);
        if (icmp[0] == 2)
            put16(icmp + 6, 1280); /* MTU */
        uint16_t csum = rte_ipv6_udptcp_cksum(h, icmp);
        memcpy(icmp + 2, &csum, 2);
    }
    lo->l4 = lo->l3 + hlen;
    lo->len = lo->l4 + icmp_len;
    return lo->len;
}

/* The next frame of the mix into buf; *clean when it is as a sender would put it on the wire. */
static size_t generate(struct robust *r, uint8_t *buf, bool *clean, struct layout *lo)
{
    struct spec s;
    struct conn c;
    const struct conn *known = NULL;
    const struct xlb_flow *f = NULL;
    enum kind kind;
    unsigned p = below(r, 100);
    if (p < r->phase.noise_pct)
        kind = K_NOISE;
    else if (below(r, 100) < r->phase.syn_pct)
        kind = K_SYN_NEW;
    else {
        static const enum kind rest[] = {
            K_SYN_AGAIN,     K_BACKEND_FLOW,   K_BACKEND_FLOW,   K_BACKEND_FLOW, K_BACKEND_FLOW,
            K_BACKEND_FLOW,  K_BACKEND_FLOW,   K_BACKEND_FLOW,   K_CLIENT_FLOW,  K_CLIENT_FLOW,
            K_CLIENT_FLOW,   K_CLIENT_FLOW,    K_CLIENT_FLOW,    K_CLIENT_FLOW,  K_CLIENT_NOFLOW,
            K_CLIENT_NOFLOW, K_BACKEND_RANDOM, K_BACKEND_RANDOM, K_OTHER,        K_OTHER,
            K_ICMP_ERROR,    K_ICMP_ERROR,
        };
        kind = rest[below(r, sizeof(rest) / sizeof(rest[0]))];
    }
    if (kind == K_SYN_AGAIN || kind == K_CLIENT_FLOW) {
        known = remembered(r);
        if (known == NULL)
            kind = K_SYN_NEW;
    }
    if (kind == K_BACKEND_FLOW && (f = existing_flow(r)) == NULL)
        kind = K_BACKEND_RANDOM;
    if (kind == K_ICMP_ERROR && chance(r, 90))
        f = existing_flow(r);
    r->kinds[kind]++;
    *clean = true;
    memset(lo, 0, sizeof(*lo));
    switch (kind) {
    case K_NOISE:
        *clean = false;
        return hostile_next(&r->noise, buf);
    case K_SYN_NEW:
        new_client(r, &c);
        remember(r, &c);
        from_client(r, &c, &s);
        s.flags = RTE_TCP_SYN_FLAG;
        s.ack = 0;
        break;
    case K_SYN_AGAIN:
        from_client(r, known, &s);
        s.flags = RTE_TCP_SYN_FLAG;
        break;
    case K_BACKEND_FLOW:
        from_backend_key(r, &f->backend_key, &s);
        s.flags = backend_flags(r);
        break;
    case K_CLIENT_FLOW:
        from_client(r, known, &s);
        s.flags = client_flags(r);
        break;
    case K_CLIENT_NOFLOW:
        new_client(r, &c);
        from_client(r, &c, &s);
        s.flags = client_flags(r);
        break;
    case K_BACKEND_RANDOM:
        backend_random(r, &s);
        break;
    case K_OTHER: {
        size_t len = other(r, &s, buf);
        if (len > 0)
            return len;
        break;
    }
    case K_ICMP_ERROR:
        return icmp_error(r, f, buf, lo);
    default:
        fail();
    }
    if (s.flags & (RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG) || chance(r, 10))
        data_payload(r, &s);
    size_t len = build(buf, &s, lo);
    if (len < 60 && chance(r, 50)) {
        memset(buf + len, 0xee, 60 - len); /* Ethernet padding */
        len = 60;
    }
    return len;
}

/* Break the frame in one to three ways; lo describes it as built. */
static size_t mutate(struct robust *r, uint8_t *buf, size_t len, const struct layout *lo)
{
    unsigned n = 1 + below(r, 3);
    bool fix_ip = chance(r, 50), fix_tcp = chance(r, 30);
    bool v4 = lo->family == AF_INET;
    uint8_t *ip = buf + lo->l3, *l4 = buf + lo->l4;
    for (unsigned i = 0; i < n && len > 0; i++) {
        switch (below(r, 16)) {
        case 0: /* anywhere */
            buf[below(r, (unsigned)len)] ^= (uint8_t)(1 + below(r, 255));
            break;
        case 1: /* in the headers */
            buf[below(r, (unsigned)RTE_MIN(len, lo->l4 + 24))] ^= (uint8_t)(1 + below(r, 255));
            break;
        case 2: /* truncated, at every length in turn */
            len = r->truncate_at++ % (len + 1);
            break;
        case 3: { /* trailing bytes the IP length does not cover */
            size_t extra = RTE_MIN((size_t)1 + below(r, 64), HOSTILE_MAX_FRAME - len);
            for (size_t j = 0; j < extra; j++)
                buf[len + j] = (uint8_t)rnd(r);
            len += extra;
            break;
        }
        case 4: /* data offset */
            if (lo->l4 + 12 < len)
                l4[12] = (uint8_t)rnd(r);
            break;
        case 5: { /* IP length */
            size_t at = v4 ? 2 : 4;
            if (lo->l3 + at + 2 > len)
                break;
            uint16_t real = get16(ip + at);
            static const int deltas[] = {-1, 1, -20, 20, 100, -4, 4};
            uint16_t v;
            switch (below(r, 4)) {
            case 0:
                v = (uint16_t)(real + deltas[below(r, 7)]);
                break;
            case 1:
                v = (uint16_t)below(r, 64);
                break;
            case 2:
                v = 0xffff;
                break;
            default:
                v = (uint16_t)rnd(r);
            }
            put16(ip + at, v);
            break;
        }
        case 6: /* header length or version */
            if (lo->l3 < len)
                ip[0] = v4 ? (uint8_t)(0x40 | below(r, 16)) : (uint8_t)((below(r, 16) << 4) | 6);
            break;
        case 7: /* IPv4 header checksum */
            if (v4 && lo->l3 + 12 <= len) {
                ip[10] ^= (uint8_t)(1 + below(r, 255));
                fix_ip = false;
            }
            break;
        case 8: /* TCP checksum */
            if (lo->l4 + 18 <= len) {
                l4[16 + below(r, 2)] ^= (uint8_t)(1 + below(r, 255));
                fix_tcp = false;
            }
            break;
        case 9: /* fragment or extension header */
            if (v4 && lo->l3 + 8 <= len)
                put16(ip + 6, (uint16_t)rnd(r));
            else if (!v4 && lo->l3 + 7 <= len)
                ip[6] = (uint8_t)(chance(r, 50) ? 44 : rnd(r));
            break;
        case 10: { /* destination MAC */
            static const uint8_t macs[3][6] = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
                                               {0x33, 0x33, 0xff, 0x00, 0x01, 0x00},
                                               {0x02, 0x00, 0x00, 0x00, 0x00, 0x99}};
            if (len >= 6)
                memcpy(buf, macs[below(r, 3)], 6);
            break;
        }
        case 11: { /* ether type, outer or inner */
            static const uint16_t types[] = {RTE_ETHER_TYPE_IPV4, RTE_ETHER_TYPE_IPV6,
                                             RTE_ETHER_TYPE_VLAN, RTE_ETHER_TYPE_QINQ,
                                             RTE_ETHER_TYPE_ARP,  0x1234};
            size_t at = chance(r, 50) ? 12 : lo->l3 - 2;
            if (at + 2 <= len)
                put16(buf + at, types[below(r, 6)]);
            break;
        }
        case 12: /* TCP flags */
            if (lo->l4 + 14 <= len)
                l4[13] = (uint8_t)rnd(r);
            break;
        case 13: /* ports */
            if (lo->l4 + 4 <= len)
                l4[below(r, 4)] = (uint8_t)rnd(r);
            break;
        case 14: { /* addresses */
            size_t at = lo->l3 + (v4 ? 12 : 8) + below(r, v4 ? 8 : 32);
            if (at < len)
                buf[at] ^= (uint8_t)(1 << below(r, 8));
            break;
        }
        case 15: /* protocol */
            if (v4 && lo->l3 + 10 <= len)
                ip[9] = (uint8_t)(chance(r, 50) ? IPPROTO_UDP : rnd(r));
            else if (!v4 && lo->l3 + 7 <= len)
                ip[6] = (uint8_t)(chance(r, 50) ? IPPROTO_ICMPV6 : rnd(r));
            break;
        }
    }
    /* Half the time the IPv4 header checksum is made right again, so the damage goes deeper. */
    if (v4 && fix_ip && lo->l3 + 20 <= len) {
        struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;
        if (lo->l3 + rte_ipv4_hdr_len(h) <= len) {
            h->hdr_checksum = 0;
            h->hdr_checksum = rte_ipv4_cksum(h);
        }
    }
    (void)fix_tcp; /* xlb forwards TCP checksums as they are: nothing to fix for it */
    return len;
}

/* ---- checks ---- */

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
static void collect_tx(struct robust *r, struct rte_mbuf *const *in, const bool *clean, unsigned n)
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
            uint64_t deadline = f->expires_tsc / t->wheel_hz;
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
static void check_table(struct robust *r)
{
    const struct xlb_flow_table *t = r->flows;
    static uint8_t port_seen[2][65536];
    static uint8_t on_free_list[FLOWS];
    uint32_t used = 0, syn = 0, per_snat[2] = {0, 0};
    memset(port_seen, 0, sizeof(port_seen));
    memset(on_free_list, 0, sizeof(on_free_list));
    assert_int_equal(t->capacity, FLOWS);
    assert_true(t->n_used <= t->capacity);
    assert_int_equal(t->n_snat, 2);
    for (uint32_t i = 0; i < t->capacity; i++) {
        const struct xlb_flow *f = &t->flows[i];
        if (!f->used)
            continue;
        used++;
        assert_ptr_equal(xlb_flow_lookup(t, &f->client_key), f);
        assert_ptr_equal(xlb_flow_lookup(t, &f->backend_key), f);
        assert_true(f->snat_index < 2);
        assert_true(f->state <= XLB_FLOW_CLOSED);
        assert_int_equal(f->client_key.family, t->snat[f->snat_index].family);
        assert_true(f->snat_port >= PORT_BASE && f->snat_port < PORT_BASE + PORT_COUNT);
        assert_int_equal(ntohs(f->backend_key.dst_port), f->snat_port);
        assert_memory_equal(f->backend_key.dst, t->snat[f->snat_index].bytes,
                            alen(f->client_key.family));
        assert_int_equal(port_seen[f->snat_index][f->snat_port], 0);
        port_seen[f->snat_index][f->snat_port] = 1;
        per_snat[f->snat_index]++;
        syn += f->state == XLB_FLOW_SYN_SENT;
    }
    assert_int_equal(used, t->n_used);
    assert_int_equal(syn, t->n_syn);
    assert_true(t->n_syn <= t->syn_cap);
    assert_int_equal(rte_hash_count(t->hash), 2 * t->n_used);

    uint32_t n_free = 0;
    for (uint32_t i = t->free_head; i != XLB_FLOW_NONE; i = t->flows[i].next_free) {
        assert_true(i < t->capacity);
        assert_false(t->flows[i].used);
        assert_int_equal(on_free_list[i], 0);
        on_free_list[i] = 1;
        n_free++;
    }
    assert_int_equal(n_free, t->capacity - t->n_used);

    for (unsigned s = 0; s < 2; s++) {
        assert_int_equal(t->n_free_ports[s] + per_snat[s], PORT_COUNT);
        for (uint32_t i = 0; i < t->n_free_ports[s]; i++) {
            uint16_t port = t->free_ports[s][i];
            assert_true(port >= PORT_BASE && port < PORT_BASE + PORT_COUNT);
            assert_int_equal(port_seen[s][port], 0);
            port_seen[s][port] = 1;
        }
    }
    check_wheel(t, r->f->ctx.now_tsc);
}

static uint64_t event(const struct robust *r, enum xlb_event_counter e)
{
    return r->f->stats.events[e];
}

/* Every frame in is accounted for: sent, dropped by reason, handled silently or handed on. */
static void check_accounting(const struct robust *r)
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
    /* Flows open == flows created - flows closed - flows evicted to make room. */
    assert_int_equal(event(r, XLB_EVENT_FLOWS_CREATED) - event(r, XLB_EVENT_FLOWS_CLOSED) -
                         event(r, XLB_EVENT_FLOWS_EVICTED),
                     r->flows->n_used);
    assert_true(event(r, XLB_EVENT_FLOWS_FLUSHED) <= event(r, XLB_EVENT_FLOWS_CLOSED));
}

/* ---- the run ---- */

static void add_templates(struct robust *r)
{
    struct spec s;
    struct layout lo;
    struct conn c = {.family = AF_INET, .addr = {10, 1, 2, 3}, .port = 40000, .mac = peer_mac};
    size_t len[6];
    from_client(r, &c, &s);
    s.flags = RTE_TCP_SYN_FLAG;
    s.tcp_opt = 4;
    s.ip_opt = 0;
    s.vlans = 0;
    len[0] = build(r->templates[0], &s, &lo);
    s.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
    s.payload = 40;
    s.ip_opt = 8;
    s.vlans = 1;
    len[1] = build(r->templates[1], &s, &lo);
    c.family = AF_INET6;
    memcpy(c.addr, r->port6_b, 16);
    c.addr[15] = 0x77;
    from_client(r, &c, &s);
    s.flags = RTE_TCP_SYN_FLAG;
    s.tcp_opt = 4;
    s.ip_opt = 0;
    s.vlans = 0;
    len[2] = build(r->templates[2], &s, &lo);
    struct xlb_flow_key k = {.family = AF_INET,
                             .proto = IPPROTO_TCP,
                             .src_port = htons(VIP_PORT),
                             .dst_port = htons(PORT_BASE)};
    memcpy(k.src, r->backend4_b, 4);
    memcpy(k.dst, r->snat4_b, 4);
    from_backend_key(r, &k, &s);
    s.flags = RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG;
    s.tcp_opt = 4;
    s.ip_opt = 0;
    s.vlans = 0;
    len[3] = build(r->templates[3], &s, &lo);
    k.family = AF_INET6;
    memcpy(k.src, r->backend6_b, 16);
    memcpy(k.dst, r->snat6_b, 16);
    k.dst_port = htons(PORT_BASE + PORT_COUNT + 5); /* worker 1's */
    from_backend_key(r, &k, &s);
    s.flags = RTE_TCP_ACK_FLAG;
    s.tcp_opt = 0;
    s.vlans = 2;
    len[4] = build(r->templates[4], &s, &lo);
    len[5] = build_icmp4_echo(r->templates[5], FIX_PEER4, FIX_VIP4, 16, 0);
    for (int i = 0; i < 6; i++) {
        assert_true(len[i] <= sizeof(r->templates[i]));
        hostile_add_template(&r->noise, r->templates[i], len[i]);
    }
}

static void set_config(struct robust *r, unsigned which)
{
    struct xlb_snapshot *snap = r->f->snap;
    snap->vips[0].lb = which == 1 ? &r->vipmix : which == 2 ? NULL : &r->vip4;
    snap->vips[1].lb = which == 3 ? NULL : &r->vip6;
    entry(snap, BACKEND4B)->resolved = which != 4;
    entry(snap, BACKEND6B)->resolved = which != 5;
}

static void new_phase(struct robust *r)
{
    static const unsigned syn[] = {0, 2, 10, 30, 60};
    static const unsigned noise[] = {0, 5, 20};
    static const unsigned mutate_pct[] = {5, 30, 60};
    static const unsigned v4[] = {10, 50, 50, 90};
    static const uint64_t step[] = {20, 500, 5000, 100000, 1000000}; /* 20 us .. 1 s */
    r->phase = (struct phase){
        .syn_pct = syn[below(r, 5)],
        .noise_pct = noise[below(r, 3)],
        .mutate_pct = mutate_pct[below(r, 3)],
        .v4_pct = v4[below(r, 4)],
        .step = step[below(r, 5)],
        .burst_max = chance(r, 80) ? XLB_RX_BURST : 1 + below(r, XLB_RX_BURST),
    };
    /* Mostly the normal configuration; sometimes a VIP without backends or an unreachable one. */
    set_config(r, chance(r, 70) ? 0 : 1 + below(r, 5));
    /* Sometimes xlbctl flows flush: a backend's flows, on any port or on one. */
    struct xlb_flush *flush = &r->f->ctx.flush;
    if (!flush->active && chance(r, 25)) {
        static const char *const backends[] = {BACKEND4A, BACKEND4B, BACKEND6A, BACKEND6B};
        memset(flush, 0, sizeof(*flush));
        assert_int_equal(xlb_addr_parse(backends[below(r, 4)], &flush->addr), 0);
        flush->port = chance(r, 50) ? 0 : chance(r, 80) ? VIP_PORT : 1234;
        flush->cursor = 0;
        flush->active = true;
    }
}

static struct rte_mbuf *frame_mbuf(struct robust *r, const uint8_t *frame, size_t len)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(r->f->pool);
    assert_non_null(m);
    uint8_t *data = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
    assert_non_null(data);
    if (len > 0)
        memcpy(data, frame, len);
    m->port = 0; /* as the PMD sets it */
    return m;
}

static unsigned fill(struct robust *r, struct rte_mbuf **pkts, bool *clean, unsigned n)
{
    static uint8_t frame[HOSTILE_MAX_FRAME];
    for (unsigned i = 0; i < n; i++) {
        struct layout lo;
        size_t len = generate(r, frame, &clean[i], &lo);
        if (lo.l3 != 0 && chance(r, r->phase.mutate_pct)) {
            len = mutate(r, frame, len, &lo);
            clean[i] = false;
            r->mutated++;
        }
        pkts[i] = frame_mbuf(r, frame, len);
    }
    return n;
}

/* Frames another worker handed to this one: some with a port this worker does not have. */
static void redirected_burst(struct robust *r)
{
    struct rte_mbuf *pkts[XLB_RX_BURST];
    bool clean[XLB_RX_BURST];
    unsigned n = fill(r, pkts, clean, 1 + below(r, 8));
    for (unsigned i = 0; i < n; i++)
        if (chance(r, 5))
            pkts[i]->port = (uint16_t)(1 + below(r, 8));
    r->frames_redirected += n;
    xlb_burst_process_redirected(&r->f->ctx, r->f->snap, pkts, (uint16_t)n);
    collect_tx(r, pkts, clean, n);
}

/* Empty the redirect rings as their owners would; some frames come back to be processed
 * here as redirected (worker 1 handing back what it cannot place). */
static void drain_rings(struct robust *r)
{
    struct rte_mbuf *pkts[XLB_RX_BURST];
    bool clean[XLB_RX_BURST];
    memset(clean, 0, sizeof(clean));
    for (unsigned w = 0; w < N_WORKERS; w++) {
        unsigned n;
        while ((n = rte_ring_sc_dequeue_burst(r->redirect[w], (void **)pkts, XLB_RX_BURST, NULL)) >
               0) {
            assert_int_equal(w, 1); /* nothing is redirected to this worker by itself */
            if (chance(r, 25)) {
                r->frames_redirected += n;
                xlb_burst_process_redirected(&r->f->ctx, r->f->snap, pkts, (uint16_t)n);
                collect_tx(r, pkts, clean, n);
            } else {
                rte_pktmbuf_free_bulk(pkts, n);
            }
        }
    }
    struct xlb_msg msg;
    while (xlb_msg_receive(r->f->to_control, &msg) == 0)
        ;
}

static void advance_clock(struct robust *r)
{
    struct xlb_burst_ctx *ctx = &r->f->ctx;
    ctx->now_tsc += rnd(r) % (2 * r->phase.step + 1);
    /* Now and then the worker stood still: a pause of up to 700 s, beyond a lap of the wheel. */
    if (below(r, 20000) == 0)
        ctx->now_tsc += rnd(r) % (700 * TSC_HZ);
}

/*
 * While the wheel is behind the clock, every call of xlb_nat_expire frees a flow or moves the
 * wheel on within a few calls: a slot holds at most FLOWS entries and each call takes up to
 * 2 * XLB_NAT_EXPIRE_BUDGET of them off it, freed or moved to a later slot.
 */
#define STALL_CALLS (4 * FLOWS / XLB_NAT_EXPIRE_BUDGET)

static void check_expiry_progress(struct robust *r, uint64_t closed_before)
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
             " calls of xlb_nat_expire freed nothing and the wheel "
             "stayed at second %" PRIu64 " (now %" PRIu64 ", %u flows open); its slot's first flow "
             "%d expires at second %" PRIu64 " (state %d)",
             r->bursts, r->frames_rx, r->stuck_calls, t->wheel_second,
             r->f->ctx.now_tsc / t->wheel_hz, t->n_used, head == XLB_FLOW_NONE ? -1 : (int)head,
             head == XLB_FLOW_NONE ? 0 : t->flows[head].expires_tsc / t->wheel_hz,
             head == XLB_FLOW_NONE ? -1 : t->flows[head].state);
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Past every timeout, a bounded number of expiry calls frees every flow and port. */
static void expire_everything(struct robust *r)
{
    struct xlb_burst_ctx *ctx = &r->f->ctx;
    uint32_t open = r->flows->n_used;
    ctx->now_tsc += (XLB_NAT_ESTABLISHED_TIMEOUT_S + 1) * TSC_HZ;
    /* Each call frees up to XLB_NAT_EXPIRE_BUDGET flows: allow for empty slots and flows moved
     * on once (refreshed since they were put in their slot). */
    unsigned calls = 0, bound = 4 * (FLOWS / XLB_NAT_EXPIRE_BUDGET + XLB_FLOW_WHEEL_SLOTS);
    while (r->flows->n_used > 0 && calls < bound) {
        xlb_nat_expire(ctx);
        calls++;
    }
    print_message("%u open flows expired in %u calls of xlb_nat_expire\n", open, calls);
    assert_int_equal(r->flows->n_used, 0);
    assert_int_equal(rte_hash_count(r->flows->hash), 0);
    for (unsigned s = 0; s < 2; s++)
        assert_int_equal(r->flows->n_free_ports[s], PORT_COUNT);
    check_table(r);
    assert_int_equal(event(r, XLB_EVENT_FLOWS_CREATED),
                     event(r, XLB_EVENT_FLOWS_CLOSED) + event(r, XLB_EVENT_FLOWS_EVICTED));
    static const uint32_t clusters[] = {CLUSTER4, CLUSTER6, CLUSTERMIX};
    for (unsigned c = 0; c < 3; c++)
        assert_int_equal(r->load->clusters[clusters[c]].started,
                         r->load->clusters[clusters[c]].finished);
}

static void print_totals(const struct robust *r, double elapsed)
{
    const struct xlb_worker_stats *s = &r->f->stats;
    print_message("%" PRIu64 " frames (%" PRIu64 " redirected in) in %.1f s, %" PRIu64
                  " bursts, %.0f s of virtual time; %" PRIu64 " mutated\n",
                  s->rx_packets, event(r, XLB_EVENT_REDIRECTED_IN), elapsed, r->bursts,
                  (double)(r->f->ctx.now_tsc - START_TSC) / TSC_HZ, r->mutated);
    print_message("%" PRIu64 " transmitted (%" PRIu64 " from clean frames checked), %" PRIu64
                  " dropped, %" PRIu64 " handled silently, %" PRIu64 " redirected out\n",
                  r->tx, r->clean_checked, fixture_total_drops(r->f), event(r, XLB_EVENT_CONSUMED),
                  event(r, XLB_EVENT_REDIRECTED_OUT));
    print_message("expiry: at most %" PRIu64 " calls in a row without progress while behind\n",
                  r->longest_stall);
    print_message("flows: %" PRIu64 " created, %" PRIu64
                  " closed, at most %u open at once; %" PRIu64 " resets sent\n",
                  event(r, XLB_EVENT_FLOWS_CREATED), event(r, XLB_EVENT_FLOWS_CLOSED), r->max_used,
                  event(r, XLB_EVENT_TCP_RESETS_SENT));
    static const uint32_t clusters[] = {CLUSTER4, CLUSTER6, CLUSTERMIX};
    for (unsigned c = 0; c < 3; c++) {
        const struct xlb_cluster_load *l = &r->load->clusters[clusters[c]];
        print_message("cluster %u: %" PRIu64 " started, %" PRIu64 " finished, %" PRIu64
                      " refused by the circuit breaker\n",
                      clusters[c], l->started, l->finished, l->circuit_dropped);
    }
    for (int k = 0; k < K_MAX; k++)
        print_message("  kind %-16s %" PRIu64 "\n", kind_names[k], r->kinds[k]);
    for (int d = 0; d < XLB_DROP_MAX; d++)
        if (s->drops[d] != 0)
            print_message("  drop %-26s %" PRIu64 "\n", xlb_drop_reason_name(d), s->drops[d]);
    for (int e = 0; e < XLB_EVENT_MAX; e++)
        if (s->events[e] != 0)
            print_message("  event %-25s %" PRIu64 "\n", xlb_event_counter_name(e), s->events[e]);
}

static void nat_robustness(void **state)
{
    struct robust *r = *state;
    struct xlb_burst_ctx *ctx = &r->f->ctx;
    double duration = DURATION_S;
    const char *env = getenv("XLB_NAT_ROBUSTNESS_SECONDS");
    if (env != NULL && *env != '\0')
        duration = atof(env);
    print_message("seed %#" PRIx64 ", %.0f s or %llu frames\n",
                  env_u64("XLB_NAT_ROBUSTNESS_SEED", 0x5eed), duration, MAX_FRAMES);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct rte_mbuf *pkts[XLB_RX_BURST];
    bool clean[XLB_RX_BURST];

    for (r->bursts = 0; r->frames_rx < MAX_FRAMES; r->bursts++) {
        if ((r->bursts & 63) == 0 && seconds_since(&start) >= duration)
            break;
        if (r->bursts % PHASE_BURST == 0)
            new_phase(r);
        advance_clock(r);
        uint64_t closed = event(r, XLB_EVENT_FLOWS_CLOSED);
        xlb_nat_expire(ctx); /* once per poll loop, as the worker does */
        check_expiry_progress(r, closed);
        xlb_nat_flush_step(ctx);

        unsigned n = fill(r, pkts, clean, r->phase.burst_max);
        r->frames_rx += n;
        xlb_burst_process(ctx, r->f->snap, 0, pkts, (uint16_t)n);
        collect_tx(r, pkts, clean, n);
        if (below(r, 16) == 0)
            redirected_burst(r);
        drain_rings(r);

        /* Every mbuf is back after each loop: the pool never runs dry. */
        assert_int_equal(rte_mempool_avail_count(r->f->pool), POOL_SIZE);
        assert_true(r->flows->n_used <= FLOWS);
        if (r->flows->n_used > r->max_used)
            r->max_used = r->flows->n_used;
        if (r->bursts % CHECK_EVERY == 0) {
            check_table(r);
            check_accounting(r);
        }
    }
    double elapsed = seconds_since(&start);
    set_config(r, 0);
    check_table(r);
    check_accounting(r);
    print_totals(r, elapsed);
    expire_everything(r);
    print_message("after expiry: %u flows, %u + %u SNAT ports free\n", r->flows->n_used,
                  r->flows->n_free_ports[0], r->flows->n_free_ports[1]);

    assert_true(elapsed >= duration || r->frames_rx >= MAX_FRAMES);
    /* Every path of the NAT was taken. */
    const struct xlb_worker_stats *s = &r->f->stats;
    static const enum xlb_drop_reason reached[] = {
        XLB_DROP_L2_TRUNCATED,        XLB_DROP_VLAN_TRUNCATED,       XLB_DROP_NOT_OUR_MAC,
        XLB_DROP_IPV4_MALFORMED,      XLB_DROP_IPV4_BAD_CHECKSUM,    XLB_DROP_IPV4_FRAGMENT,
        XLB_DROP_IPV6_MALFORMED,      XLB_DROP_IPV6_EXT_HEADER,      XLB_DROP_NOT_OUR_ADDRESS,
        XLB_DROP_TCP_MALFORMED,       XLB_DROP_TCP_NO_SERVICE,       XLB_DROP_TCP_NO_FLOW,
        XLB_DROP_NO_BACKEND,          XLB_DROP_LB_CIRCUIT_OPEN,      XLB_DROP_BACKEND_FAMILY,
        XLB_DROP_NEXT_HOP_UNRESOLVED, XLB_DROP_SYN_POOL_FULL,        XLB_DROP_SNAT_PORTS_EXHAUSTED,
        XLB_DROP_FLOW_OTHER_WORKER,   XLB_DROP_PROTOCOL_UNSUPPORTED, XLB_DROP_ICMP_MALFORMED,
    };
    for (size_t i = 0; i < sizeof(reached) / sizeof(reached[0]); i++)
        if (s->drops[reached[i]] == 0)
            fail_msg("drop reason %s never reached", xlb_drop_reason_name(reached[i]));
    assert_true(event(r, XLB_EVENT_FLOWS_CREATED) > 0);
    assert_true(event(r, XLB_EVENT_TCP_RESETS_SENT) > 0);
    assert_true(event(r, XLB_EVENT_REDIRECTED_OUT) > 0);
    assert_true(event(r, XLB_EVENT_FLOWS_EVICTED) > 0);
    assert_true(event(r, XLB_EVENT_FLOWS_FLUSHED) > 0);
    assert_true(event(r, XLB_EVENT_ICMP_ERRORS_TRANSLATED) > 0);
    assert_true(event(r, XLB_EVENT_ECHO_REPLIES) > 0);
    assert_int_equal(r->max_used, FLOWS);
    assert_true(r->load->endpoints[7].succeeded > 0 && r->load->endpoints[7].failed > 0);
    assert_true(r->load->endpoints[9].succeeded > 0 && r->load->endpoints[9].failed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(nat_robustness, setup, teardown),
    };
    return cmocka_run_group_tests_name("nat_robustness", tests, NULL, NULL);
}
