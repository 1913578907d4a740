/*
 * EAL for a fuzz target: one lcore, no hugepages, no PCI, and nothing in /var/run/dpdk (no
 * shared config, memory maps or telemetry socket: nothing attaches to a fuzzer, and every run
 * would leave megabytes there). Aborts when EAL does not start.
 */
#ifndef XLB_FUZZ_EAL_H
#define XLB_FUZZ_EAL_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>

#include "xlb_const.h"

/* name: the target's, for its private file prefix (name-PID). */
static inline void fuzz_eal_init(const char *name)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "--file-prefix=%s-%d", name, (int)getpid());
    char *eal[] = {XLB_STR("fuzz"),
                   XLB_STR("--no-huge"),
                   XLB_STR("--no-pci"),
                   XLB_STR("--no-shconf"),
                   XLB_STR("--no-telemetry"),
                   XLB_STR("-m"),
                   XLB_STR("128"),
                   XLB_STR("-l"),
                   XLB_STR("0"),
                   XLB_STR("--log-level=error"),
                   prefix,
                   NULL};
    if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0)
        abort();
    /* What DPDK still creates is the empty runtime directory itself. */
    rmdir(rte_eal_get_runtime_dir());
}

#endif
