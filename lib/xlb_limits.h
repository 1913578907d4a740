/* Fixed bounds shared by the configuration reader, the snapshot and the workers. */
#ifndef XLB_LIMITS_H
#define XLB_LIMITS_H

#define XLB_MAX_PORTS          16
#define XLB_MAX_PORT_PREFIXES  8
#define XLB_MAX_GATEWAYS       2 /* one per address family */
#define XLB_MAX_WORKERS        64
#define XLB_PORT_NAME_MAX      64
#define XLB_RX_BURST           32
#define XLB_REDIRECT_RING_SIZE 4096 /* packets in flight to one worker from the others */

#endif
