/*
 * The incremental checksum updates (dataplane/checksum.h) against DPDK's full computation: a
 * TCP segment over IPv4 or IPv6 whose addresses and ports the NAT rewrites, patched with
 * xlb_csum_diff and xlb_csum_apply, must carry the checksums a full recomputation gives, for
 * random headers and for the values where one's-complement arithmetic has its edge cases (all
 * ones, all zeros, sums that carry out of every half).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "checksum.h"

#define RANDOM_ROUNDS 200000
#define PAYLOAD       37 /* odd, so the full sum ends on a half word */

struct segment4 {
    struct rte_ipv4_hdr ip;
    struct rte_tcp_hdr tcp;
    uint8_t payload[PAYLOAD];
} __attribute__((packed));

struct segment6 {
    struct rte_ipv6_hdr ip;
    struct rte_tcp_hdr tcp;
    uint8_t payload[PAYLOAD];
} __attribute__((packed));

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Random bytes; now and then all ones or all zeros, the one's-complement edge values. */
static void fill(void *out, size_t len)
{
    uint8_t *p = out;
    uint64_t mode = next_random() % 8;
    for (size_t i = 0; i < len; i++)
        p[i] = mode == 0 ? 0xff : mode == 1 ? 0x00 : (uint8_t)next_random();
}

/* A checksum as a value of its one's-complement class, for comparing with DPDK's computation
 * from scratch: 0x0000 and 0xffff both say zero, and either verifies. */
static uint16_t csum_class(uint16_t csum)
{
    return csum == 0xffff ? 0 : csum;
}

static void check_ipv4(struct segment4 *s)
{
    uint16_t ip_csum = s->ip.hdr_checksum, tcp_csum = s->tcp.cksum;
    s->ip.hdr_checksum = 0;
    uint16_t full_ip = rte_ipv4_cksum(&s->ip);
    s->ip.hdr_checksum = ip_csum;
    s->tcp.cksum = 0;
    uint16_t full_tcp = rte_ipv4_udptcp_cksum(&s->ip, &s->tcp);
    s->tcp.cksum = tcp_csum;
    assert_int_equal(csum_class(ip_csum), csum_class(full_ip));
    assert_int_equal(csum_class(tcp_csum), csum_class(full_tcp));
    assert_int_equal(rte_ipv4_udptcp_cksum_verify(&s->ip, &s->tcp), 0);
}

static void check_ipv6(struct segment6 *s)
{
    uint16_t tcp_csum = s->tcp.cksum;
    s->tcp.cksum = 0;
    uint16_t full_tcp = rte_ipv6_udptcp_cksum(&s->ip, &s->tcp);
    s->tcp.cksum = tcp_csum;
    assert_int_equal(csum_class(tcp_csum), csum_class(full_tcp));
    assert_int_equal(rte_ipv6_udptcp_cksum_verify(&s->ip, &s->tcp), 0);
}

/* A random segment with correct checksums. */
static void make_ipv4(struct segment4 *s)
{
    fill(s, sizeof(*s));
    s->ip.version_ihl = 0x45;
    s->ip.next_proto_id = IPPROTO_TCP;
    s->ip.total_length = rte_cpu_to_be_16(sizeof(*s));
    s->tcp.data_off = 0x50;
    s->ip.hdr_checksum = 0;
    s->ip.hdr_checksum = rte_ipv4_cksum(&s->ip);
    s->tcp.cksum = 0;
    s->tcp.cksum = rte_ipv4_udptcp_cksum(&s->ip, &s->tcp);
}

static void make_ipv6(struct segment6 *s)
{
    fill(s, sizeof(*s));
    s->ip.vtc_flow = rte_cpu_to_be_32(0x60000000);
    s->ip.proto = IPPROTO_TCP;
    s->ip.payload_len = rte_cpu_to_be_16(sizeof(*s) - sizeof(s->ip));
    s->tcp.data_off = 0x50;
    s->tcp.cksum = 0;
    s->tcp.cksum = rte_ipv6_udptcp_cksum(&s->ip, &s->tcp);
}

