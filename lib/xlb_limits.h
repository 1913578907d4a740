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
/* SNAT addresses: each gives every worker a slice of 64,512 source ports, one flow per port,
 * so 10 million flows on a host take at least 155 of them. */
#define XLB_MAX_SNAT 256
/* Distinct IPv6 VIP addresses: the flow tables number them in their compact keys. */
#define XLB_MAX_VIP6_ADDRESSES 256
/* A61: the addresses of one endpoint a connection is tried over (Endpoint.address, then its
 * additional_addresses, in order). EDS may list more: the override map knows them all, but
 * connections try only the first ones, so a subchannel and a retry keep a fixed-size copy. */
#define XLB_MAX_ENDPOINT_ADDRESSES 4
/* VIPs with "tls": each has its handshake counters in every worker's stats. */
#define XLB_MAX_TLS_VIPS 16

/* The longest A17 health-check service name (a cluster's, validated against it; each stream
 * subchannel keeps a copy for its Watch call). */
#define XLB_HEALTH_SERVICE_MAX 128u
/* xlb.l4_syn_proxy (docs/forwarding.md, SYN proxy): never, always, or "auto": a SYN gets a
 * cookie once the worker's half-open pool is XLB_SYN_PROXY_AUTO_PERCENT full by default. */
enum xlb_syn_proxy_mode {
    XLB_SYN_PROXY_OFF = 0,
    XLB_SYN_PROXY_ON = 1,
    XLB_SYN_PROXY_AUTO = 2,
};
#define XLB_SYN_PROXY_AUTO_PERCENT 50

/* A worker silent to RCU for this long is stalled (xlb.worker_stall_ms, lib/xlb_stall.h). */
#define XLB_DEFAULT_WORKER_STALL_MS 2000

#endif
