/*
 * What the engines that end a client's TCP themselves share to open a connection (the relay,
 * dataplane/relay/, and the stream mode, dataplane/stream/): the worker's clock in
 * milliseconds, the SYN cookie keys of its flow table, the check of an ACK that returns a
 * cookie, the segment as xlb's TCP endpoint takes it, and the MSS a connection on a port may
 * use (its MTU and xlb.tcp_mss_clamp, forwarding.md, as a NAT VIP's SYNs are clamped).
 */
#ifndef XLB_TCP_ACCEPT_H
#define XLB_TCP_ACCEPT_H

#include <stdbool.h>
#include <stdint.h>

#include "flow/flow.h"
#include "xlb_syn_cookie.h"
#include "xlb_tcp.h"

uint64_t xlb_accept_now_ms(const struct xlb_burst_ctx *ctx);
void xlb_accept_cookie_keys(const struct xlb_burst_ctx *ctx, struct xlb_syn_cookie_keys *k);
/* Whether the client's ACK returns a SYN cookie of this worker for its connection: the
 * handshake's ACK, or a later segment of payload_len bytes of the client's first flight when
 * that ACK and the segments before were lost (xlb_syn_cookie_check_flight). */
bool xlb_accept_cookie_valid(const struct xlb_burst_ctx *ctx, const struct rte_tcp_hdr *tcp,
                             uint32_t payload_len, const struct xlb_flow_key *key);
/* The segment without its Ethernet header. */
struct rte_mbuf *xlb_accept_ip_packet(struct xlb_frame *frame);
void xlb_accept_mss_limit(struct xlb_tcp_endpoint *ep, const struct xlb_snapshot *snap,
                          uint8_t family, uint16_t port_index);

#endif
