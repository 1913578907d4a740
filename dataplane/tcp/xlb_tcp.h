/*
 * xlb's TCP endpoint: a per-worker TCP (RFC 9293) that terminates connections on both sides,
 * for the layers above (HTTP/2, TLS) to own byte streams. Share-nothing: each worker has its own
 * struct xlb_tcp_endpoint (connection pool, timer wheel, counters), and nothing here locks,
 * allocates after init, or makes a system call.
 *
 * Packets in and out start at the IP header (IPv4 or IPv6; the flow layer strips and adds the
 * Ethernet header). Finding a segment's connection is the caller's (the flow table's) job: input
 * takes the connection. Output goes to a caller-provided array (xlb_tcp_tx_set), so the endpoint
 * runs without ports. docs/tcp.md has the design.
 */
#ifndef XLB_TCP_H
#define XLB_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "xlb_syn_cookie.h"
#include "xlb_tcp_cc.h"
#include "xlb_tcp_recovery.h"

struct xlb_tcp_endpoint;
struct xlb_tcp_conn;

enum xlb_tcp_state {
    XLB_TCP_CLOSED = 0,
    XLB_TCP_SYN_SENT,
    XLB_TCP_SYN_RECEIVED,
    XLB_TCP_ESTABLISHED,
    XLB_TCP_FIN_WAIT_1,
    XLB_TCP_FIN_WAIT_2,
    XLB_TCP_CLOSING,
    XLB_TCP_TIME_WAIT,
    XLB_TCP_CLOSE_WAIT,
    XLB_TCP_LAST_ACK,
    XLB_TCP_N_STATES,
};
const char *xlb_tcp_state_name(enum xlb_tcp_state s);

/* Why a connection closed, as its on_closed event says. */
enum xlb_tcp_close_reason {
    XLB_TCP_CLOSE_NORMAL = 0, /* both FINs exchanged */
    XLB_TCP_CLOSE_RESET,      /* the peer's RST */
    XLB_TCP_CLOSE_REFUSED,    /* RST in answer to our SYN */
    XLB_TCP_CLOSE_TIMEOUT,    /* retransmissions (or SYNs, or keepalives) unanswered */
    XLB_TCP_CLOSE_ABORTED,    /* xlb_tcp_abort: we sent the RST */
};

/* Events, delivered during input, timers and API calls, never re-entrantly for one connection.
 * After on_closed the connection is no longer the application's: it must not be used again. */
struct xlb_tcp_callbacks {
    void (*on_connected)(struct xlb_tcp_conn *c, void *user);
    void (*on_readable)(struct xlb_tcp_conn *c, void *user); /* new bytes, or the peer's FIN */
    void (*on_writable)(struct xlb_tcp_conn *c, void *user); /* send-queue space freed */
    void (*on_closed)(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why);
};

struct xlb_tcp_config {
    uint32_t max_connections;      /* pool size (includes TIME-WAIT) */
    uint32_t rcv_buf;              /* receive queue + reassembly bytes: the most we advertise */
    uint32_t snd_buf;              /* send queue bytes accepted by write */
    uint32_t rcv_max_segs;         /* mbufs the in-order receive queue may hold */
    uint32_t ooo_max_bytes;        /* reassembly bytes per connection */
    uint32_t ooo_max_bytes_worker; /* reassembly bytes for all connections of the worker */
    uint32_t held_max_segs; /* mbufs all send and receive queues may hold (0: no limit): in-order
                             * data beyond is dropped (rcv_worker_full), left to the peer */
    uint16_t mss_limit4, mss_limit6;            /* the path's MSS (forwarding.md, MSS clamping) */
    uint8_t wscale;                             /* the window scale we offer */
    bool timestamps, sack;                      /* offered in SYNs (default both on) */
    uint32_t delack_ms, rto_min_ms, rto_max_ms; /* the RTO starts at 1 s (RFC 6298) */
    uint32_t syn_retries, retries; /* SYNs, and RTOs of one segment, before giving up */
    uint32_t timewait_ms;
    uint32_t keepalive_idle_ms; /* 0: keepalive off (the default) */
    uint32_t keepalive_intvl_ms, keepalive_probes;
    uint32_t challenge_acks_per_s; /* per worker, RFC 5961 section 7 */
    uint32_t persist_max_ms;       /* zero-window probe backoff cap */
    enum xlb_tcp_cc_kind cc;       /* CUBIC (default) or NewReno */
    /* The port computes TCP checksums (RTE_ETH_TX_OFFLOAD_TCP_CKSUM), set from its
     * capabilities: segments carry the pseudo-header's sum and the mbuf flags asking for the
     * rest. Default off: computed here. */
    bool tx_cksum_offload;
    /* The port computes IPv4 header checksums (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM): the field is
     * left 0 and the mbuf flagged RTE_MBUF_F_TX_IP_CKSUM. Default off: computed here. */
    bool tx_ip_cksum_offload;
};
/* The defaults: 1,024 connections, 256 KiB buffers, delayed ACK 40 ms, RTO 200 ms..120 s, initial
 * 1 s, TIME-WAIT 2 s, keepalive off, 1,000 challenge ACKs per second, CUBIC. */
