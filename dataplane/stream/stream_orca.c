/*
 * Per-call ORCA load reports (gRPC A51) for weighted round robin (A58): a backend that reports
 * its load puts an OrcaLoadReport in the `endpoint-load-metrics-bin` trailer of each RPC; the
 * worker that forwarded the RPC (one gRPC channel) sets its endpoint's weight from it. The
 * trailer itself goes on to the client with the others, as a proxy leaves metadata alone.
 */
#include <string.h>

#include "stream_conn.h"
#include "xlb_orca.h"

void xlb_stream_orca_note(struct xlb_stream_worker *w, const struct xlb_stream_rpc *r,
                          const struct xlb_stream_headers *h)
{
    static const char name[] = XLB_ORCA_TRAILER;
    const struct xlb_lb_worker *lb = w->ctx->lb;
    if (lb == NULL || lb->load == NULL || r->endpoint_slot >= XLB_ENDPOINT_SLOTS)
        return;
    for (uint32_t i = 0; i < h->n_fields; i++) {
        if (h->fields[i].name_len != sizeof(name) - 1 ||
            memcmp(h->fields[i].name, name, sizeof(name) - 1) != 0)
            continue;
        struct xlb_wrr_report report;
        if (xlb_orca_read(h->fields[i].value, h->fields[i].value_len, &report) != 0) {
            w->ctx->stats->events[XLB_EVENT_STREAM_ORCA_MALFORMED]++;
            return;
        }
        /* A58: a report without utilization or qps leaves the weight as it was. */
        bool used = xlb_wrr_weight_update(&lb->load->endpoints[r->endpoint_slot].weight,
                                          r->orca_penalty, &report, xlb_stream_now_ms(w->ctx));
        w->ctx->stats
            ->events[used ? XLB_EVENT_STREAM_ORCA_REPORTS : XLB_EVENT_STREAM_ORCA_UNUSABLE]++;
        return;
    }
}

/*
 * Out-of-band reports (A51), when the cluster's enable_oob_load_report asks for them: each
 * subchannel calls xds.service.orca.v3.OpenRcaService/StreamCoreMetrics once the backend's
 * SETTINGS arrive, asking for a report every oob_reporting_period, and every report on the call
 * sets the endpoint's weight on this worker, as a per-call report would. The call is a
 * subchannel call (stream_subcall.c): a backend without the service (UNIMPLEMENTED) is not
 * asked again on this connection; a call that ends otherwise is made again after gRPC's
 * connection backoff (at once after one that had reports). The connection's GOAWAY and
 * retirement cancel it. Unlike the health check, the call never changes the subchannel's
 * connectivity.
 */
#define GRPC_FRAME_HEADER 5

static uint32_t put_varint(uint8_t *out, uint64_t v)
{
    uint32_t n = 0;
    do {
        out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v > 0);
    return n;
}

/* OrcaLoadReportRequest{report_interval: Duration{seconds, nanos}} in gRPC's framing. */
static uint32_t request_bytes(const struct xlb_stream_sub *s, uint8_t *out)
{
    uint8_t duration[24];
    uint32_t d = 0;
    uint32_t period_ms = s->oob.period_ms;
    uint64_t seconds = period_ms / 1000, nanos = (uint64_t)(period_ms % 1000) * 1000000;
    if (seconds > 0) {
        duration[d++] = 0x08;
        d += put_varint(duration + d, seconds);
    }
    if (nanos > 0) {
        duration[d++] = 0x10;
        d += put_varint(duration + d, nanos);
    }
    uint32_t body = 2 + d; /* field 1, length-delimited, a length below 128 */
    out[0] = 0;
    out[1] = out[2] = out[3] = 0;
    out[4] = (uint8_t)body;
    out[5] = 0x0a;
    out[6] = (uint8_t)d;
    memcpy(out + 7, duration, d);
    return GRPC_FRAME_HEADER + body;
}

static void report(struct xlb_stream_sub *s, const uint8_t *body, uint32_t len)
{
    struct xlb_stream_worker *w = s->side.w;
    struct xlb_wrr_report r;
    const struct xlb_lb_worker *lb = w->ctx->lb;
    if (xlb_orca_read_message(body, len, &r) != 0) {
        w->ctx->stats->events[XLB_EVENT_STREAM_ORCA_MALFORMED]++;
        return;
    }
    if (lb == NULL || lb->load == NULL || s->endpoint_slot >= XLB_ENDPOINT_SLOTS)
        return;
    bool used = xlb_wrr_weight_update(&lb->load->endpoints[s->endpoint_slot].weight, s->oob.penalty,
                                      &r, xlb_stream_now_ms(w->ctx));
    w->ctx->stats->events[used ? XLB_EVENT_STREAM_ORCA_REPORTS : XLB_EVENT_STREAM_ORCA_UNUSABLE]++;
}

const struct xlb_stream_subcall_kind xlb_stream_oob_reports = {
    .path = "/xds.service.orca.v3.OpenRcaService/StreamCoreMetrics",
    .made = XLB_EVENT_STREAM_ORCA_OOB_CALLS,
    .failed = XLB_EVENT_STREAM_ORCA_OOB_FAILED,
    .unimplemented = XLB_EVENT_STREAM_ORCA_OOB_UNIMPLEMENTED,
    .unreadable = XLB_EVENT_STREAM_ORCA_MALFORMED, /* and the call is cancelled */
    .answer_at = offsetof(struct xlb_stream_sub, oob.report),
    .answer_cap = RTE_SIZEOF_FIELD(struct xlb_stream_sub, oob.report),
    .request = request_bytes, /* 5 + 2 + 24 bytes at the most */
    .message = report,
    .changed = NULL, /* the subchannel's connectivity is not the call's */
};

void xlb_stream_oob_prepare(struct xlb_stream_sub *s, const struct xlb_wrr_config *cfg)
{
    s->oob.period_ms = cfg->oob_period_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)cfg->oob_period_ms;
    s->oob.penalty = cfg->error_penalty;
    s->calls[XLB_STREAM_SUBCALL_OOB].wanted = true;
}
