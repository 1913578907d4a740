/*
 * Small value types shared by the validated xDS configs (listener_config.h, route_config.h,
 * cluster_config.h, endpoint_config.h). Plain C, no pointers into protobuf messages.
 */
#ifndef XLB_XDS_TYPES_H
#define XLB_XDS_TYPES_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A google.protobuf.Duration that passed gRPC's checks: seconds in [0, 315576000000] and nanos
 * in [0, 999999999]. Kept as the two fields because the largest valid value does not fit a
 * 64-bit count of nanoseconds.
 */
struct xlb_duration {
    int64_t seconds;
    int32_t nanos;
};

/* Whole milliseconds, rounded down (the largest valid duration fits comfortably). */
static inline uint64_t xlb_duration_ms(const struct xlb_duration *d)
{
    return (uint64_t)d->seconds * 1000u + (uint64_t)d->nanos / 1000000u;
}

/* The cookie of CookieBasedSessionState (A55/A60). */
struct xlb_session_cookie {
    char *name; /* never empty */
    char *path; /* "" when unset: the filter applies to every path */
    bool has_ttl;
    struct xlb_duration ttl;
};

/*
 * A StatefulSession filter config. `enabled` is false when session_state is absent: gRPC then
 * installs the filter as a no-op.
 */
struct xlb_stateful_session {
    bool enabled;
    struct xlb_session_cookie cookie;
};

void xlb_stateful_session_free(struct xlb_stateful_session *session);

#endif