void xlb_tcp_config_default(struct xlb_tcp_config *cfg);

/* Per-worker counters, written by the worker alone. */
struct xlb_tcp_counters {
    uint64_t active_opens, passive_opens, established;
    uint64_t pool_full;  /* opens refused: no free control block */
    uint64_t bad_cookie; /* ACKs whose SYN cookie did not check */
    uint64_t segs_in, segs_out, bytes_in, bytes_out;
    uint64_t segs_in_place; /* data segments sent from their send-queue mbuf, not copied */
    uint64_t retransmits, rtos, syn_retransmits;
    struct xlb_tcp_recovery_stats recovery; /* fast retransmits, SACK recoveries, ... */
    uint64_t ooo_queued, ooo_dropped_conn, ooo_dropped_worker, ooo_dropped_slots;
    uint64_t rcv_queue_full;  /* in-order data dropped: receive queue at its mbuf limit */
    uint64_t rcv_worker_full; /* in-order data dropped: the worker's queues at held_max_segs */
    uint64_t zero_windows_sent, zero_window_probes, window_updates;
    uint64_t delayed_acks, acks_sent, dup_acks_in;
    uint64_t challenge_acks, challenge_acks_suppressed;
    uint64_t paws_drops, out_of_window, ack_too_new;
    uint64_t rst_in_exact, rst_in_challenged, rst_in_out_of_window, rst_in_syn_sent;
    uint64_t rst_out_abort, rst_out_timeout, rst_out_bad_ack, rst_out_closed;
    uint64_t syn_in_sync; /* SYN on a synchronized connection: challenge ACK */
    uint64_t bad_header, bad_options, bad_checksum, bad_no_ack, bad_linearize;
    uint64_t keepalive_probes, keepalive_timeouts, timeouts;
    uint64_t timewait_reused, pmtu_lowered, pmtu_ignored;
    uint64_t no_mbuf, tx_full;
};

/*
 * The endpoint of one worker: pool of max_connections control blocks (allocated here, once),
 * timer wheel, counters. pool: the worker's mbuf pool, for headers and indirect data mbufs.
 * now_ms: the worker's millisecond clock (xlb_tcp_clock_ms). NULL on allocation failure, or
 * when the mbufs have no room left for the send queue's dynamic field (rte_errno).
 */
/* The memory an endpoint of max_connections control blocks takes (xlbd --check). */
size_t xlb_tcp_endpoint_bytes(uint32_t max_connections);
struct xlb_tcp_endpoint *xlb_tcp_endpoint_create(const struct xlb_tcp_config *cfg,
                                                 struct rte_mempool *pool, uint64_t now_ms);
/* Frees every connection's mbufs and the endpoint (not on the fast path). */
void xlb_tcp_endpoint_free(struct xlb_tcp_endpoint *ep);
const struct xlb_tcp_counters *xlb_tcp_counters(const struct xlb_tcp_endpoint *ep);
uint32_t xlb_tcp_conns_in_use(const struct xlb_tcp_endpoint *ep);
uint32_t xlb_tcp_ooo_bytes(const struct xlb_tcp_endpoint *ep);
/* The TSC-derived millisecond clock a worker passes in. */
uint64_t xlb_tcp_clock_ms(void);
/* Start the endpoint's clock at now_ms, before any timer is armed (ignored after): for an
 * endpoint driven by another clock than xlb_tcp_clock_ms, such as the packet tests' simulated
 * time, whose timers would otherwise sit behind the wheel's start and never fire. */
