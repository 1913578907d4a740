/*
 * The neighbours xlb must reach by MAC: each port's gateways, and the backends of L4 VIPs that
 * are on-link for a port (forwarded flows go straight to them). They are resolved by asking a
 * worker to send ARP requests or neighbour solicitations and by the reports workers send back.
 * Resolved entries are re-solicited periodically so that a changed MAC is noticed.
 */
#ifndef XLB_NEIGHBOUR_TABLE_H
#define XLB_NEIGHBOUR_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "xlb_msg.h"
#include "xlb_shared.h"

#define XLB_SOLICIT_RETRY_MS   1000  /* while unresolved */
#define XLB_SOLICIT_REFRESH_MS 30000 /* once resolved */
/* How long after a solicitation its answer is taken: an ARP reply or neighbour advertisement
 * (or any report) that would create or change an entry is believed only in this window. */
#define XLB_SOLICIT_ANSWER_MS 3000
/* How long a resolved neighbour no longer wanted (its endpoint left every cluster) is kept, as
 * a host's ARP cache keeps it: an endpoint that an EDS update removes and the next one brings
 * back is reachable at once, instead of waiting for a new answer (which a worker busy with
 * many other solicitations may send late, and which is believed only within
 * XLB_SOLICIT_ANSWER_MS). Counted from its last answer; not solicited meanwhile. */
#define XLB_NEIGHBOUR_LINGER_MS 60000

struct xlb_neighbour_state {
    struct xlb_addr addr;
    uint16_t port_index;
    bool is_gateway;
    bool resolved;
    bool lingering; /* no longer wanted: kept until resolved_ms + XLB_NEIGHBOUR_LINGER_MS */
    struct rte_ether_addr mac;
    uint64_t resolved_ms;
    uint64_t next_solicit_ms;
    uint64_t solicitations;
    uint64_t solicited_ms; /* when the outstanding solicitation was sent; 0: none */
    /* Reports that would have set or changed the MAC with no solicitation outstanding
     * (gratuitous or spoofed answers), ignored. */
    uint64_t unsolicited_ignored;
};

struct xlb_neighbour_table {
    unsigned n, capacity;
    uint64_t unsolicited_ignored; /* all entries', including entries since forgotten */
    struct xlb_neighbour_state *entries;
};

void xlb_neighbours_init(struct xlb_neighbour_table *table);
void xlb_neighbours_free(struct xlb_neighbour_table *table);

/* Start resolving addr behind port_index; 0, or -1 when out of memory. Idempotent. */
int xlb_neighbours_want(struct xlb_neighbour_table *table, const struct xlb_addr *addr,
                        uint16_t port_index, bool is_gateway);

/* Copy what known already learned (MAC, state, timers) into the matching entries of table,
 * and keep known's other resolved entries, lingering, for XLB_NEIGHBOUR_LINGER_MS after their
 * last answer; -1 when out of memory (table then holds what it could). */
int xlb_neighbours_keep_known(struct xlb_neighbour_table *table,
                              const struct xlb_neighbour_table *known, uint64_t now_ms);

/*
 * Apply a worker's report; true when the snapshot must be rebuilt (new or changed MAC). A MAC
 * is learned or changed only in answer to a solicitation xlb sent (within
 * XLB_SOLICIT_ANSWER_MS, one answer per solicitation), so that a gratuitous or spoofed ARP
 * reply or advertisement cannot redirect traffic for a gateway or backend; other reports are
 * counted in unsolicited_ignored.
 */
bool xlb_neighbours_seen(struct xlb_neighbour_table *table, const struct xlb_msg *msg,
                         uint64_t now_ms);

/* Ask worker 0 to solicit every neighbour that is due. */
void xlb_neighbours_solicit_due(struct xlb_neighbour_table *table, struct xlb_shared *shared,
                                uint64_t now_ms);

#endif
