/* Detector lifecycle: config and timer rules, the endpoint set, call counting, read-outs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outlier_internal.h"

struct xlb_outlier_detector *xlb_outlier_create(struct xlb_rng *rng)
{
    struct xlb_outlier_detector *od = calloc(1, sizeof(*od));
    if (od == NULL)
        return NULL;
    od->rng = rng;
    od->next_sweep_ms = XLB_OUTLIER_NO_SWEEP;
    return od;
}

void xlb_outlier_free(struct xlb_outlier_detector *od)
{
    if (od == NULL)
        return;
    free(od->endpoints);
    free(od->bitmap);
    free(od->ejected_list);
    free(od->unejected_list);
    free(od);
}

void xlb_outlier_clear_changes(struct xlb_outlier_detector *od)
{
    od->changes = (struct xlb_outlier_changes){
        .ejected = od->ejected_list,
        .unejected = od->unejected_list,
    };
}

void xlb_outlier_eject(struct xlb_outlier_detector *od, uint32_t index, uint64_t now_ms)
{
    struct xlb_outlier_endpoint *ep = &od->endpoints[index];
    if (!ep->ejected) {
        ep->ejected = true;
        od->n_ejected++;
        od->bitmap[index / 64] |= UINT64_C(1) << (index % 64);
        od->ejected_list[od->changes.n_ejected++] = index;
    }
    ep->ejected_at_ms = now_ms;
    if (ep->multiplier < UINT32_MAX)
        ep->multiplier++;
}

void xlb_outlier_uneject(struct xlb_outlier_detector *od, uint32_t index)
{
    struct xlb_outlier_endpoint *ep = &od->endpoints[index];
    if (!ep->ejected)
        return;
    ep->ejected = false;
    ep->ejected_at_ms = 0;
    od->n_ejected--;
    od->bitmap[index / 64] &= ~(UINT64_C(1) << (index % 64));
    od->unejected_list[od->changes.n_unejected++] = index;
}

uint64_t xlb_outlier_ejection_ms(const struct xlb_outlier_detection *config, uint32_t multiplier)
{
    uint64_t base = xlb_duration_ms(&config->base_ejection_time);
    uint64_t max = xlb_duration_ms(&config->max_ejection_time);
    uint64_t cap = base > max ? base : max;
    if (base != 0 && multiplier > cap / base)
        return cap;
    return base * multiplier;
}

void xlb_outlier_set_config(struct xlb_outlier_detector *od,
                            const struct xlb_outlier_detection *config, uint64_t now_ms)
{
    uint64_t interval = xlb_duration_ms(&config->interval);

    od->config = *config;
    od->counting =
        config->enabled && (config->success_rate_enabled || config->failure_percentage_enabled);
    xlb_outlier_clear_changes(od);

    if (!od->counting) {
        /* A50: no timer and no timer start; C-core also resets each endpoint's ejection. */
        od->timer_running = false;
        od->timer_start_ms = 0;
        od->next_sweep_ms = XLB_OUTLIER_NO_SWEEP;
        for (uint32_t i = 0; i < od->n; i++) {
            xlb_outlier_uneject(od, i);
            od->endpoints[i].multiplier = 0;
            od->endpoints[i].active_ok = od->endpoints[i].active_fail = 0;
        }
        return;
    }
    if (!od->timer_running) {
        od->timer_running = true;
        od->timer_start_ms = now_ms;
        od->next_sweep_ms = now_ms + interval;
        for (uint32_t i = 0; i < od->n; i++)
            od->endpoints[i].active_ok = od->endpoints[i].active_fail = 0;
        return;
    }
    /* Restart for interval - (now - start), or at once when that is negative. */
    uint64_t due = od->timer_start_ms + interval;
    od->next_sweep_ms = due > now_ms ? due : now_ms;
}

static int key_cmp(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(struct xlb_outlier_key));
}

/* Sort old endpoints by key (they lead each record) so each new key is one binary search. */
static struct xlb_outlier_endpoint *sorted_copy(const struct xlb_outlier_endpoint *eps, uint32_t n)
{
    struct xlb_outlier_endpoint *copy = malloc((n ? n : 1) * sizeof(*copy));
    if (copy == NULL)
        return NULL;
    if (n) {
        memcpy(copy, eps, n * sizeof(*copy));
        qsort(copy, n, sizeof(*copy), key_cmp);
    }
    return copy;
}

