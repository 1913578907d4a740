/*
 * Weighted round robin (A58): endpoint weights from load reports and the stride scheduler's
 * shares. See xlb_wrr.h.
 */
#include "xlb_wrr.h"

void xlb_wrr_config_default(struct xlb_wrr_config *cfg)
{
    *cfg = (struct xlb_wrr_config){
        .blackout_ms = XLB_WRR_BLACKOUT_MS,
        .expiration_ms = XLB_WRR_EXPIRATION_MS,
        .update_ms = XLB_WRR_UPDATE_MS,
        .oob_period_ms = XLB_WRR_OOB_PERIOD_MS,
        .error_penalty = XLB_WRR_DEFAULT_PENALTY,
        .oob = false,
    };
}

bool xlb_wrr_weight_update(struct xlb_endpoint_weight *w, float error_penalty,
                           const struct xlb_wrr_report *r, uint64_t now_ms)
{
    double utilization =
        r->application_utilization > 0 ? r->application_utilization : r->cpu_utilization;
    /* NaN and negative figures fail these tests too: a report that cannot weigh is ignored. */
    if (!(utilization > 0) || !(r->qps > 0))
        return false;
    if (r->eps > 0)
        utilization += r->eps / r->qps * error_penalty;
    double weight = r->qps / utilization;
    if (!(weight > 0) || weight > 3.0e38)
        return false;
    if (now_ms == 0)
        now_ms = 1;
    if (w->non_empty_since_ms == XLB_WEIGHT_NEVER)
        w->non_empty_since_ms = now_ms;
    w->last_update_ms = now_ms;
    w->weight = (float)weight;
    return true;
}

/* 0 when expired (*expired set) or in blackout, else the weight. */
static float current_weight(const struct xlb_endpoint_weight *w, const struct xlb_wrr_config *cfg,
                            uint64_t now_ms, bool *expired)
{
    *expired = false;
    if (w->last_update_ms == 0)
        return 0;
    if (now_ms - w->last_update_ms >= cfg->expiration_ms) {
        *expired = true;
        return 0;
    }
    if (cfg->blackout_ms > 0 && (w->non_empty_since_ms == XLB_WEIGHT_NEVER ||
                                 now_ms - w->non_empty_since_ms < cfg->blackout_ms))
        return 0;
    return w->weight;
}

float xlb_wrr_weight_get(struct xlb_endpoint_weight *w, const struct xlb_wrr_config *cfg,
                         uint64_t now_ms)
{
    bool expired;
    float weight = current_weight(w, cfg, now_ms, &expired);
    if (expired)
        w->non_empty_since_ms = XLB_WEIGHT_NEVER;
    return weight;
}

float xlb_wrr_weight_peek(const struct xlb_endpoint_weight *w, const struct xlb_wrr_config *cfg,
                          uint64_t now_ms)
{
    bool expired;
    return current_weight(w, cfg, now_ms, &expired);
}

uint32_t xlb_wrr_share(const struct xlb_wrr_round *r, float weight)
{
    if (weight < 0)
        return 0;
    if (r->weighted < 2) /* A58: round robin until two endpoints have a weight */
        return XLB_WRR_SCALE;
    double w = weight > 0 ? weight : r->sum / r->weighted;
    double share = w / r->max * XLB_WRR_SCALE + 0.5;
    double floor = (double)XLB_WRR_SCALE * XLB_WRR_MIN_PERCENT / 100.0;
    return (uint32_t)(share < floor ? floor : share > XLB_WRR_SCALE ? XLB_WRR_SCALE : share);
}
