/*
 * bench_fwd over real DPDK devices: a memif pair in the bench's own process. The bench's
 * "generator" sends each burst on the memif client, the "worker" receives it on the memif
 * server, forwards it (or, for the bare loop, sends it straight back) and transmits it on the
 * server, and a "sink" drains the client. Only the worker's part is timed, so both loops pay
 * the memif driver's receive and transmit, which the in-process loops leave out.
 */
#ifndef BENCH_FWD_MEMIF_H
#define BENCH_FWD_MEMIF_H

#include <stdint.h>

#include "bench_fwd_setup.h"

/* EAL arguments for the pair (two --vdev, on an abstract socket named after the process). */
void memif_eal_args(char server[128], char client[128]);
/* Configure and start both ports on b.pool and wait (bounded) until their link is up. */
void memif_open(void);
void memif_close(void);

struct memif_cycles {
    uint64_t bare, c2b, b2c; /* worker cycles of one run of each */
};

/* One run of each loop, `packets` over the established flows of f, drawn with `seed`. */
void memif_run(const struct flows *f, uint32_t packets, uint64_t seed, struct memif_cycles *out);

#endif
