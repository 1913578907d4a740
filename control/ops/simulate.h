/*
 * `xlbctl simulate`: run route matching and the pick N times on the live snapshot with the
 * workers' own code (lib/lb), as a dry run that counts nothing, and report the histogram of
 * endpoints and the decision trace of the first pick.
 */
#ifndef XLB_SIMULATE_H
#define XLB_SIMULATE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "xlb_shared.h"

/* The most picks one simulate runs: bounded work on the control plane's loop. */
#define XLB_SIMULATE_MAX_PICKS 1000000

/*
 * args: {"vip": "ADDR:PORT", "path", "authority", "headers": ["k=v", ...], "cookie": "N=V",
 * "n", "seed", "connection_id"}. Returns the result, or NULL with a reason in error.
 */
cJSON *xlb_simulate(const struct xlb_snapshot *snap, const struct xlb_worker_load *loads,
                    unsigned n_workers, const cJSON *args, char *error, size_t len);

#endif
