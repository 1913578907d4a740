/*
 * One worker's NAT flow table: no sharing, no locks, nothing allocated after creation. Only its
 * worker reads or writes it; the control plane asks the worker by message to flush flows or to
 * dump them into a buffer of its own (lib/xlb_flow_dump.h), and never includes this header.
 *
 * A flow is found from either side. The client's packets carry (client, VIP): that key lives
 * in an rte_hash (created without multi-writer or reader-writer concurrency: the worker is its
 * only user), and the key's position in the hash is the flow's index in a preallocated array
 * of one-cache-line entries. The backend's replies carry (backend, SNAT address, SNAT port):
 * a SNAT port belongs to one flow at a time, so a plain array indexed by SNAT address and port
 * finds the flow, which is then checked against the reply's backend address and port. The
 * client key is stored once, in the hash's key store, and read from there for the reply's
 * rewrite. SNAT source ports come from this worker's own slice of each SNAT address's port
 * range, so two workers never hand out the same port.
 *
 * Expiry: a timer wheel of one-second slots. Each entry carries the second (TSC / hz) in which
 * its state's idle timeout ends and sits in the slot of that second. A packet only moves the
 * deadline (no list work on the fast path); when a slot's second has passed, its entries are
 * either due (handed to the caller) or, refreshed since, moved on to their current slot. Work
 * per call is bounded; a slot not finished in one call is continued in the next.
 */
#ifndef XLB_FLOW_TABLE_H
#define XLB_FLOW_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_hash.h>

#include "xlb_addr.h"
#include "xlb_flow_cache.h"
#include "xlb_flow_dump.h"
#include "xlb_flow_hkey.h"
#include "xlb_limits.h"
#include "xlb_load.h"
#include "xlb_siphash.h"

#define XLB_FLOW_MAX_SNAT    XLB_MAX_SNAT /* SNAT addresses a worker hands ports from */
#define XLB_FLOW_NONE        UINT32_MAX
#define XLB_FLOW_WHEEL_SLOTS 512 /* seconds: longer than the longest idle timeout */

/* A direction of a flow as it arrives: bytewise compared, so every byte is set. */
struct xlb_flow_key {
    uint8_t family;              /* AF_INET, AF_INET6 */
    uint8_t proto;               /* IPPROTO_TCP */
    uint16_t src_port, dst_port; /* network order */
    uint16_t zero;
    uint8_t src[16], dst[16];
};

/*
 * Which engine under the data plane's flow layer (dataplane/flow/) owns a flow's segments. Three
 * bits in the entry: room for the kinds to come (an L7 stream engine).
 */
enum xlb_flow_kind {
    XLB_FLOW_KIND_NAT,           /* L4 full NAT (dataplane/nat/): window, not l7_conn */
    XLB_FLOW_KIND_L7_SPLICE,     /* an HTTP/2 connection (dataplane/l7/): l7_conn, not window */
    XLB_FLOW_KIND_L7_CLOSED,     /* an L7 connection whose exchange is over: l7_closed */
    XLB_FLOW_KIND_NAT_PROXY,     /* L4 full NAT behind the SYN proxy: window, and its side word */
    XLB_FLOW_KIND_TCP_RELAY,     /* both sides terminated by xlb's TCP (dataplane/relay/): relay */
    XLB_FLOW_KIND_STREAM_CLIENT, /* a stream VIP's client connection (dataplane/stream/): stream */
    XLB_FLOW_KIND_STREAM_SUB,    /* a stream engine's connection to a backend: stream */
};

/* Half-open: SYN_SENT or RESUMING, the flows the SYN pool (n_syn, syn_cap) bounds. */
static inline bool xlb_flow_half_open(uint8_t state)
{
    return state == XLB_FLOW_SYN_SENT || state == XLB_FLOW_RESUMING;
}

/* The side of a flow that sends a segment: the index of its half of struct xlb_flow_window. */
enum xlb_flow_side { XLB_FLOW_FROM_CLIENT, XLB_FLOW_FROM_BACKEND };

#define XLB_FLOW_WSCALE_NONE 15 /* the side's SYN offered no window scale (shifts are 0-14) */

