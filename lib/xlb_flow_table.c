#include "xlb_flow_table.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_hash_crc.h>
#include <rte_malloc.h>

struct xlb_flow_table *xlb_flow_table_create(const char *name, uint32_t capacity, int socket,
                                             const struct xlb_addr *snat, unsigned n_snat,
                                             uint16_t port_base, uint16_t port_count)
{
    struct xlb_flow_table *t = rte_zmalloc_socket(name, sizeof(*t), 0, socket);
    if (t == NULL)
        return NULL;
    /* Two keys per flow; rte_hash wants a little headroom over its entries. */
    struct rte_hash_parameters params = {
        .name = name,
        .entries = capacity * 2 + 64,
        .key_len = sizeof(struct xlb_flow_key),
        .hash_func = rte_hash_crc,
        .socket_id = socket,
        /* Extendable buckets: an insert never fails while entries remain, whatever the
         * keys' spread (cuckoo alone can, well below the table's size). */
        .extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
    };
    t->hash = rte_hash_create(&params);
    t->flows = rte_zmalloc_socket(name, (size_t)capacity * sizeof(*t->flows), 0, socket);
    if (t->hash == NULL || t->flows == NULL) {
        xlb_flow_table_free(t);
        return NULL;
    }
    t->capacity = capacity;
    t->syn_cap = capacity / 4 > 0 ? capacity / 4 : 1;
    for (uint32_t i = 0; i < capacity; i++)
        t->flows[i].next_free = i + 1 < capacity ? i + 1 : XLB_FLOW_NONE;
    t->free_head = capacity > 0 ? 0 : XLB_FLOW_NONE;
    for (unsigned s = 0; s < XLB_FLOW_WHEEL_SLOTS; s++)
        t->wheel[s] = XLB_FLOW_NONE;
    t->port_base = port_base;
    t->port_count = port_count;
    t->n_snat = (uint8_t)(n_snat < XLB_FLOW_MAX_SNAT ? n_snat : XLB_FLOW_MAX_SNAT);
    for (unsigned s = 0; s < t->n_snat; s++) {
        t->snat[s] = snat[s];
        t->free_ports[s] = rte_malloc_socket(name, (size_t)port_count * 2 + 2, 0, socket);
        if (t->free_ports[s] == NULL) {
            xlb_flow_table_free(t);
            return NULL;
        }
        /* Handed out from the low end first (popped from the top of the stack). */
        for (uint32_t p = 0; p < port_count; p++)
            t->free_ports[s][p] = (uint16_t)(port_base + port_count - 1 - p);
        t->n_free_ports[s] = port_count;
    }
    return t;
}

void xlb_flow_table_free(struct xlb_flow_table *t)
{
    if (t == NULL)
        return;
    rte_hash_free(t->hash);
    rte_free(t->flows);
    for (unsigned s = 0; s < XLB_FLOW_MAX_SNAT; s++)
        rte_free(t->free_ports[s]);
    rte_free(t);
}

struct xlb_flow *xlb_flow_lookup(const struct xlb_flow_table *t, const struct xlb_flow_key *key)
{
    void *data;
    if (rte_hash_lookup_data(t->hash, key, &data) < 0)
        return NULL;
    return &t->flows[(uintptr_t)data];
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

static void copy_address(uint8_t out[16], const struct xlb_addr *a)
{
    memset(out, 0, 16);
    memcpy(out, a->bytes, a->family == AF_INET ? 4 : 16);
}

struct xlb_flow *xlb_flow_create(struct xlb_flow_table *t, const struct xlb_flow_key *client,
                                 const struct xlb_addr *backend, uint16_t backend_port_be, int *why)
{
    if (t->free_head == XLB_FLOW_NONE) {
        *why = 0;
        return NULL;
    }
    int s = snat_for_family(t, client->family);
    if (s < 0) {
        *why = s == -2 ? 1 : 2;
        return NULL;
    }
    uint32_t index = t->free_head;
    struct xlb_flow *f = &t->flows[index];
    uint32_t next = f->next_free;
    memset(f, 0, sizeof(*f));
    f->client_key = *client;
    f->snat_index = (uint8_t)s;
    f->snat_port = t->free_ports[s][--t->n_free_ports[s]];
    f->backend_key = (struct xlb_flow_key){
        .family = client->family,
        .proto = client->proto,
        .src_port = backend_port_be,
        .dst_port = rte_cpu_to_be_16(f->snat_port),
    };
    copy_address(f->backend_key.src, backend);
    copy_address(f->backend_key.dst, &t->snat[s]);
    if (rte_hash_add_key_data(t->hash, &f->client_key, (void *)(uintptr_t)index) < 0 ||
        rte_hash_add_key_data(t->hash, &f->backend_key, (void *)(uintptr_t)index) < 0) {
        rte_hash_del_key(t->hash, &f->client_key);
        t->free_ports[s][t->n_free_ports[s]++] = f->snat_port;
        *why = 0;
        return NULL;
    }
    t->free_head = next;
    f->used = true;
    t->n_used++;
    return f;
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
    uint64_t second = f->expires_tsc / t->wheel_hz;
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
    if (t->wheel_hz == 0) {
        t->wheel_hz = hz > 0 ? hz : 1;
        t->wheel_second = now_tsc / t->wheel_hz;
    }
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
            if (nearest == NULL || f->expires_tsc < nearest->expires_tsc)
                nearest = f;
            if (f->expires_tsc / t->wheel_hz <= second) {
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
        if (f->expires_tsc <= now_tsc)
            due[n++] = f;
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
    rte_hash_del_key(t->hash, &f->client_key);
    rte_hash_del_key(t->hash, &f->backend_key);
    t->free_ports[f->snat_index][t->n_free_ports[f->snat_index]++] = f->snat_port;
    f->used = false;
    f->next_free = t->free_head;
    t->free_head = (uint32_t)(f - t->flows);
    t->n_used--;
    if (f->state == XLB_FLOW_SYN_SENT && t->n_syn > 0)
        t->n_syn--;
}
