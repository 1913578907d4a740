/*
 * gRPC's connection backoff (the connection-backoff document of grpc/grpc): the first retry
 * after 1 s, each next one 1.6 times longer up to 120 s, every delay jittered by +-20 %.
 * Reset once the server has answered. The random source is the caller's, so tests are exact.
 */
#ifndef XLB_GRPC_BACKOFF_H
#define XLB_GRPC_BACKOFF_H

#include <stdint.h>

#include "xlb_rng.h"

#define XLB_BACKOFF_INITIAL_MS 1000.0
#define XLB_BACKOFF_MULTIPLIER 1.6
#define XLB_BACKOFF_MAX_MS     120000.0
#define XLB_BACKOFF_JITTER     0.2

struct xlb_grpc_backoff {
    double next_ms; /* the un-jittered delay of the next attempt */
    struct xlb_rng rng;
};

void xlb_grpc_backoff_init(struct xlb_grpc_backoff *b, uint64_t seed);
/* The delay before the next attempt, in ms; advances the schedule. */
uint64_t xlb_grpc_backoff_next(struct xlb_grpc_backoff *b);
void xlb_grpc_backoff_reset(struct xlb_grpc_backoff *b);

#endif
