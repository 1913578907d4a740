/*
 * The connection control block and the endpoint's internals, shared by the endpoint's files
 * only (the layers above see xlb_tcp.h). Kept small: an idle connection is this struct and
 * nothing else (xlb_tcp_conn_size, <= 4 KiB); mbufs are held only while data is queued.
 */
#ifndef XLB_TCP_CONN_H
#define XLB_TCP_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "xlb_tcp.h"
#include "xlb_tcp_options.h"
#include "xlb_tcp_recovery.h"
#include "xlb_tcp_rtt.h"
#include "xlb_tcp_timer_wheel.h"

#define XLB_TCP_OOO_SLOTS  64 /* out-of-order segments one connection keeps (why: docs/tcp.md) */
#define XLB_TCP_SACK_SEND  3  /* blocks in our ACKs (with timestamps, RFC 2018) */
#define XLB_TCP_MAX_WINDOW (65535u << 14)

/* One out-of-order segment: the mbuf's data starts at seq (headers stripped). */
struct xlb_tcp_ooo {
    uint32_t seq, len;
    bool fin;
    struct rte_mbuf *m;
};

/* A queue of single-segment mbufs linked by their next pointers, data from off in the head
 * (the receive queue). */
struct xlb_tcp_mqueue {
    struct rte_mbuf *head, *tail;
    uint32_t bytes, segs;
    uint32_t *held; /* the endpoint's count of every queue's mbufs (held_segs) */
};

/* What the send queue keeps in each of its mbufs (a dynamic field, xlb_tcp_sndq.c): the link
 * to the next one, and where the payload lies, since a segment sent in place moves the mbuf's
 * own data offset and length onto the packet. */
struct xlb_tcp_sndq_link {
    struct rte_mbuf *next;
    uint16_t off; /* the payload's first byte, from buf_addr */
    uint16_t len;
};

/* The send queue: mbufs linked through xlb_tcp_sndq_link, data from snd_head_off in the head. */
struct xlb_tcp_sndq {
    struct rte_mbuf *head, *tail;
    uint32_t bytes, segs;
    uint32_t *held; /* the endpoint's count of every queue's mbufs (held_segs) */
    /* Where the send loop stopped: an mbuf of the queue and where its first byte lies, counted
     * from the head's first byte, so that the next segment starts there instead of walking the
     * whole queue again (NULL: start at the head). Dropping the head keeps it true. */
    struct rte_mbuf *cursor;
    uint32_t cursor_pos;
};

extern int xlb_tcp_sndq_field; /* the dynamic field's offset, set by xlb_tcp_sndq_register */

static inline struct xlb_tcp_sndq_link *xlb_tcp_sndq_link(struct rte_mbuf *m)
{
    return RTE_MBUF_DYNFIELD(m, xlb_tcp_sndq_field, struct xlb_tcp_sndq_link *);
}

static inline const uint8_t *xlb_tcp_sndq_payload(struct rte_mbuf *m)
{
    return (const uint8_t *)m->buf_addr + xlb_tcp_sndq_link(m)->off;
}

enum {
    XLB_TCPF_ACK_NOW = 1u << 0,    /* send an ACK at the next output */
    XLB_TCPF_FIN_QUEUED = 1u << 1, /* shutdown: FIN after the queued data */
    XLB_TCPF_FIN_SENT = 1u << 2,
    XLB_TCPF_FIN_RCVD = 1u << 3,
    XLB_TCPF_TS = 1u << 4,   /* timestamps negotiated */
    XLB_TCPF_SACK = 1u << 5, /* SACK negotiated */
    XLB_TCPF_WSCALE = 1u << 6,
    XLB_TCPF_WANT_WRITE = 1u << 7,  /* a write was refused: on_writable when room frees */
    XLB_TCPF_CLOSED_SENT = 1u << 8, /* on_closed delivered */
    XLB_TCPF_IN_EVENT = 1u << 9,
};

struct xlb_tcp_conn {
    struct xlb_tcp_timer timer; /* first: the wheel hands it back */
    uint32_t index;             /* in the pool; free-list link when unused */
    uint16_t flags;
    uint8_t state;
    uint8_t close_reason;
    struct xlb_tcp_tuple tuple;

    /* Send side (RFC 9293 section 3.3.1). snd_nxt == snd_max: retransmissions are the recovery
     * module's choices, sent without rewinding snd_nxt. */
    uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2, max_snd_wnd;
    uint32_t fin_seq; /* our FIN's sequence number, once sent */
    uint16_t mss;     /* effective send MSS, options excluded */
    uint16_t peer_mss;
    uint8_t snd_wscale, rcv_wscale;
    uint8_t syn_tries, rto_tries, ka_probes;
    uint8_t cc_kind;             /* enum xlb_tcp_cc_kind: the endpoint's, or xlb_tcp_set_cc's */
    uint32_t persist_ms;         /* current zero-window probe interval, 0 when not probing */
    struct xlb_tcp_rtt rtt;      /* RFC 6298 (dataplane/tcp/sender/) */
    struct xlb_tcp_recovery rec; /* congestion control, SACK board, loss recovery */
    uint32_t rtt_seq;            /* RTT sample without timestamps: the segment timed, and when */
    uint64_t rtt_sent_ms;
    uint64_t last_tx_ms; /* last new data sent: the idle restart's clock */
    bool rtt_timing;

