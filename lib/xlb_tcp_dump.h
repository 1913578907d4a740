/*
 * The TCP connection dump: how the control plane lists the connections of the workers' TCP
 * endpoints (`xlbctl tcp`, like `ss -ti`) without touching them: only its own worker reads and
 * writes an endpoint (dataplane/tcp/).
 *
 * The protocol is the flow dump's (lib/xlb_flow_dump.h), per worker:
 *  1. The control plane allocates a struct xlb_tcp_dump and `capacity` records, zeroes the rest
 *     and sends an XLB_MSG_TCP_DUMP naming it on the worker's to_worker ring. From then on it
 *     reads nothing of the dump but `done`, and neither frees nor reuses it, until `done` reads 1.
 *  2. The worker walks its endpoint's control blocks a bounded slice per poll loop
 *     (XLB_TCP_DUMP_SLICE blocks, used or not): each connection is counted in n_conns and
 *     copied to records[n_records++] while n_records is below capacity.
 *  3. At the end of its pool the worker stores `done = 1` with release order and forgets the
 *     dump. A worker without an endpoint does so at once, with no records.
 *  4. The control plane loads `done` with acquire order; once it reads 1, the records and
 *     n_conns are complete and the dump is the control plane's again.
 *
 * One dump per worker at a time. Every record is one connection as it was in one poll loop.
 */
#ifndef XLB_TCP_DUMP_H
#define XLB_TCP_DUMP_H

#include <stdint.h>

/* Control blocks a worker reads for a dump per poll loop: each costs a walk of its queues'
 * mbufs (for its memory), so fewer than the flow dump's table entries. */
#define XLB_TCP_DUMP_SLICE   128
#define XLB_TCP_STATE_STRLEN 16

/* One connection as `ss -ti` shows it. Addresses: IPv4 in the first 4 bytes, the rest zero. */
struct xlb_tcp_conn_record {
    uint8_t family; /* AF_INET, AF_INET6 */
    uint8_t worker;
    uint16_t local_port, remote_port; /* host order */
    uint8_t local[16], remote[16];
    char state[XLB_TCP_STATE_STRLEN]; /* "ESTABLISHED", "TIME-WAIT", ... */
    uint32_t cwnd, ssthresh;          /* bytes; UINT32_MAX: unlimited */
    uint32_t srtt_us, rttvar_us, rto_ms;
    uint32_t mss, snd_wnd, rcv_wnd;
    uint32_t snd_queue, rcv_queue, ooo_bytes, unacked;
    uint64_t retransmits;
    uint32_t memory; /* control block and the mbufs it holds */
};

struct xlb_tcp_dump {
    /* The request: written by the control plane before it sends the message. */
    struct xlb_tcp_conn_record *records;
    uint32_t capacity;
    /* The answer: written by the worker, read by the control plane once done. */
    uint32_t n_records;
    uint64_t n_conns; /* connections seen, recorded or not */
    uint32_t cursor;  /* the worker's: the next control block to read */
    uint32_t done;    /* 0 until the worker has finished (release store of 1) */
};

/* Control plane: whether the worker has finished the dump (then it is the caller's again). */
static inline int xlb_tcp_dump_done(const struct xlb_tcp_dump *d)
{
    return __atomic_load_n(&d->done, __ATOMIC_ACQUIRE) != 0;
}

/* Worker: the dump is finished; the worker does not touch it again. */
static inline void xlb_tcp_dump_finish(struct xlb_tcp_dump *d)
{
    __atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
}

#endif
