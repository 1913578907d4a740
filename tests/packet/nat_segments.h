/*
 * The NAT case tests' small fixture and exact segments: a flow table of FLOWS entries, one
 * round-robin cluster of one backend per VIP (so every pick is deterministic), TCP segments as
 * the client and the backends send them and as xlb must forward them, and the checks that a
 * segment is forwarded byte for byte or dropped for a reason.
 */
#ifndef XLB_NAT_SEGMENTS_H
#define XLB_NAT_SEGMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nat_fixture.h"

#define CLIENT_PORT  40000
#define BACKEND4     "198.18.0.21"
#define BACKEND6     "2001:2::21"
#define PORT_COUNT   100
#define FLOWS        8
#define SLOT4        7 /* endpoint slot of the IPv4 backend */
#define SLOT6        8
#define START_TSC    5000ull
#define SEQ_CLIENT   0x01020304u
#define SEQ_BACKEND  0x0a0b0c0du
#define PAYLOAD_TEXT "GET / HTTP/1.1\r\nHost: nat.test\r\n\r\n"

#define NAT_BACKEND6_MAC                                                                           \
    {                                                                                              \
        {                                                                                          \
            0x02, 0x00, 0x00, 0x00, 0x00, 0x62                                                     \
        }                                                                                          \
    }

/* cmocka set-up and tear-down: *state is a struct nat_fixture. */
/* A NAT fixture with the two clusters the NAT tests share (one IPv4, one IPv6 backend, round
 * robin), `flows` entries per worker, and a circuit breaker on the IPv4 cluster when
 * max_requests4 is not 0. */
struct nat_fixture *nat_fixture_two_clusters(const char *name, uint32_t flows, unsigned n_workers,
                                             uint32_t max_requests4);
int nat_setup(void **state);
int nat_teardown(void **state);

struct seg {
    const struct rte_ether_addr *eth_src, *eth_dst;
    const char *src, *dst;
    uint16_t sport, dport;
    uint8_t flags;
    uint32_t seq, ack;
    const char *payload; /* NULL: none */
    uint16_t window;     /* 0: 29200 */
    bool zero_window;    /* a window of 0 instead */
    uint8_t wscale;      /* SYNs: 1 + the window scale shift offered; 0: no such option */
    uint16_t mss;        /* SYNs: the MSS offered; 0: 1460 */
    bool mss_after_nop;  /* SYNs: NOP, MSS, NOP, NOP, NOP (the MSS value off 16-bit words) */
    bool nic_checked;    /* received with RTE_MBUF_F_RX_IP_CKSUM_GOOD, as a NIC sets it */
};

bool is_v6(const struct seg *s);
/* The segment's frame into buf (an MSS option on SYNs, aligned or after a NOP, and a window
 * scale if asked); returns its length. */
size_t tcp_frame(uint8_t *buf, const struct seg *s);

/* The segment as the client sends it to the VIP, and as the backend sends it to the SNAT, in
 * a connection where neither has sent data yet: the SYN at the side's ISN, anything else one
 * further, and the ACK (when set) of the other side's SYN. */
struct seg from_client4(uint16_t sport, uint8_t flags, const char *payload);
struct seg from_client6(uint16_t sport, uint8_t flags, const char *payload);
struct seg from_backend4(uint16_t snat_port, uint8_t flags, const char *payload);
struct seg from_backend6(uint16_t snat_port, uint8_t flags, const char *payload);
/* What xlb must emit for a client segment: SNAT:port -> backend, from the port's MAC. */
struct seg to_backend(struct seg s, uint16_t snat_port);
/* What xlb must emit for a backend segment: VIP -> client, to the client's MAC. */
struct seg to_client(struct seg s, uint16_t client_port);

/* tx frame `index` must be `expected`, byte for byte, with valid checksums. */
void check_forwarded(struct nat_fixture *n, unsigned index, const struct seg *expected);

/* Send `in`; exactly one frame must come out, byte for byte `expected`. */
void forward(struct nat_fixture *n, const struct seg *in, const struct seg *expected);

/* One burst of `count` segments; each must come out as its expected segment, in order. */
void forward_burst(struct nat_fixture *n, const struct seg *in, const struct seg *expected,
                   unsigned count);
/*
 * Send a client segment of no known connection and check the RST that comes back: to the
 * client's MAC, VIP -> client, no payload, checksums valid, RFC 9293's sequence numbers.
 */
void answered_with_reset(struct nat_fixture *n, const struct seg *in);
/* The client's SYN from client_port, which must reach the IPv4 backend from snat_port;
 * returns the SYN as sent. */
struct seg client_syn4(struct nat_fixture *n, uint16_t client_port, uint16_t snat_port);
/* The IPv4 backend's SYN-ACK to snat_port, which must reach the client's client_port from the
 * VIP; returns the SYN-ACK as sent. */
struct seg backend_syn_ack4(struct nat_fixture *n, uint16_t snat_port, uint16_t client_port);
/* The client's ACK of the backend's SYN-ACK, which must reach the IPv4 backend from
 * snat_port; returns the ACK as sent. Until it, an answered flow is still half-open. */
struct seg client_ack4(struct nat_fixture *n, uint16_t client_port, uint16_t snat_port);
/* Send `in` and expect it dropped, with this reason counted once more. */
void dropped(struct nat_fixture *n, const struct seg *in, enum xlb_drop_reason reason);

/* The flow by its client key, or by its backend key; NULL if there is none. */
struct xlb_flow *client_flow(struct nat_fixture *n, const char *client, uint16_t sport);
struct xlb_flow *backend_flow(struct nat_fixture *n, bool v6, uint16_t snat_port);

#endif
