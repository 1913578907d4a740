/*
 * Per-worker counters: the layout workers write and the control plane reads.
 *
 * Each worker owns one cache-aligned struct xlb_worker_stats and is its only writer; the
 * control plane reads the plain aligned 64-bit fields without locks (a torn read is
 * impossible for an aligned 64-bit load on the platforms DPDK supports).
 */
#ifndef XLB_COUNTERS_H
#define XLB_COUNTERS_H

#include <stdint.h>

#include <rte_common.h>

#include "xlb_limits.h"
#include "xlb_tcp_stats.h"
#include "xlb_tls_counters.h"

/* Why a worker dropped a packet; the name is what operators see. */
#define XLB_DROP_REASONS(X)                                                                        \
    X(L2_TRUNCATED, "l2_truncated")                                                                \
    X(VLAN_TRUNCATED, "vlan_truncated")                                                            \
    X(ETHERTYPE_UNSUPPORTED, "ethertype_unsupported")                                              \
    X(NOT_OUR_MAC, "not_our_mac")                                                                  \
    X(ARP_MALFORMED, "arp_malformed")                                                              \
    X(ARP_NOT_OURS, "arp_not_ours")                                                                \
    X(IPV4_MALFORMED, "ipv4_malformed")                                                            \
    X(IPV4_BAD_CHECKSUM, "ipv4_bad_checksum")                                                      \
    X(IPV4_FRAGMENT, "ipv4_fragment")                                                              \
    X(IPV6_MALFORMED, "ipv6_malformed")                                                            \
    X(IPV6_EXT_HEADER, "ipv6_extension_header")                                                    \
    X(NOT_OUR_ADDRESS, "not_our_address")                                                          \
    X(ICMP_MALFORMED, "icmp_malformed")                                                            \
    X(ICMP_BAD_CHECKSUM, "icmp_bad_checksum")                                                      \
    X(ICMP_UNHANDLED, "icmp_unhandled")                                                            \
    X(ICMP_SEQ_OUT_OF_WINDOW, "icmp_seq_out_of_window")                                            \
    X(ND_MALFORMED, "nd_malformed")                                                                \
    X(TCP_MALFORMED, "tcp_malformed")                                                              \
    X(TCP_NO_SERVICE, "tcp_no_service")                                                            \
    X(TCP_NO_FLOW, "tcp_no_flow")                                                                  \
    X(TCP_OUT_OF_WINDOW, "tcp_out_of_window")                                                      \
    X(NO_BACKEND, "no_backend")                                                                    \
    X(LB_DROP_OVERLOAD, "lb_drop_overload")                                                        \
    X(LB_CIRCUIT_OPEN, "lb_circuit_open")                                                          \
    X(BACKEND_FAMILY, "backend_family_mismatch")                                                   \
    X(NEXT_HOP_UNRESOLVED, "next_hop_unresolved")                                                  \
    X(FLOW_TABLE_FULL, "flow_table_full")                                                          \
    X(FLOW_HASH_BUCKET_FULL, "flow_hash_bucket_full")                                              \
    X(SNAT_PORTS_EXHAUSTED, "snat_ports_exhausted")                                                \
    X(NO_SNAT_ADDRESS, "no_snat_address")                                                          \
    X(FLOW_OTHER_WORKER, "flow_other_worker")                                                      \
    X(REDIRECT_FULL, "redirect_ring_full")                                                         \
    X(SYN_POOL_FULL, "syn_pool_full")                                                              \
    X(SYN_PROXY_BACKEND_PENDING, "syn_proxy_backend_pending")                                      \
    X(L7_NO_MBUF, "l7_no_mbuf")                                                                    \
    X(L7_UNEXPECTED, "l7_unexpected_segment")                                                      \
    X(L7_REPLAYED, "l7_already_replayed")                                                          \
    X(L7_OUT_OF_ORDER, "l7_out_of_order")                                                          \
    X(L7_NO_ROOM, "l7_no_room")                                                                    \
    X(RELAY_NO_ROUTE, "relay_no_route")                                                            \
    X(RELAY_ENDED, "relay_segment_after_end")                                                      \
    X(STREAM_NO_ROUTE, "stream_no_route")                                                          \
    X(STREAM_ENDED, "stream_segment_after_end")                                                    \
    X(PROTOCOL_UNSUPPORTED, "l4_protocol_unsupported")                                             \
    X(MULTI_SEGMENT, "multi_segment")                                                              \
    X(NO_MBUF, "no_mbuf")                                                                          \
    X(TX_FULL, "tx_full")

enum xlb_drop_reason {
#define XLB_DROP_ENUM(id, name) XLB_DROP_##id,
    XLB_DROP_REASONS(XLB_DROP_ENUM)
#undef XLB_DROP_ENUM
        XLB_DROP_MAX
};

