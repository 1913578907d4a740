#include "xlb_snapshot.h"

#include "xlb_lb.h"
#include "xlb_tls_server.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

/* Key equality for the address table: three loads instead of a memcmp call for 20 bytes. */
static int addr_differs(const void *a, const void *b, size_t len)
{
    (void)len;
    uint64_t x[2], y[2];
    uint32_t x_tail, y_tail;
    memcpy(x, a, 16);
    memcpy(y, b, 16);
    memcpy(&x_tail, (const uint8_t *)a + 16, 4);
    memcpy(&y_tail, (const uint8_t *)b + 16, 4);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x_tail ^ y_tail)) != 0;
}

_Static_assert(sizeof(struct xlb_addr) == 20, "addr_differs compares 20 bytes");

struct xlb_snapshot *xlb_snapshot_alloc(uint64_t generation, uint32_t max_entries,
                                        uint32_t max_vips)
{
    struct xlb_snapshot *snap = rte_zmalloc("xlb_snapshot", sizeof(*snap), 0);
    if (snap == NULL)
        return NULL;
    snap->generation = generation;
    snap->capacity = max_entries;

    /* rte_hash names are global; the generation makes them unique while old ones await RCU. */
    char name[RTE_HASH_NAMESIZE];
    snprintf(name, sizeof(name), "xlb_addr_%" PRIu64, generation);
    struct rte_hash_parameters params = {
        .name = name,
        .entries = max_entries < 8 ? 8 : max_entries,
        .key_len = sizeof(struct xlb_addr),
        .hash_func = rte_hash_crc, /* SSE4.2 CRC32: a few cycles for a 20-byte key */
        .socket_id = SOCKET_ID_ANY,
    };
    snap->addresses = rte_hash_create(&params);
    if (snap->addresses != NULL)
        rte_hash_set_cmp_func(snap->addresses, addr_differs);
    snap->entries = rte_zmalloc("xlb_entries", sizeof(*snap->entries) * (max_entries + 1), 0);
    snap->vips = rte_zmalloc("xlb_vips", sizeof(*snap->vips) * (max_vips + 1), 0);
    if (snap->addresses == NULL || snap->entries == NULL || snap->vips == NULL) {
        xlb_snapshot_free(snap);
        return NULL;
    }
    return snap;
}

void xlb_snapshot_free(struct xlb_snapshot *snap)
{
    if (snap == NULL)
        return;
    rte_hash_free(snap->addresses);
    rte_free(snap->entries);
    rte_free(snap->slot_hosts);
    rte_free(snap->slot_cluster);
    /* Freed on the control plane after the grace period: the only thread counting refs. */
    for (uint32_t v = 0; v < snap->n_vips; v++) {
        xlb_lb_vip_release(snap->vips[v].lb);
        xlb_tls_server_unref(snap->vips[v].tls);
    }
    rte_free(snap->vips);
    rte_free(snap);
}

int xlb_snapshot_add_address(struct xlb_snapshot *snap, const struct xlb_addr_entry *entry)
{
    if (snap->n_entries >= snap->capacity || rte_hash_lookup(snap->addresses, &entry->addr) >= 0)
        return -1;
    uint32_t index = snap->n_entries;
    if (rte_hash_add_key_data(snap->addresses, &entry->addr, (void *)(uintptr_t)index) < 0)
        return -1;
    snap->entries[index] = *entry;
    snap->n_entries++;
    return 0;
}

const struct xlb_prefix *xlb_port_prefix_for(const struct xlb_port_view *port,
                                             const struct xlb_addr *addr)
{
    for (unsigned i = 0; i < port->n_prefixes; i++)
        if (xlb_prefix_contains(&port->prefixes[i], addr))
            return &port->prefixes[i];
    return NULL;
}

/* Calls visit for each endpoint of each leaf of each stream VIP's tree (an endpoint in several
 * clusters more than once). */
static void for_each_stream_endpoint(const struct xlb_snapshot *snap,
                                     void (*visit)(struct xlb_snapshot *,
                                                   const struct xlb_lb_cluster *,
                                                   const struct xlb_lb_endpoint *),
                                     struct xlb_snapshot *arg)
{
    for (uint32_t v = 0; v < snap->n_vips; v++) {
        const struct xlb_lb_vip *lb = snap->vips[v].lb;
        if (!snap->vips[v].stream || lb == NULL)
            continue;
        for (uint32_t t = 0; t < lb->n_targets; t++)
            for (uint32_t l = 0; l < lb->targets[t].n_leaves; l++) {
                const struct xlb_lb_cluster *c = lb->targets[t].leaves[l];
                for (uint32_t e = 0; c != NULL && e < c->n_endpoints; e++)
                    if (c->endpoints[e].slot < XLB_ENDPOINT_SLOTS)
                        visit(arg, c, &c->endpoints[e]);
            }
    }
}

static void count_slot(struct xlb_snapshot *snap, const struct xlb_lb_cluster *c,
                       const struct xlb_lb_endpoint *e)
{
    (void)c;
    if (e->slot >= snap->n_slot_hosts)
        snap->n_slot_hosts = e->slot + 1;
}

/* A slot belongs to one cluster (control/lb_compile/endpoint_slots.h). */
static void put_slot(struct xlb_snapshot *snap, const struct xlb_lb_cluster *c,
                     const struct xlb_lb_endpoint *e)
{
    snap->slot_hosts[e->slot] = e->where;
    snap->slot_cluster[e->slot] = c;
}

int xlb_snapshot_index_endpoints(struct xlb_snapshot *snap)
{
    rte_free(snap->slot_hosts); /* indexed again (tests): the last index goes */
    rte_free(snap->slot_cluster);
    snap->slot_hosts = NULL;
    snap->slot_cluster = NULL;
    snap->slot_hosts_known = false;
    snap->n_slot_hosts = 0;
    for_each_stream_endpoint(snap, count_slot, snap);
    if (snap->n_slot_hosts > 0) {
        snap->slot_hosts =
            rte_zmalloc("xlb_slot_hosts", sizeof(*snap->slot_hosts) * snap->n_slot_hosts, 0);
        snap->slot_cluster =
            rte_zmalloc("xlb_slot_cluster", sizeof(*snap->slot_cluster) * snap->n_slot_hosts, 0);
        if (snap->slot_hosts == NULL || snap->slot_cluster == NULL) {
            rte_free(snap->slot_hosts);
            rte_free(snap->slot_cluster);
            snap->slot_hosts = NULL;
            snap->slot_cluster = NULL;
            snap->n_slot_hosts = 0;
            return -ENOMEM;
        }
        for_each_stream_endpoint(snap, put_slot, snap);
    }
    snap->slot_hosts_known = true;
    return 0;
}
