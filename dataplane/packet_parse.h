/* Bounds-checked views of a received frame: nothing past the frame's end is ever read. */
#ifndef XLB_PACKET_PARSE_H
#define XLB_PACKET_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "burst.h"

struct xlb_frame {
    struct rte_mbuf *m;
    struct rte_ether_hdr *eth;
    uint16_t l2_len;     /* Ethernet header plus VLAN tags */
    uint16_t ether_type; /* innermost, host order */
    uint8_t *l3;
    uint32_t l3_avail; /* bytes from l3 to the end of the frame */
};

/* Ethernet and up to two VLAN tags; accepts frames addressed to port_mac, broadcast or
 * multicast. Returns XLB_VERDICT_TX when parsed, else a drop reason. */
xlb_verdict xlb_parse_ethernet(struct rte_mbuf *m, const struct rte_ether_addr *port_mac,
                               struct xlb_frame *frame);

/* Make the frame end exactly at l3 + l3_len; false if the mbuf has no room. */
bool xlb_frame_set_l3_len(struct xlb_frame *frame, uint32_t l3_len);

/* Address the frame back to where it came from, from the port's MAC. */
void xlb_frame_reply_ethernet(struct xlb_frame *frame, const struct rte_ether_addr *port_mac);

/* A TCP header's length with its options, from its data offset. */
static inline uint32_t xlb_tcp_header_len(const struct rte_tcp_hdr *tcp)
{
    return (uint32_t)(tcp->data_off >> 4) * 4;
}

/* The bytes of TCP options after the fixed header. */
static inline uint32_t xlb_tcp_options_len(const struct rte_tcp_hdr *tcp)
{
    return xlb_tcp_header_len(tcp) - (uint32_t)sizeof(*tcp);
}

/* The payload of a segment of tcp_len bytes (header and payload; the header checked to fit). */
static inline uint32_t xlb_tcp_payload_len(const struct rte_tcp_hdr *tcp, uint32_t tcp_len)
{
    return tcp_len - xlb_tcp_header_len(tcp);
}

/* Where a segment's payload starts. */
static inline uint8_t *xlb_tcp_payload(struct rte_tcp_hdr *tcp)
{
    return (uint8_t *)tcp + xlb_tcp_header_len(tcp);
}

#endif
