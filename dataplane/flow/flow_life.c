/*
 * A flow's life in the worker's table, whatever its kind: keys and VIPs, the end of a flow
 * (released, expired, flushed, evicted) with its engine's state and the LB core's accounting.
 */
#include "flow.h"

#include <string.h>
#include <sys/socket.h>

#include <rte_hash_crc.h>

#include "l7/l7.h"
#include "nat/nat.h"
#include "relay/relay.h"
#include "stream/stream.h"
#include "xlb_siphash.h"

void xlb_flow_key_of(const struct xlb_tcp_packet *p, struct xlb_flow_key *key)
{
    const uint8_t *src, *dst;
    size_t len = xlb_flow_addresses(p->family, p->ip, &src, &dst);
    memset(key, 0, sizeof(*key));
    key->family = p->family;
    key->proto = IPPROTO_TCP;
    key->src_port = p->tcp->src_port;
    key->dst_port = p->tcp->dst_port;
    memcpy(key->src, src, len);
    memcpy(key->dst, dst, len);
}

static void addr_of(uint8_t family, const uint8_t bytes[16], struct xlb_addr *out)
{
    memset(out, 0, sizeof(*out));
    out->family = family;
    memcpy(out->bytes, bytes, family == AF_INET ? 4 : 16);
}

static const struct xlb_vip_view *find_vip(const struct xlb_snapshot *snap,
                                           const struct xlb_addr *addr, uint16_t port)
{
    for (uint32_t v = 0; v < snap->n_vips; v++)
        if (snap->vips[v].l4_port == port && xlb_addr_equal(&snap->vips[v].addr, addr))
            return &snap->vips[v];
    return NULL;
}

const struct xlb_vip_view *xlb_flow_vip_of(const struct xlb_snapshot *snap,
                                           const struct xlb_flow_key *key)
{
    struct xlb_addr vip_addr;
    addr_of(key->family, key->dst, &vip_addr);
    return find_vip(snap, &vip_addr, rte_be_to_cpu_16(key->dst_port));
}

void xlb_flow_count_endpoint(struct xlb_burst_ctx *ctx, uint32_t slot, bool ok)
{
    if (ctx->lb == NULL || ctx->lb->load == NULL || slot >= XLB_ENDPOINT_SLOTS)
        return;
    if (ok)
        ctx->lb->load->endpoints[slot].succeeded++;
    else
        ctx->lb->load->endpoints[slot].failed++;
}

/*
 * The connection's request hash for ring hash (A42 points are 64-bit). With
 * xlb.connection_hash_key, SipHash-2-4 of the 5-tuple with that key: a client cannot compute
 * offline which source ports land next to one ring point and aim its connections at one
 * backend, and every host given the same key (a restarted or standby xlbd) picks the same
 * backend for a connection. Without, a 32-bit CRC of the 5-tuple spread over 64 bits by
 * splitmix64's finalizer: the same everywhere too, but computable by anyone.
 */
