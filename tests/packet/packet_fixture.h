/* Shared fixture for packet tests: EAL without hugepages or PCI, an mbuf pool, a snapshot with
 * one port, and builders for the frames the tests send. */
#ifndef XLB_PACKET_FIXTURE_H
#define XLB_PACKET_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "burst.h"
#include "xlb_shared.h"

#define FIX_PORT_MAC                                                                               \
    {                                                                                              \
        {                                                                                          \
            0x02, 0x00, 0x00, 0x00, 0x00, 0x10                                                     \
        }                                                                                          \
    }
#define FIX_PEER_MAC                                                                               \
    {                                                                                              \
        {                                                                                          \
            0x02, 0x00, 0x00, 0x00, 0x00, 0x02                                                     \
        }                                                                                          \
    }
#define FIX_GW_MAC                                                                                 \
    {                                                                                              \
        {                                                                                          \
            0x02, 0x00, 0x00, 0x00, 0x00, 0x01                                                     \
        }                                                                                          \
    }
#define FIX_PORT4 "198.18.0.10"
#define FIX_PORT6 "2001:2::10"
#define FIX_VIP4  "198.18.0.100"
#define FIX_VIP6  "2001:2::100"
#define FIX_PEER4 "198.18.0.2"
#define FIX_PEER6 "2001:2::2"
#define FIX_GW4   "198.18.0.1"
#define FIX_GW6   "2001:2::1"

struct fixture {
    struct rte_mempool *pool;
    struct xlb_snapshot *snap;
    struct rte_ring *to_control;
    struct xlb_worker_stats stats;
    struct xlb_burst_ctx ctx;
};

/* Once per process: EAL with --no-huge --no-pci and a private file prefix. */
void fixture_eal_init(void);
/* A fresh pool, snapshot (port with FIX_PORT4/6 on /24 and /64, VIPs, unresolved gateways), and
 * context with zeroed counters. */
struct fixture *fixture_create(void);
void fixture_destroy(struct fixture *f);

/* A snapshot like the fixture's (a new generation), with or without the VIPs. */
struct xlb_snapshot *fixture_make_snapshot(bool with_vips);

/* Run one frame through the burst function; returns the number of frames queued for tx. */
unsigned fixture_send(struct fixture *f, const void *frame, size_t len);
/* The i-th transmitted frame's bytes and length. */
const uint8_t *fixture_tx(struct fixture *f, unsigned i, size_t *len);
/* Free every queued tx frame. */
void fixture_clear_tx(struct fixture *f);

uint64_t fixture_drops(const struct fixture *f, enum xlb_drop_reason reason);
uint64_t fixture_total_drops(const struct fixture *f);

/* Frame builders: each writes into buf and returns the frame length. */
size_t build_arp(uint8_t *buf, uint16_t op, const char *sender, const char *target,
                 const struct rte_ether_addr *eth_dst, const struct rte_ether_addr *sender_mac);
size_t build_icmp4_echo(uint8_t *buf, const char *src, const char *dst, size_t payload,
                        size_t pad_to);
size_t build_icmp6_echo(uint8_t *buf, const char *src, const char *dst, size_t payload);
size_t build_ns(uint8_t *buf, const char *src, const char *target, bool with_slla,
                uint8_t hop_limit);
size_t build_na(uint8_t *buf, const char *target, const struct rte_ether_addr *mac);
size_t build_tcp4(uint8_t *buf, const char *src, const char *dst, uint16_t dport, uint8_t flags);
/* Insert one 802.1Q tag after the MAC addresses; returns the new length. */
size_t add_vlan(uint8_t *buf, size_t len, uint16_t vid);

#endif
