/*
 * Each side of a flow keeps what it has sent (the end of its sequence space), the largest
 * window it advertised (scaled, rounded up to a power of two) and its window scale. A segment
 * from side s to side r fits when:
 *
 *  - it starts no further beyond what s has sent than r's largest window: r's right window
 *    edge is its last ACK plus its window, and r never acknowledges more than s sent;
 *  - it ends no further behind what s has sent than r's largest window (retransmissions,
 *    keepalives, window probes are within it);
 *  - its ACK acknowledges nothing r has not sent, and is no further behind than s's own
 *    largest window (r cannot have more than that in flight).
 *
 * Liberal where Linux conntrack is: a pure ACK (no data, SYN, FIN or RST) is not judged by its
 * sequence number, only by its ACK; a window not seen yet (the backend's, before its SYN-ACK)
 * counts as the largest an unscaled window field can say. A RST must fit the window as data
 * would (RFC 5961's spirit); its ACK is not looked at.
 *
 * Before the SYN-ACK, the backend's RST is taken only if it acknowledges the client's SYN, as
 * the client itself would take it (RFC 9293 3.10.7.3). Its other segments are passed on
 * unjudged, as Linux ignores them: a SNAT port is reused while the backend may still hold an
 * earlier connection on it in TIME-WAIT, which answers the SYN with an ACK of its own; the
 * client answers that with a RST at the ACK's number, which clears the TIME-WAIT, and its SYN
 * then gets through. So that ACK's number is remembered, and the client's RST passes.
 */
#include "nat_window.h"

#include <rte_byteorder.h>

#include "tcp_syn_options.h"

/* 1 + log2 of 65,536: an unscaled window field can say no more. */
#define UNSCALED_WINDOW_LOG 17

struct segment {
    uint32_t seq, end, ack; /* end: seq + data + SYN + FIN */
    uint32_t win;           /* as the field says, not scaled */
    uint8_t flags;
};

static inline int32_t seq_diff(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b);
}

/* 1 + log2 of a window, rounded up. */
static inline uint8_t window_log(uint32_t win)
{
    return win <= 1 ? 1 : (uint8_t)(33 - __builtin_clz(win - 1));
}

/* The window a side may have open: its largest, or the unscaled maximum before it spoke. */
static inline int64_t window_span(uint8_t log)
{
    return INT64_C(1) << ((log == 0 ? UNSCALED_WINDOW_LOG : log) - 1);
}

static inline void segment_of(const struct rte_tcp_hdr *tcp, uint32_t payload, struct segment *s)
{
    s->flags = tcp->tcp_flags;
    s->seq = rte_be_to_cpu_32(tcp->sent_seq);
    s->end = s->seq + payload + !!(s->flags & RTE_TCP_SYN_FLAG) + !!(s->flags & RTE_TCP_FIN_FLAG);
    s->ack = rte_be_to_cpu_32(tcp->recv_ack);
    s->win = rte_be_to_cpu_16(tcp->rx_win);
}

bool xlb_window_sent_unacked(const struct xlb_flow_window *w, uint32_t seq, enum xlb_flow_side from)
{
    if (w->max_win[from] == 0)
        return false;
    int64_t behind = seq_diff(w->end[from], seq);
    return behind > 0 && behind <= window_span(w->max_win[!from]);
}

uint8_t xlb_window_syn_scale(const struct rte_tcp_hdr *tcp)
{
    const uint8_t *ws = xlb_syn_option_find(tcp, 3, 3); /* kind 3, length 3 */
    if (ws == NULL)
        return XLB_FLOW_WSCALE_NONE;
    return ws[2] > 14 ? 14 : ws[2];
}

/* A SYN or SYN-ACK starts its side: what it sent, its window (never scaled), its offer. */
static void start_side(struct xlb_flow_window *w, enum xlb_flow_side side, const struct segment *s,
                       const struct rte_tcp_hdr *tcp)
{
    w->end[side] = s->end;
    w->max_win[side] = window_log(s->win);
    w->wscale[side] = xlb_window_syn_scale(tcp);
}

void xlb_window_pick_up(struct xlb_flow_window *w, const struct rte_tcp_hdr *tcp, uint32_t payload)
{
    struct segment s;
    segment_of(tcp, payload, &s);
    w->end[XLB_FLOW_FROM_CLIENT] = s.end;
    w->end[XLB_FLOW_FROM_BACKEND] = s.ack;
    for (int side = 0; side < 2; side++) {
        w->wscale[side] = 14;
        w->max_win[side] = window_log(UINT32_C(65535) << 14);
    }
}

/* The ACK acknowledges what the other side sent, no more, and not too long ago. */
static bool ack_fits(const struct xlb_flow_window *w, enum xlb_flow_side from,
                     const struct segment *s)
{
    int64_t behind = seq_diff(w->end[!from], s->ack);
    return behind >= 0 && behind <= window_span(w->max_win[from]);
}

/* The sequence range lies in the receiver's window around what the sender has sent. */
static bool sequence_fits(const struct xlb_flow_window *w, enum xlb_flow_side from,
                          const struct segment *s)
{
    int64_t span = window_span(w->max_win[!from]);
    return seq_diff(s->seq, w->end[from]) <= span && seq_diff(s->end, w->end[from]) >= -span;
}

/*
 * The backend's answer to the client's SYN: a SYN-ACK, or a RST refusing the connection, and
 * either must acknowledge the SYN. Scaling holds only if both SYNs offered it (RFC 7323).
 * Anything else is what the backend has left of an earlier connection on the SNAT port: its
 * ACK is kept where the backend's end will go, for the client's RST.
 */
