/* xlbd --check for af_xdp ports: what the bootstrap can say about an AF_XDP vdev before DPDK
 * starts, so that a missing interface is named instead of failing deep in EAL's probe. */
#ifndef XLBD_AF_XDP_CHECK_H
#define XLBD_AF_XDP_CHECK_H

#include <stddef.h>

/* For one EAL argument (the value of --vdev=, or "--vdev=..." itself): when it is a
 * net_af_xdp vdev with a problem, writes "DEVICE: problem" to buf and returns buf; otherwise
 * NULL. Problems: no iface=, an interface that does not exist in this network namespace,
 * fewer queues (queue_count=, 1 by default) than workers. */
const char *xlbd_af_xdp_problem(const char *arg, unsigned workers, char *buf, size_t len);

#endif
