/*
 * The EAL of a test process (the packet and unit tests that need DPDK). A test shares its
 * memory with no secondary process: --no-shconf and --no-telemetry keep DPDK from writing its
 * config, memory maps and sockets to /var/run/dpdk/PREFIX (megabytes, left after every run);
 * --in-memory would say the same, but --no-huge rules it out. DPDK still makes the (empty)
 * runtime directory: it is removed at once, so that not even a crashed test leaves it.
 */
#ifndef XLB_TEST_EAL_H
#define XLB_TEST_EAL_H

#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>

#include "xlb_const.h"

/* One lcore, memory_mb MB of heap without hugepages, file prefix xlb-NAME-PID. 0; -1 when the
 * EAL did not start; -2 when the runtime directory could not be removed (DPDK put something
 * in it after all). */
static inline int test_eal_init(const char *name, unsigned memory_mb)
{
    char prefix[64], memory[16];
    snprintf(memory, sizeof(memory), "%u", memory_mb);
    snprintf(prefix, sizeof(prefix), "--file-prefix=xlb-%s-%d", name, (int)getpid());
    char *argv[] = {XLB_STR("xlb-test"),
                    XLB_STR("--no-huge"),
                    XLB_STR("--no-pci"),
                    XLB_STR("--no-shconf"),
                    XLB_STR("-m"),
                    memory,
                    XLB_STR("-l"),
                    XLB_STR("0"),
                    XLB_STR("--log-level=warning"),
                    XLB_STR("--no-telemetry"),
                    prefix,
                    NULL};
    if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
        return -1;
    return rmdir(rte_eal_get_runtime_dir()) == 0 ? 0 : -2;
}

#endif
