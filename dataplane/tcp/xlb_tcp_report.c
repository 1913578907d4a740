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

void xlb_tcp_stats_publish(const struct xlb_tcp_endpoint *const *eps, unsigned n,
                           struct xlb_tcp_stats *out)
{
    uint64_t sum[XLB_TCP_COUNTER_MAX] = {0};
    uint64_t in_use = 0, ooo = 0;
    bool any = false;
    for (unsigned e = 0; e < n; e++) {
        if (eps[e] == NULL)
            continue;
        any = true;
        uint64_t ctr[XLB_TCP_COUNTER_MAX];
        memcpy(ctr, &eps[e]->ctr, sizeof(ctr));
        for (unsigned i = 0; i < XLB_TCP_COUNTER_MAX; i++)
            sum[i] += ctr[i];
        in_use += eps[e]->in_use;
        ooo += eps[e]->ooo_bytes;
    }
    if (!any)
        return;
    if (memcmp(out->counters, sum, sizeof(sum)) != 0)
        memcpy(out->counters, sum, sizeof(sum));
    if (out->conns_in_use != in_use)
        out->conns_in_use = in_use;
    if (out->conns_high_water < in_use)
        out->conns_high_water = in_use;
    if (out->ooo_bytes != ooo)
        out->ooo_bytes = ooo;
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

/* Record what the control blocks [from, to) of ep hold. */
static void dump_range(const struct xlb_tcp_endpoint *ep, struct xlb_tcp_dump *d, unsigned worker,
                       uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        const struct xlb_tcp_conn *c = &ep->conns[i];
        if (c->state == XLB_TCP_CLOSED)
            continue;
        d->n_conns++;
        if (d->n_records < d->capacity)
            record_of(c, worker, &d->records[d->n_records++]);
    }
}

bool xlb_tcp_dump_step(const struct xlb_tcp_endpoint *const *eps, unsigned n,
                       struct xlb_tcp_dump *d, unsigned worker)
{
    /* The cursor runs over the endpoints' control blocks one after the other. */
    uint32_t base = 0, total = 0;
    for (unsigned e = 0; e < n; e++)
        total += eps[e] != NULL ? eps[e]->cfg.max_connections : 0;
    for (unsigned e = 0; e < n && d->cursor < total; e++) {
        if (eps[e] == NULL)
            continue;
        uint32_t size = eps[e]->cfg.max_connections;
        if (d->cursor < base + size) {
            uint32_t from = d->cursor - base;
            uint32_t to = size - from > XLB_TCP_DUMP_SLICE ? from + XLB_TCP_DUMP_SLICE : size;
            dump_range(eps[e], d, worker, from, to);
            d->cursor = base + to;
            break;
        }
        base += size;
    }
    if (d->cursor < total)
        return false;
    xlb_tcp_dump_finish(d);
    return true;
}
