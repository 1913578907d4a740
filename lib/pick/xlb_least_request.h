/*
 * Least request (gRPC A48, Envoy's least_request): draw `choice_count` endpoints at random and
 * keep the one with the fewest requests in flight.
 *
 * The endpoint array belongs to the snapshot (one per priority/locality, built on the control
 * plane) and is never written by workers. The in-flight counts are an array the caller owns,
 * indexed by endpoint slot (xlb_pick.h); the pick only reads it, so a worker can hand it its
 * own per-worker counts and `xlbctl simulate` the sums over workers.
 *
 * Weights: gRPC ignores them. Envoy, when the weights of the set differ, scales each
 * endpoint's weight by 1 / (in_flight + 1)^active_request_bias, bias 1.0 by default. Here the
 * same effective weight decides between the drawn candidates: with equal weights that is
 * exactly "fewest in flight", with unequal ones an endpoint of weight 2 counts as half as
 * loaded as one of weight 1 with the same requests. The comparison is in integers
 * ((a + 1) * wb < (b + 1) * wa), so no floating point and no division per pick.
 */
#ifndef XLB_LEAST_REQUEST_H
#define XLB_LEAST_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_pick.h"
#include "xlb_rng.h"

/* A48: absent means 2; below 2 is refused; above 10 is capped to 10. */
#define XLB_LEAST_REQUEST_DEFAULT_CHOICES 2u
#define XLB_LEAST_REQUEST_MIN_CHOICES     2u
#define XLB_LEAST_REQUEST_MAX_CHOICES     10u

struct xlb_least_request {
    uint32_t n_slots;
    uint32_t choice_count;
    bool weights_differ; /* false: plain "fewest in flight", as gRPC */
    uint32_t *weights;   /* per entry of slots[], all >= 1 */
    uint32_t slots[];
};

/* What one pick compared, for `xlbctl simulate`. */
struct xlb_least_request_trace {
    uint32_t n_candidates;
    uint32_t slots[XLB_LEAST_REQUEST_MAX_CHOICES];
    uint32_t in_flight[XLB_LEAST_REQUEST_MAX_CHOICES];
    bool usable[XLB_LEAST_REQUEST_MAX_CHOICES];
    bool fell_back; /* no drawn candidate was usable: first usable from a random index */
};

/*
 * The choice count a config asks for, per A48: `present` false gives 2, a value below 2 is
 * -EINVAL (the caller NACKs), above 10 gives 10. Returns 0 and sets *out.
 */
int xlb_least_request_choice_count(bool present, uint64_t configured, uint32_t *out);

/*
 * Copy slots and weights (NULL weights: all 1; a weight of 0 counts as 1, as Envoy's host
 * weights are at least 1). Returns 0, -EINVAL for no slots or a choice count outside
 * [2, 10], or -ENOMEM.
 */
int xlb_least_request_build(const uint32_t *slots, const uint32_t *weights, uint32_t n,
                            uint32_t choice_count, struct xlb_least_request **out);
void xlb_least_request_free(struct xlb_least_request *lr);
uint64_t xlb_least_request_bytes(const struct xlb_least_request *lr);

/*
 * One pick: `choice_count` draws with replacement (as gRPC), unusable draws skipped, the
 * least loaded usable candidate kept (the first drawn on a tie). When no draw was usable, the
 * first usable endpoint from a random index, so a pick fails only when none is usable
 * (XLB_PICK_NONE). `in_flight` is indexed by slot; `usable` may be NULL (all usable); `trace`
 * may be NULL. At most choice_count + n_slots steps.
 */
uint32_t xlb_least_request_pick(const struct xlb_least_request *lr, const uint32_t *in_flight,
                                const uint64_t *usable, struct xlb_rng *rng,
                                struct xlb_least_request_trace *trace);

/*
 * Where the in-flight counts live when they are not a flat array indexed by slot: the LB tree
 * picks endpoint indexes while a worker counts per stable endpoint slot, inside its load
 * struct. The count of slot s: the uint32 at counts + key(s) * count_stride, key(s) the uint32
 * at keys + s * key_stride, or s itself when keys is NULL.
 */
struct xlb_in_flight_view {
    const void *counts;
    size_t count_stride;
    const void *keys;
    size_t key_stride;
    uint32_t n_keys; /* keys beyond: counted as 0 in flight (a slot the tables had no room for) */
    uint32_t n_counts;
};

/* The in-flight count of slot `slot` in a view. */
uint32_t xlb_least_request_in_flight(const struct xlb_in_flight_view *v, uint32_t slot);
/* Whether entry a (of slots[]) with load_a in flight is less loaded than entry b with load_b:
 * fewer in flight, or with weights, the larger weight / (in flight + 1). For picks that
 * filter candidates otherwise (READY subchannels, lib/lb/xlb_lb_pick_ready.c). */
bool xlb_least_request_less_loaded(const struct xlb_least_request *lr, uint32_t a, uint64_t load_a,
                                   uint32_t b, uint64_t load_b);

/* The same pick over a view (xlb_least_request_pick is this with a flat array). */
uint32_t xlb_least_request_pick_view(const struct xlb_least_request *lr,
                                     const struct xlb_in_flight_view *view, const uint64_t *usable,
                                     struct xlb_rng *rng, struct xlb_least_request_trace *trace);

#endif
