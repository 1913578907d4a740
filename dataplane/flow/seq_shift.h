/*
 * Moving a segment between two sequence spaces: a connection whose two halves were opened
 * separately (the L7 splice, the L4 SYN proxy) has one ISN towards the client and another
 * towards the backend, and, with timestamps, two TSval clocks. A segment crossing over gets its
 * sequence number, acknowledgment, SACK edges and timestamps shifted by fixed offsets (mod 2^32)
 * and its checksum patched for exactly the bytes that changed (RFC 1624): no payload is read.
 */
#ifndef XLB_SEQ_SHIFT_H
#define XLB_SEQ_SHIFT_H

#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_tcp.h>

#include "checksum.h"
#include "packet_parse.h"
#include "xlb_tcp_options.h"

/* What to add (mod 2^32) to each field of a segment crossing over. */
struct xlb_seq_shift {
    uint32_t seq, ack, sack, tsval, tsecr;
};

/*
 * Shift the header's seq and ack (ack only when the ACK flag is set), and the options' SACK
 * edges and timestamps, patching the TCP checksum. The header's data offset must have been
 * checked against the segment. False, with nothing changed, when the options are malformed.
 */
static inline bool xlb_seq_shift_segment(struct rte_tcp_hdr *tcp, const struct xlb_seq_shift *s)
{
    uint32_t opts_len = xlb_tcp_options_len(tcp);
    uint8_t *opts = (uint8_t *)(tcp + 1);
    struct xlb_tcp_opts parsed;
    if (opts_len > 0 && xlb_tcp_options_parse(opts, opts_len, &parsed) != 0)
        return false;
    uint8_t before[60];
    uint32_t len = (uint32_t)sizeof(*tcp) + opts_len;
    memcpy(before, tcp, len);
    tcp->sent_seq = rte_cpu_to_be_32(rte_be_to_cpu_32(tcp->sent_seq) + s->seq);
    if (tcp->tcp_flags & RTE_TCP_ACK_FLAG)
        tcp->recv_ack = rte_cpu_to_be_32(rte_be_to_cpu_32(tcp->recv_ack) + s->ack);
    if (opts_len > 0)
        xlb_tcp_options_shift(opts, &parsed, s->tsval, s->tsecr, s->sack);
    /* The checksum field itself is among the bytes compared: keep it out of the sum. */
    uint16_t csum = tcp->cksum;
    ((struct rte_tcp_hdr *)before)->cksum = 0;
    tcp->cksum = 0;
    xlb_csum_apply(&csum, xlb_csum_diff(before, tcp, len));
    tcp->cksum = csum;
    return true;
}

#endif
