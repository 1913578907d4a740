#include "neighbour_table.h"

#include <stdlib.h>
#include <string.h>

#include "xlb_log.h"

void xlb_neighbours_init(struct xlb_neighbour_table *table)
{
    memset(table, 0, sizeof(*table));
}

void xlb_neighbours_free(struct xlb_neighbour_table *table)
{
    free(table->entries);
    memset(table, 0, sizeof(*table));
}

static struct xlb_neighbour_state *find(struct xlb_neighbour_table *table,
                                        const struct xlb_addr *addr, uint16_t port_index)
{
    for (unsigned i = 0; i < table->n; i++)
        if (table->entries[i].port_index == port_index &&
            xlb_addr_equal(&table->entries[i].addr, addr))
            return &table->entries[i];
    return NULL;
}

/* A free entry at the end of table, grown as needed; NULL when out of memory. */
static struct xlb_neighbour_state *append(struct xlb_neighbour_table *table)
{
    if (table->n == table->capacity) {
        unsigned capacity = table->capacity ? table->capacity * 2 : 8;
        void *grown = realloc(table->entries, capacity * sizeof(*table->entries));
        if (grown == NULL)
            return NULL;
        table->entries = grown;
        table->capacity = capacity;
    }
    return &table->entries[table->n++];
}

int xlb_neighbours_want(struct xlb_neighbour_table *table, const struct xlb_addr *addr,
                        uint16_t port_index, bool is_gateway)
{
    struct xlb_neighbour_state *existing = find(table, addr, port_index);
    if (existing != NULL) {
        existing->is_gateway |= is_gateway;
        existing->lingering = false;
        return 0;
    }
    struct xlb_neighbour_state *n = append(table);
    if (n == NULL)
        return -1;
    *n = (struct xlb_neighbour_state){
        .addr = *addr,
        .port_index = port_index,
        .is_gateway = is_gateway,
    };
    return 0;
}

int xlb_neighbours_keep_known(struct xlb_neighbour_table *table,
                              const struct xlb_neighbour_table *known, uint64_t now_ms)
{
    table->unsolicited_ignored = known->unsolicited_ignored;
    unsigned wanted = table->n; /* the entries past these are lingering ones */
    for (unsigned i = 0; i < known->n; i++) {
        const struct xlb_neighbour_state *old = &known->entries[i];
        struct xlb_neighbour_state *n = find(table, &old->addr, old->port_index);
        if (n != NULL && (unsigned)(n - table->entries) < wanted) {
            bool is_gateway = n->is_gateway;
            *n = *old;
            n->is_gateway = is_gateway;
            n->lingering = false;
            continue;
        }
        if (n != NULL || !old->resolved || now_ms - old->resolved_ms >= XLB_NEIGHBOUR_LINGER_MS)
            continue;
        n = append(table);
        if (n == NULL)
            return -1;
        *n = *old;
        n->lingering = true;
        n->is_gateway = false;
        n->solicited_ms = 0;
    }
    return 0;
}

bool xlb_neighbours_seen(struct xlb_neighbour_table *table, const struct xlb_msg *msg,
                         uint64_t now_ms)
{
    struct xlb_neighbour_state *n = find(table, &msg->addr, msg->port_index);
    if (n == NULL)
        return false;
    bool changed = !n->resolved || !rte_is_same_ether_addr(&n->mac, &msg->mac);
    bool solicited = n->solicited_ms != 0 && now_ms - n->solicited_ms <= XLB_SOLICIT_ANSWER_MS;
    if (!solicited) {
        if (changed) {
            n->unsolicited_ignored++;
            table->unsolicited_ignored++;
        }
        return false;
    }
    n->solicited_ms = 0; /* answered: the next report needs the next solicitation */
    if (changed) {
        char addr[XLB_ADDR_STRLEN];
        XLB_LOG(INFO, NEIGHBOUR, "%s is at " RTE_ETHER_ADDR_PRT_FMT "%s",
                xlb_addr_format(&n->addr, addr, sizeof(addr)), RTE_ETHER_ADDR_BYTES(&msg->mac),
                n->resolved ? " (changed)" : "");
    }
    n->resolved = true;
    rte_ether_addr_copy(&msg->mac, &n->mac);
    n->resolved_ms = now_ms;
    n->next_solicit_ms = now_ms + XLB_SOLICIT_REFRESH_MS;
    return changed;
}

void xlb_neighbours_solicit_due(struct xlb_neighbour_table *table, struct xlb_shared *shared,
                                uint64_t now_ms)
{
    for (unsigned i = 0; i < table->n; i++) {
        struct xlb_neighbour_state *n = &table->entries[i];
        if (n->lingering || now_ms < n->next_solicit_ms)
            continue;
        struct xlb_msg msg = {
            .type = XLB_MSG_SOLICIT,
            .port_index = n->port_index,
            .addr = n->addr,
        };
        /* Worker 0 has a tx queue on every port. A full ring just means: try next time. */
        if (xlb_msg_send(shared->to_worker[0], &msg) != 0)
            continue;
        n->solicitations++;
        n->solicited_ms = now_ms;
        n->next_solicit_ms = now_ms + (n->resolved ? XLB_SOLICIT_REFRESH_MS : XLB_SOLICIT_RETRY_MS);
    }
}
