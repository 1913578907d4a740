/*
 * Per-worker load counters for load reporting (LRS) and, later, outlier detection: one slot
 * per (cluster, priority, locality) and one per (cluster, drop category). The control plane
 * assigns slots and never reuses one, so every slot's counters are monotonic; workers write
 * their own copy (single writer, aligned 64-bit values) and the control plane sums the copies
 * of all workers.
 *
 * The data plane fills these as it forwards (an RPC in L7 mode, a connection in L4 mode);
 * until then nothing writes them and load reports carry zeros.
 */
#ifndef XLB_LOAD_H
#define XLB_LOAD_H

#include <stdint.h>

#define XLB_LOCALITY_SLOTS 16384 /* (cluster, priority, locality) combinations per process */
#define XLB_DROP_SLOTS     4096  /* (cluster, drop category) combinations per process */

struct xlb_locality_load {
    uint64_t issued;    /* calls started */
    uint64_t succeeded; /* calls finished OK */
    uint64_t failed;    /* calls finished otherwise */
};

/* One worker's copy. */
struct xlb_worker_load {
    struct xlb_locality_load localities[XLB_LOCALITY_SLOTS];
    uint64_t drops[XLB_DROP_SLOTS];
};

#endif
