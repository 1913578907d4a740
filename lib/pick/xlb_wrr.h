/*
 * Weighted round robin from backend load reports (gRPC A58, `client_side_weighted_round_robin`).
 *
 * Two parts, both per worker (each worker is one gRPC channel with its own subchannels):
 *
 *  - an endpoint's weight (struct xlb_endpoint_weight, lib/xlb_load.h), set from the ORCA
 *    reports the worker's RPCs to it bring back: qps / (utilization + eps / qps * penalty),
 *    used only after `blackout` of continuous reports and forgotten after `expiration`
 *    without one, exactly as A58's UpdateWeight/GetWeight;
 *  - a scheduler over a locality's endpoints, rebuilt every `update_period` from those weights.
 *    A58 describes an earliest-deadline-first queue; xlb, like gRPC C-core, uses a stride
 *    scheduler with the same shares and no per-pick queue: each endpoint's weight is scaled to
 *    1..XLB_WRR_SCALE (the largest to XLB_WRR_SCALE) and a sequence number walks the endpoints
 *    in rounds; in round r endpoint i is taken when its share crosses an integer between rounds
 *    r and r+1, so an endpoint of scaled weight s is taken s times in XLB_WRR_SCALE rounds.
 *    Weights below 1 % of the largest count as 1 % (as C-core's scheduler clamps them), which
 *    bounds a pick to 100 rounds.
 *
 * Pure functions over caller-owned memory, no allocation: workers, `xlbctl simulate`, tests and
 * benchmarks run the same code.
 */
#ifndef XLB_WRR_H
#define XLB_WRR_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_load.h"

#define XLB_WRR_SCALE       65535u
#define XLB_WRR_MIN_PERCENT 1u
#define XLB_WRR_MAX_ROUNDS  (100u / XLB_WRR_MIN_PERCENT + 1u)
/* A58's defaults and floor. */
#define XLB_WRR_BLACKOUT_MS     10000u
#define XLB_WRR_EXPIRATION_MS   180000u
#define XLB_WRR_UPDATE_MS       1000u
#define XLB_WRR_UPDATE_MIN_MS   100u
#define XLB_WRR_OOB_PERIOD_MS   10000u
#define XLB_WRR_DEFAULT_PENALTY 1.0f

/* A cluster's ClientSideWeightedRoundRobin config, validated and defaulted. */
struct xlb_wrr_config {
    uint64_t blackout_ms;
    uint64_t expiration_ms;
    uint64_t update_ms; /* at least XLB_WRR_UPDATE_MIN_MS */
    uint64_t oob_period_ms;
    float error_penalty; /* >= 0 */
    bool oob;            /* enable_oob_load_report: per-call reports are then ignored */
};

void xlb_wrr_config_default(struct xlb_wrr_config *cfg);

/* The figures of one ORCA load report that A58 reads. */
struct xlb_wrr_report {
    double cpu_utilization;
    double application_utilization;
    double qps; /* rps_fractional */
    double eps;
};

/*
 * A58 UpdateWeight: a report with utilization (application_utilization when set, else
 * cpu_utilization) and qps both above 0 sets the weight; any other report is ignored.
 * Returns whether it was used. now_ms >= 1.
 */
bool xlb_wrr_weight_update(struct xlb_endpoint_weight *w, float error_penalty,
                           const struct xlb_wrr_report *r, uint64_t now_ms);

/* A58: a subchannel that becomes READY starts its blackout again with its next report. */
static inline void xlb_wrr_weight_ready(struct xlb_endpoint_weight *w)
{
    w->non_empty_since_ms = XLB_WEIGHT_NEVER;
}

/* A58 GetWeight: 0 while in blackout, or once expired (which also restarts the blackout). */
float xlb_wrr_weight_get(struct xlb_endpoint_weight *w, const struct xlb_wrr_config *cfg,
                         uint64_t now_ms);
/* The same without the side effect, for readers on the control plane. */
float xlb_wrr_weight_peek(const struct xlb_endpoint_weight *w, const struct xlb_wrr_config *cfg,
                          uint64_t now_ms);

/*
 * The scheduler's shares, in two passes over a round's endpoints with no memory of their own:
 * add every weight (0: "no weight yet", which gets the mean of the others; negative: "not a
 * candidate"), then ask each one's share. Fewer than two weights above 0: every candidate gets
 * the same share, A58's round robin fallback. A share of 0 is never taken.
 */
struct xlb_wrr_round {
    uint32_t candidates, weighted;
    double sum, max;
};

static inline void xlb_wrr_round_add(struct xlb_wrr_round *r, float weight)
{
    if (weight < 0)
        return;
    r->candidates++;
    if (weight > 0) {
        r->weighted++;
        r->sum += weight;
        r->max = weight > r->max ? weight : r->max;
    }
}

uint32_t xlb_wrr_share(const struct xlb_wrr_round *r, float weight);

/* Per worker and locality: where the scheduler is. */
struct xlb_wrr_sched {
    uint64_t built_ms;   /* when the shares were last computed, with built */
    uint64_t generation; /* the compiled cluster they were computed for */
    uint32_t epoch;      /* the worker's subchannel state epoch they were computed at */
    uint32_t seq;        /* the next position: index seq % n in round seq / n */
    bool built;
};

/*
 * Whether the entry at `index` of n, with scaled share `scaled`, is taken at sequence
 * position `seq`. Each entry's rounds are offset by its index so that equal shares are not
 * taken in the same rounds.
 */
static inline bool xlb_wrr_takes(uint32_t scaled, uint32_t index, uint32_t n, uint32_t seq)
{
    if (scaled == 0)
        return false;
    uint64_t round = seq / n;
    uint64_t phase = ((uint64_t)index * 40503u) % XLB_WRR_SCALE;
    uint64_t before = (round * scaled + phase) / XLB_WRR_SCALE;
    uint64_t after = ((round + 1) * scaled + phase) / XLB_WRR_SCALE;
    return after > before;
}

#endif
