/* Congestion control: the calls of xlb_tcp_cc.h, dispatched by kind; the shared rules
 * (initial window, slow start, reductions' floors) are here, each kind's growth in its file. */
#include "xlb_tcp_cc.h"
#include "xlb_tcp_cc_kinds.h"

void xlb_tcp_cc_init(struct xlb_tcp_cc *cc, enum xlb_tcp_cc_kind kind, uint32_t mss)
{
    *cc = (struct xlb_tcp_cc){.kind = (uint8_t)kind, .mss = mss ? mss : 536};
    cc->cwnd = XLB_TCP_CC_INITIAL_SEGMENTS * cc->mss;
    cc->ssthresh = UINT32_MAX; /* RFC 5681 (3): arbitrarily high until a loss */
}

/* RFC 3465: slow start grows by the bytes acknowledged, at most L segments per ACK. */
static void slow_start(struct xlb_tcp_cc *cc, uint32_t acked)
{
    uint32_t limit = XLB_TCP_CC_ABC_LIMIT * cc->mss;
    uint64_t grown = (uint64_t)cc->cwnd + (acked < limit ? acked : limit);
    cc->cwnd = grown > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)grown;
}

void xlb_tcp_cc_on_ack(struct xlb_tcp_cc *cc, uint32_t acked, uint32_t srtt_us, uint64_t now_us)
{
    if (acked == 0)
        return;
    if (cc->cwnd < cc->ssthresh) {
        slow_start(cc, acked);
        return;
    }
    if (cc->kind == XLB_TCP_CC_NEWRENO)
        xlb_tcp_newreno_avoid(cc, acked);
    else
        xlb_tcp_cubic_avoid(cc, acked, srtt_us, now_us);
}

uint32_t xlb_tcp_cc_floor(const struct xlb_tcp_cc *cc, uint64_t bytes)
{
    uint32_t two = 2 * cc->mss; /* RFC 5681 (4): never below two segments */
    return bytes < two ? two : (bytes > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)bytes);
}

void xlb_tcp_cc_on_congestion(struct xlb_tcp_cc *cc, uint32_t flight_size, uint64_t now_us)
{
    (void)now_us;
    if (cc->kind == XLB_TCP_CC_NEWRENO)
        cc->ssthresh = xlb_tcp_cc_floor(cc, flight_size / 2);
    else
        xlb_tcp_cubic_reduce(cc, flight_size);
    cc->cwnd = cc->ssthresh;
    cc->acked_in_ca = 0;
}

void xlb_tcp_cc_on_recovery_exit(struct xlb_tcp_cc *cc)
{
    cc->cwnd = cc->ssthresh;
}

void xlb_tcp_cc_on_rto(struct xlb_tcp_cc *cc, uint32_t flight_size, uint32_t backoff,
                       uint64_t now_us)
{
    (void)now_us;
    /* RFC 5681 (4) applies to the first expiry of a loss only: a later one would halve a
     * window that the first already brought down to one segment. */
    if (backoff <= 1)
        xlb_tcp_cc_on_congestion(cc, flight_size, now_us);
    cc->cwnd = cc->mss; /* the loss window */
    cc->acked_in_ca = 0;
    cc->cubic.epoch_start_us = 0;
}

void xlb_tcp_cc_on_idle(struct xlb_tcp_cc *cc)
{
    uint32_t restart = XLB_TCP_CC_INITIAL_SEGMENTS * cc->mss;
    if (cc->cwnd > restart)
        cc->cwnd = restart;
    cc->cubic.epoch_start_us = 0; /* RFC 9438 5.8: no growth credited for the idle time */
}

void xlb_tcp_cc_set_mss(struct xlb_tcp_cc *cc, uint32_t mss)
{
    if (mss == 0 || mss == cc->mss)
        return;
    /* Keep the window's size in segments: bytes shrink with a smaller MSS. */
    cc->cwnd = xlb_tcp_cc_floor(cc, (uint64_t)cc->cwnd / cc->mss * mss);
    if (cc->ssthresh != UINT32_MAX)
        cc->ssthresh = (uint32_t)((uint64_t)cc->ssthresh / cc->mss * mss);
    cc->mss = mss;
    if (cc->cwnd < 2 * mss)
        cc->cwnd = 2 * mss;
}
