/*
 * The fixture the LB state tests share: a dependency manager fed proto3 JSON, an LB state
 * compiled from it, the workers' counters a real worker would write, and a pick state for
 * worker 0. The grace period that holds a freed endpoint slot ends when the test says so, and
 * the clock is virtual.
 */
#ifndef XLB_LB_STATE_FIXTURE_H
#define XLB_LB_STATE_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "../xds_deps/dm_test.h"
#include "lb_trees.h"

struct lbs_fixture {
    struct dm_fixture *dm;
    struct xlb_load_slots load_slots;
    struct xlb_lb_trees *lb;
    struct xlb_worker_load *load; /* one per worker */
    struct xlb_lb_worker w;       /* worker 0's pick state */
    bool grace_over;              /* set by the test: freed slots may be reused */
    uint64_t now;                 /* ms */
};

/* cmocka set-up with n_workers workers' counters; *state is a struct lbs_fixture. */
int lbs_setup(void **state, unsigned n_workers);
int lbs_teardown(void **state);

/* Re-run the manager and the compiler for VIP 0, as the control plane does after a cache
 * change; true if a tree was published. */
bool lbs_update(struct lbs_fixture *f);

#endif
