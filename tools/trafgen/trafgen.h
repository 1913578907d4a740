/*
 * xlb-trafgen: a DPDK traffic generator for driving xlbd over memif (or any DPDK port).
 * Modes: SYN floods and many-flow ranges of TCP segments (source address and port ranges,
 * iterated like pktgen-dpdk's range mode), and replay of a classic pcap file. It answers ARP
 * for its own addresses, can stand in for the backends (ARP and a SYN-ACK for each SYN that
 * xlbd forwards to them), and counts what comes back by kind.
 */
#ifndef XLB_TRAFGEN_H
#define XLB_TRAFGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ether.h>

enum tg_mode {
    TG_MODE_NONE,
    TG_MODE_SYN,
    TG_MODE_RANGE,
    TG_MODE_PCAP,
};

/* An inclusive range of host-order values: addresses or ports. */
struct tg_range {
    uint32_t lo, hi;
};

struct tg_options {
    enum tg_mode mode;
    bool have_src_ip, have_src_port, have_dst, have_backends;
    struct tg_range src_ip, src_port, backend_ip;
    uint32_t dst_ip; /* host order */
    uint16_t dst_port;
    uint8_t tcp_flags; /* range mode; SYN in syn mode */
    uint16_t payload;  /* TCP payload bytes (zeros) */
    bool random;       /* pick tuples at random within the ranges instead of in order */
    uint64_t seed;
    uint64_t rate_pps; /* 0: as fast as the port takes them */
    uint64_t count;    /* 0: one pass over the ranges or the pcap file */
    double duration_s, warmup_s, linger_s, link_timeout_s;
    const char *pcap;
    bool keep_macs;
    bool have_src_mac, have_dst_mac;
    struct rte_ether_addr src_mac, dst_mac;
    const char *memif; /* socket path: adds --vdev=net_memif0,role=client,... */
    unsigned memif_id;
    const char *port_name; /* NULL: the first port */
    unsigned burst;
    unsigned idle_sleep_us;
    const char *output; /* also write the JSON summary here */
    int n_eal;
    char **eal; /* EAL arguments given after "--" */
};

/* 0, or -1 with a message in err (a usage error). help is set for --help. */
int tg_parse_options(int argc, char **argv, struct tg_options *o, bool *help, char *err,
                     size_t len);
void tg_usage(FILE *out);

int tg_parse_ipv4_range(const char *s, struct tg_range *out);
int tg_parse_port_range(const char *s, struct tg_range *out);
int tg_parse_tcp_flags(const char *s, uint8_t *out);

static inline uint64_t tg_range_size(const struct tg_range *r)
{
    return (uint64_t)r->hi - r->lo + 1;
}

static inline bool tg_range_has(const struct tg_range *r, uint32_t v)
{
    return v >= r->lo && v <= r->hi;
}

/* The i-th tuple of the ranges: ports vary fastest, then addresses; wraps around. */
void tg_tuple(const struct tg_options *o, uint64_t i, uint32_t *ip, uint16_t *port);

/* ---- frames (frames.c) ---- */

#define TG_MIN_FRAME 60 /* Ethernet without FCS */

enum tg_kind {
    TG_KIND_ARP_REQUEST,
    TG_KIND_ARP_REPLY,
    TG_KIND_ICMP_ECHO_REPLY,
    TG_KIND_ICMP_OTHER,
    TG_KIND_TCP_SYN_ACK,
    TG_KIND_TCP_RST,
    TG_KIND_TCP_SYN, /* a SYN xlbd forwarded to a backend address */
    TG_KIND_TCP_OTHER,
    TG_KIND_UDP,
    TG_KIND_IPV4_OTHER,
    TG_KIND_IPV6,
    TG_KIND_OTHER,
    TG_KIND_COUNT,
};

extern const char *const tg_kind_names[TG_KIND_COUNT];

struct tg_tcp_spec {
    struct rte_ether_addr src_mac, dst_mac;
    uint32_t src_ip, dst_ip; /* host order */
    uint16_t src_port, dst_port;
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t payload;
};

/* The frame's length (at least TG_MIN_FRAME), or 0 when it does not fit in cap. */
uint32_t tg_build_tcp(uint8_t *buf, uint32_t cap, const struct tg_tcp_spec *s);

/* An ARP request (or gratuitous ARP when sip == tip) to broadcast; TG_MIN_FRAME bytes. */
uint32_t tg_build_arp_request(uint8_t *buf, const struct rte_ether_addr *sha, uint32_t sip,
                              uint32_t tip);

/* What a received frame is; *l3 is set to its IPv4 header or ARP header when there is one. */
enum tg_kind tg_classify(const uint8_t *frame, uint32_t len, uint32_t *l3_offset);

/* Turn an ARP request in place into the reply "tip is at mac"; the new length. */
uint32_t tg_arp_reply_in_place(uint8_t *frame, uint32_t l3_offset,
                               const struct rte_ether_addr *mac);

/* Turn a SYN in place into its SYN-ACK (no options, no payload); the new length. */
uint32_t tg_syn_ack_in_place(uint8_t *frame, uint32_t l3_offset, const struct rte_ether_addr *mac,
                             uint32_t isn);

/* The sender's MAC when the frame is an ARP reply for ip (host order). */
bool tg_arp_reply_for(const uint8_t *frame, uint32_t len, uint32_t ip, struct rte_ether_addr *mac);

/* The target address (host order) of an ARP request. */
uint32_t tg_arp_target(const uint8_t *frame, uint32_t l3_offset);

/* The destination address (host order) of an IPv4 frame. */
uint32_t tg_ipv4_dst(const uint8_t *frame, uint32_t l3_offset);

/* ---- pcap (pcap_file.c) ---- */

#define TG_PCAP_MAX_PACKETS (1u << 20)
#define TG_PCAP_MAX_BYTES   (256u << 20)

struct tg_pcap {
    uint8_t *data;
    uint32_t *offset, *length;
    uint32_t n;
    uint32_t skipped; /* longer than max_frame */
};

/* Read a classic pcap file of Ethernet frames; 0, or -1 with a message in err. */
int tg_pcap_load(const char *path, uint32_t max_frame, struct tg_pcap *out, char *err, size_t len);
void tg_pcap_free(struct tg_pcap *p);

#endif
