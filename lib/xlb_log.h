/* Logging through DPDK's log, one log type per component ("xlb.<component>"). */
#ifndef XLB_LOG_H
#define XLB_LOG_H

#include <rte_log.h>

#define XLB_LOG_COMPONENTS(X)                                                                      \
    X(APP, "xlb.app")                                                                              \
    X(CONFIG, "xlb.config")                                                                        \
    X(CONTROL, "xlb.control")                                                                      \
    X(SOCKET, "xlb.socket")                                                                        \
    X(SNAPSHOT, "xlb.snapshot")                                                                    \
    X(NEIGHBOUR, "xlb.neighbour")                                                                  \
    X(PORT, "xlb.port")                                                                            \
    X(WORKER, "xlb.worker")

#define XLB_LOGTYPE_DECLARE(id, name) extern int xlb_logtype_##id;
XLB_LOG_COMPONENTS(XLB_LOGTYPE_DECLARE)
#undef XLB_LOGTYPE_DECLARE

#define XLB_LOG(level, component, fmt, ...)                                                        \
    rte_log(RTE_LOG_##level, xlb_logtype_##component, "xlb: " fmt "\n", ##__VA_ARGS__)

/* Names of the components, for "log level COMPONENT LEVEL" style lookups. */
int xlb_log_type_by_component(const char *component);

#endif