/* Returns 0, -EINVAL when a key repeats, or -ENOMEM. */
static int check_unique(const struct xlb_outlier_key *keys, uint32_t n)
{
    struct xlb_outlier_key *copy = malloc((n ? n : 1) * sizeof(*copy));
    bool dup = false;
    if (copy == NULL)
        return -ENOMEM;
    if (n)
        memcpy(copy, keys, n * sizeof(*copy));
    qsort(copy, n, sizeof(*copy), key_cmp);
    for (uint32_t i = 1; i < n && !dup; i++)
        dup = key_cmp(&copy[i - 1], &copy[i]) == 0;
    free(copy);
    return dup ? -EINVAL : 0;
}

int xlb_outlier_set_endpoints(struct xlb_outlier_detector *od, const struct xlb_outlier_key *keys,
                              uint32_t n)
{
    if (n > 0 && keys == NULL)
        return -EINVAL;
    int rc = check_unique(keys, n);
    if (rc != 0)
        return rc;

    size_t words = (n + 63) / 64;
    struct xlb_outlier_endpoint *eps = calloc(n ? n : 1, sizeof(*eps));
    uint64_t *bitmap = calloc(words ? words : 1, sizeof(*bitmap));
    uint32_t *ej = malloc((n ? n : 1) * sizeof(*ej));
    uint32_t *unej = malloc((n ? n : 1) * sizeof(*unej));
    struct xlb_outlier_endpoint *old = sorted_copy(od->endpoints, od->n);
    if (eps == NULL || bitmap == NULL || ej == NULL || unej == NULL || old == NULL) {
        free(eps);
        free(bitmap);
        free(ej);
        free(unej);
        free(old);
        return -ENOMEM;
    }

    uint32_t n_ejected = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct xlb_outlier_endpoint *found =
            bsearch(&keys[i], old, od->n, sizeof(*old), key_cmp);
        if (found != NULL)
            eps[i] = *found;
        else
            eps[i].key = keys[i];
        if (eps[i].ejected) {
            n_ejected++;
            bitmap[i / 64] |= UINT64_C(1) << (i % 64);
        }
    }
    free(old);
    free(od->endpoints);
    free(od->bitmap);
    free(od->ejected_list);
    free(od->unejected_list);
    od->endpoints = eps;
    od->bitmap = bitmap;
    od->ejected_list = ej;
    od->unejected_list = unej;
    od->n = n;
    od->n_ejected = n_ejected;
    xlb_outlier_clear_changes(od);
    return 0;
}

void xlb_outlier_add_calls(struct xlb_outlier_detector *od, uint32_t index, uint64_t successes,
                           uint64_t failures)
{
    if (!od->counting || index >= od->n)
        return;
    od->endpoints[index].active_ok += successes;
    od->endpoints[index].active_fail += failures;
}

uint64_t xlb_outlier_next_sweep_ms(const struct xlb_outlier_detector *od)
{
    return od->next_sweep_ms;
}

bool xlb_outlier_poll(struct xlb_outlier_detector *od, uint64_t now_ms)
{
    if (!od->timer_running || now_ms < od->next_sweep_ms)
        return false;
    xlb_outlier_clear_changes(od);
    xlb_outlier_sweep(od, now_ms);
    /* A50: when the timer fires, its start becomes now. */
    od->timer_start_ms = now_ms;
    od->next_sweep_ms = now_ms + xlb_duration_ms(&od->config.interval);
    return true;
}

const struct xlb_outlier_changes *xlb_outlier_changes(const struct xlb_outlier_detector *od)
{
    return &od->changes;
}

uint32_t xlb_outlier_size(const struct xlb_outlier_detector *od)
{
    return od->n;
}

uint32_t xlb_outlier_n_ejected(const struct xlb_outlier_detector *od)
{
    return od->n_ejected;
}

const uint64_t *xlb_outlier_ejected_bitmap(const struct xlb_outlier_detector *od)
{
    return od->bitmap;
}

int xlb_outlier_endpoint_info(const struct xlb_outlier_detector *od, uint32_t index,
                              struct xlb_outlier_endpoint_info *out)
{
    if (index >= od->n)
        return -EINVAL;
    const struct xlb_outlier_endpoint *ep = &od->endpoints[index];
    *out = (struct xlb_outlier_endpoint_info){
        .ejected = ep->ejected,
        .ejected_at_ms = ep->ejected_at_ms,
        .multiplier = ep->multiplier,
        .last_successes = ep->last_ok,
        .last_failures = ep->last_fail,
    };
    if (ep->ejected)
        out->ejected_until_ms =
            ep->ejected_at_ms + xlb_outlier_ejection_ms(&od->config, ep->multiplier);
    return 0;
}
