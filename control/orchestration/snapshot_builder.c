#include "snapshot_builder.h"

#include <inttypes.h>

#include "xlb_log.h"

/* Ports that answer ARP/ND for an address: those it is on-link for, or all when none is. */
static uint32_t answering_ports(const struct xlb_port_view *ports, unsigned n_ports,
                                const struct xlb_addr *addr)
{
    uint32_t mask = 0;
    for (unsigned p = 0; p < n_ports; p++)
        if (xlb_port_prefix_for(&ports[p], addr) != NULL)
            mask |= 1u << p;
    return mask != 0 ? mask : (uint32_t)((1ull << n_ports) - 1);
}

static void add_owned(struct xlb_snapshot *snap, const struct xlb_addr *addr, uint8_t role,
                      uint32_t port_mask, uint16_t snat_index)
{
    struct xlb_addr_entry entry = {
        .addr = *addr, .role = role, .port_mask = port_mask, .snat_index = snat_index};
    /* A VIP address serving several ports is one entry; the reader rejected other clashes. */
    xlb_snapshot_add_address(snap, &entry);
}

static void add_neighbours(struct xlb_snapshot *snap, const struct xlb_neighbour_table *table)
{
    for (unsigned i = 0; i < table->n; i++) {
        const struct xlb_neighbour_state *n = &table->entries[i];
        struct xlb_addr_entry entry = {
            .addr = n->addr,
            .role = XLB_ROLE_NEIGHBOUR,
            .port_index = n->port_index,
            .resolved = n->resolved,
            .mac = n->mac,
        };
        xlb_snapshot_add_address(snap, &entry);
    }
}

struct xlb_snapshot *xlb_snapshot_build(const struct xlb_bootstrap *b,
                                        const struct xlb_port_view *ports, unsigned n_ports,
                                        const struct xlb_neighbour_table *neighbours,
                                        const struct xlb_lb_trees *lb,
                                        const struct xlb_tls_watch *tls, uint64_t generation)
{
    uint32_t max_entries = b->n_snat + b->n_vips + neighbours->n;
    for (unsigned p = 0; p < n_ports; p++)
        max_entries += ports[p].n_prefixes;
    struct xlb_snapshot *snap = xlb_snapshot_alloc(generation, max_entries, b->n_vips);
    if (snap == NULL) {
        XLB_LOG(ERR, SNAPSHOT, "cannot allocate generation %" PRIu64, generation);
        return NULL;
    }
    snap->n_ports = (uint16_t)n_ports;
    snap->l4_syn_proxy = b->l4_syn_proxy;
    snap->l4_syn_proxy_percent = (uint8_t)b->l4_syn_proxy_percent;
    snap->connection_hash_keyed = b->connection_hash_keyed;
    memcpy(snap->connection_hash_key, b->connection_hash_key, sizeof(snap->connection_hash_key));
    for (unsigned p = 0; p < n_ports; p++) {
        snap->ports[p] = ports[p];
        snap->ports[p].n_gateways = (uint8_t)b->ports[p].n_gateways;
        for (unsigned g = 0; g < b->ports[p].n_gateways; g++)
            snap->ports[p].gateways[g] = b->ports[p].gateways[g];
        snap->ports[p].mss_max_ipv4 = xlb_port_mss_max(ports[p].mtu, b->tcp_mss_clamp, false);
        snap->ports[p].mss_max_ipv6 = xlb_port_mss_max(ports[p].mtu, b->tcp_mss_clamp, true);
        for (unsigned a = 0; a < ports[p].n_prefixes; a++)
            add_owned(snap, &ports[p].prefixes[a].addr, XLB_ROLE_PORT_ADDRESS, 1u << p, 0);
    }
    /* The SNAT set xlbd started with (a reload never changes it, reload.c): the flow tables
     * hand out its ports, so replies to each of its addresses must stay ours. */
    for (unsigned s = 0; s < b->n_snat; s++)
        add_owned(snap, &b->snat[s], XLB_ROLE_SNAT, answering_ports(ports, n_ports, &b->snat[s]),
                  (uint16_t)s);
    for (unsigned v = 0; v < b->n_vips; v++) {
        const struct xlb_vip_config *vip = &b->vips[v];
        add_owned(snap, &vip->address, XLB_ROLE_VIP, answering_ports(ports, n_ports, &vip->address),
                  0);
        snap->vips[snap->n_vips++] = (struct xlb_vip_view){
            .addr = vip->address,
            .l4_port = vip->port,
            .l7 = vip->target != NULL,
            .terminate = vip->terminate,
            .newreno = vip->newreno,
            .stream = vip->stream,
            .lb = lb != NULL ? xlb_lb_trees_vip(lb, v) : NULL,
            .tls = vip->tls.certificate_provider != NULL && tls != NULL
                       ? xlb_tls_watch_server(tls, vip->tls.index)
                       : NULL,
            .tls_index = (uint8_t)vip->tls.index,
        };
        xlb_lb_vip_hold(snap->vips[snap->n_vips - 1].lb);
        if (snap->vips[snap->n_vips - 1].tls != NULL)
            xlb_tls_server_ref(snap->vips[snap->n_vips - 1].tls);
    }
    if (xlb_snapshot_index_endpoints(snap) != 0)
        XLB_LOG(WARNING, SNAPSHOT,
                "generation %" PRIu64 ": no memory to index endpoints; stream subchannels to "
                "removed endpoints stay open until this is indexed",
                generation);
    add_neighbours(snap, neighbours);
    return snap;
}