void xlb_tcp_endpoint_set_clock(struct xlb_tcp_endpoint *ep, uint64_t now_ms);

/* The largest MSS the next opens offer and send with, for a family (the path's, as the caller
 * knows it: the ports' MTUs and clamp); 0 restores the configuration's. */
void xlb_tcp_set_mss_limit(struct xlb_tcp_endpoint *ep, uint8_t family, uint16_t mss);

/* What the ports this endpoint's output leaves by compute (xlb_tcp_config's tx_cksum_offload
 * and tx_ip_cksum_offload), known once they are started; for the segments built from now on. */
void xlb_tcp_set_tx_offloads(struct xlb_tcp_endpoint *ep, bool tcp_cksum, bool ip_cksum);

/* Where output goes until the next call: up to cap packets appended at tx[*n]. When the array
 * is full, pure ACKs are dropped (counted tx_full) and data waits for the next output. */
void xlb_tcp_tx_set(struct xlb_tcp_endpoint *ep, struct rte_mbuf **tx, uint16_t cap, uint16_t *n);

/* Fire expired timers (RTO, delayed ACK, zero-window probe, keepalive, TIME-WAIT), at most
 * max_timers of them. Returns the number fired. */
uint32_t xlb_tcp_poll(struct xlb_tcp_endpoint *ep, uint64_t now_ms, uint32_t max_timers);

/* The addresses and ports of a connection, local and remote; IPv4 in the first 4 bytes. */
struct xlb_tcp_tuple {
    uint8_t family; /* AF_INET or AF_INET6 */
    uint8_t local[16], remote[16];
    uint16_t local_port, remote_port; /* network order */
};

/*
 * Passive open, step 1: answer a SYN (m, starting at its IP header, consumed) with a SYN-ACK
 * carrying a SYN cookie: no state kept. Returns 0, or -1 when m is no SYN (dropped, counted).
 */
int xlb_tcp_answer_syn(struct xlb_tcp_endpoint *ep, struct rte_mbuf *m,
                       const struct xlb_syn_cookie_keys *keys, uint64_t now_ms);
/*
 * Passive open, step 2: the handshake's ACK (m, consumed; data it carries is delivered). A
 * valid cookie gives an ESTABLISHED connection (on_connected, then the ACK's data); NULL when
 * the cookie does not check (counted bad_cookie; the caller may answer with a RST) or the pool
 * is empty (pool_full).
 */
struct xlb_tcp_conn *xlb_tcp_accept(struct xlb_tcp_endpoint *ep, struct rte_mbuf *m,
                                    const struct xlb_syn_cookie_keys *keys, uint64_t now_ms,
                                    const struct xlb_tcp_callbacks *cb, void *user);
/* Active open: sends a SYN with MSS, window scale, SACK-permitted and timestamps, and
 * retransmits it with backoff. NULL when the pool is empty. */
struct xlb_tcp_conn *xlb_tcp_connect(struct xlb_tcp_endpoint *ep, const struct xlb_tcp_tuple *t,
                                     uint32_t iss, uint64_t now_ms,
                                     const struct xlb_tcp_callbacks *cb, void *user);
/*
 * A segment for c (m starts at its IP header; consumed in every case). Returns 0 when the
 * segment was processed, -1 when it was dropped (malformed, or unacceptable: counted).
 */
int xlb_tcp_receive(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, struct rte_mbuf *m,
                    uint64_t now_ms);

/*
 * Queue m (payload only, a chain of direct mbufs; consumed on success) for sending, no copy.
 * Returns 0, -EAGAIN when the send queue lacks room for it (m stays the caller's; on_writable
 * follows when room frees), -EPIPE after shutdown or in a state that cannot send.
 * Nothing is sent until xlb_tcp_flush (Nagle off: each flush sends what the window allows).
 */
int xlb_tcp_write(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, struct rte_mbuf *m);
/*
 * Queue a copy of n bytes for sending, for a writer whose bytes are not in mbufs (an HTTP/2
 * session's output): they fill the queue's last mbuf while it is unsent, then new mbufs of the
 * worker's pool of one segment's payload each, so that each segment is sent in place (no
 * second copy). All or nothing: 0, -EAGAIN and -EPIPE as xlb_tcp_write, -ENOBUFS when the
 * pool has too few mbufs (counted no_mbuf).
 */