uint64_t xlb_flow_connection_hash(const struct xlb_snapshot *snap, const struct xlb_flow_key *key)
{
    if (snap != NULL && snap->connection_hash_keyed)
        return xlb_siphash24(snap->connection_hash_key, key, sizeof(*key));
    uint64_t z = rte_hash_crc(key, sizeof(*key), 0) + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

xlb_verdict xlb_flow_create_drop(enum xlb_flow_create_failure why)
{
    switch (why) {
    case XLB_FLOW_CREATE_TABLE_FULL:
        return XLB_DROP_FLOW_TABLE_FULL;
    case XLB_FLOW_CREATE_BUCKET_FULL:
        return XLB_DROP_FLOW_HASH_BUCKET_FULL;
    case XLB_FLOW_CREATE_PORTS_EXHAUSTED:
        return XLB_DROP_SNAT_PORTS_EXHAUSTED;
    case XLB_FLOW_CREATE_NO_SNAT:
        return XLB_DROP_NO_SNAT_ADDRESS;
    case XLB_FLOW_CREATE_PORT_TAKEN:
        break;
    }
    return XLB_DROP_TCP_NO_FLOW; /* resuming: its SNAT port is taken */
}

/* What a flow's end costs whatever ends it: its engine's state (an L7 connection's streams
 * end, its entry goes back to the pool, unless it went back at the connection's close), and
 * the request its pick started unless that has ended already (a closed connection's slot is
 * none; an L4 flow in RESET ended it at the RST, dataplane/nat/nat_track.c). */
static void end_flow(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    switch ((enum xlb_flow_kind)f->kind) {
    case XLB_FLOW_KIND_L7_SPLICE:
        xlb_l7_release(ctx, f);
        break;
    case XLB_FLOW_KIND_L7_CLOSED:
        break; /* its connection's entry went back when its exchange was over */
    case XLB_FLOW_KIND_TCP_RELAY:
        xlb_relay_release(ctx, f); /* resets what is still open */
        break;
    case XLB_FLOW_KIND_STREAM_CLIENT:
        xlb_stream_release(ctx, f); /* resets the client if still open */
        break;
    case XLB_FLOW_KIND_STREAM_SUB:
        xlb_stream_sub_release(ctx, f); /* its RPCs fail UNAVAILABLE */
        break;
    case XLB_FLOW_KIND_NAT_PROXY:
        if (f->state == XLB_FLOW_SYN_SENT) /* the backend never answered the proxy's SYN */
            ctx->stats->events[XLB_EVENT_SYN_PROXY_BACKEND_FAILURES]++;
        /* fall through */
    case XLB_FLOW_KIND_NAT:
        if (f->state == XLB_FLOW_RESET)
            return;
        break; /* the entry is all there is */
    }
    xlb_flow_request_finished(ctx, f->cluster_slot, f->endpoint_slot);
}

void xlb_flow_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    end_flow(ctx, f);
    xlb_flow_remove(ctx->flows, f);
    ctx->stats->events[XLB_EVENT_FLOWS_CLOSED]++;
}

void xlb_flow_evicted(struct xlb_burst_ctx *ctx, struct xlb_flow *evicted)
{
    end_flow(ctx, evicted);
    ctx->stats->events[XLB_EVENT_FLOWS_EVICTED]++;
}

void xlb_flow_expire(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap)
{
    struct xlb_flow_table *t = ctx->flows;
    if (t == NULL)
        return;
    if (t->n_used == 0) {
        /* Nothing on the wheel: keep its clock current rather than catching up later. */
        if (t->wheel_hz != 0)
            t->wheel_second = ctx->now_tsc / t->wheel_hz;
        return;
    }
    struct xlb_flow *due[XLB_FLOW_EXPIRE_BUDGET];
    uint32_t n =
        xlb_flow_due(t, ctx->now_tsc, XLB_FLOW_EXPIRE_BUDGET * 2, due, XLB_FLOW_EXPIRE_BUDGET);
    for (uint32_t i = 0; i < n; i++) {
        /* The SYN proxy's backend SYN has its own timer on the wheel (nat_proxy_timer.c). */
        if (due[i]->kind == XLB_FLOW_KIND_NAT_PROXY && due[i]->state == XLB_FLOW_SYN_SENT &&
            xlb_nat_proxy_syn_due(ctx, snap, due[i]))
            continue;
        if (due[i]->state == XLB_FLOW_SYN_SENT)
            xlb_flow_count_endpoint(ctx, due[i]->endpoint_slot, false); /* the SYN timed out */
        xlb_flow_release(ctx, due[i]);
    }
}

static bool flow_to(const struct xlb_flow_table *t, const struct xlb_flow *f,
                    const struct xlb_flush *flush)
{
    size_t len = flush->addr.family == AF_INET ? 4 : 16;
    return t->snat[f->snat_index].family == flush->addr.family &&
           memcmp(f->backend, flush->addr.bytes, len) == 0 &&
           (flush->port == 0 || rte_be_to_cpu_16(f->backend_port) == flush->port);
}

void xlb_flow_flush_step(struct xlb_burst_ctx *ctx)
{
    struct xlb_flush *flush = &ctx->flush;
    struct xlb_flow_table *t = ctx->flows;
    if (!flush->active || t == NULL)
        return;
    uint32_t end = flush->cursor + XLB_FLOW_FLUSH_BUDGET;
    if (end > t->capacity)
        end = t->capacity;
    for (uint32_t i = flush->cursor; i < end; i++) {
        struct xlb_flow *f = &t->flows[i];
        if (f->used && flow_to(t, f, flush)) {
            xlb_flow_release(ctx, f);
            ctx->stats->events[XLB_EVENT_FLOWS_FLUSHED]++;
        }
    }
    flush->cursor = end;
    flush->active = end < t->capacity;
}
