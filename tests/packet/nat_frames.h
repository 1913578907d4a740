/*
 * Frames of the NAT robustness run: built from a spec as a sender puts them on the wire (VLAN
 * tags, IPv4 options, an IPv6 extension header, TCP options and payload), and broken on
 * purpose (byte flips, truncation at every length, bad lengths, offsets and checksums).
 */
#ifndef XLB_NAT_FRAMES_H
#define XLB_NAT_FRAMES_H

#include "nat_robust.h"

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

/* The frame as a sender puts it on the wire: every length and checksum right. */
size_t frame_build(uint8_t *buf, const struct spec *s, struct layout *lo);
/* Break the frame in one to three ways; lo describes it as built. Returns the new length. */
size_t frame_mutate(struct robust *r, uint8_t *buf, size_t len, const struct layout *lo);

#endif
