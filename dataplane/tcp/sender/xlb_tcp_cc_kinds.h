/* Private to the congestion-control files: each kind's congestion avoidance and reduction. */
#ifndef XLB_TCP_CC_KINDS_H
#define XLB_TCP_CC_KINDS_H

#include "xlb_tcp_cc.h"

/* At least two segments, at most half the sequence space. */
uint32_t xlb_tcp_cc_floor(const struct xlb_tcp_cc *cc, uint64_t bytes);

void xlb_tcp_newreno_avoid(struct xlb_tcp_cc *cc, uint32_t acked);

void xlb_tcp_cubic_avoid(struct xlb_tcp_cc *cc, uint32_t acked, uint32_t srtt_us, uint64_t now_us);
/* Sets ssthresh (and CUBIC's W_max, K) for a congestion event. */
void xlb_tcp_cubic_reduce(struct xlb_tcp_cc *cc, uint32_t flight_size);

#endif