/* What a worker did with packets it handled itself. */
#define XLB_EVENT_COUNTERS(X)                                                                      \
    X(ARP_REPLIES, "arp_replies")                                                                  \
    X(ND_ADVERTISEMENTS, "nd_advertisements")                                                      \
    X(ECHO_REPLIES, "icmp_echo_replies")                                                           \
    X(CONSUMED, "handled_without_reply")                                                           \
    X(SOLICITATIONS_SENT, "neighbour_solicitations_sent")                                          \
    X(NEIGHBOURS_REPORTED, "neighbours_reported")                                                  \
    X(NEIGHBOUR_REPORTS_LOST, "neighbour_reports_lost")                                            \
    X(CONTROL_MESSAGES, "control_messages")                                                        \
    X(FLOWS_CREATED, "flows_created")                                                              \
    X(FLOWS_RESUMED, "flows_resumed")                                                              \
    X(FLOWS_CLOSED, "flows_closed")                                                                \
    X(REDIRECTED_OUT, "redirected_to_owner")                                                       \
    X(REDIRECTED_IN, "redirected_from_others")                                                     \
    X(TCP_RESETS_SENT, "tcp_resets_sent")                                                          \
    X(FLOWS_FLUSHED, "flows_flushed")                                                              \
    X(FLOWS_EVICTED, "flows_evicted")                                                              \
    X(ICMP_ERRORS_TRANSLATED, "icmp_errors_translated")                                            \
    X(L7_SYN_COOKIES_SENT, "l7_syn_cookies_sent")                                                  \
    X(L7_BAD_COOKIES, "l7_bad_cookies")                                                            \
    X(L7_CONNECTIONS, "l7_connections")                                                            \
    X(L7_POOL_FULL, "l7_pool_full")                                                                \
    X(L7_BINDING_POOL_FULL, "l7_binding_pool_full")                                                \
    X(L7_HPACK_POOL_FULL, "l7_hpack_pool_full")                                                    \
    X(L7_PROTOCOL_ERRORS, "l7_protocol_errors")                                                    \
    X(L7_RECEIVE_OVERFLOWS, "l7_receive_overflows")                                                \
    X(L7_RECEIVE_TIMEOUTS, "l7_receive_timeouts")                                                  \
    X(L7_ABORTED, "l7_aborted")                                                                    \
    X(L7_REJECTED, "l7_rejected")                                                                  \
    X(L7_BOUND, "l7_bound")                                                                        \
    X(L7_SPLICED, "l7_spliced")                                                                    \
    X(L7_NEXT_ADDRESS, "l7_next_address")                                                          \
    X(L7_SET_COOKIES, "l7_set_cookies")                                                            \
    X(L7_SET_COOKIE_MISSED, "l7_set_cookie_missed")                                                \
    X(L7_STREAMS, "l7_streams")                                                                    \
    X(L7_STREAMS_UNTRACKED, "l7_streams_untracked")                                                \
    X(L7_COOKIE_OTHER_ENDPOINT, "l7_cookie_other_endpoint")                                        \
    X(L7_INSPECT_ERRORS, "l7_inspect_errors")                                                      \
    X(TCP_MSS_CLAMPED, "tcp_mss_clamped")                                                          \
    X(SYN_PROXY_COOKIES_SENT, "syn_proxy_cookies_sent")                                            \
    X(SYN_PROXY_CIRCUIT_COOKIES, "syn_proxy_circuit_cookies")                                      \
    X(SYN_PROXY_VALID_ACKS, "syn_proxy_valid_acks")                                                \
    X(SYN_PROXY_INVALID_ACKS, "syn_proxy_invalid_acks")                                            \
    X(SYN_PROXY_BACKEND_SYN_RETRANSMITS, "syn_proxy_backend_syn_retransmits")                      \
    X(SYN_PROXY_BACKEND_FAILURES, "syn_proxy_backend_failures")                                    \
    X(RELAY_SYN_COOKIES_SENT, "relay_syn_cookies_sent")                                            \
    X(RELAY_BAD_COOKIES, "relay_bad_cookies")                                                      \
    X(RELAY_OPENED, "relay_connections")                                                           \
    X(RELAY_CLOSED, "relay_connections_closed")                                                    \
    X(RELAY_POOL_FULL, "relay_pool_full")                                                          \
    X(RELAY_RESETS_PASSED, "relay_resets_passed")                                                  \
    X(RELAY_BACKEND_FAILURES, "relay_backend_failures")                                            \
    X(SYN_PROXY_BACKEND_TIMEOUTS, "syn_proxy_backend_timeouts")                                    \
    X(SYN_PROXY_STALE_RESETS, "syn_proxy_stale_resets")                                            \
    X(STREAM_SYN_COOKIES_SENT, "stream_syn_cookies_sent")                                          \
    X(STREAM_BAD_COOKIES, "stream_bad_cookies")                                                    \
    X(STREAM_OPENED, "stream_connections")                                                         \
    X(STREAM_CLOSED, "stream_connections_closed")                                                  \
    X(STREAM_POOL_FULL, "stream_pool_full")                                                        \
    X(STREAM_HEAP_FULL, "stream_heap_full")                                                        \
    X(STREAM_SESSION_ERRORS, "stream_session_errors")                                              \
    X(STREAM_RPCS, "stream_rpcs")                                                                  \
    X(STREAM_RPCS_UNAVAILABLE, "stream_rpcs_unavailable")                                          \
    X(STREAM_RPCS_FORWARDED, "stream_rpcs_forwarded")                                              \
    X(STREAM_RPCS_FULL, "stream_rpcs_full")                                                        \
    X(STREAM_STREAMS_REFUSED, "stream_streams_refused")                                            \
    X(STREAM_RPCS_QUEUED, "stream_rpcs_queued")                                                    \
    X(STREAM_RPCS_QUEUE_FULL, "stream_rpcs_queue_full")                                            \
    X(STREAM_RPCS_DEADLINE, "stream_rpcs_deadline_exceeded")                                       \
    X(STREAM_RPCS_RETRIED, "stream_rpcs_retried")                                                  \
    X(STREAM_SUBCHANNELS, "stream_subchannels")                                                    \
    X(STREAM_SUB_GOAWAYS, "stream_subchannel_goaways")                                             \
    X(STREAM_SUBS_RETIRED, "stream_subchannels_retired")                                           \
    X(STREAM_SUBS_EXTRA, "stream_subchannels_extra")                                               \
    X(STREAM_ADDRESS_ATTEMPTS, "stream_address_attempts")                                          \
    X(STREAM_ATTEMPTS_ABANDONED, "stream_attempts_abandoned")                                      \
    X(STREAM_TLS_NO_MEMORY, "stream_tls_no_memory")                                                \
    X(STREAM_TLS_TIMEOUTS, "stream_tls_handshake_timeouts")                                        \
    X(STREAM_TLS_DEFERRED, "stream_tls_handshakes_deferred")                                       \
    X(STREAM_LINGER_TIMEOUTS, "stream_linger_timeouts")                                            \
    X(STREAM_HEALTH_WATCHES, "stream_health_watches")                                              \
    X(STREAM_HEALTH_NOT_SERVING, "stream_health_not_serving")                                      \
    X(STREAM_HEALTH_FAILED, "stream_health_watch_failures")                                        \
    X(STREAM_HEALTH_UNIMPLEMENTED, "stream_health_unimplemented")                                  \
    X(STREAM_ORCA_REPORTS, "stream_orca_reports")                                                  \
    X(STREAM_ORCA_UNUSABLE, "stream_orca_reports_unusable")                                        \
    X(STREAM_ORCA_MALFORMED, "stream_orca_reports_malformed")                                      \
    X(STREAM_ORCA_OOB_CALLS, "stream_orca_oob_calls")                                              \
    X(STREAM_ORCA_OOB_FAILED, "stream_orca_oob_call_failures")                                     \
    X(STREAM_ORCA_OOB_UNIMPLEMENTED, "stream_orca_oob_unimplemented")

