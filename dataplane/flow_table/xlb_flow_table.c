#include "xlb_flow_table.h"

#include "xlb_log.h"

#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <sys/random.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_prefetch.h>
#include <rte_random.h>
#include <rte_malloc.h>

/*
 * The flow's client key is read straight from the hash's key store on every reply, so the
 * store's layout is learned once here: rte_hash keeps the key of position p at a fixed stride
 * from the first (what rte_hash_get_key_with_position computes), just after the key's data
 * word (what rte_hash_lookup_data returns). Three probe keys, which no packet can produce (VIP
 * 0.0.0.0), check both; a hash laid out otherwise is refused.
 */
static bool learn_key_store(struct xlb_flow_table *t)
{
    struct xlb_flow_hkey probe[3];
    int32_t pos[3];
    uint8_t *where[3];
    memset(probe, 0, sizeof(probe));
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        probe[i].client_port = (uint16_t)(i + 1);
        void *key;
        uint64_t word;
        if (rte_hash_add_key_data(t->hash, &probe[i], (void *)(uintptr_t)(0x5eed0 + i)) != 0 ||
            (pos[i] = rte_hash_lookup(t->hash, &probe[i])) < 0 ||
            rte_hash_get_key_with_position(t->hash, pos[i], &key) != 0) {
            ok = false;
            continue;
        }
        where[i] = key;
        memcpy(&word, where[i] - sizeof(word), sizeof(word));
        ok = ok && word == (uint64_t)(0x5eed0 + i);
    }
    int lo = ok && pos[0] < pos[1] ? 0 : 1, hi = 1 - lo;
    if (ok && pos[hi] > pos[lo] && where[hi] > where[lo]) {
        t->key_stride = (size_t)(where[hi] - where[lo]) / (size_t)(pos[hi] - pos[lo]);
        t->key_base = where[lo] - (size_t)pos[lo] * t->key_stride;
        ok = t->key_stride >= sizeof(struct xlb_flow_hkey) + sizeof(uint64_t) &&
             t->key_base + (size_t)pos[2] * t->key_stride == where[2];
    } else {
        ok = false;
    }
    for (int i = 0; i < 3; i++)
        rte_hash_del_key(t->hash, &probe[i]);
    if (!ok)
        XLB_LOG(ERR, WORKER, "flow table: this rte_hash does not keep its keys in one array");
    return ok;
}

static bool create_ports(struct xlb_flow_table *t, const char *name, int socket,
                         const struct xlb_addr *snat, unsigned n_snat, uint16_t port_base,
                         uint16_t port_count)
{
    t->port_base = port_base;
    t->port_count = port_count;
    t->n_snat = (uint8_t)(n_snat < XLB_FLOW_MAX_SNAT ? n_snat : XLB_FLOW_MAX_SNAT);
    for (unsigned s = 0; s < t->n_snat; s++) {
        t->snat[s] = snat[s];
        t->free_ports[s] = rte_malloc_socket(name, (size_t)port_count * 2 + 2, 0, socket);
        t->free_at[s] = rte_malloc_socket(name, (size_t)port_count * 2 + 2, 0, socket);
        t->port_flow[s] = rte_malloc_socket(name, (size_t)port_count * 4 + 4, 0, socket);
        if (t->free_ports[s] == NULL || t->free_at[s] == NULL || t->port_flow[s] == NULL)
            return false;
        /* Handed out from the low end first (popped from the top of the stack). */
        for (uint32_t p = 0; p < port_count; p++) {
            t->free_ports[s][p] = (uint16_t)(port_base + port_count - 1 - p);
            t->free_at[s][port_count - 1 - p] = (uint16_t)p;
            t->port_flow[s][p] = XLB_FLOW_NONE;
        }
        t->n_free_ports[s] = port_count;
    }
    return true;
}

/*
 * Key equality for the hash: rte_hash compares inline only keys of 16, 32, 48... bytes and
 * calls memcmp for the 24 of a compact key; three 64-bit words do it without the call. (A
 * compare function is a pointer, which DPDK secondary processes cannot share; none uses this
 * table.)
 */
static int flow_key_differs(const void *a, const void *b, size_t len)
{
    (void)len;
    uint64_t x[3], y[3];
    memcpy(x, a, sizeof(x));
    memcpy(y, b, sizeof(y));
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2])) != 0;
}

