/*
 * The NAT robustness run's shared state: the fixture it runs on, the random number generator,
 * the client connections it remembers, the current phase, and the totals the checks compare
 * with the worker's counters. test_nat_robustness.c describes the run.
 */
#ifndef XLB_NAT_ROBUST_H
#define XLB_NAT_ROBUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "hostile_frames.h"
#include "nat_fixture.h"

#define BACKEND4A   "198.18.0.21"
#define BACKEND4B   "198.18.0.22"
#define BACKEND6A   "2001:2::21"
#define BACKEND6B   "2001:2::22"
#define FLOWS       4096
#define PORT_COUNT  3000 /* per SNAT address: v4 alone can exhaust its ports before the table */
#define N_WORKERS   2    /* ports of worker 1's slice are redirected; above it, nobody's */
#define CLUSTERMIX  5
#define MAX_REQ6    1200 /* circuit breaker of the IPv6 cluster: opens before the table fills */
#define START_TSC   1000000ull
#define REMEMBERED  8192 /* client connections kept to send more segments on */
#define MAX_PAYLOAD 1200

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
    struct nat_fixture *nat; /* vip[0], vip[1]: the VIPs' LB trees; vip[2]: a wrong family's */
    struct fixture *f;       /* the nat fixture's, and its */
    struct xlb_flow_table *flows;
    struct xlb_worker_load *load;
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

static inline uint64_t rnd(struct robust *r)
{
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    return r->rng * 0x2545f4914f6cdd1dull;
}

static inline unsigned below(struct robust *r, unsigned n)
{
    return (unsigned)(rnd(r) % n);
}

static inline bool chance(struct robust *r, unsigned percent)
{
    return below(r, 100) < percent;
}

/* ---- bytes ---- */

static inline void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline size_t alen(uint8_t family)
{
    return family == AF_INET ? 4 : 16;
}

static inline uint64_t event(const struct robust *r, enum xlb_event_counter e)
{
    return r->f->stats.events[e];
}

#endif
