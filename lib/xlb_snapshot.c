#include "xlb_snapshot.h"

#include "xlb_lb.h"

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
    /* Freed on the control plane after the grace period: the only thread counting refs. */
    for (uint32_t v = 0; v < snap->n_vips; v++)
        xlb_lb_vip_release(snap->vips[v].lb);
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