bool xlb_flow_table_needs_ext(uint32_t entries)
{
    /* rte_hash has entries / 8 buckets of 8 slots, rounded up to a power of two. Filled to
     * 90 % or less, cuckoo displacement places every key; fuller (a capacity just below or at a
     * power of two), some inserts would fail with entries still free, so extendable buckets take
     * the overflow. They cost as much again as the buckets, which is why they are not always
     * on: either way a flow stays under 120 bytes. */
    uint64_t slots = rte_align32pow2(entries);
    return (uint64_t)entries * 10 > slots * 9;
}

/*
 * The flow hash's secret, one per process, drawn once from the kernel's generator (rte_rand
 * is seeded from the clock and so guessable). Every table uses it: rte_hash's hash function
 * takes no context, and it must give what key_hash gives.
 */
static uint64_t flow_hash_secret[2];
static pthread_once_t flow_hash_secret_once = PTHREAD_ONCE_INIT;

static void draw_flow_hash_secret(void)
{
    uint64_t k[2];
    if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k)) {
        XLB_LOG(WARNING, WORKER, "flow table: getrandom failed, hash secret from rte_rand");
        k[0] = rte_rand();
        k[1] = rte_rand();
    }
    flow_hash_secret[0] = k[0];
    flow_hash_secret[1] = k[1];
}

/* rte_hash's hash function (for its calls without a precomputed hash): the same as key_hash. */
static uint32_t flow_hash_func(const void *key, uint32_t key_len, uint32_t init_val)
{
    (void)init_val;
    return (uint32_t)xlb_siphash13(flow_hash_secret, key, key_len);
}

struct xlb_flow_table *xlb_flow_table_create(const char *name, uint32_t capacity, int socket,
                                             const struct xlb_addr *snat, unsigned n_snat,
                                             uint16_t port_base, uint16_t port_count)
{
    struct xlb_flow_table *t = rte_zmalloc_socket(name, sizeof(*t), 0, socket);
    if (t == NULL)
        return NULL;
    pthread_once(&flow_hash_secret_once, draw_flow_hash_secret);
    memcpy(t->hash_key, flow_hash_secret, sizeof(t->hash_key));
    /* rte_hash wants at least one bucket of 8; its positions run over [0, entries). */
    struct rte_hash_parameters params = {
        .name = name,
        .entries = capacity < 8 ? 8 : capacity,
        .key_len = sizeof(struct xlb_flow_hkey),
        /* Keyed, so that clients cannot aim their keys at one bucket (SipHash-2-4, xlb_siphash.h).
         */
        .hash_func = flow_hash_func,
        .socket_id = socket,
    };
    if (xlb_flow_table_needs_ext(params.entries))
        params.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
    t->hash = rte_hash_create(&params);
    if (t->hash != NULL)
        rte_hash_set_cmp_func(t->hash, flow_key_differs);
    t->capacity = params.entries;
    t->flows = rte_zmalloc_socket(name, (size_t)t->capacity * sizeof(*t->flows),
                                  RTE_CACHE_LINE_SIZE, socket);
    t->cache = rte_zmalloc_socket(name, sizeof(*t->cache), RTE_CACHE_LINE_SIZE, socket);
    t->side = rte_zmalloc_socket(name, (size_t)t->capacity * sizeof(*t->side), 0, socket);
    for (unsigned i = 0; i < sizeof(t->secret); i += 8) {
        uint64_t r = rte_rand();
        memcpy(t->secret + i, &r, 8);
    }
    if (t->hash == NULL || t->flows == NULL || t->cache == NULL || t->side == NULL ||
        !learn_key_store(t) ||
        !create_ports(t, name, socket, snat, n_snat, port_base, port_count)) {
        xlb_flow_table_free(t);
        return NULL;
    }
    t->syn_cap = capacity / 4 > 0 ? capacity / 4 : 1;
    for (unsigned s = 0; s < XLB_FLOW_WHEEL_SLOTS; s++)
        t->wheel[s] = XLB_FLOW_NONE;
    return t;
}

void xlb_flow_table_free(struct xlb_flow_table *t)
{
    if (t == NULL)
        return;
    rte_hash_free(t->hash);
    rte_free(t->flows);
    rte_free(t->cache);
    rte_free(t->side);
    for (unsigned s = 0; s < XLB_FLOW_MAX_SNAT; s++) {
        rte_free(t->free_ports[s]);
        rte_free(t->free_at[s]);
        rte_free(t->port_flow[s]);
    }
    rte_free(t);
}

