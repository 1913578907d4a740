/*
 * The A50 sweep: swap the call counters, run the success-rate and failure-percentage
 * algorithms, then un-eject whoever has served its time and let the others' multipliers decay.
 *
 * Endpoints are visited in index order, which stands in for A50's "for each address" over its
 * map. Where A50 leaves a point open, the choice follows gRPC C-core and is listed in
 * docs/conformance.md.
 */
#include <math.h>

#include "outlier_internal.h"

static uint64_t volume(const struct xlb_outlier_endpoint *ep)
{
    return ep->last_ok + ep->last_fail;
}

/*
 * A50's "If the percentage of ejected addresses is greater than max_ejection_percent, stop",
 * in exact integers: ejected / n * 100 > max. Because the test is strict and is made before
 * each candidate, the first ejection of a sweep is always allowed when none is ejected yet:
 * that is the "at least one address regardless of the value" of max_ejection_percent.
 */
static bool over_max_percent(const struct xlb_outlier_detector *od)
{
    return (uint64_t)od->n_ejected * 100 > (uint64_t)od->config.max_ejection_percent * od->n;
}

/* A random integer in [0, 100) below the enforcement percentage. */
static bool enforce(struct xlb_outlier_detector *od, uint32_t percentage)
{
    return xlb_rng_below(od->rng, 100) < percentage;
}

/*
 * An endpoint with no calls has no success rate; C-core leaves it out of both algorithms even
 * when request_volume is 0, and so does this.
 */
static bool has_volume(const struct xlb_outlier_endpoint *ep, uint32_t request_volume)
{
    uint64_t v = volume(ep);
    return v > 0 && v >= request_volume;
}

static double success_rate(const struct xlb_outlier_endpoint *ep)
{
    return (double)ep->last_ok / (double)volume(ep);
}

static void run_success_rate(struct xlb_outlier_detector *od, uint64_t now_ms)
{
    const uint32_t rv = od->config.success_rate.request_volume;
    uint32_t qualifying = 0;
    double sum = 0;

    for (uint32_t i = 0; i < od->n; i++) {
        if (has_volume(&od->endpoints[i], rv)) {
            qualifying++;
            sum += success_rate(&od->endpoints[i]);
        }
    }
    /* Step 1; an empty set has no mean even when minimum_hosts is 0. */
    if (qualifying == 0 || qualifying < od->config.success_rate.minimum_hosts)
        return;

    /* Step 2: the population standard deviation, as Envoy and C-core compute it. */
    double mean = sum / qualifying;
    double variance = 0;
    for (uint32_t i = 0; i < od->n; i++) {
        if (has_volume(&od->endpoints[i], rv)) {
            double d = success_rate(&od->endpoints[i]) - mean;
            variance += d * d;
        }
    }
    double stdev = sqrt(variance / qualifying);
    double threshold = mean - stdev * ((double)od->config.success_rate.stdev_factor / 1000.0);

    /* Step 3. An endpoint ejected earlier that still saw calls may be ejected again, which
     * restarts its ejection and raises its multiplier (A50 does not exclude it; C-core agrees). */
    for (uint32_t i = 0; i < od->n; i++) {
        if (over_max_percent(od))
            return;
        if (!has_volume(&od->endpoints[i], rv))
            continue;
        if (success_rate(&od->endpoints[i]) < threshold &&
            enforce(od, od->config.success_rate.enforcement_percentage))
            xlb_outlier_eject(od, i, now_ms);
    }
}

static void run_failure_percentage(struct xlb_outlier_detector *od, uint64_t now_ms)
{
    const uint32_t rv = od->config.failure_percentage.request_volume;
    const uint64_t threshold = od->config.failure_percentage.threshold;

    /* Step 1 counts every address, with or without traffic (C-core counts only candidates). */
    if (od->n < od->config.failure_percentage.minimum_hosts)
        return;
    for (uint32_t i = 0; i < od->n; i++) {
        const struct xlb_outlier_endpoint *ep = &od->endpoints[i];
        if (over_max_percent(od))
            return;
        if (!has_volume(ep, rv))
            continue;
        /* Already ejected (by success rate in this sweep or earlier): C-core skips it, so one
         * sweep never raises a multiplier twice. */
        if (ep->ejected)
            continue;
        /* failures / volume * 100 > threshold, exactly. */
        if (ep->last_fail * 100 > threshold * volume(ep) &&
            enforce(od, od->config.failure_percentage.enforcement_percentage))
            xlb_outlier_eject(od, i, now_ms);
    }
}

void xlb_outlier_sweep(struct xlb_outlier_detector *od, uint64_t now_ms)
{
    /* Steps 1 and 2: now_ms is the timestamp of this sweep; swap the buckets. */
    for (uint32_t i = 0; i < od->n; i++) {
        struct xlb_outlier_endpoint *ep = &od->endpoints[i];
        ep->last_ok = ep->active_ok;
        ep->last_fail = ep->active_fail;
        ep->active_ok = ep->active_fail = 0;
    }
    if (od->config.success_rate_enabled)
        run_success_rate(od, now_ms);
    if (od->config.failure_percentage_enabled)
        run_failure_percentage(od, now_ms);

    /* Step 5. "After" is strict; an endpoint un-ejected here keeps its multiplier this sweep. */
    for (uint32_t i = 0; i < od->n; i++) {
        struct xlb_outlier_endpoint *ep = &od->endpoints[i];
        if (!ep->ejected) {
            if (ep->multiplier > 0)
                ep->multiplier--;
        } else if (now_ms >
                   ep->ejected_at_ms + xlb_outlier_ejection_ms(&od->config, ep->multiplier)) {
            xlb_outlier_uneject(od, i);
        }
    }
}
