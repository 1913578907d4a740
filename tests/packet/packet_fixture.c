#include "packet_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "../test_eal.h"
#include "xlb_msg.h"
#include "xlb_const.h"

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;
static const struct rte_ether_addr peer_mac = FIX_PEER_MAC;

void fixture_eal_init(void)
{
    static bool done;
    if (done)
        return;
    int rc = test_eal_init("packet-test", 256);
    if (rc == -1)
        fail_msg("rte_eal_init failed");
    if (rc == -2)
        fail_msg("cannot remove %s: %s", rte_eal_get_runtime_dir(), strerror(errno));
    done = true;
}

static void add(struct xlb_snapshot *snap, const char *text, uint8_t role)
{
    struct xlb_addr_entry e = {.role = role, .port_mask = 1};
    assert_int_equal(xlb_addr_parse(text, &e.addr), 0);
    assert_int_equal(xlb_snapshot_add_address(snap, &e), 0);
}

struct xlb_snapshot *fixture_make_snapshot(bool with_vips)
{
    static uint64_t generation;
    struct xlb_snapshot *snap = xlb_snapshot_alloc(++generation, 16, 2);
    assert_non_null(snap);
    snap->n_ports = 1;
    struct xlb_port_view *port = &snap->ports[0];
    port->port_id = 0;
    rte_ether_addr_copy(&port_mac, &port->mac);
    port->n_prefixes = 2;
    xlb_prefix_parse(FIX_PORT4 "/24", &port->prefixes[0]);
    xlb_prefix_parse(FIX_PORT6 "/64", &port->prefixes[1]);
    add(snap, FIX_PORT4, XLB_ROLE_PORT_ADDRESS);
    add(snap, FIX_PORT6, XLB_ROLE_PORT_ADDRESS);
    if (with_vips) {
        add(snap, FIX_VIP4, XLB_ROLE_VIP);
        add(snap, FIX_VIP6, XLB_ROLE_VIP);
    }
    add(snap, FIX_GW4, XLB_ROLE_NEIGHBOUR);
    add(snap, FIX_GW6, XLB_ROLE_NEIGHBOUR);
    return snap;
}

struct fixture *fixture_create(void)
{
    static unsigned serial;
    char name[32];
    fixture_eal_init();
    struct fixture *f = calloc(1, sizeof(*f));
    snprintf(name, sizeof(name), "fixture_pool_%u", serial);
    f->pool = rte_pktmbuf_pool_create(name, 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    snprintf(name, sizeof(name), "fixture_ring_%u", serial++);
    f->to_control = xlb_msg_ring_create(name, SOCKET_ID_ANY);
    assert_non_null(f->pool);
    assert_non_null(f->to_control);
    f->snap = fixture_make_snapshot(true);
    xlb_burst_ctx_init(&f->ctx, &(struct xlb_burst_params){
                                    .stats = &f->stats,
                                    .to_control = f->to_control,
                                    .pool = f->pool,
                                });
    return f;
}

void fixture_clear_tx(struct fixture *f)
{
    for (unsigned p = 0; p < XLB_MAX_PORTS; p++) {
        rte_pktmbuf_free_bulk(f->ctx.tx[p].pkts, f->ctx.tx[p].n);
        f->ctx.tx[p].n = 0;
    }
}

void fixture_destroy(struct fixture *f)
{
    fixture_clear_tx(f);
    /* Every mbuf must be back: the burst function leaks none. */
    assert_int_equal(rte_mempool_avail_count(f->pool), 1023);
    rte_mempool_free(f->pool);
    rte_ring_free(f->to_control);
    xlb_snapshot_free(f->snap);
    free(f);
}

unsigned fixture_send(struct fixture *f, const void *frame, size_t len)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(f->pool);
    assert_non_null(m);
    void *data = rte_pktmbuf_append(m, (uint16_t)len);
    if (len > 0)
        memcpy(data, frame, len);
    unsigned before = f->ctx.tx[0].n;
    xlb_burst_process(&f->ctx, f->snap, 0, &m, 1);
    return f->ctx.tx[0].n - before;
}