/* What the hash's own function gives for a key: the inline form for its 24 bytes (every
 * packet hashes one; the same value as flow_hash_func's). SipHash-1-3, not 2-4: the values
 * never leave the worker, so the table needs resistance to aimed collisions, not a MAC's
 * strength, and each packet saves about 17 cycles (docs/performance.md). */
static inline hash_sig_t key_hash(const struct xlb_flow_table *t, const struct xlb_flow_hkey *h)
{
    return (hash_sig_t)xlb_siphash13_24(t->hash_key, h);
}

uint32_t xlb_flow_table_hash(const struct xlb_flow_table *t, const struct xlb_flow_hkey *h)
{
    return key_hash(t, h);
}

struct xlb_flow *xlb_flow_lookup_client_hkey(const struct xlb_flow_table *t,
                                             const struct xlb_flow_hkey *h)
{
    int32_t pos = rte_hash_lookup_with_hash(t->hash, h, key_hash(t, h));
    return pos < 0 ? NULL : &t->flows[pos];
}

struct xlb_flow *xlb_flow_lookup_client(const struct xlb_flow_table *t,
                                        const struct xlb_flow_key *key)
{
    struct xlb_flow_hkey h;
    if (!xlb_flow_hkey_of(&t->vip6, key, &h))
        return NULL;
    return xlb_flow_lookup_client_hkey(t, &h);
}

/* The flow at a cached index, if it is live and its stored key is the one looked up. */
static struct xlb_flow *cache_confirm(const struct xlb_flow_table *t, int64_t index,
                                      const struct xlb_flow_hkey *key)
{
    if (index < 0)
        return NULL;
    struct xlb_flow *f = &t->flows[index];
    if (!f->used ||
        flow_key_differs(t->key_base + (size_t)index * t->key_stride, key, sizeof(*key)))
        return NULL;
    return f;
}

void xlb_flow_lookup_client_bulk(struct xlb_flow_table *t, const struct xlb_flow_hkey *keys,
                                 uint32_t n, struct xlb_flow **out)
{
    /* The keys the cache has not got, for rte_hash: miss[j] is the one lookup[j] points to. */
    const void *lookup[RTE_HASH_LOOKUP_BULK_MAX];
    hash_sig_t sig[RTE_HASH_LOOKUP_BULK_MAX];
    int32_t pos[RTE_HASH_LOOKUP_BULK_MAX];
    uint32_t miss[RTE_HASH_LOOKUP_BULK_MAX], n_miss = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* The hash computed here, inline: rte_hash would call its hash function through a
         * pointer for each key. */
        hash_sig_t h = key_hash(t, &keys[i]);
        out[i] = cache_confirm(t, xlb_flow_cache_probe(t->cache, h), &keys[i]);
        if (out[i] != NULL) {
            rte_prefetch0(out[i]);
            continue;
        }
        lookup[n_miss] = &keys[i];
        sig[n_miss] = h;
        miss[n_miss++] = i;
    }
    if (n_miss == 0)
        return;
    rte_hash_lookup_with_hash_bulk(t->hash, lookup, sig, n_miss, pos);
    for (uint32_t j = 0; j < n_miss; j++) {
        if (pos[j] < 0)
            continue;
        out[miss[j]] = &t->flows[pos[j]];
        rte_prefetch0(out[miss[j]]);
        xlb_flow_cache_fill(t->cache, sig[j], (uint32_t)pos[j]);
    }
}

static size_t addr_len(uint8_t family)
{
    return family == AF_INET ? 4 : 16;
}

/* Equal addresses of a family; constant lengths, so the compiler compares without a call. */
static inline bool same_address(uint8_t family, const uint8_t *a, const uint8_t *b)
{
    return family == AF_INET ? memcmp(a, b, 4) == 0 : memcmp(a, b, 16) == 0;
}

/* The index of a SNAT address among the table's: the hint if right, else found. */
static int snat_of(const struct xlb_flow_table *t, uint8_t family, const uint8_t *addr,
                   unsigned snat_hint)
{
    if (snat_hint < t->n_snat && t->snat[snat_hint].family == family &&
        same_address(family, t->snat[snat_hint].bytes, addr))
        return (int)snat_hint;
    for (unsigned s = 0; s < t->n_snat; s++)
        if (t->snat[s].family == family && same_address(family, t->snat[s].bytes, addr))
            return (int)s;
    return -1;
}

