/*
 * The TCP endpoint's counters as the control plane reads them (`xlbctl counters`' tcp group,
 * /xlb/tcp, xlb_tcp_*_total). The endpoint (dataplane/tcp/) counts in its own struct
 * xlb_tcp_counters; its worker copies that into its struct xlb_worker_stats (lib/xlb_counters.h)
 * after a poll loop that changed it, so that the control plane never includes dataplane/ headers.
 *
 * XLB_TCP_COUNTERS lists them in the order of struct xlb_tcp_counters' fields, which the
 * dataplane side checks at compile time field by field (dataplane/tcp/xlb_tcp_report.c): a
 * counter added there and not here does not build. Each entry:
 *   X(ID, FIELD, NAME, FAMILY, LABEL, VALUE)
 * ID the index's name, FIELD the member of struct xlb_tcp_counters, NAME what xlbctl and
 * telemetry call it, FAMILY the Prometheus family (xlb_tcp_FAMILY_total) and, for counters that
 * split one event by reason, the label's name and value (NULL, NULL otherwise). Entries of one
 * family are adjacent.
 */
#ifndef XLB_TCP_STATS_H
#define XLB_TCP_STATS_H

#include <stddef.h>
#include <stdint.h>

/* clang-format off */
#define XLB_TCP_COUNTERS(X)                                                                        \
    X(ACTIVE_OPENS, active_opens, "active_opens", "active_opens", NULL, NULL)                      \
    X(PASSIVE_OPENS, passive_opens, "passive_opens", "passive_opens", NULL, NULL)                  \
    X(ESTABLISHED, established, "established", "established", NULL, NULL)                         \
    X(POOL_FULL, pool_full, "pool_full", "pool_full", NULL, NULL)                                  \
    X(BAD_COOKIE, bad_cookie, "bad_cookie", "bad_cookies", NULL, NULL)                             \
    X(SEGS_IN, segs_in, "segs_in", "segments_received", NULL, NULL)                                \
    X(SEGS_OUT, segs_out, "segs_out", "segments_sent", NULL, NULL)                                 \
    X(BYTES_IN, bytes_in, "bytes_in", "bytes_received", NULL, NULL)                                \
    X(BYTES_OUT, bytes_out, "bytes_out", "bytes_sent", NULL, NULL)                                 \
    X(SEGS_IN_PLACE, segs_in_place, "segs_in_place", "segments_sent_in_place", NULL, NULL)         \
    X(RETRANSMITS, retransmits, "retransmits", "retransmits", NULL, NULL)                          \
    X(RTOS, rtos, "rtos", "rtos", NULL, NULL)                                                      \
    X(SYN_RETRANSMITS, syn_retransmits, "syn_retransmits", "syn_retransmits", NULL, NULL)          \
    X(FAST_RETRANSMITS, recovery.fast_retransmits, "fast_retransmits", "fast_retransmits", NULL,   \
      NULL)                                                                                        \
    X(SACK_RECOVERIES, recovery.sack_recoveries, "sack_recoveries", "recoveries", "kind", "sack")  \
    X(NEWRENO_RECOVERIES, recovery.newreno_recoveries, "newreno_recoveries", "recoveries", "kind", \
      "newreno")                                                                                   \
    X(RTO_RECOVERIES, recovery.rto_recoveries, "rto_recoveries", "recoveries", "kind", "rto")      \
    X(TLP_RECOVERIES, recovery.tlp_recoveries, "tlp_recoveries", "recoveries", "kind", "tlp")      \
    X(PARTIAL_ACKS, recovery.partial_acks, "partial_acks", "partial_acks", NULL, NULL)             \
    X(LIMITED_TRANSMITS, recovery.limited_transmits, "limited_transmits", "limited_transmits",     \
      NULL, NULL)                                                                                  \
    X(RESCUE_RETRANSMITS, recovery.rescue_retransmits, "rescue_retransmits", "rescue_retransmits", \
      NULL, NULL)                                                                                  \
    X(SACK_RENEGING, recovery.sack_reneging, "sack_reneging", "sack_reneging", NULL, NULL)         \
    X(DSACKS, recovery.dsacks, "dsacks", "dsacks_received", NULL, NULL)                            \
    X(SACK_INVALID, recovery.sack_invalid, "sack_invalid", "sack_blocks_ignored", "reason",        \
      "invalid")                                                                                   \
    X(SACK_DROPPED, recovery.sack_dropped, "sack_dropped", "sack_blocks_ignored", "reason",        \
      "board_full")                                                                                \
    X(TLP_PROBES, recovery.tlp_probes, "tlp_probes", "tail_loss_probes", NULL, NULL)               \
    X(LOST_RETRANSMITS, recovery.lost_retransmits, "lost_retransmits", "lost_retransmits", NULL,   \
      NULL)                                                                                        \
    X(OOO_QUEUED, ooo_queued, "ooo_queued", "ooo_queued", NULL, NULL)                              \
    X(OOO_DROPPED_CONN, ooo_dropped_conn, "ooo_dropped_conn", "ooo_dropped", "budget",             \
      "connection")                                                                                \
    X(OOO_DROPPED_WORKER, ooo_dropped_worker, "ooo_dropped_worker", "ooo_dropped", "budget",       \
      "worker")                                                                                    \
    X(OOO_DROPPED_SLOTS, ooo_dropped_slots, "ooo_dropped_slots", "ooo_dropped", "budget", "slots") \
    X(RCV_QUEUE_FULL, rcv_queue_full, "rcv_queue_full", "in_order_dropped", "budget",              \
      "connection")                                                                                \
    X(RCV_WORKER_FULL, rcv_worker_full, "rcv_worker_full", "in_order_dropped", "budget", "worker") \
    X(ZERO_WINDOWS_SENT, zero_windows_sent, "zero_windows_sent", "zero_windows_sent", NULL, NULL)  \
    X(ZERO_WINDOW_PROBES, zero_window_probes, "zero_window_probes", "zero_window_probes", NULL,    \
      NULL)                                                                                        \
    X(WINDOW_UPDATES, window_updates, "window_updates", "window_updates", NULL, NULL)              \
    X(DELAYED_ACKS, delayed_acks, "delayed_acks", "delayed_acks", NULL, NULL)                      \
    X(ACKS_SENT, acks_sent, "acks_sent", "acks_sent", NULL, NULL)                                  \
    X(DUP_ACKS_IN, dup_acks_in, "dup_acks_in", "dup_acks_received", NULL, NULL)                    \
    X(CHALLENGE_ACKS, challenge_acks, "challenge_acks", "challenge_acks", "result", "sent")        \
    X(CHALLENGE_ACKS_SUPPRESSED, challenge_acks_suppressed, "challenge_acks_suppressed",           \
      "challenge_acks", "result", "suppressed")                                                    \
    X(PAWS_DROPS, paws_drops, "paws_drops", "segments_dropped", "reason", "paws")                  \
    X(OUT_OF_WINDOW, out_of_window, "out_of_window", "segments_dropped", "reason", "out_of_window")\
    X(ACK_TOO_NEW, ack_too_new, "ack_too_new", "segments_dropped", "reason", "ack_of_unsent")      \
    X(RST_IN_EXACT, rst_in_exact, "rst_in_exact", "resets_received", "reason", "exact")            \
    X(RST_IN_CHALLENGED, rst_in_challenged, "rst_in_challenged", "resets_received", "reason",      \
      "challenged")                                                                                \
    X(RST_IN_OUT_OF_WINDOW, rst_in_out_of_window, "rst_in_out_of_window", "resets_received",       \
      "reason", "out_of_window")                                                                   \
    X(RST_IN_SYN_SENT, rst_in_syn_sent, "rst_in_syn_sent", "resets_received", "reason",            \
      "syn_sent")                                                                                  \
    X(RST_OUT_ABORT, rst_out_abort, "rst_out_abort", "resets_sent", "reason", "abort")             \
    X(RST_OUT_TIMEOUT, rst_out_timeout, "rst_out_timeout", "resets_sent", "reason", "timeout")     \
    X(RST_OUT_BAD_ACK, rst_out_bad_ack, "rst_out_bad_ack", "resets_sent", "reason", "bad_ack")     \
    X(RST_OUT_CLOSED, rst_out_closed, "rst_out_closed", "resets_sent", "reason", "closed")         \
    X(SYN_IN_SYNC, syn_in_sync, "syn_in_sync", "syns_in_synchronized", NULL, NULL)                 \
    X(BAD_HEADER, bad_header, "bad_header", "bad_segments", "reason", "header")                    \
    X(BAD_OPTIONS, bad_options, "bad_options", "bad_segments", "reason", "options")                \
    X(BAD_CHECKSUM, bad_checksum, "bad_checksum", "bad_segments", "reason", "checksum")            \
    X(BAD_NO_ACK, bad_no_ack, "bad_no_ack", "bad_segments", "reason", "no_ack")                    \
    X(BAD_LINEARIZE, bad_linearize, "bad_linearize", "bad_segments", "reason", "linearize")        \
    X(KEEPALIVE_PROBES, keepalive_probes, "keepalive_probes", "keepalive_probes", NULL, NULL)      \
    X(KEEPALIVE_TIMEOUTS, keepalive_timeouts, "keepalive_timeouts", "timeouts", "kind",            \
      "keepalive")                                                                                 \
    X(TIMEOUTS, timeouts, "timeouts", "timeouts", "kind", "retransmission")                        \
    X(TIMEWAIT_REUSED, timewait_reused, "timewait_reused", "timewait_reused", NULL, NULL)          \
    X(PMTU_LOWERED, pmtu_lowered, "pmtu_lowered", "pmtu", "result", "lowered")                     \
    X(PMTU_IGNORED, pmtu_ignored, "pmtu_ignored", "pmtu", "result", "ignored")                     \
    X(NO_MBUF, no_mbuf, "no_mbuf", "no_mbuf", NULL, NULL)                                          \
    X(TX_FULL, tx_full, "tx_full", "tx_full", NULL, NULL)
