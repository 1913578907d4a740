/*
 * bench_l7's wire: the connections as its client and backend see them, the segments they send
 * (built as a NIC would deliver them), what xlb sent back, and one burst through the worker's
 * calls of a poll loop. The measurements and reports are bench_l7.c's.
 */
#ifndef XLB_BENCH_L7_WIRE_H
#define XLB_BENCH_L7_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "bench_fwd_setup.h"
#include "xlb_tcp_options.h"

/* The client side's next hop, as the port sees its frames come in. */
extern const struct rte_ether_addr bench_l7_router;

struct conn {
    rte_be32_t client;
    rte_be16_t client_port;
    rte_be32_t snat, backend; /* once bound */
    rte_be16_t snat_port, backend_port;
    struct rte_ether_addr backend_mac;
    uint32_t c_isn, c_seq, c_ack; /* the client's next seq, and what it acknowledges */
    uint32_t c_tsval, c_tsecr;
    uint32_t b_isn, b_seq, b_ack; /* the backend's */
    uint32_t b_tsval, b_tsecr;
    uint32_t xlb_isn; /* the cookie */
    uint32_t next_stream;
    bool trailers_sent;
};

struct bench_l7 {
    struct xlb_l7_worker *l7;
    struct flows flows;
    uint32_t n;
    struct conn *conns;
    uint64_t clock_offset;          /* expiry runs move the worker's clock ahead of the TSC */
    uint64_t last_tsc, virtual_tsc; /* worker_clock's */
    uint32_t isn_serial;
};
extern struct bench_l7 L;

/* One segment, as the NIC would deliver it (valid IPv4 header checksum, offload flag set; the
 * TCP checksum is left 0: xlb never verifies it, it recomputes it on L7 segments). */
struct seg {
    const struct rte_ether_addr *src_mac;
    rte_be32_t src, dst;
    rte_be16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t window;
    const uint8_t *options;
    uint32_t options_len;
    const uint8_t *payload;
    uint32_t len;
};

void build(struct rte_mbuf *m, const struct seg *s);
/* A segment from the connection's client, or from its backend, with timestamps. */
void client_seg(struct rte_mbuf *m, struct conn *c, uint8_t flags, const uint8_t *payload,
                uint32_t len);
void backend_seg(struct rte_mbuf *m, struct conn *c, uint8_t flags, const uint8_t *payload,
                 uint32_t len);

/* The i-th segment xlb queued in the tx batch, parsed. */
struct sent {
    struct rte_ipv4_hdr *ip;
    struct rte_tcp_hdr *tcp;
    struct xlb_tcp_opts opts;
    uint32_t seq, ack, len;
    uint8_t flags;
};
void read_sent(unsigned i, struct sent *s);

/* The burst through the worker's calls of one poll loop; exactly want_tx segments must come
 * out and nothing be dropped. Returns the cycles they took. */
uint64_t process(struct rte_mbuf **pkts, uint16_t n, const char *when, unsigned want_tx);
/* The worker's clock for a TSC reading (bench_l7_wire.c says how it moves). */
uint64_t worker_clock(uint64_t tsc);
/* n mbufs from the bench's pool. */
void alloc(struct rte_mbuf **pkts, unsigned n);

#endif
