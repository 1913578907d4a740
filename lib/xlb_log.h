/* Logging through DPDK's log, one log type per component ("xlb.<component>"). The names are
 * bare tokens because RTE_LOG_REGISTER stringifies them; use RTE_STR(name) for the text. */
#ifndef XLB_LOG_H
#define XLB_LOG_H

#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_per_lcore.h>

#define XLB_LOG_COMPONENTS(X)                                                                      \
    X(APP, xlb.app)                                                                                \
    X(CONFIG, xlb.config)                                                                          \
    X(CONTROL, xlb.control)                                                                        \
    X(SOCKET, xlb.socket)                                                                          \
    X(SNAPSHOT, xlb.snapshot)                                                                      \
    X(NEIGHBOUR, xlb.neighbour)                                                                    \
    X(PORT, xlb.port)                                                                              \
    X(WORKER, xlb.worker)                                                                          \
    X(GRPC, xlb.grpc)                                                                              \
    X(XDS, xlb.xds)                                                                                \
    X(LRS, xlb.lrs)                                                                                \
    X(LB, xlb.lb)

#define XLB_LOGTYPE_DECLARE(id, name) extern int xlb_logtype_##id;
XLB_LOG_COMPONENTS(XLB_LOGTYPE_DECLARE)
#undef XLB_LOGTYPE_DECLARE

/* Lines read "xlb.<component>: message". */
#define XLB_LOG(level, component, fmt, ...)                                                        \
    rte_log(RTE_LOG_##level, xlb_logtype_##component, "%s: " fmt "\n",                             \
            xlb_log_component_name(xlb_logtype_##component), ##__VA_ARGS__)

/* "xlb.worker" for the worker's log type, and so on. */
const char *xlb_log_component_name(int logtype);

/*
 * For the workers' fast path: at most one line per second per call site and lcore, so that a
 * flood of bad input cannot turn logging into the bottleneck (each line is a write(2)). What
 * is suppressed is still counted by the caller's counters.
 */
#define XLB_LOG_RATELIMITED(level, component, fmt, ...)                                            \
    do {                                                                                           \
        static RTE_DEFINE_PER_LCORE(uint64_t, xlb_log_next_tsc);                                   \
        uint64_t xlb_log_now = rte_rdtsc();                                                        \
        if (xlb_log_now >= RTE_PER_LCORE(xlb_log_next_tsc)) {                                      \
            RTE_PER_LCORE(xlb_log_next_tsc) = xlb_log_now + rte_get_tsc_hz();                      \
            XLB_LOG(level, component, fmt " (at most once a second)", ##__VA_ARGS__);              \
        }                                                                                          \
    } while (0)

/* The log type of a component ("worker" or "xlb.worker"), or -1. */
int xlb_log_type_by_component(const char *component);

#endif
