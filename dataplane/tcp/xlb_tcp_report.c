/* The endpoint's counters and connections in lib/'s layouts, for the control plane. */
#include "xlb_tcp_report.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "xlb_tcp_conn.h"

/* lib/'s counter array is struct xlb_tcp_counters itself, field for field: one counter added on
 * one side only, or moved, fails here. Then publishing is one compare and one copy. */
_Static_assert(sizeof(struct xlb_tcp_counters) == XLB_TCP_COUNTER_MAX * sizeof(uint64_t),
               "lib/xlb_tcp_stats.h lists every field of struct xlb_tcp_counters");
#define XLB_TCP_COUNTER_AT(id, field, name, family, label, value)                                  \
    _Static_assert(offsetof(struct xlb_tcp_counters, field) == XLB_TCP_C_##id * sizeof(uint64_t),  \
                   "lib/xlb_tcp_stats.h lists " #field                                             \
                   " at its place in struct xlb_tcp_counters");
XLB_TCP_COUNTERS(XLB_TCP_COUNTER_AT)
#undef XLB_TCP_COUNTER_AT

void xlb_tcp_stats_publish(const struct xlb_tcp_endpoint *ep, struct xlb_tcp_stats *out)
{
    if (ep == NULL)
        return;
    if (memcmp(out->counters, &ep->ctr, sizeof(ep->ctr)) != 0)
        memcpy(out->counters, &ep->ctr, sizeof(ep->ctr));
    if (out->conns_in_use != ep->in_use)
        out->conns_in_use = ep->in_use;
    if (out->conns_high_water < ep->in_use)
        out->conns_high_water = ep->in_use;
    if (out->ooo_bytes != ep->ooo_bytes)
        out->ooo_bytes = ep->ooo_bytes;
}

static void record_of(const struct xlb_tcp_conn *c, unsigned worker, struct xlb_tcp_conn_record *r)
{
    struct xlb_tcp_conn_info info;
    xlb_tcp_conn_info(c, &info);
    memset(r, 0, sizeof(*r));
    r->family = info.tuple.family;
    r->worker = (uint8_t)worker;
    r->local_port = rte_be_to_cpu_16(info.tuple.local_port);
    r->remote_port = rte_be_to_cpu_16(info.tuple.remote_port);
    memcpy(r->local, info.tuple.local, sizeof(r->local));
    memcpy(r->remote, info.tuple.remote, sizeof(r->remote));
    snprintf(r->state, sizeof(r->state), "%s", xlb_tcp_state_name(info.state));
    r->cwnd = info.cwnd;
    r->ssthresh = info.ssthresh;
    r->srtt_us = info.srtt_us;
    r->rttvar_us = info.rttvar_us;
    r->rto_ms = info.rto_ms;
    r->mss = info.mss;
    r->snd_wnd = info.snd_wnd;
    r->rcv_wnd = info.rcv_wnd;
    r->snd_queue = info.snd_queue;
    r->rcv_queue = info.rcv_queue;
    r->ooo_bytes = info.ooo_bytes;
    r->unacked = info.unacked;
    r->retransmits = info.retransmits;
    r->memory = info.memory;
}

bool xlb_tcp_dump_step(const struct xlb_tcp_endpoint *ep, struct xlb_tcp_dump *d, unsigned worker)
{
    uint32_t end = ep == NULL ? 0 : ep->cfg.max_connections;
    if (d->cursor < end && end - d->cursor > XLB_TCP_DUMP_SLICE)
        end = d->cursor + XLB_TCP_DUMP_SLICE;
    for (uint32_t i = d->cursor; i < end; i++) {
        const struct xlb_tcp_conn *c = &ep->conns[i];
        if (c->state == XLB_TCP_CLOSED)
            continue;
        d->n_conns++;
        if (d->n_records < d->capacity)
            record_of(c, worker, &d->records[d->n_records++]);
    }
    if (end > d->cursor)
        d->cursor = end;
    if (ep != NULL && d->cursor < ep->cfg.max_connections)
        return false;
    xlb_tcp_dump_finish(d);
    return true;
}
