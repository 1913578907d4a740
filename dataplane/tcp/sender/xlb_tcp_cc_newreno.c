/* NewReno's congestion avoidance (RFC 5681 (3) with RFC 3465's byte counting). */
#include "xlb_tcp_cc_kinds.h"

void xlb_tcp_newreno_avoid(struct xlb_tcp_cc *cc, uint32_t acked)
{
    /* One MSS more each time a whole window's worth of bytes has been acknowledged. */
    cc->acked_in_ca += acked;
    if (cc->acked_in_ca >= cc->cwnd) {
        cc->acked_in_ca -= cc->cwnd;
        if (cc->cwnd < UINT32_MAX / 2)
            cc->cwnd += cc->mss;
    }
}
