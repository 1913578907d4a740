/*
 * An ORCA load report (gRPC A51) from the `endpoint-load-metrics-bin` trailer of an RPC: a
 * serialized xds.data.orca.v3.OrcaLoadReport, base64 as every binary gRPC metadata value
 * (padded or not). Read on the workers: no allocation outside the caller's stack, bounded
 * work, and anything malformed is refused, never half read.
 */
#ifndef XLB_ORCA_H
#define XLB_ORCA_H

#include <stddef.h>

#include "xlb_wrr.h"

/* The trailer's name, lower case as HTTP/2 carries it. */
#define XLB_ORCA_TRAILER "endpoint-load-metrics-bin"
/* Longest value read (base64 characters); a longer report is refused. */
#define XLB_ORCA_VALUE_MAX 1024u

/*
 * The figures A58 weighs by, from a trailer value. Returns 0, -E2BIG for a value longer than
 * XLB_ORCA_VALUE_MAX, or -EINVAL when it is not base64 or not an OrcaLoadReport.
 */
int xlb_orca_read(const char *value, size_t len, struct xlb_wrr_report *out);

/* Longest report read from an out-of-band stream (A51's StreamCoreMetrics), in bytes. */
#define XLB_ORCA_MESSAGE_MAX (XLB_ORCA_VALUE_MAX / 4 * 3)

/* The same from the serialized message itself: 0, -E2BIG, or -EINVAL. */
int xlb_orca_read_message(const uint8_t *bytes, size_t len, struct xlb_wrr_report *out);

#endif
