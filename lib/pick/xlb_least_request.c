/* Least request: see xlb_least_request.h. */
#include "xlb_least_request.h"

#include <errno.h>
#include <stdlib.h>

int xlb_least_request_choice_count(bool present, uint64_t configured, uint32_t *out)
{
    if (!present) {
        *out = XLB_LEAST_REQUEST_DEFAULT_CHOICES;
        return 0;
    }
    if (configured < XLB_LEAST_REQUEST_MIN_CHOICES)
        return -EINVAL;
    *out = configured > XLB_LEAST_REQUEST_MAX_CHOICES ? XLB_LEAST_REQUEST_MAX_CHOICES
                                                      : (uint32_t)configured;
    return 0;
}

int xlb_least_request_build(const uint32_t *slots, const uint32_t *weights, uint32_t n,
                            uint32_t choice_count, struct xlb_least_request **out)
{
    if (n == 0 || choice_count < XLB_LEAST_REQUEST_MIN_CHOICES ||
        choice_count > XLB_LEAST_REQUEST_MAX_CHOICES)
        return -EINVAL;
    struct xlb_least_request *lr = malloc(sizeof(*lr) + (uint64_t)n * sizeof(lr->slots[0]));
    if (lr == NULL)
        return -ENOMEM;
    lr->weights = malloc((uint64_t)n * sizeof(lr->weights[0]));
    if (lr->weights == NULL) {
        free(lr);
        return -ENOMEM;
    }
    lr->n_slots = n;
    lr->choice_count = choice_count;
    lr->weights_differ = false;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t w = weights != NULL && weights[i] > 0 ? weights[i] : 1;
        lr->slots[i] = slots[i];
        lr->weights[i] = w;
        if (w != lr->weights[0])
            lr->weights_differ = true;
    }
    *out = lr;
    return 0;
}

void xlb_least_request_free(struct xlb_least_request *lr)
{
    if (lr == NULL)
        return;
    free(lr->weights);
    free(lr);
}

uint64_t xlb_least_request_bytes(const struct xlb_least_request *lr)
{
    if (lr == NULL)
        return 0;
    return sizeof(*lr) + (uint64_t)lr->n_slots * (sizeof(lr->slots[0]) + sizeof(lr->weights[0]));
}

/*
 * Is entry a less loaded than entry b? Equal weights: fewer in flight. Otherwise Envoy's
 * effective weight w / (in_flight + 1) with bias 1, compared without division.
 */
bool xlb_least_request_less_loaded(const struct xlb_least_request *lr, uint32_t a, uint64_t load_a,
                                   uint32_t b, uint64_t load_b)
{
    if (!lr->weights_differ)
        return load_a < load_b;
    return (load_a + 1) * lr->weights[b] < (load_b + 1) * lr->weights[a];
}

static uint32_t first_usable_from(const struct xlb_least_request *lr, uint32_t at,
                                  const uint64_t *usable)
{
    return xlb_next_usable(lr->slots, lr->n_slots, at, usable);
}

uint32_t xlb_least_request_in_flight(const struct xlb_in_flight_view *v, uint32_t slot)
{
    uint32_t key = slot;
    if (v->keys != NULL) {
        if (slot >= v->n_keys)
            return 0;
        key = *(const uint32_t *)(const void *)((const char *)v->keys + slot * v->key_stride);
    }
    if (key >= v->n_counts)
        return 0;
    return *(const uint32_t *)(const void *)((const char *)v->counts + key * v->count_stride);
}

uint32_t xlb_least_request_pick(const struct xlb_least_request *lr, const uint32_t *in_flight,
                                const uint64_t *usable, struct xlb_rng *rng,
                                struct xlb_least_request_trace *trace)
{
    const struct xlb_in_flight_view view = {
        .counts = in_flight, .count_stride = sizeof(uint32_t), .n_counts = UINT32_MAX};
    return xlb_least_request_pick_view(lr, &view, usable, rng, trace);
}

uint32_t xlb_least_request_pick_view(const struct xlb_least_request *lr,
                                     const struct xlb_in_flight_view *view, const uint64_t *usable,
                                     struct xlb_rng *rng, struct xlb_least_request_trace *trace)
{
    if (trace != NULL) {
        trace->n_candidates = 0;
        trace->fell_back = false;
    }
    if (lr == NULL || lr->n_slots == 0)
        return XLB_PICK_NONE;
    uint32_t best = UINT32_MAX; /* index into slots[] */
    uint64_t best_load = 0;
    for (uint32_t c = 0; c < lr->choice_count; c++) {
        uint32_t at = xlb_rng_below(rng, lr->n_slots);
        uint32_t slot = lr->slots[at];
        bool ok = xlb_slot_usable(usable, slot);
        uint32_t load = xlb_least_request_in_flight(view, slot);
        if (trace != NULL) {
            trace->slots[c] = slot;
            trace->in_flight[c] = load;
            trace->usable[c] = ok;
            trace->n_candidates = c + 1;
        }
        if (!ok)
            continue;
        if (best == UINT32_MAX || xlb_least_request_less_loaded(lr, at, load, best, best_load)) {
            best = at;
            best_load = load;
        }
    }
    if (best != UINT32_MAX)
        return lr->slots[best];
    if (trace != NULL)
        trace->fell_back = true;
    return first_usable_from(lr, xlb_rng_below(rng, lr->n_slots), usable);
}