    /* Receive side. rcv_adv: the right edge we advertised (never moves left). */
    uint32_t irs, rcv_nxt, rcv_adv;
    uint32_t ts_recent, ts_last_ack_sent;
    uint64_t ts_recent_ms, last_rx_ms;
    uint8_t unacked_segs;      /* full segments received since our last ACK */
    uint32_t rcv_consumed_off; /* bytes read from the receive queue's head mbuf */

    /* Deadlines (ms, 0: off); the wheel holds the earliest. */
    uint64_t rto_at, delack_at, persist_at, keepalive_at, timewait_at;
    uint64_t tlp_at; /* the tail loss probe's timeout (PTO), before the RTO */

    struct xlb_tcp_sndq sndq;   /* from snd_una (after the SYN) */
    uint32_t snd_head_off;      /* bytes of the send queue's head mbuf already acknowledged */
    struct xlb_tcp_mqueue rcvq; /* in order, not yet consumed */
    struct xlb_tcp_ooo ooo[XLB_TCP_OOO_SLOTS]; /* sorted by seq, not overlapping */
    uint8_t n_ooo;
    uint32_t ooo_bytes;
    uint32_t sack_recent[XLB_TCP_SACK_SEND]; /* seqs of the latest ooo arrivals, newest first */
    uint32_t dsack_left, dsack_right; /* a duplicate to report (RFC 2883), when they differ */

    uint64_t retransmits;
    const struct xlb_tcp_callbacks *cb;
    void *user;
};

struct xlb_tcp_endpoint {
    struct xlb_tcp_config cfg;
    /* The MSS limits the endpoint was created with: what xlb_tcp_set_mss_limit(0) restores. */
    uint16_t configured_mss4, configured_mss6;
    struct rte_mempool *pool;
    struct xlb_tcp_counters ctr;
    struct xlb_tcp_wheel wheel;
    uint64_t now_ms;
    uint32_t in_use, free_head;
    uint32_t ooo_bytes; /* all connections' */
    uint32_t held_segs; /* mbufs in all send and receive queues (cfg.held_max_segs) */
    uint32_t challenge_window_s, challenge_count;
    struct rte_mbuf **tx;
    uint16_t tx_cap, *tx_n;
    struct xlb_tcp_conn *conns; /* max_connections of them */
};

