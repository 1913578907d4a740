/* State shared by the detector's lifecycle (outlier_detector.c) and its sweep (outlier_sweep.c). */
#ifndef XLB_OUTLIER_INTERNAL_H
#define XLB_OUTLIER_INTERNAL_H

#include "outlier_detector.h"

/* A50's map entry for one endpoint. */
struct xlb_outlier_endpoint {
    struct xlb_outlier_key key;
    /*
     * A50's two call-counter buckets: `active` collects the current interval and a sweep moves
     * it to `last`, which the algorithms read. Only the control plane writes either, so the
     * swap needs no atomics; the lcores' own counters are summed upstream into deltas.
     */
    uint64_t active_ok, active_fail;
    uint64_t last_ok, last_fail;
    bool ejected;
    uint64_t ejected_at_ms;
    uint32_t multiplier;
};

struct xlb_outlier_detector {
    struct xlb_outlier_detection config;
    bool counting; /* at least one algorithm is enabled */
    bool timer_running;
    uint64_t timer_start_ms;
    uint64_t next_sweep_ms;
    struct xlb_rng *rng;

    struct xlb_outlier_endpoint *endpoints;
    uint32_t n;
    uint32_t n_ejected;
    uint64_t *bitmap;

    /* Change lists, each at most n long. */
    uint32_t *ejected_list;
    uint32_t *unejected_list;
    struct xlb_outlier_changes changes;
};

/* Ejection and un-ejection keep the count, the bitmap and the change lists in step. */
void xlb_outlier_eject(struct xlb_outlier_detector *od, uint32_t index, uint64_t now_ms);
void xlb_outlier_uneject(struct xlb_outlier_detector *od, uint32_t index);
void xlb_outlier_clear_changes(struct xlb_outlier_detector *od);

/* min(base * multiplier, max(base, max_ejection_time)), saturating. */
uint64_t xlb_outlier_ejection_ms(const struct xlb_outlier_detection *config, uint32_t multiplier);

/* The timer callback of A50: steps 1 to 5, at now_ms. */
void xlb_outlier_sweep(struct xlb_outlier_detector *od, uint64_t now_ms);

#endif