/* The NAT's rewrite, as dataplane/nat/ patches it: addresses in both checksums (IPv4), the
 * two ports as one 4-byte field in TCP's. */
static void rewrite(uint8_t *src_field, uint8_t *dst_field, uint8_t *ip_csum,
                    struct rte_tcp_hdr *tcp, size_t len)
{
    uint8_t src[16], dst[16];
    uint16_t ports[2], csum = tcp->cksum;
    fill(src, len);
    fill(dst, len);
    fill(ports, sizeof(ports));
    uint64_t addresses = xlb_csum_diff(src_field, src, len) + xlb_csum_diff(dst_field, dst, len);
    xlb_csum_apply(&csum, addresses + xlb_csum_diff(&tcp->src_port, ports, 4));
    tcp->cksum = csum;
    if (ip_csum != NULL) {
        uint16_t c;
        memcpy(&c, ip_csum, 2);
        xlb_csum_apply(&c, addresses);
        memcpy(ip_csum, &c, 2);
    }
    memcpy(src_field, src, len);
    memcpy(dst_field, dst, len);
    memcpy(&tcp->src_port, ports, 4);
}

static void ipv4_rewrites_match_a_full_recomputation(void **state)
{
    (void)state;
    for (int i = 0; i < RANDOM_ROUNDS; i++) {
        struct segment4 s;
        make_ipv4(&s);
        rewrite((uint8_t *)&s.ip.src_addr, (uint8_t *)&s.ip.dst_addr, (uint8_t *)&s.ip.hdr_checksum,
                &s.tcp, 4);
        check_ipv4(&s);
    }
}

static void ipv6_rewrites_match_a_full_recomputation(void **state)
{
    (void)state;
    for (int i = 0; i < RANDOM_ROUNDS; i++) {
        struct segment6 s;
        make_ipv6(&s);
        rewrite(s.ip.src_addr, s.ip.dst_addr, NULL, &s.tcp, 16);
        check_ipv6(&s);
    }
}

/* One field of 2 bytes at a time, as the MSS clamp and the ICMP translation patch. */
static void two_byte_replacements_match_too(void **state)
{
    (void)state;
    for (int i = 0; i < RANDOM_ROUNDS; i++) {
        struct segment4 s;
        make_ipv4(&s);
        uint16_t csum = s.tcp.cksum, window;
        fill(&window, 2);
        xlb_csum_replace(&csum, &s.tcp.rx_win, &window, 2);
        s.tcp.rx_win = window;
        s.tcp.cksum = csum;
        check_ipv4(&s);
    }
}

/* The fold itself, where every carry is taken: sums that are 0 modulo 0xffff, and the
 * largest a 64-bit accumulator of a few 32-bit words can reach. */
static void fold_takes_every_carry(void **state)
{
    (void)state;
    assert_int_equal(xlb_csum_fold(0), 0);
    assert_int_equal(xlb_csum_fold(0xffff), 0xffff);
    assert_int_equal(xlb_csum_fold(0x10000), 1);
    assert_int_equal(xlb_csum_fold(0xffffffffull), 0xffff);
    assert_int_equal(xlb_csum_fold(0x100000000ull), 1);
    assert_int_equal(xlb_csum_fold(0x1fffffffeull), 0xffff);
    for (int i = 0; i < RANDOM_ROUNDS; i++) {
        uint64_t sum = next_random() >> (next_random() % 32);
        uint64_t expected = sum % 0xffff;
        uint16_t folded = xlb_csum_fold(sum);
        assert_int_equal(folded % 0xffff, expected);
        assert_true(folded != 0 || sum == 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ipv4_rewrites_match_a_full_recomputation),
        cmocka_unit_test(ipv6_rewrites_match_a_full_recomputation),
        cmocka_unit_test(two_byte_replacements_match_too),
        cmocka_unit_test(fold_takes_every_carry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