const uint8_t *fixture_tx(struct fixture *f, unsigned i, size_t *len)
{
    assert_true(i < f->ctx.tx[0].n);
    struct rte_mbuf *m = f->ctx.tx[0].pkts[i];
    *len = rte_pktmbuf_data_len(m);
    return rte_pktmbuf_mtod(m, const uint8_t *);
}

uint64_t fixture_drops(const struct fixture *f, enum xlb_drop_reason reason)
{
    return f->stats.drops[reason];
}

uint64_t fixture_total_drops(const struct fixture *f)
{
    uint64_t sum = 0;
    for (int d = 0; d < XLB_DROP_MAX; d++)
        sum += f->stats.drops[d];
    return sum;
}

/* ---- frame builders ---- */

static size_t put_eth(uint8_t *buf, const struct rte_ether_addr *dst,
                      const struct rte_ether_addr *src, uint16_t type)
{
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
    rte_ether_addr_copy(dst, &eth->dst_addr);
    rte_ether_addr_copy(src, &eth->src_addr);
    eth->ether_type = htons(type);
    return sizeof(*eth);
}

static uint32_t ip4(const char *text)
{
    struct in_addr a;
    assert_int_equal(inet_pton(AF_INET, text, &a), 1);
    return a.s_addr;
}

static void ip6(const char *text, uint8_t out[16])
{
    assert_int_equal(inet_pton(AF_INET6, text, out), 1);
}

size_t build_arp(uint8_t *buf, uint16_t op, const char *sender, const char *target,
                 const struct rte_ether_addr *eth_dst, const struct rte_ether_addr *sender_mac)
{
    memset(buf, 0, 60);
    size_t off = put_eth(buf, eth_dst, sender_mac, RTE_ETHER_TYPE_ARP);
    struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(buf + off);
    arp->arp_hardware = htons(RTE_ARP_HRD_ETHER);
    arp->arp_protocol = htons(RTE_ETHER_TYPE_IPV4);
    arp->arp_hlen = 6;
    arp->arp_plen = 4;
    arp->arp_opcode = htons(op);
    rte_ether_addr_copy(sender_mac, &arp->arp_data.arp_sha);
    arp->arp_data.arp_sip = ip4(sender);
    arp->arp_data.arp_tip = ip4(target);
    return 60; /* padded to the minimum frame, as on the wire */
}

static size_t put_ipv4(uint8_t *buf, const char *src, const char *dst, uint8_t proto, size_t l4_len)
{
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)buf;
    memset(ip, 0, sizeof(*ip));
    ip->version_ihl = 0x45;
    ip->total_length = htons((uint16_t)(sizeof(*ip) + l4_len));
    ip->time_to_live = 61;
    ip->next_proto_id = proto;
    ip->src_addr = ip4(src);
    ip->dst_addr = ip4(dst);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    return sizeof(*ip);
}

size_t build_icmp4_echo(uint8_t *buf, const char *src, const char *dst, size_t payload,
                        size_t pad_to)
{
    size_t off = put_eth(buf, &port_mac, &peer_mac, RTE_ETHER_TYPE_IPV4);
    size_t icmp_len = sizeof(struct rte_icmp_hdr) + payload;
    off += put_ipv4(buf + off, src, dst, IPPROTO_ICMP, icmp_len);
    struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(buf + off);
    memset(icmp, 0, sizeof(*icmp));
    icmp->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
    icmp->icmp_ident = htons(0x1234);
    icmp->icmp_seq_nb = htons(7);
    for (size_t i = 0; i < payload; i++)
        buf[off + sizeof(*icmp) + i] = (uint8_t)(i * 7);
    icmp->icmp_cksum = (uint16_t)~rte_raw_cksum(icmp, icmp_len);
    off += icmp_len;
    while (off < pad_to)
        buf[off++] = 0xee; /* Ethernet padding after the datagram */
    return off;
}

static size_t put_ipv6(uint8_t *buf, const char *src, const char *dst, uint8_t proto, size_t l4_len,
                       uint8_t hops)
{
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)buf;
    memset(ip, 0, sizeof(*ip));
    ip->vtc_flow = htonl(6u << 28);
    ip->payload_len = htons((uint16_t)l4_len);
    ip->proto = proto;
    ip->hop_limits = hops;
    ip6(src, ip->src_addr);
    ip6(dst, ip->dst_addr);
    return sizeof(*ip);
}

