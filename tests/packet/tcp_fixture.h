/*
 * Fixture for the TCP endpoint's packet tests: an endpoint on a private mbuf pool, a clock the
 * test moves, a crafted-segment builder (the peer's segments, checksummed) and a parser for
 * what the endpoint sent.
 */
#ifndef XLB_TCP_FIXTURE_H
#define XLB_TCP_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "xlb_tcp.h"
#include "xlb_tcp_options.h"

#define TF_TX_MAX 512

/* The flags as the tests write them. */
#define ACK RTE_TCP_ACK_FLAG
#define SYN RTE_TCP_SYN_FLAG
#define FIN RTE_TCP_FIN_FLAG
#define RST RTE_TCP_RST_FLAG
#define PSH RTE_TCP_PSH_FLAG

struct tf {
    struct rte_mempool *pool;
    struct xlb_tcp_endpoint *ep;
    struct xlb_tcp_config cfg;
    struct xlb_syn_cookie_keys keys;
    uint64_t now;
    struct rte_mbuf *tx[TF_TX_MAX];
    uint16_t n_tx;
    struct xlb_tcp_tuple peer; /* the peer's view: local = peer, remote = xlb */
    uint16_t peer_mss;         /* the MSS the peer's SYN offers (0: 1460) */
    /* Events seen. */
    unsigned connected, readable, writable, closed;
    enum xlb_tcp_close_reason close_reason;
};

/* What the endpoint sent, parsed. */
struct tf_seg {
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t win;
    struct xlb_tcp_opts opts;
    uint32_t len;
    uint8_t data[4096];
};

/* The segment the fixture builds. */
struct tf_out {
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t win;
    bool ts;
    uint32_t tsval, tsecr;
    bool syn_opts; /* MSS 1460, SACK-permitted, wscale 7 (and TS when ts) */
    uint8_t n_sack;
    uint32_t sack_l[4], sack_r[4];
    const uint8_t *data;
    uint32_t len;
};

/* family AF_INET or AF_INET6; cfg NULL for the defaults. */
struct tf *tf_create(int family, const struct xlb_tcp_config *cfg);
void tf_destroy(struct tf *f);
extern const struct xlb_tcp_callbacks tf_callbacks;

/* A segment from the peer to xlb. */
struct rte_mbuf *tf_build(struct tf *f, const struct tf_out *o);
/* Feed it to c (or, with c NULL, nothing: the caller passes it). Returns input's result. */
int tf_send(struct tf *f, struct xlb_tcp_conn *c, const struct tf_out *o);
/* Parse the i-th sent packet. */
void tf_tx(const struct tf *f, unsigned i, struct tf_seg *out);
void tf_clear_tx(struct tf *f);
/* Move the clock by ms and poll the timers. */
void tf_advance(struct tf *f, uint64_t ms);

/* An established passive connection: the peer's ISN irs, our ISN returned in *iss (the cookie).
 * ts: timestamps negotiated (the peer's TSval starts at 1000). */
struct xlb_tcp_conn *tf_passive(struct tf *f, uint32_t irs, bool ts, uint32_t *iss);
/* Payload mbuf of len bytes of the pattern byte i = (start + i) * 7 + 3. */
struct rte_mbuf *tf_payload(struct tf *f, uint32_t start, uint32_t len);
/* The same in mbufs of size bytes each (the last one shorter). */
struct rte_mbuf *tf_payload_pieces(struct tf *f, uint32_t start, uint32_t len, uint32_t size);
uint8_t tf_pattern(uint32_t i);
/* Read (and consume) everything readable into buf; returns the byte count. */
/* Read and consume all c holds (bounded by its receive queue's mbufs), checking it against the
 * pattern from *received on: *received grows by the bytes read, *mismatches by those that
 * differ. True once the peer's FIN is read. The bulk and relay tests' application. */
bool tf_read_pattern(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t *received,
                     uint32_t *mismatches);
uint32_t tf_read_all(struct tf *f, struct xlb_tcp_conn *c, uint8_t *buf, uint32_t cap);
uint32_t tf_mbufs_in_use(const struct tf *f);

/* len bytes of the pattern from byte start, in a static buffer (valid until the next call). */
const uint8_t *tf_pattern_bytes(uint32_t start, uint32_t len);
/* A peer data segment with timestamps: bytes [off, off+len) of the pattern at irs + 1 + off,
 * flags ACK | extra. Returns input's result. */
int tf_peer_data(struct tf *f, struct xlb_tcp_conn *c, uint32_t irs, uint32_t iss, uint32_t off,
                 uint32_t len, uint8_t extra, uint32_t tsval);
/* Read everything readable: exactly len bytes, the pattern from byte off. */
void tf_check_read(struct tf *f, struct xlb_tcp_conn *c, uint32_t off, uint32_t len);
/* Active open: checks the SYN's options, answers with a SYN-ACK (peer ISN peer_isn, TSval
 * 500), checks the ACK; the connection is ESTABLISHED and the tx array empty. */
struct xlb_tcp_conn *tf_active(struct tf *f, uint32_t iss, uint32_t peer_isn);

#endif
