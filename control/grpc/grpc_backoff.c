#include "grpc_backoff.h"

void xlb_grpc_backoff_init(struct xlb_grpc_backoff *b, uint64_t seed)
{
    xlb_rng_seed(&b->rng, seed);
    xlb_grpc_backoff_reset(b);
}

void xlb_grpc_backoff_reset(struct xlb_grpc_backoff *b)
{
    b->next_ms = XLB_BACKOFF_INITIAL_MS;
}

uint64_t xlb_grpc_backoff_next(struct xlb_grpc_backoff *b)
{
    double base = b->next_ms;
    double grown = base * XLB_BACKOFF_MULTIPLIER;
    b->next_ms = grown < XLB_BACKOFF_MAX_MS ? grown : XLB_BACKOFF_MAX_MS;
    /* Uniform in [-jitter, +jitter] of the base delay. */
    double unit = (double)(xlb_rng_next(&b->rng) >> 11) / (double)(1ull << 53);
    double delay = base * (1.0 + XLB_BACKOFF_JITTER * (2.0 * unit - 1.0));
    return (uint64_t)(delay + 0.5);
}
