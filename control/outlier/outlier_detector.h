/*
 * Outlier detection as gRFC A50 specifies it, for one cluster, as pure control-plane logic.
 *
 * A packet load balancer has no subchannels and no timers of its own here: the caller owns the
 * clock (every entry point takes now_ms), the randomness (a seeded xlb_rng, so tests replay
 * exactly) and the call results, which it computes as per-interval deltas of the per-lcore
 * counters (per RPC in L7 mode, per connection in L4 mode) and feeds with xlb_outlier_add_calls.
 *
 * The endpoint set is the cluster's endpoints across all its priorities (A75), identified by
 * address and port. xlb_outlier_set_endpoints keeps the state of endpoints that stay, drops removed
 * ones and starts new ones fresh, as A50's address map does on an address update.
 *
 * The caller polls xlb_outlier_poll on its event loop; when a sweep ran, xlb_outlier_changes says
 * which endpoints were ejected or un-ejected, so a new snapshot is published only when one changed.
 */
#ifndef XLB_OUTLIER_DETECTOR_H
#define XLB_OUTLIER_DETECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster_config.h"
#include "xlb_addr.h"
#include "xlb_rng.h"

/* No sweep is scheduled: detection is disabled. */
#define XLB_OUTLIER_NO_SWEEP UINT64_MAX

/*
 * An endpoint's identity. Compared bytewise: every byte is a named field, so an initializer
 * that names the fields (or a memset) leaves no stray padding.
 */
struct xlb_outlier_key {
    struct xlb_addr addr;
    uint16_t port;
    uint8_t pad[2];
};

/* What `xlbctl endpoints` shows for one endpoint. */
struct xlb_outlier_endpoint_info {
    bool ejected;
    uint64_t ejected_at_ms;    /* time of the sweep that last ejected it; 0 when not ejected */
    uint64_t ejected_until_ms; /* un-ejected at the first sweep strictly after this */
    uint32_t multiplier;
    uint64_t last_successes; /* the interval the last sweep consumed */
    uint64_t last_failures;
};

/* Endpoint indices that changed in the last sweep or config update; valid until the next call. */
struct xlb_outlier_changes {
    uint32_t n_ejected;
    uint32_t n_unejected;
    const uint32_t *ejected;
    const uint32_t *unejected;
};

struct xlb_outlier_detector;

/*
 * A detector with no endpoints and detection disabled until xlb_outlier_set_config. The rng stays
 * the caller's and must outlive the detector. Returns NULL when out of memory.
 */
struct xlb_outlier_detector *xlb_outlier_create(struct xlb_rng *rng);
void xlb_outlier_free(struct xlb_outlier_detector *od);

/*
 * Apply a validated config (A50 "When a new config is provided"). With neither algorithm
 * enabled (or config->enabled false) the timer stops and every endpoint is un-ejected, which
 * xlb_outlier_changes then lists. Otherwise a stopped timer starts now with fresh call counters,
 * and a running one keeps its start: the next sweep is at start + interval, or now if that
 * has passed.
 */
void xlb_outlier_set_config(struct xlb_outlier_detector *od,
                            const struct xlb_outlier_detection *config, uint64_t now_ms);

/*
 * Replace the endpoint set; index i of later calls is keys[i]. Returns 0, -EINVAL when a key
 * repeats (the caller merges duplicates across priorities first), or -ENOMEM; on error the
 * detector is unchanged. Clears xlb_outlier_changes, whose indices referred to the old set.
 */
int xlb_outlier_set_endpoints(struct xlb_outlier_detector *od, const struct xlb_outlier_key *keys,
                              uint32_t n);

/* Add one interval delta of call results; ignored while detection is disabled (A50). */
void xlb_outlier_add_calls(struct xlb_outlier_detector *od, uint32_t index, uint64_t successes,
                           uint64_t failures);

/* When the next sweep is due, or XLB_OUTLIER_NO_SWEEP. */
uint64_t xlb_outlier_next_sweep_ms(const struct xlb_outlier_detector *od);

/*
 * Run the A50 sweep if it is due at now_ms and return true; return false otherwise (the last
 * changes are then kept). A late poll runs one sweep; the next is an interval after it.
 */
bool xlb_outlier_poll(struct xlb_outlier_detector *od, uint64_t now_ms);

const struct xlb_outlier_changes *xlb_outlier_changes(const struct xlb_outlier_detector *od);

uint32_t xlb_outlier_size(const struct xlb_outlier_detector *od);
uint32_t xlb_outlier_n_ejected(const struct xlb_outlier_detector *od);

/* One bit per endpoint index, bit i of word i / 64; ceil(size / 64) words. */
const uint64_t *xlb_outlier_ejected_bitmap(const struct xlb_outlier_detector *od);

/* Returns 0, or -EINVAL for an index out of range. */
int xlb_outlier_endpoint_info(const struct xlb_outlier_detector *od, uint32_t index,
                              struct xlb_outlier_endpoint_info *out);

#endif
