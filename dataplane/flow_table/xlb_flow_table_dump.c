/* A worker's answer to a flow dump (lib/xlb_flow_dump.h): its table, a slice per poll loop. */
#include <string.h>
#include <sys/socket.h>

#include <rte_byteorder.h>

#include "xlb_flow_table.h"

static void record_of(const struct xlb_flow_table *t, const struct xlb_flow *f, unsigned worker,
                      uint64_t now_tsc, struct xlb_flow_record *r)
{
    struct xlb_flow_key client, reply;
    xlb_flow_client_key(t, f, &client);
    xlb_flow_reply_key(t, f, &reply);
    memset(r, 0, sizeof(*r));
    r->family = client.family;
    r->state = f->state;
    r->kind = f->kind == XLB_FLOW_KIND_NAT || f->kind == XLB_FLOW_KIND_NAT_PROXY
                  ? XLB_FLOW_RECORD_L4
                  : XLB_FLOW_RECORD_L7;
    r->worker = (uint8_t)worker;
    size_t len = client.family == AF_INET ? 4 : 16;
    memcpy(r->client, client.src, len);
    memcpy(r->vip, client.dst, len);
    memcpy(r->backend, reply.src, len);
    memcpy(r->snat, reply.dst, len);
    r->client_port = rte_be_to_cpu_16(client.src_port);
    r->vip_port = rte_be_to_cpu_16(client.dst_port);
    r->backend_port = rte_be_to_cpu_16(reply.src_port);
    r->snat_port = rte_be_to_cpu_16(reply.dst_port);
    r->endpoint_slot = f->endpoint_slot;
    r->cluster_slot = f->cluster_slot;
    uint64_t due = xlb_flow_due_tsc(t, f);
    r->expires_in_tsc = due > now_tsc ? due - now_tsc : 0;
}

bool xlb_flow_table_dump_step(const struct xlb_flow_table *t, struct xlb_flow_dump *d,
                              unsigned worker, uint64_t now_tsc)
{
    uint32_t end = t == NULL ? 0 : t->capacity;
    if (d->cursor < end && end - d->cursor > XLB_FLOW_DUMP_SLICE)
        end = d->cursor + XLB_FLOW_DUMP_SLICE;
    for (uint32_t i = d->cursor; i < end; i++) {
        const struct xlb_flow *f = &t->flows[i];
        if (!f->used || f->snat_index >= t->n_snat)
            continue;
        struct xlb_flow_record r;
        record_of(t, f, worker, now_tsc, &r);
        if (!xlb_flow_record_matches(&d->filter, &r))
            continue;
        d->n_matching++;
        if (d->n_records < d->capacity)
            d->records[d->n_records++] = r;
    }
    if (end > d->cursor)
        d->cursor = end;
    if (t != NULL && d->cursor < t->capacity)
        return false;
    xlb_flow_dump_finish(d);
    return true;
}