/*
 * What an L4 flow knows of each side's TCP sequence space, enough to drop the segments that
 * fall outside the windows (dataplane/nat/nat_window.c), indexed by enum xlb_flow_side. Exact
 * right window edges (each side's last ACK) would take 8 bytes more than the entry has; the
 * sender's own highest end plus the receiver's largest window is never tighter than them.
 * L7 flows will keep their own per-flow data in a union with this struct, so it is one group:
 * 12 bytes, 4-byte aligned.
 */
struct xlb_flow_window {
    uint32_t end[2];    /* the highest sequence number sent, plus one (SYN and FIN count) */
    uint8_t max_win[2]; /* the largest window advertised, as 1 + log2 rounded up; 0: none yet */
    uint8_t wscale[2];  /* the window scale shift of the side's windows, or WSCALE_NONE */
};

/*
 * An L7 connection whose exchange is over (both FINs, or a RST; or ended by xlb and the client's
 * FIN acknowledged): its pool entry is back, and what its last segments (retransmitted FINs,
 * the last ACKs) need to be translated is kept here until the CLOSED timeout ends the flow,
 * which also holds its SNAT port TIME-WAIT-like. The rest (window scales, whether xlb ended it)
 * is in the flow's data word (dataplane/l7/l7_closed.c). 12 bytes, as struct xlb_flow_window.
 */
struct xlb_flow_l7_closed {
    uint32_t stripped; /* client seq - stripped = backend seq; backend ACKs + stripped */
    uint32_t s2c_add;  /* backend seq + s2c_add = client seq; ended by xlb: xlb's next seq */
    uint32_t ts_add;   /* backend TSval + ts_add = TSval toward the client */
};

/*
 * One cache line, packed to make room for the window: the client key is not here (it is the
 * hash's key at the flow's index), the deadline is a second count, slots and port indexes are
 * bit fields. Endpoint and cluster slots at or above their limits are stored as the limit
 * (nothing counted), as the LB core's counters expect.
 */
struct xlb_flow {
    uint8_t backend[16];               /* the backend's address (IPv4 in the first 4 bytes) */
    struct rte_ether_addr client_mac;  /* where the client's packets came from (return hop) */
    struct rte_ether_addr backend_mac; /* the backend's next hop */
    uint16_t backend_port;             /* network order */
    uint16_t snat_port;                /* host order */
    uint32_t wheel_next, wheel_prev;   /* links in its wheel slot */
    uint32_t expires_s;                /* the second (TSC / hz) its idle timeout ends in */
    uint32_t endpoint_slot : 18;
    uint32_t cluster_slot : 13;
    uint32_t used : 1;
    uint16_t wheel_slot : 9;
    uint16_t state : 3;     /* enum xlb_flow_state (lib/xlb_flow_dump.h) */
    uint16_t scheduled : 1; /* in a wheel slot */
    uint16_t kind : 3;      /* enum xlb_flow_kind */
    uint8_t snat_index;
    uint8_t client_port_index : 4, backend_port_index : 4;
    union {
        struct xlb_flow_window window;       /* L4 */
        uint32_t l7_conn;                    /* L7: the connection's index in its worker's pool */
        uint32_t relay;                      /* TCP_RELAY: its pair's index (dataplane/relay/) */
        uint32_t stream;                     /* STREAM_*: its connection's or subchannel's */
        struct xlb_flow_l7_closed l7_closed; /* L7, over */
    };
} __rte_cache_aligned;

_Static_assert(sizeof(struct xlb_flow) == 64, "a flow entry is one cache line");
_Static_assert(XLB_ENDPOINT_LOAD_SLOTS < (1 << 18) && XLB_CLUSTER_LOAD_SLOTS < (1 << 13),
               "slots and their out-of-range value fit the bit fields");
_Static_assert(XLB_MAX_PORTS <= 16, "port indexes fit four bits");
_Static_assert(XLB_FLOW_WHEEL_SLOTS <= 512, "wheel slots fit nine bits");