const uint32_t *xlb_flow_reply_slot(const struct xlb_flow_table *t, uint8_t family,
                                    const uint8_t *snat, uint16_t snat_port, unsigned snat_hint)
{
    uint16_t port = rte_be_to_cpu_16(snat_port);
    if (port < t->port_base || port - t->port_base >= t->port_count)
        return NULL;
    int s = snat_of(t, family, snat, snat_hint);
    return s < 0 ? NULL : &t->port_flow[s][port - t->port_base];
}

struct xlb_flow *xlb_flow_reply_at_slot(const struct xlb_flow_table *t, const uint32_t *slot,
                                        uint8_t family, const uint8_t *backend,
                                        uint16_t backend_port)
{
    if (slot == NULL || *slot == XLB_FLOW_NONE)
        return NULL;
    struct xlb_flow *f = &t->flows[*slot];
    /* The port may since serve a connection to another backend. */
    if (f->backend_port != backend_port || !same_address(family, f->backend, backend))
        return NULL;
    return f;
}

void xlb_flow_prefetch_slot(const struct xlb_flow_table *t, const uint32_t *slot)
{
    if (slot == NULL || *slot == XLB_FLOW_NONE)
        return;
    rte_prefetch0(&t->flows[*slot]);
    rte_prefetch0(t->key_base + (size_t)*slot * t->key_stride);
}

struct xlb_flow *xlb_flow_lookup_reply_at(const struct xlb_flow_table *t,
                                          const struct xlb_flow_key *key, unsigned snat_hint)
{
    const uint32_t *slot = xlb_flow_reply_slot(t, key->family, key->dst, key->dst_port, snat_hint);
    return xlb_flow_reply_at_slot(t, slot, key->family, key->src, key->src_port);
}

struct xlb_flow *xlb_flow_lookup_reply(const struct xlb_flow_table *t,
                                       const struct xlb_flow_key *key)
{
    return xlb_flow_lookup_reply_at(t, key, UINT_MAX);
}

struct xlb_flow *xlb_flow_lookup(const struct xlb_flow_table *t, const struct xlb_flow_key *key)
{
    struct xlb_flow *f = xlb_flow_lookup_reply(t, key);
    return f != NULL ? f : xlb_flow_lookup_client(t, key);
}

void xlb_flow_reply_key(const struct xlb_flow_table *t, const struct xlb_flow *f,
                        struct xlb_flow_key *out)
{
    const struct xlb_addr *snat = &t->snat[f->snat_index];
    memset(out, 0, sizeof(*out));
    out->family = snat->family;
    out->proto = IPPROTO_TCP;
    out->src_port = f->backend_port;
    out->dst_port = rte_cpu_to_be_16(f->snat_port);
    memcpy(out->src, f->backend, sizeof(out->src));
    memcpy(out->dst, snat->bytes, addr_len(snat->family));
}

static int snat_for_family(const struct xlb_flow_table *t, uint8_t family)
{
    for (unsigned s = 0; s < t->n_snat; s++)
        if (t->snat[s].family == family && t->n_free_ports[s] > 0)
            return (int)s;
    for (unsigned s = 0; s < t->n_snat; s++)
        if (t->snat[s].family == family)
            return -2; /* the family has addresses, but their ports are used up */
    return -1;
}

/* Take a free port off its address's stack: the one on top, or a given one, whose place the
 * top one then fills. */
static uint16_t pop_port(struct xlb_flow_table *t, unsigned s)
{
    return t->free_ports[s][--t->n_free_ports[s]];
}

static void take_port(struct xlb_flow_table *t, unsigned s, uint16_t port)
{
    uint16_t at = t->free_at[s][port - t->port_base];
    uint16_t top = t->free_ports[s][--t->n_free_ports[s]];
    t->free_ports[s][at] = top;
    t->free_at[s][top - t->port_base] = at;
}

static void push_port(struct xlb_flow_table *t, unsigned s, uint16_t port)
{
    t->free_at[s][port - t->port_base] = (uint16_t)t->n_free_ports[s];
    t->free_ports[s][t->n_free_ports[s]++] = port;
}

/*
 * The SNAT address and port a hash names: the family's addresses in table order, one of them
 * by the hash's high half, a port of this worker's slice by its low half. -1 when the family
 * has no address.
 */
static int hashed_snat(const struct xlb_flow_table *t, uint8_t family, uint64_t hash,
                       uint16_t *port)
{
    unsigned n = 0;
    for (unsigned s = 0; s < t->n_snat; s++)
        n += t->snat[s].family == family;
    if (n == 0 || t->port_count == 0)
        return -1;
    unsigned k = (unsigned)((hash >> 32) % n);
    *port = (uint16_t)(t->port_base + (uint32_t)hash % t->port_count);
    for (unsigned s = 0; s < t->n_snat; s++)
        if (t->snat[s].family == family && k-- == 0)
            return (int)s;
    return -1;
}