enum xlb_event_counter {
#define XLB_EVENT_ENUM(id, name) XLB_EVENT_##id,
    XLB_EVENT_COUNTERS(XLB_EVENT_ENUM)
#undef XLB_EVENT_ENUM
        XLB_EVENT_MAX
};

struct xlb_worker_stats {
    uint64_t rx_packets;
    uint64_t tx_packets;
    uint64_t events[XLB_EVENT_MAX];
    uint64_t drops[XLB_DROP_MAX];
    /* Snapshot generation the worker last processed a burst with. */
    uint64_t observed_generation;
    /* TSC of the worker's last quiescent-state report to RCU. */
    uint64_t last_quiescent_tsc;
    uint64_t loops;
    uint64_t busy_loops; /* loops whose rx bursts returned packets */
    /* TSC cycles spent in loops that processed packets, and in loops that found none (as
     * OVS-DPDK's pmd-stats-show splits them): busy / (busy + idle) is the worker's load. */
    uint64_t busy_cycles;
    uint64_t idle_cycles;
    /* Gauges the worker sets after each poll loop: entries in use, the most in use at the end
     * of any loop since it started (its high-water mark), and the capacity, of its flow table
     * and of its L7 connection pool (all 0 without one). */
    uint64_t flows_in_use, flows_high_water, flows_capacity;
    uint64_t l7_in_use, l7_high_water, l7_capacity;
    /* The L7 HPACK heap's bytes (dataplane/l7/): in use, the most ever in use, its size. */
    uint64_t l7_hpack_in_use, l7_hpack_high_water, l7_hpack_capacity;
    /* The stream mode's client connections whose HTTP/2 session is live, and its RPCs in
     * flight (0 without the engine): what a drain waits for. */
    uint64_t stream_sessions, stream_rpcs;
    /* The worker's TCP endpoint (dataplane/tcp/), copied after each loop that changed it. */
    struct xlb_tcp_stats tcp;
    /* Each TLS VIP's handshakes, by its index among them (xlb_vip_view.tls_index). */
    struct xlb_tls_counters tls[XLB_MAX_TLS_VIPS];
    /* The subchannels' handshakes to clusters with upstream TLS (A29), all clusters. */
    struct xlb_tls_counters upstream_tls;
} __rte_cache_aligned;

const char *xlb_drop_reason_name(enum xlb_drop_reason reason);
const char *xlb_event_counter_name(enum xlb_event_counter counter);

#endif