struct xlb_flow_table {
    struct rte_hash *hash;        /* client keys; a key's position is its flow's index */
    uint64_t hash_key[2];         /* its hash's SipHash key (the process's, xlb_siphash.h) */
    struct xlb_flow_cache *cache; /* the hash's recent hits (xlb_flow_cache.h) */
    struct xlb_flow *flows;
    uint32_t capacity, n_used;
    uint32_t changes; /* flows created and removed: lookups made before a change are stale */
    /* Where the hash keeps the key at position i: key_base + i * key_stride (see create). */
    const uint8_t *key_base;
    size_t key_stride;
    struct xlb_flow_vip6 vip6; /* the IPv6 VIPs the hash's keys number */
    /* Half-open flows (SYN_SENT or RESUMING), and the most there may be: a flood of SYNs (or
     * of segments picked up as RESUMING) fills at most this share of the table, so established
     * flows always find room. */
    uint32_t n_syn, syn_cap;
    /* [flow index]: a word an engine keeps beside the flow's 64-byte entry for the few flows
     * that need more (the L4 SYN proxy's sequence and timestamp offsets, dataplane/nat/). */
    uint64_t *side;
    /* A random secret per table (per worker), for the engines' stateless cookies. */
    uint8_t secret[16];
    /* The timer wheel: slot heads, the next second to process, TSC ticks per second. */
    uint32_t wheel[XLB_FLOW_WHEEL_SLOTS];
    uint64_t wheel_second, wheel_hz;
    uint64_t clock_tsc; /* the last TSC reading turned into a second, and that second */
    uint32_t clock_second;
    /* This worker's SNAT ports: [port_base, port_base + port_count) on every SNAT address. */
    uint16_t port_base, port_count;
    uint8_t n_snat;
    struct xlb_addr snat[XLB_FLOW_MAX_SNAT];
    uint16_t *free_ports[XLB_FLOW_MAX_SNAT]; /* stacks */
    uint16_t *free_at[XLB_FLOW_MAX_SNAT];    /* [port - port_base]: its place in the stack */
    uint32_t n_free_ports[XLB_FLOW_MAX_SNAT];
    uint32_t *port_flow[XLB_FLOW_MAX_SNAT]; /* [port - port_base]: flow index or NONE */
};

/*
 * Create on the main lcore, before the worker starts: capacity flows, this worker's port slice
 * of each SNAT address. NULL when memory runs out.
 */
struct xlb_flow_table *xlb_flow_table_create(const char *name, uint32_t capacity, int socket,
                                             const struct xlb_addr *snat, unsigned n_snat,
                                             uint16_t port_base, uint16_t port_count);
void xlb_flow_table_free(struct xlb_flow_table *t);

/* Whether a table of this many entries gets rte_hash's extendable buckets (see the source). */
bool xlb_flow_table_needs_ext(uint32_t entries);

/* The flow of a client key (client -> VIP), or NULL. */
struct xlb_flow *xlb_flow_lookup_client(const struct xlb_flow_table *t,
                                        const struct xlb_flow_key *key);
/* The same for a key in the hash's compact form. */
/* The hash of a client key in t (keyed SipHash-2-4, truncated to rte_hash's 32 bits). */
uint32_t xlb_flow_table_hash(const struct xlb_flow_table *t, const struct xlb_flow_hkey *h);

struct xlb_flow *xlb_flow_lookup_client_hkey(const struct xlb_flow_table *t,
                                             const struct xlb_flow_hkey *h);

/*
 * Client keys of a burst at once, in the hash's compact form (n <= RTE_HASH_LOOKUP_BULK_MAX):
 * the flow cache's confirmed hits first, then rte_hash for the rest, which overlaps their bucket
 * and key reads and fills the cache with what it finds. The flow entries found are prefetched.
 * out[i] is NULL on a miss.
 */
void xlb_flow_lookup_client_bulk(struct xlb_flow_table *t, const struct xlb_flow_hkey *keys,
                                 uint32_t n, struct xlb_flow **out);

/* The flow of a reply key (backend -> SNAT address and port), or NULL. */
struct xlb_flow *xlb_flow_lookup_reply(const struct xlb_flow_table *t,
                                       const struct xlb_flow_key *key);

/* The same, told the SNAT address's index (struct xlb_addr_entry's snat_index); a wrong hint
 * costs a search, never a wrong flow. */
struct xlb_flow *xlb_flow_lookup_reply_at(const struct xlb_flow_table *t,
                                          const struct xlb_flow_key *key, unsigned snat_hint);