/* The flow at the hash position of the client key, on SNAT address s and port. */
static struct xlb_flow *create_on(struct xlb_flow_table *t, const struct xlb_flow_key *client,
                                  const struct xlb_addr *backend, uint16_t backend_port_be, int s,
                                  int32_t port, enum xlb_flow_create_failure *why)
{
    struct xlb_flow_hkey h;
    /* A new IPv6 VIP is numbered here; should 256 fill up, its flows are refused. */
    if ((client->family == AF_INET6 && !xlb_flow_vip6_add(&t->vip6, client->dst)) ||
        !xlb_flow_hkey_of(&t->vip6, client, &h)) {
        *why = XLB_FLOW_CREATE_TABLE_FULL;
        return NULL;
    }
    int32_t index = rte_hash_add_key(t->hash, &h);
    if (index < 0) {
        /* The callers checked that entries are left: rte_hash found no slot in the key's two
         * buckets (cuckoo displacement included) nor an extendable bucket. Evicting some other
         * flow would not help this key, and would let colliding keys evict flows at will. */
        *why = XLB_FLOW_CREATE_BUCKET_FULL;
        return NULL;
    }
    struct xlb_flow *f = &t->flows[index];
    memset(f, 0, sizeof(*f));
    memcpy(f->backend, backend->bytes, addr_len(backend->family));
    f->backend_port = backend_port_be;
    f->snat_index = (uint8_t)s;
    if (port < 0) {
        f->snat_port = pop_port(t, (unsigned)s);
    } else {
        f->snat_port = (uint16_t)port;
        take_port(t, (unsigned)s, f->snat_port);
    }
    t->port_flow[s][f->snat_port - t->port_base] = (uint32_t)index;
    f->used = true;
    t->n_used++;
    t->changes++;
    return f;
}

struct xlb_flow *xlb_flow_create(struct xlb_flow_table *t, const struct xlb_flow_key *client,
                                 const struct xlb_addr *backend, uint16_t backend_port_be,
                                 enum xlb_flow_create_failure *why)
{
    if (t->n_used >= t->capacity) {
        *why = XLB_FLOW_CREATE_TABLE_FULL;
        return NULL;
    }
    int s = snat_for_family(t, client->family);
    if (s < 0) {
        *why = s == -2 ? XLB_FLOW_CREATE_PORTS_EXHAUSTED : XLB_FLOW_CREATE_NO_SNAT;
        return NULL;
    }
    return create_on(t, client, backend, backend_port_be, s, -1, why);
}

struct xlb_flow *xlb_flow_create_hashed(struct xlb_flow_table *t, const struct xlb_flow_key *client,
                                        const struct xlb_addr *backend, uint16_t backend_port_be,
                                        uint64_t hash, bool strict,
                                        enum xlb_flow_create_failure *why)
{
    if (t->n_used >= t->capacity) {
        *why = XLB_FLOW_CREATE_TABLE_FULL;
        return NULL;
    }
    uint16_t port = 0;
    int s = hashed_snat(t, client->family, hash, &port);
    if (s >= 0 && t->port_flow[s][port - t->port_base] == XLB_FLOW_NONE)
        return create_on(t, client, backend, backend_port_be, s, port, why);
    if (strict) {
        *why = s < 0 ? XLB_FLOW_CREATE_NO_SNAT : XLB_FLOW_CREATE_PORT_TAKEN;
        return NULL;
    }
    return xlb_flow_create(t, client, backend, backend_port_be, why);
}

static uint32_t index_of(const struct xlb_flow_table *t, const struct xlb_flow *f)
{
    return (uint32_t)(f - t->flows);
}

static void wheel_unlink(struct xlb_flow_table *t, struct xlb_flow *f)
{
    if (!f->scheduled)
        return;
    if (f->wheel_prev != XLB_FLOW_NONE)
        t->flows[f->wheel_prev].wheel_next = f->wheel_next;
    else
        t->wheel[f->wheel_slot] = f->wheel_next;
    if (f->wheel_next != XLB_FLOW_NONE)
        t->flows[f->wheel_next].wheel_prev = f->wheel_prev;
    f->scheduled = false;
}