static bool backend_answer(struct xlb_flow_window *w, const struct segment *s,
                           const struct rte_tcp_hdr *tcp)
{
    if (!(s->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG))) {
        w->end[XLB_FLOW_FROM_BACKEND] = s->ack;
        return true;
    }
    if (!(s->flags & RTE_TCP_ACK_FLAG) || !ack_fits(w, XLB_FLOW_FROM_BACKEND, s))
        return false;
    if (s->flags & RTE_TCP_RST_FLAG)
        return true;
    if (!(s->flags & RTE_TCP_SYN_FLAG))
        return false;
    start_side(w, XLB_FLOW_FROM_BACKEND, s, tcp);
    if (w->wscale[XLB_FLOW_FROM_CLIENT] == XLB_FLOW_WSCALE_NONE ||
        w->wscale[XLB_FLOW_FROM_BACKEND] == XLB_FLOW_WSCALE_NONE)
        w->wscale[XLB_FLOW_FROM_CLIENT] = w->wscale[XLB_FLOW_FROM_BACKEND] = 0;
    return true;
}

/* An accepted segment moves its side's end and largest window on. */
static void take_in(struct xlb_flow_window *w, enum xlb_flow_side from, const struct segment *s)
{
    if (seq_diff(s->end, w->end[from]) > 0)
        w->end[from] = s->end;
    uint8_t scale = w->wscale[from] == XLB_FLOW_WSCALE_NONE ? 0 : w->wscale[from];
    uint32_t win = s->flags & RTE_TCP_SYN_FLAG ? s->win : s->win << scale;
    uint8_t log = window_log(win);
    if (log > w->max_win[from])
        w->max_win[from] = log;
}

/*
 * A data segment or ACK (no SYN, FIN or RST) once both sides have spoken, judged on its own:
 * most segments are these. xlb_window_accept leaves them to this, and the established lane
 * (dataplane/nat/nat_forward.c) calls it straight. A pure ACK is judged by its ACK only.
 */
static inline __attribute__((always_inline)) bool accept_data(struct xlb_flow_window *w,
                                                              const struct rte_tcp_hdr *tcp,
                                                              uint32_t payload,
                                                              enum xlb_flow_side from)
{
    /* Both sides have spoken: their largest windows are set (logs of 1 or more), and their
     * scales are settled (0-14, never XLB_FLOW_WSCALE_NONE, see backend_answer). */
    uint32_t sent = w->end[from], seq = rte_be_to_cpu_32(tcp->sent_seq), end = seq + payload;
    /* The largest window is 65,535 << 14 (a log of 31): spans fit 32 bits. */
    int32_t span = INT32_C(1) << (w->max_win[!from] - 1);
    if (payload != 0 && (seq_diff(seq, sent) > span || seq_diff(end, sent) < -span))
        return false;
    if (tcp->tcp_flags & RTE_TCP_ACK_FLAG) {
        int32_t behind = seq_diff(w->end[!from], rte_be_to_cpu_32(tcp->recv_ack));
        if (behind < 0 || behind > INT32_C(1) << (w->max_win[from] - 1))
            return false;
    }
    /* Taken in, as take_in does. */
    if (payload != 0 && seq_diff(end, sent) > 0)
        w->end[from] = end;
    uint8_t log = window_log((uint32_t)rte_be_to_cpu_16(tcp->rx_win) << w->wscale[from]);
    if (log > w->max_win[from])
        w->max_win[from] = log;
    return true;
}

/* One copy for each side, so that each indexes its halves of the window as constants. */
bool xlb_window_accept_data(struct xlb_flow_window *w, const struct rte_tcp_hdr *tcp,
                            uint32_t payload, enum xlb_flow_side from)
{
    return from == XLB_FLOW_FROM_CLIENT ? accept_data(w, tcp, payload, XLB_FLOW_FROM_CLIENT)
                                        : accept_data(w, tcp, payload, XLB_FLOW_FROM_BACKEND);
}

bool xlb_window_accept(struct xlb_flow *f, const struct rte_tcp_hdr *tcp, uint32_t payload,
                       enum xlb_flow_side from)
{
    struct xlb_flow_window *w = &f->window;
    if (!(tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG | RTE_TCP_RST_FLAG)) &&
        xlb_window_both_spoken(w))
        return xlb_window_accept_data(w, tcp, payload, from);
    struct segment s;
    segment_of(tcp, payload, &s);
    uint8_t kind = s.flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG);
    if (kind == RTE_TCP_SYN_FLAG) {
        if (from == XLB_FLOW_FROM_CLIENT && f->state == XLB_FLOW_SYN_SENT) {
            start_side(w, XLB_FLOW_FROM_CLIENT, &s, tcp); /* a new ISN starts afresh */
            w->max_win[XLB_FLOW_FROM_BACKEND] = 0;
        }
        /* Otherwise a SYN on a synchronized connection: the endpoints settle it (a challenge
         * ACK, RFC 5961 4), and it moves nothing here. */
        return true;
    }
    if (from == XLB_FLOW_FROM_BACKEND && w->max_win[XLB_FLOW_FROM_BACKEND] == 0)
        return backend_answer(w, &s, tcp);
    bool rst = s.flags & RTE_TCP_RST_FLAG;
    if (rst && w->max_win[XLB_FLOW_FROM_BACKEND] == 0 && s.seq == w->end[XLB_FLOW_FROM_BACKEND])
        return true; /* the client's answer to the backend's stale ACK */
    if (s.end == s.seq && !rst)
        s.seq = s.end = w->end[from]; /* a pure ACK: its sequence number says nothing */
    else if (!sequence_fits(w, from, &s))
        return false;
    /* The client's ACKs are judged once the backend has spoken. */
    if ((s.flags & RTE_TCP_ACK_FLAG) && !rst && w->max_win[!from] != 0 && !ack_fits(w, from, &s))
        return false;
    take_in(w, from, &s);
    return true;
}
