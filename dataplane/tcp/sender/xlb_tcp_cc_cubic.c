/*
 * CUBIC (RFC 9438): after a reduction the window follows W_cubic(t) = C (t - K)^3 + W_max,
 * concave up to the old maximum, then convex beyond it, but never slower than Reno would grow
 * (the Reno-friendly region). Floating point, in bytes and seconds: the formulas read as the
 * RFC writes them, and a worker is a user-space thread that may use the FPU.
 */
#include <math.h>

#include "xlb_tcp_cc_kinds.h"

#define CUBIC_C    0.4 /* section 5.1 */
#define CUBIC_BETA 0.7 /* section 4.6 */

/* Section 4.3: 3 (1 - beta) / (1 + beta), so that CUBIC's average matches Reno's with beta. */
static double reno_alpha(void)
{
    return 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA);
}

/* W_cubic(t) in bytes, t in seconds (equation 1, with C scaled to bytes by the MSS). */
static double w_cubic(const struct xlb_tcp_cc *cc, double t)
{
    double d = t - cc->cubic.k_us / 1e6;
    return CUBIC_C * cc->mss * d * d * d + cc->cubic.w_max;
}

/* The first ACK of congestion avoidance after a reduction, slow start or idle: a new epoch. */
static void start_epoch(struct xlb_tcp_cc *cc, uint64_t now_us)
{
    struct xlb_tcp_cubic *k = &cc->cubic;
    k->epoch_start_us = now_us ? now_us : 1;
    k->cwnd_epoch = cc->cwnd;
    k->w_est = cc->cwnd;
    k->grow_carry = 0;
    if (k->w_max <= cc->cwnd) {
        /* No maximum above us (slow start ended without loss): grow convex from here. */
        k->w_max = cc->cwnd;
        k->k_us = 0;
    } else {
        /* Equation 2: K = cbrt((W_max - cwnd_epoch) / C), in segments and seconds. */
        double segs = (double)(k->w_max - k->cwnd_epoch) / cc->mss;
        k->k_us = (uint32_t)(cbrt(segs / CUBIC_C) * 1e6);
    }
}

void xlb_tcp_cubic_avoid(struct xlb_tcp_cc *cc, uint32_t acked, uint32_t srtt_us, uint64_t now_us)
{
    struct xlb_tcp_cubic *k = &cc->cubic;
    if (k->epoch_start_us == 0)
        start_epoch(cc, now_us);
    double t = now_us > k->epoch_start_us ? (now_us - k->epoch_start_us) / 1e6 : 0.0;
    double cwnd = cc->cwnd;

    /* Section 4.3: the Reno-friendly estimate, alpha becoming 1 past the old window. */
    double alpha = k->w_est >= k->cwnd_prior ? 1.0 : reno_alpha();
    k->w_est += alpha * cc->mss * acked / cwnd;

    double next;
    if (w_cubic(cc, t) < k->w_est) {
        next = k->w_est; /* Reno-friendly region */
    } else {
        /* Sections 4.4 and 4.5: aim at W_cubic one RTT ahead, within [cwnd, 1.5 cwnd]. */
        double target = w_cubic(cc, t + srtt_us / 1e6);
        if (target < cwnd)
            target = cwnd;
        if (target > 1.5 * cwnd)
            target = 1.5 * cwnd;
        next = cwnd + (target - cwnd) * acked / cwnd + k->grow_carry;
    }
    if (next > UINT32_MAX / 2)
        next = UINT32_MAX / 2;
    if (next >= cwnd) {
        k->grow_carry = next - floor(next);
        cc->cwnd = (uint32_t)next;
    }
}

void xlb_tcp_cubic_reduce(struct xlb_tcp_cc *cc, uint32_t flight_size)
{
    struct xlb_tcp_cubic *k = &cc->cubic;
    /* Section 4.7, fast convergence: a loss below the last maximum means another flow has
     * joined; remember a lower maximum so that the bandwidth is released sooner. */
    if (cc->cwnd < k->w_max)
        k->w_max = (uint32_t)((uint64_t)cc->cwnd * 17 / 20); /* (1 + 0.7) / 2, exactly */
    else
        k->w_max = cc->cwnd;
    k->cwnd_prior = cc->cwnd;
    /* Section 4.6: ssthresh = flight size x beta, two segments at least. */
    cc->ssthresh = xlb_tcp_cc_floor(cc, (uint64_t)flight_size * 7 / 10); /* beta, exactly */
    k->epoch_start_us = 0;
}