size_t build_icmp6_echo(uint8_t *buf, const char *src, const char *dst, size_t payload)
{
    size_t off = put_eth(buf, &port_mac, &peer_mac, RTE_ETHER_TYPE_IPV6);
    size_t icmp_len = 8 + payload;
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(buf + off);
    off += put_ipv6(buf + off, src, dst, IPPROTO_ICMPV6, icmp_len, 64);
    uint8_t *icmp = buf + off;
    memset(icmp, 0, icmp_len);
    icmp[0] = 128;
    icmp[5] = 1;
    for (size_t i = 0; i < payload; i++)
        icmp[8 + i] = (uint8_t)i;
    *(uint16_t *)(icmp + 2) = rte_ipv6_udptcp_cksum(ip, icmp);
    return off + icmp_len;
}

size_t build_ns(uint8_t *buf, const char *src, const char *target, bool with_slla,
                uint8_t hop_limit)
{
    uint8_t t[16], group[16] = {0xff, 0x02, [11] = 0x01, [12] = 0xff};
    ip6(target, t);
    memcpy(group + 13, t + 13, 3);
    struct rte_ether_addr group_mac = {{0x33, 0x33, 0xff, t[13], t[14], t[15]}};
    size_t off = put_eth(buf, &group_mac, &peer_mac, RTE_ETHER_TYPE_IPV6);
    size_t icmp_len = 24 + (with_slla ? 8 : 0);
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(buf + off);
    off += put_ipv6(buf + off, src, "::", IPPROTO_ICMPV6, icmp_len, hop_limit);
    memcpy(ip->dst_addr, group, 16);
    uint8_t *icmp = buf + off;
    memset(icmp, 0, icmp_len);
    icmp[0] = 135;
    memcpy(icmp + 8, t, 16);
    if (with_slla) {
        icmp[24] = 1;
        icmp[25] = 1;
        memcpy(icmp + 26, peer_mac.addr_bytes, 6);
    }
    *(uint16_t *)(icmp + 2) = rte_ipv6_udptcp_cksum(ip, icmp);
    return off + icmp_len;
}

size_t build_na(uint8_t *buf, const char *target, const struct rte_ether_addr *mac)
{
    size_t off = put_eth(buf, &port_mac, mac, RTE_ETHER_TYPE_IPV6);
    size_t icmp_len = 32;
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(buf + off);
    off += put_ipv6(buf + off, target, FIX_PORT6, IPPROTO_ICMPV6, icmp_len, 255);
    uint8_t *icmp = buf + off;
    memset(icmp, 0, icmp_len);
    icmp[0] = 136;
    icmp[4] = 0x60; /* solicited, override */
    ip6(target, icmp + 8);
    icmp[24] = 2;
    icmp[25] = 1;
    memcpy(icmp + 26, mac->addr_bytes, 6);
    *(uint16_t *)(icmp + 2) = rte_ipv6_udptcp_cksum(ip, icmp);
    return off + icmp_len;
}

size_t build_tcp4(uint8_t *buf, const char *src, const char *dst, uint16_t dport, uint8_t flags)
{
    size_t off = put_eth(buf, &port_mac, &peer_mac, RTE_ETHER_TYPE_IPV4);
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + off);
    off += put_ipv4(buf + off, src, dst, IPPROTO_TCP, sizeof(struct rte_tcp_hdr));
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(buf + off);
    memset(tcp, 0, sizeof(*tcp));
    tcp->src_port = htons(40000);
    tcp->dst_port = htons(dport);
    tcp->data_off = 5 << 4;
    tcp->tcp_flags = flags;
    tcp->rx_win = htons(65535);
    tcp->cksum = rte_ipv4_udptcp_cksum(ip, tcp);
    return off + sizeof(*tcp);
}

size_t add_vlan(uint8_t *buf, size_t len, uint16_t vid)
{
    memmove(buf + 16, buf + 12, len - 12);
    buf[12] = 0x81;
    buf[13] = 0x00;
    buf[14] = (uint8_t)(vid >> 8);
    buf[15] = (uint8_t)vid;
    return len + 4;
}
