/* RFC 6298's estimator; see xlb_tcp_rtt.h. */
#include "xlb_tcp_rtt.h"

static uint32_t clamp(uint64_t v, uint32_t lo, uint32_t hi)
{
    if (v < lo)
        return lo;
    return v > hi ? hi : (uint32_t)v;
}

void xlb_tcp_rtt_init(struct xlb_tcp_rtt *r, uint32_t min_rto_us, uint32_t max_rto_us)
{
    if (max_rto_us < min_rto_us)
        max_rto_us = min_rto_us;
    *r = (struct xlb_tcp_rtt){.min_rto_us = min_rto_us, .max_rto_us = max_rto_us};
    r->rto_us = clamp(XLB_TCP_RTO_INITIAL_US, min_rto_us, max_rto_us);
}

void xlb_tcp_rtt_sample(struct xlb_tcp_rtt *r, uint32_t rtt_us)
{
    if (rtt_us == 0)
        rtt_us = 1; /* below the clock: still a sample */
    if (!r->has_sample) {
        /* 2.2: SRTT <- R, RTTVAR <- R/2. */
        r->srtt_us = rtt_us;
        r->rttvar_us = rtt_us / 2;
        r->has_sample = 1;
    } else {
        /* 2.3, with alpha = 1/8 and beta = 1/4; RTTVAR first, from the old SRTT. */
        uint32_t err = r->srtt_us > rtt_us ? r->srtt_us - rtt_us : rtt_us - r->srtt_us;
        r->rttvar_us = r->rttvar_us - r->rttvar_us / 4 + err / 4;
        r->srtt_us = r->srtt_us - r->srtt_us / 8 + rtt_us / 8;
    }
    uint64_t var = 4ull * r->rttvar_us;
    if (var < XLB_TCP_RTO_GRANULARITY_US)
        var = XLB_TCP_RTO_GRANULARITY_US;
    r->rto_us = clamp((uint64_t)r->srtt_us + var, r->min_rto_us, r->max_rto_us);
    r->backoff = 0; /* 5.7: a new sample recomputes the RTO without the backoff */
}

void xlb_tcp_rtt_backoff(struct xlb_tcp_rtt *r)
{
    /* Counted even past the maximum (the timeout is capped, the count tells repeated expiries
     * of one loss apart from a new one); 31 keeps the shift within 64 bits. */
    if (r->backoff < 31)
        r->backoff++;
}

uint32_t xlb_tcp_rtt_timeout_us(const struct xlb_tcp_rtt *r)
{
    return clamp((uint64_t)r->rto_us << r->backoff, r->min_rto_us, r->max_rto_us);
}