/*
 * A reply found in two reads, for a burst's replies to overlap: the port map entry its SNAT
 * address and port name (NULL when they are none of this worker's; snat_hint as above), then
 * the flow that entry holds. The entry is read when the reply is handled, so it follows the
 * flows created and removed in between. Addresses as the segment carries them (4 or 16 bytes
 * by family), ports in network order.
 */
const uint32_t *xlb_flow_reply_slot(const struct xlb_flow_table *t, uint8_t family,
                                    const uint8_t *snat, uint16_t snat_port, unsigned snat_hint);
/* The reply's flow from its port map entry, or NULL (no entry, or another backend's flow). */
struct xlb_flow *xlb_flow_reply_at_slot(const struct xlb_flow_table *t, const uint32_t *slot,
                                        uint8_t family, const uint8_t *backend,
                                        uint16_t backend_port);
/* Start reading the flow entry and stored key a port map entry names, once it has arrived. */
void xlb_flow_prefetch_slot(const struct xlb_flow_table *t, const uint32_t *slot);

/* The flow either kind of key names, or NULL. */
struct xlb_flow *xlb_flow_lookup(const struct xlb_flow_table *t, const struct xlb_flow_key *key);

/* A flow's key as the hash stores it. */
static inline const struct xlb_flow_hkey *xlb_flow_stored_key(const struct xlb_flow_table *t,
                                                              const struct xlb_flow *f)
{
    return (const struct xlb_flow_hkey *)(t->key_base + (size_t)(f - t->flows) * t->key_stride);
}

/*
 * A flow's data word: the 8 bytes rte_hash keeps just before the key in its slot, for the data
 * path's own use (the NAT keeps the flow's checksum patches there, dataplane/nat/nat_new.c).
 * rte_hash stores it for rte_hash_lookup_data, which the table never calls, and it costs no memory
 * and no cache line the flow's segments do not read already.
 */
static inline uint64_t xlb_flow_word(const struct xlb_flow_table *t, const struct xlb_flow *f)
{
    uint64_t word;
    memcpy(&word, (const uint8_t *)xlb_flow_stored_key(t, f) - sizeof(word), sizeof(word));
    return word;
}

static inline void xlb_flow_set_word(struct xlb_flow_table *t, const struct xlb_flow *f,
                                     uint64_t word)
{
    uint8_t *slot = (uint8_t *)(uintptr_t)xlb_flow_stored_key(t, f);
    memcpy(slot - sizeof(word), &word, sizeof(word));
}

/* A flow's client key (client -> VIP), from the hash's key store. */
static inline void xlb_flow_client_key(const struct xlb_flow_table *t, const struct xlb_flow *f,
                                       struct xlb_flow_key *out)
{
    xlb_flow_hkey_expand(&t->vip6, xlb_flow_stored_key(t, f), out);
}

/* A flow's reply key: backend -> SNAT address and port. */
void xlb_flow_reply_key(const struct xlb_flow_table *t, const struct xlb_flow *f,
                        struct xlb_flow_key *out);

/* Why xlb_flow_create or xlb_flow_create_hashed returned NULL. */
enum xlb_flow_create_failure {
    XLB_FLOW_CREATE_TABLE_FULL,      /* no entry (or no IPv6 VIP number) left */
    XLB_FLOW_CREATE_BUCKET_FULL,     /* entries left, but none the key's buckets can reach */
    XLB_FLOW_CREATE_PORTS_EXHAUSTED, /* every SNAT port of the family's addresses is taken */
    XLB_FLOW_CREATE_NO_SNAT,         /* no SNAT address of the client's family */
    XLB_FLOW_CREATE_PORT_TAKEN,      /* strict: the port the key's hash names is taken */
};

/*
 * A new flow for a client key, with a SNAT address of the client's family and a port from this
 * worker's slice; its backend key is filled from backend address/port. NULL when the table or
 * the ports are exhausted (*why says which).
 */
struct xlb_flow *xlb_flow_create(struct xlb_flow_table *t, const struct xlb_flow_key *client,
                                 const struct xlb_addr *backend, uint16_t backend_port_be,
                                 enum xlb_flow_create_failure *why);