/* clang-format on */

enum xlb_tcp_counter {
#define XLB_TCP_COUNTER_ENUM(id, field, name, family, label, value) XLB_TCP_C_##id,
    XLB_TCP_COUNTERS(XLB_TCP_COUNTER_ENUM)
#undef XLB_TCP_COUNTER_ENUM
        XLB_TCP_COUNTER_MAX
};

/* How a counter is shown: its flat name, and its Prometheus family and label. */
struct xlb_tcp_counter_desc {
    const char *name, *family, *label, *value;
};
extern const struct xlb_tcp_counter_desc xlb_tcp_counter_descs[XLB_TCP_COUNTER_MAX];

/* One worker's endpoint, as its worker last published it (all 0 without one). */
struct xlb_tcp_stats {
    uint64_t counters[XLB_TCP_COUNTER_MAX];
    /* Gauges: control blocks in use (TIME-WAIT included), the most in use at the end of any
     * loop since start, and the bytes its reassembly queues hold. */
    uint64_t conns_in_use, conns_high_water, ooo_bytes;
};

/* into += from, counters and gauges (for the totals of every worker). */
static inline void xlb_tcp_stats_add(struct xlb_tcp_stats *into, const struct xlb_tcp_stats *from)
{
    for (int i = 0; i < XLB_TCP_COUNTER_MAX; i++)
        into->counters[i] += from->counters[i];
    into->conns_in_use += from->conns_in_use;
    into->conns_high_water += from->conns_high_water;
    into->ooo_bytes += from->ooo_bytes;
}

#endif