/* xlb_tcp_endpoint.c */
struct xlb_tcp_conn *xlb_tcp_conn_alloc(struct xlb_tcp_endpoint *ep);
void xlb_tcp_conn_release(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
void xlb_tcp_timers_update(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
/* Enter CLOSED with a reason: on_closed once, then the block goes back to the pool. */
void xlb_tcp_close(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                   enum xlb_tcp_close_reason why);
void xlb_tcp_enter_timewait(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
uint32_t xlb_tcp_ts_now(const struct xlb_tcp_endpoint *ep);

/* xlb_tcp_mqueue.c */
void xlb_tcp_mq_push(struct xlb_tcp_mqueue *q, struct rte_mbuf *m);
/* Drop n bytes from the head; off is the head mbuf's consumed bytes (updated). */
void xlb_tcp_mq_drop(struct xlb_tcp_mqueue *q, uint32_t n, uint32_t *off);
void xlb_tcp_mq_free(struct xlb_tcp_mqueue *q);

/* xlb_tcp_sndq.c */
int xlb_tcp_sndq_register(void); /* 0, or -errno when the mbufs have no room for the field */
void xlb_tcp_sndq_push(struct xlb_tcp_sndq *q, struct rte_mbuf *m);
/* Drop n acknowledged bytes from the head; off is the head mbuf's acknowledged bytes. */
void xlb_tcp_sndq_drop(struct xlb_tcp_sndq *q, uint32_t n, uint32_t *off);
void xlb_tcp_sndq_free(struct xlb_tcp_sndq *q);
/* The mbuf holding byte off (counted from the head's first byte, acknowledged ones included)
 * and at, that byte's place in its payload; NULL past the end. Moves the cursor there. */
struct rte_mbuf *xlb_tcp_sndq_seek(struct xlb_tcp_sndq *q, uint32_t off, uint32_t *at);
/* Bytes that may still be appended to the queue's last mbuf so that it holds at most piece
 * bytes: 0 unless none of it was sent (unsent: the queue's bytes not sent yet) and nothing
 * else holds it. */
uint32_t xlb_tcp_sndq_tail_room(struct xlb_tcp_sndq *q, uint32_t unsent, uint32_t piece);
/* Append n bytes (n <= xlb_tcp_sndq_tail_room) to the queue's last mbuf. */
void xlb_tcp_sndq_append_tail(struct xlb_tcp_sndq *q, const void *data, uint32_t n);

/* xlb_tcp_output.c */
enum { XLB_TCP_SEND_ACK_ONLY = 0 };
/* Send new data and FIN as the windows allow, then an ACK if one is still owed. */
void xlb_tcp_output(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
/* One segment at seq of len bytes from the send queue (retransmission or new), flags added. */
bool xlb_tcp_send_segment(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t seq,
                          uint32_t len, uint8_t flags);
/* A segment from tuple with no payload and the given options (SYN-ACKs with cookies, RSTs). */
void xlb_tcp_send_raw(struct xlb_tcp_endpoint *ep, const struct xlb_tcp_tuple *t, uint32_t seq,
                      uint32_t ack, uint8_t flags, uint16_t win, const uint8_t *opts,
                      uint32_t opt_len);
void xlb_tcp_send_ack(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
void xlb_tcp_send_syn(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, bool with_ack);
/* A RST from c's tuple: seq, and ack when with_ack. */
void xlb_tcp_send_rst(struct xlb_tcp_endpoint *ep, const struct xlb_tcp_conn *c, uint32_t seq,
                      uint32_t ack, bool with_ack);
/* A challenge ACK, within the worker's rate limit (RFC 5961 section 7). */
void xlb_tcp_challenge_ack(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
/* The window we advertise now (unscaled bytes), never shrinking the right edge. */
uint32_t xlb_tcp_rcv_window(const struct xlb_tcp_endpoint *ep, const struct xlb_tcp_conn *c);
/* Hand a built packet to the tx array; false (packet freed) when it is full. */
bool xlb_tcp_tx(struct xlb_tcp_endpoint *ep, struct rte_mbuf *m);
/* Resend one segment from snd_una at the current MSS (after a PMTU drop). */
void xlb_tcp_retransmit_first(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
/* The sender module's state, once the connection is established and its MSS known. */
void xlb_tcp_sender_start(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
/* The retransmission timer's value now, in ms (RFC 6298 with backoff). */
uint32_t xlb_tcp_rto_ms(const struct xlb_tcp_conn *c);
/* After new data went or an ACK moved snd_una: (re)arm the tail loss probe's timer, or stop it
 * when no probe is due (RFC 8985 section 7.2). */
void xlb_tcp_tlp_arm(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
/* The PTO expired: send the probe (new data, or the last segment again), then the RTO runs. */
void xlb_tcp_tlp_fire(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);

/* xlb_tcp_reass.c */
/* Keep an out-of-order segment (m's data at seq, len bytes); false when dropped (budgets). */
bool xlb_tcp_reass_insert(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t seq,
                          uint32_t len, bool fin, struct rte_mbuf *m);
/* Move what rcv_nxt now reaches to the receive queue; returns true when a FIN was reached. */
bool xlb_tcp_reass_pull(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
void xlb_tcp_reass_free(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c);
/* The SACK blocks for our next ACK, most recent first; returns their number. */
uint8_t xlb_tcp_reass_sack(const struct xlb_tcp_conn *c, uint32_t left[XLB_TCP_SACK_SEND],
                           uint32_t right[XLB_TCP_SACK_SEND]);

/* Deliver an event unless the connection is closed. */
void xlb_tcp_event_readable(struct xlb_tcp_conn *c);

#endif

/* xlb_tcp_segment.c: a received segment, parsed and checked. */
struct xlb_tcp_seg {
    struct xlb_tcp_tuple tuple; /* as the receiver sees it: local = destination */
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t win;
    uint32_t hdr_len; /* IP + TCP headers: the payload starts there */
    uint32_t len;     /* payload bytes */
    struct xlb_tcp_opts opts;
};
/* 0, or -1 (counted by reason) when m is no well-formed TCP segment with a good checksum. A
 * multi-segment m is linearized first (its pointer may change). */
int xlb_tcp_seg_parse(struct xlb_tcp_endpoint *ep, struct rte_mbuf **m, struct xlb_tcp_seg *s);
/* Sequence space a segment takes: payload, plus one each for SYN and FIN. */
static inline uint32_t xlb_tcp_seg_space(const struct xlb_tcp_seg *s)
{
    return s->len + ((s->flags & 0x02) ? 1u : 0u) + ((s->flags & 0x01) ? 1u : 0u);
}
/* SACK option bytes our next segment carries (they come out of the payload). */
uint32_t xlb_tcp_sack_opt_len(const struct xlb_tcp_conn *c);
