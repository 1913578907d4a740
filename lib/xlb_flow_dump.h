/*
 * The flow dump: how the control plane reads the workers' flows (`xlbctl flows`) without
 * touching their flow tables, which only their own worker reads and writes
 * (dataplane/flow_table/).
 *
 * Protocol, per worker:
 *  1. The control plane allocates a struct xlb_flow_dump and `capacity` records, sets the
 *     filter, zeroes the rest and sends an XLB_MSG_FLOWS_DUMP naming the dump on the worker's
 *     to_worker ring (lib/xlb_msg.h). From then on it reads nothing of the dump but `done`, and
 *     neither frees nor reuses it, until `done` reads 1.
 *  2. The worker takes the message in a poll loop and walks its table a bounded slice per loop
 *     (XLB_FLOW_DUMP_SLICE entries, used or not). Each flow becomes a record; one the filter
 *     passes is counted in n_matching and copied to records[n_records++] while n_records is
 *     below capacity. No allocation, no system call, no lock.
 *  3. At the end of its table the worker stores `done = 1` with release order and forgets the
 *     dump. A worker without a flow table does so at once, with no records.
 *  4. The control plane loads `done` with acquire order; once it reads 1, records[0,
 *     n_records) and n_matching are complete and the dump is the control plane's again.
 *
 * A worker works on one dump at a time: the control plane sends a worker a new dump only once
 * its previous one is done. A dump is not a snapshot of an instant: a flow created or removed
 * while the worker walks its table may or may not be in it, but every record is one flow as it
 * was in one poll loop (no torn entries, unlike a read from another thread). A dump a worker
 * never finishes stays allocated until the workers have stopped.
 */
#ifndef XLB_FLOW_DUMP_H
#define XLB_FLOW_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "xlb_addr.h"

#define XLB_FLOW_DUMP_SLICE 1024 /* table entries a worker reads for a dump per poll loop */

/* A flow's TCP state as the worker tracks it (struct xlb_flow's state). */
enum xlb_flow_state {
    XLB_FLOW_SYN_SENT,    /* the client's SYN went to the backend */
    XLB_FLOW_ESTABLISHED, /* the backend answered SYN-ACK */
    XLB_FLOW_CLOSING,     /* a FIN was seen */
    XLB_FLOW_CLOSED,      /* a RST answered the SYN, or one was seen while closing */
    XLB_FLOW_RESET,       /* an in-window RST was seen on an established connection */
    XLB_FLOW_RESUMING,    /* picked up from a client segment with no flow, until the backend
                           * answers (dataplane/nat/) */
};

/* What the kind of a flow is, as a record tells it. */
enum xlb_flow_record_kind {
    XLB_FLOW_RECORD_L4, /* full NAT */
    XLB_FLOW_RECORD_L7, /* an HTTP/2 connection (dataplane/l7/) */
};

/* One flow as a dump records it. Addresses: IPv4 in the first 4 bytes, the rest zero. */
struct xlb_flow_record {
    uint8_t family; /* AF_INET, AF_INET6 */
    uint8_t state;  /* enum xlb_flow_state */
    uint8_t kind;   /* enum xlb_flow_record_kind */
    uint8_t worker; /* the worker whose table holds it */
    /* The client key (client -> VIP) and the reply key (backend -> SNAT), ports host order. */
    uint16_t client_port, vip_port, backend_port, snat_port;
    uint8_t client[16], vip[16], backend[16], snat[16];
    uint32_t endpoint_slot, cluster_slot; /* the LB core's counter slots (limit: none) */
    uint64_t expires_in_tsc; /* TSC ticks until its idle timeout ends, when recorded; 0: due */
};

/* Which flows a dump records: all, or those of a VIP and/or an endpoint (port 0: any). */
struct xlb_flow_dump_filter {
    bool by_vip, by_endpoint;
    uint16_t vip_port, endpoint_port; /* host order */
    struct xlb_addr vip, endpoint;
};

struct xlb_flow_dump {
    /* The request: written by the control plane before it sends the message. */
    struct xlb_flow_dump_filter filter;
    struct xlb_flow_record *records;
    uint32_t capacity;
    /* The answer: written by the worker, read by the control plane once done. */
    uint32_t n_records;
    uint64_t n_matching; /* records the filter passes, copied or not */
    uint32_t cursor;     /* the worker's: the next table entry to read */
    uint32_t done;       /* 0 until the worker has finished (release store of 1) */
};

static inline bool xlb_flow_record_side_is(const struct xlb_flow_record *r, const uint8_t *bytes,
                                           uint16_t port, const struct xlb_addr *a,
                                           uint16_t want_port)
{
    size_t len = a->family == AF_INET ? 4 : 16;
    return r->family == a->family && memcmp(bytes, a->bytes, len) == 0 &&
           (want_port == 0 || port == want_port);
}

/* Whether a record passes a dump's filter: its VIP side, its backend side. */
static inline bool xlb_flow_record_matches(const struct xlb_flow_dump_filter *flt,
                                           const struct xlb_flow_record *r)
{
    return (!flt->by_vip ||
            xlb_flow_record_side_is(r, r->vip, r->vip_port, &flt->vip, flt->vip_port)) &&
           (!flt->by_endpoint || xlb_flow_record_side_is(r, r->backend, r->backend_port,
                                                         &flt->endpoint, flt->endpoint_port));
}

/* Control plane: whether the worker has finished the dump (then it is the caller's again). */
static inline bool xlb_flow_dump_done(const struct xlb_flow_dump *d)
{
    return __atomic_load_n(&d->done, __ATOMIC_ACQUIRE) != 0;
}

/* Worker: the dump is finished; the worker does not touch it again. */
static inline void xlb_flow_dump_finish(struct xlb_flow_dump *d)
{
    __atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
}

#endif