/*
 * The same with the SNAT address and port a hash of the client key names (a hash of nothing
 * but the key, so any xlb process with the same SNAT addresses and slice names the same ones):
 * a connection picked up again without its flow (a client segment after a restart) gets the
 * SNAT address and port its SYN got, and so is the same peer to its backend. When that port is
 * taken, a strict call fails (XLB_FLOW_CREATE_PORT_TAKEN) and another takes any port, as
 * xlb_flow_create does.
 */
struct xlb_flow *xlb_flow_create_hashed(struct xlb_flow_table *t, const struct xlb_flow_key *client,
                                        const struct xlb_addr *backend, uint16_t backend_port_be,
                                        uint64_t hash, bool strict,
                                        enum xlb_flow_create_failure *why);

/* Remove a flow: both keys, its wheel slot, its port back to the slice. */
void xlb_flow_remove(struct xlb_flow_table *t, struct xlb_flow *f);

/*
 * Make room when the table is full: remove the flow whose idle deadline is nearest, from the
 * earliest wheel slots, examining at most `budget` entries (the nearest seen goes when the
 * budget runs out). Returns the removed flow's copy in *evicted (for the caller's accounting),
 * or false when the table holds no flow on the wheel.
 */
bool xlb_flow_evict_oldest(struct xlb_flow_table *t, uint32_t budget, struct xlb_flow *evicted);

/* Start the wheel's clock, at the first flow: hz TSC ticks a second. */
static inline void xlb_flow_start_clock(struct xlb_flow_table *t, uint64_t now_tsc, uint64_t hz)
{
    if (t->wheel_hz == 0) {
        t->wheel_hz = hz > 0 ? hz : 1;
        t->wheel_second = now_tsc / t->wheel_hz;
    }
}

/* The second a TSC reading falls in. The worker reads the TSC once per poll loop, so this
 * divides once per loop, not once per packet. */
static inline uint32_t xlb_flow_second(struct xlb_flow_table *t, uint64_t now_tsc)
{
    if (now_tsc != t->clock_tsc) {
        t->clock_tsc = now_tsc;
        t->clock_second = (uint32_t)(now_tsc / t->wheel_hz);
    }
    return t->clock_second;
}

/* The expires_s of a flow given `seconds` of idle time from now. */
static inline uint32_t xlb_flow_deadline(struct xlb_flow_table *t, uint64_t now_tsc, uint64_t hz,
                                         uint32_t seconds)
{
    xlb_flow_start_clock(t, now_tsc, hz);
    return xlb_flow_second(t, now_tsc) + seconds;
}

/* Give f `seconds` of idle time from now (its wheel slot follows lazily, or at schedule). */
static inline void xlb_flow_set_timeout(struct xlb_flow_table *t, struct xlb_flow *f,
                                        uint64_t now_tsc, uint64_t hz, uint32_t seconds)
{
    f->expires_s = xlb_flow_deadline(t, now_tsc, hz, seconds);
}

/* The TSC at which f becomes due: the end of its deadline's second. */
static inline uint64_t xlb_flow_due_tsc(const struct xlb_flow_table *t, const struct xlb_flow *f)
{
    return ((uint64_t)f->expires_s + 1) * t->wheel_hz;
}

/* Put a flow on the wheel at its expires_s, or move it there (the first call starts the
 * wheel's clock). */
void xlb_flow_schedule(struct xlb_flow_table *t, struct xlb_flow *f, uint64_t now_tsc, uint64_t hz);

/*
 * Up to max flows whose deadline has passed, taken off the wheel (the caller removes them);
 * at most `budget` entries are examined. Returns how many were stored in due.
 */
uint32_t xlb_flow_due(struct xlb_flow_table *t, uint64_t now_tsc, uint32_t budget,
                      struct xlb_flow **due, uint32_t max);

/*
 * Worker: read the next slice of the table (at most XLB_FLOW_DUMP_SLICE entries) into a dump
 * (the protocol is in lib/xlb_flow_dump.h), recording flows as worker `worker` at now_tsc.
 * Returns true, with the dump finished (done stored with release order), once the table's end
 * is reached; a NULL table finishes the dump at once.
 */
bool xlb_flow_table_dump_step(const struct xlb_flow_table *t, struct xlb_flow_dump *d,
                              unsigned worker, uint64_t now_tsc);

#endif