int xlb_tcp_write_copy(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, const void *data,
                       uint32_t n);
/* The congestion controller of one connection instead of the endpoint's; before its first
 * write (from on_connected for an accepted connection, after xlb_tcp_connect otherwise). */
void xlb_tcp_set_cc(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, enum xlb_tcp_cc_kind cc);
/* Send what the windows allow, and any pending ACK. */
void xlb_tcp_flush(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
/*
 * In-order received bytes, zero-copy: *data and *len describe the first contiguous piece (the
 * rest follows after consuming it). Returns the total bytes readable; 0 and *eof when the peer
 * has closed and everything was read.
 */
uint32_t xlb_tcp_peek(const struct xlb_tcp_conn *c, const uint8_t **data, uint32_t *len, bool *eof);
/* Drop n bytes read (n <= readable); frees their mbufs and may send a window update. */
void xlb_tcp_consume(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t n);
/*
 * Take in-order received bytes as they are, zero-copy: whole received mbufs (the first one
 * without the bytes already consumed), as a chain of at most max bytes, now the caller's; may
 * send a window update. NULL when nothing is readable or the first mbuf alone exceeds max.
 * Made for relaying into another connection's xlb_tcp_write.
 */
struct rte_mbuf *xlb_tcp_read(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t max);
/* Bytes xlb_tcp_write would take now (0 after shutdown or in a state that cannot send). Less
 * than want: on_writable follows when room frees, as after a refused write. */
uint32_t xlb_tcp_send_space(const struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                            uint32_t want);
/*
 * The user pointer of the connection an output packet was built for (each one says, in
 * m->hash.usr), or NULL: a packet of no connection (a cookie SYN-ACK) or of one that has
 * closed since. How a caller with several links routes the output it collects.
 */
void *xlb_tcp_user_of(const struct xlb_tcp_endpoint *ep, const struct rte_mbuf *m);
/* Send our FIN after the queued data (half-close). */
void xlb_tcp_shutdown(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
/* Send a RST and free the connection now (on_closed ABORTED is delivered). */
void xlb_tcp_abort(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);

enum xlb_tcp_state xlb_tcp_conn_state(const struct xlb_tcp_conn *c);
/* The user pointer the connection was opened with. */
void *xlb_tcp_conn_user(const struct xlb_tcp_conn *c);
/* Bytes a connection holds now: its control block plus the mbufs queued. */
uint32_t xlb_tcp_conn_memory(const struct xlb_tcp_conn *c);
/* Size of one idle control block. */
uint32_t xlb_tcp_conn_size(void);

/*
 * A translated ICMP "fragmentation needed" / "packet too big" for c: mtu is the next hop's MTU,
 * seq the sequence number of the quoted segment. Lowers the MSS when seq lies in
 * snd_una..snd_nxt (otherwise ignored, counted: a blind attacker cannot guess it) and resends.
 */
void xlb_tcp_pmtu(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t mtu, uint32_t seq);

/* True when c is in TIME-WAIT and may be reused for a new active open of the same tuple now,
 * as Linux's tcp_tw_reuse: timestamps in use and at least 1 s since its last segment. Frees it
 * then. */
bool xlb_tcp_timewait_reuse(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint64_t now_ms);

/* One connection as `ss -ti` shows it. */
struct xlb_tcp_conn_info {
    struct xlb_tcp_tuple tuple;
    enum xlb_tcp_state state;
    uint32_t cwnd, ssthresh; /* bytes; UINT32_MAX when unlimited */
    uint32_t srtt_us, rttvar_us, rto_ms;
    uint32_t mss, snd_wnd, rcv_wnd;
    uint32_t snd_queue, rcv_queue, ooo_bytes, unacked;
    uint64_t retransmits;
    uint32_t memory;
};
/* Fills up to max records, one per connection in use; returns the number written. */
uint32_t xlb_tcp_list(const struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn_info *out,
                      uint32_t max);
void xlb_tcp_conn_info(const struct xlb_tcp_conn *c, struct xlb_tcp_conn_info *out);

#endif
