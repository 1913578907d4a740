/*
 * Cluster.outlier_detection as A50 maps it onto gRPC's outlier_detection policy: durations
 * valid and non-negative, percentages at most 100, success rate on unless
 * enforcing_success_rate is 0, failure percentage on only when enforcing_failure_percentage is
 * set and non-zero. The other Envoy algorithms (consecutive 5xx, gateway failures, local origin
 * errors) are ignored, as in gRPC.
 */
#include <string.h>

#include "validate_cluster_internal.h"

typedef Envoy__Config__Cluster__V3__OutlierDetection OutlierDetection;

static uint32_t value_or(const Google__Protobuf__UInt32Value *v, uint32_t dflt)
{
    return v != NULL ? v->value : dflt;
}

static bool read_duration(struct xv_ctx *ctx, const char *field,
                          const Google__Protobuf__Duration *in, int64_t default_seconds,
                          struct xlb_duration *out)
{
    out->seconds = default_seconds;
    out->nanos = 0;
    if (in == NULL)
        return true;
    char path[XV_PATH_MAX];
    xv_key(path, "outlier_detection", field);
    return xv_duration(ctx, path, in, out);
}

static bool check_percent(struct xv_ctx *ctx, const char *field, uint32_t value)
{
    if (value <= 100)
        return true;
    char path[XV_PATH_MAX];
    xv_key(path, "outlier_detection", field);
    xv_error(ctx, path, "%u is not in 0..100", value);
    return false;
}

static bool read_success_rate(struct xv_ctx *ctx, const OutlierDetection *od,
                              struct xlb_outlier_detection *out)
{
    uint32_t enforcing = value_or(od->enforcing_success_rate, 100);
    if (!check_percent(ctx, "enforcing_success_rate", enforcing))
        return false;
    out->success_rate_enabled = enforcing != 0;
    if (!out->success_rate_enabled)
        return true;
    out->success_rate.enforcement_percentage = enforcing;
    out->success_rate.stdev_factor = value_or(od->success_rate_stdev_factor, 1900);
    out->success_rate.minimum_hosts = value_or(od->success_rate_minimum_hosts, 5);
    out->success_rate.request_volume = value_or(od->success_rate_request_volume, 100);
    return true;
}

static bool read_failure_percentage(struct xv_ctx *ctx, const OutlierDetection *od,
                                    struct xlb_outlier_detection *out)
{
    uint32_t enforcing = value_or(od->enforcing_failure_percentage, 0);
    if (!check_percent(ctx, "enforcing_failure_percentage", enforcing))
        return false;
    out->failure_percentage_enabled = enforcing != 0;
    if (!out->failure_percentage_enabled)
        return true;
    out->failure_percentage.enforcement_percentage = enforcing;
    out->failure_percentage.threshold = value_or(od->failure_percentage_threshold, 85);
    out->failure_percentage.minimum_hosts = value_or(od->failure_percentage_minimum_hosts, 5);
    out->failure_percentage.request_volume = value_or(od->failure_percentage_request_volume, 50);
    return check_percent(ctx, "failure_percentage_threshold", out->failure_percentage.threshold);
}

bool xv_outlier_detection(struct xv_ctx *ctx, const Envoy__Config__Cluster__V3__Cluster *msg,
                          struct xlb_outlier_detection *out)
{
    memset(out, 0, sizeof(*out));
    const OutlierDetection *od = msg->outlier_detection;
    if (od == NULL)
        return true;
    out->enabled = true;
    bool ok = read_duration(ctx, "interval", od->interval, 10, &out->interval);
    ok = read_duration(ctx, "base_ejection_time", od->base_ejection_time, 30,
                       &out->base_ejection_time) &&
         ok;
    ok = read_duration(ctx, "max_ejection_time", od->max_ejection_time, 300,
                       &out->max_ejection_time) &&
         ok;
    out->max_ejection_percent = value_or(od->max_ejection_percent, 10);
    ok = check_percent(ctx, "max_ejection_percent", out->max_ejection_percent) && ok;
    ok = read_success_rate(ctx, od, out) && ok;
    ok = read_failure_percentage(ctx, od, out) && ok;
    return ok;
}