/* Link f into the slot of the second its deadline falls in, never one already passed. */
static void wheel_link(struct xlb_flow_table *t, struct xlb_flow *f)
{
    uint64_t second = f->expires_s;
    if (second < t->wheel_second)
        second = t->wheel_second;
    /* Never a lap ahead: that slot is the one being processed, and the flow would come back
     * to it at once; from the last slot of the lap it is looked at again in time. */
    if (second >= t->wheel_second + XLB_FLOW_WHEEL_SLOTS)
        second = t->wheel_second + XLB_FLOW_WHEEL_SLOTS - 1;
    uint16_t slot = (uint16_t)(second % XLB_FLOW_WHEEL_SLOTS);
    uint32_t i = index_of(t, f);
    f->wheel_slot = slot;
    f->wheel_prev = XLB_FLOW_NONE;
    f->wheel_next = t->wheel[slot];
    if (f->wheel_next != XLB_FLOW_NONE)
        t->flows[f->wheel_next].wheel_prev = i;
    t->wheel[slot] = i;
    f->scheduled = true;
}

void xlb_flow_schedule(struct xlb_flow_table *t, struct xlb_flow *f, uint64_t now_tsc, uint64_t hz)
{
    xlb_flow_start_clock(t, now_tsc, hz);
    wheel_unlink(t, f);
    wheel_link(t, f);
}

bool xlb_flow_evict_oldest(struct xlb_flow_table *t, uint32_t budget, struct xlb_flow *evicted)
{
    /* Slots hold flows by the deadline they had when linked; traffic has since moved some of
     * them on. Walk the earliest slots, relinking those that moved, until a flow whose
     * deadline really is in its slot's second turns up; with the budget spent, the nearest
     * deadline seen goes. */
    struct xlb_flow *nearest = NULL;
    for (uint32_t k = 0; k < XLB_FLOW_WHEEL_SLOTS && budget > 0 && t->wheel_hz != 0; k++) {
        uint64_t second = t->wheel_second + k;
        uint32_t i = t->wheel[second % XLB_FLOW_WHEEL_SLOTS];
        while (i != XLB_FLOW_NONE && budget > 0) {
            struct xlb_flow *f = &t->flows[i];
            uint32_t next = f->wheel_next;
            budget--;
            if (nearest == NULL || f->expires_s < nearest->expires_s)
                nearest = f;
            if (f->expires_s <= second) {
                nearest = f;
                budget = 0;
                break;
            }
            wheel_unlink(t, f);
            wheel_link(t, f);
            i = next;
        }
    }
    if (nearest == NULL)
        return false;
    *evicted = *nearest;
    xlb_flow_remove(t, nearest);
    return true;
}

uint32_t xlb_flow_due(struct xlb_flow_table *t, uint64_t now_tsc, uint32_t budget,
                      struct xlb_flow **due, uint32_t max)
{
    uint32_t n = 0;
    if (t->wheel_hz == 0)
        return 0;
    uint64_t now_second = now_tsc / t->wheel_hz;
    /* A slot is processed once its whole second has passed. After a long pause, one lap of
     * the wheel covers every slot. */
    if (now_second > t->wheel_second + XLB_FLOW_WHEEL_SLOTS)
        t->wheel_second = now_second - XLB_FLOW_WHEEL_SLOTS;
    while (t->wheel_second < now_second && budget > 0 && n < max) {
        uint16_t slot = (uint16_t)(t->wheel_second % XLB_FLOW_WHEEL_SLOTS);
        uint32_t i = t->wheel[slot];
        if (i == XLB_FLOW_NONE) {
            t->wheel_second++;
            continue;
        }
        struct xlb_flow *f = &t->flows[i];
        budget--;
        wheel_unlink(t, f);
        if (f->expires_s < now_second)
            due[n++] = f; /* its deadline's second has passed */
        else
            wheel_link(t, f); /* refreshed since: on to a later slot */
    }
    return n;
}

void xlb_flow_remove(struct xlb_flow_table *t, struct xlb_flow *f)
{
    if (!f->used)
        return;
    wheel_unlink(t, f);
    rte_hash_del_key(t->hash, xlb_flow_stored_key(t, f));
    t->port_flow[f->snat_index][f->snat_port - t->port_base] = XLB_FLOW_NONE;
    push_port(t, f->snat_index, f->snat_port);
    f->used = false;
    t->n_used--;
    t->changes++;
    if (xlb_flow_half_open(f->state) && t->n_syn > 0)
        t->n_syn--;
}
