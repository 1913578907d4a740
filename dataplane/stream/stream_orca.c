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
 * sets the endpoint's weight on this worker, as a per-call report would. A backend without
 * the service (UNIMPLEMENTED) is not asked again on this connection; a call that ends otherwise
 * is made again after gRPC's connection backoff (at once after one that had reports). The
 * connection's GOAWAY and retirement cancel it. Unlike the health check, the call never
 * changes the subchannel's connectivity.
 */
#define GRPC_FRAME_HEADER         5
#define GRPC_STATUS_UNIMPLEMENTED 12

void xlb_stream_oob_prepare(struct xlb_stream_sub *s, const struct xlb_wrr_config *cfg)
{
    s->oob.wanted = true;
    s->oob.period_ms = cfg->oob_period_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)cfg->oob_period_ms;
    s->oob.penalty = cfg->error_penalty;
}

bool xlb_stream_oob_owns(const struct xlb_stream_sub *s, int32_t stream_id)
{
    return s->oob.stream_id != 0 && s->oob.stream_id == stream_id;
}

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
static uint32_t request_bytes(const struct xlb_stream_oob *o, uint8_t *out)
{
    uint8_t duration[24];
    uint32_t d = 0;
    uint64_t seconds = o->period_ms / 1000, nanos = (uint64_t)(o->period_ms % 1000) * 1000000;
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

static ssize_t request_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                            size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                            void *user)
{
    (void)session;
    (void)stream_id;
    (void)user;
    struct xlb_stream_oob *o = &((struct xlb_stream_sub *)source->ptr)->oob;
    uint8_t request[GRPC_FRAME_HEADER + 2 + 24];
    uint32_t total = request_bytes(o, request);
    uint32_t n = total - o->request_sent;
    if (n > length)
        n = (uint32_t)length;
    memcpy(buf, request + o->request_sent, n);
    o->request_sent = (uint16_t)(o->request_sent + n);
    if (o->request_sent == total)
        *data_flags |= NGHTTP2_DATA_FLAG_EOF; /* one request, then the reports stream back */
    return (ssize_t)n;
}

static void set_failed(struct xlb_stream_sub *s, bool failed)
{
    if (s->oob.failed != failed)
        s->side.w->oob_failed += failed ? 1u : (uint32_t)-1;
    s->oob.failed = failed;
}

void xlb_stream_oob_start(struct xlb_stream_sub *s)
{
    struct xlb_stream_oob *o = &s->oob;
    if (!o->wanted || o->stopped || o->stream_id != 0 || s->side.h2 == NULL)
        return;
    o->request_sent = 0;
    o->message = (struct xlb_stream_message){0, 0};
    o->answered = false;
    o->status = -1;
    nghttp2_data_provider body = {.source.ptr = s, .read_callback = request_body};
    int32_t id =
        xlb_stream_call_submit(s, "/xds.service.orca.v3.OpenRcaService/StreamCoreMetrics", &body);
    if (id < 0) {
        o->retry_at_ms = xlb_stream_now_ms(s->side.w->ctx) + 1000;
        set_failed(s, true);
        return;
    }
    o->stream_id = id;
    set_failed(s, false);
    s->side.w->ctx->stats->events[XLB_EVENT_STREAM_ORCA_OOB_CALLS]++;
    xlb_stream_send(&s->side);
}

void xlb_stream_oob_stop(struct xlb_stream_sub *s)
{
    struct xlb_stream_oob *o = &s->oob;
    o->stopped = true;
    set_failed(s, false);
    if (o->stream_id != 0 && s->side.h2 != NULL)
        nghttp2_submit_rst_stream(s->side.h2, NGHTTP2_FLAG_NONE, o->stream_id, NGHTTP2_CANCEL);
}

void xlb_stream_oob_forget(struct xlb_stream_sub *s)
{
    set_failed(s, false);
    s->oob = (struct xlb_stream_oob){.stream_id = 0};
}

void xlb_stream_oob_headers(struct xlb_stream_sub *s)
{
    int status = xlb_stream_grpc_status(&s->side.w->response);
    if (status >= 0)
        s->oob.status = (int16_t)status;
}

static void report(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    struct xlb_stream_oob *o = &s->oob;
    const uint8_t *m = o->report;
    uint32_t len = (uint32_t)m[1] << 24 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 8 | m[4];
    struct xlb_wrr_report r;
    o->answered = true;
    xlb_backoff_reset(&o->backoff);
    const struct xlb_lb_worker *lb = w->ctx->lb;
    if (xlb_orca_read_message(m + GRPC_FRAME_HEADER, len, &r) != 0) {
        w->ctx->stats->events[XLB_EVENT_STREAM_ORCA_MALFORMED]++;
        return;
    }
    if (lb == NULL || lb->load == NULL || s->endpoint_slot >= XLB_ENDPOINT_SLOTS)
        return;
    bool used = xlb_wrr_weight_update(&lb->load->endpoints[s->endpoint_slot].weight, o->penalty, &r,
                                      xlb_stream_now_ms(w->ctx));
    w->ctx->stats->events[used ? XLB_EVENT_STREAM_ORCA_REPORTS : XLB_EVENT_STREAM_ORCA_UNUSABLE]++;
}

void xlb_stream_oob_data(struct xlb_stream_sub *s, const uint8_t *data, size_t len)
{
    struct xlb_stream_oob *o = &s->oob;
    nghttp2_session_consume(s->side.h2, o->stream_id, len);
    for (size_t at = 0; at < len;) {
        enum xlb_stream_message_step step =
            xlb_stream_message_feed(&o->message, o->report, sizeof(o->report), data, len, &at);
        if (step == XLB_STREAM_MESSAGE_BAD) {
            s->side.w->ctx->stats->events[XLB_EVENT_STREAM_ORCA_MALFORMED]++;
            nghttp2_submit_rst_stream(s->side.h2, NGHTTP2_FLAG_NONE, o->stream_id, NGHTTP2_CANCEL);
            return;
        }
        if (step == XLB_STREAM_MESSAGE_DONE)
            report(s);
    }
}

void xlb_stream_oob_closed(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    struct xlb_stream_oob *o = &s->oob;
    o->stream_id = 0;
    if (o->stopped)
        return;
    if (o->status == GRPC_STATUS_UNIMPLEMENTED) {
        w->ctx->stats->events[XLB_EVENT_STREAM_ORCA_OOB_UNIMPLEMENTED]++;
        o->wanted = false;
        return;
    }
    w->ctx->stats->events[XLB_EVENT_STREAM_ORCA_OOB_FAILED]++;
    uint32_t delay =
        o->answered || w->ctx->lb == NULL ? 0 : xlb_backoff_next(&o->backoff, &w->ctx->lb->rng);
    o->retry_at_ms = xlb_stream_now_ms(w->ctx) + delay;
    set_failed(s, true);
}

void xlb_stream_oob_poll(struct xlb_stream_worker *w)
{
    if (w->oob_failed == 0)
        return;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    for (uint32_t i = 0; i < w->n_subs && w->oob_failed > 0; i++) {
        struct xlb_stream_sub *s = &w->subs[i];
        if (s->side.link.in_use && s->oob.failed && now >= s->oob.retry_at_ms && !s->side.done &&
            s->side.h2 != NULL) {
            struct xlb_stream_link *before = w->current;
            w->current = &s->side.link;
            xlb_stream_oob_start(s);
            xlb_stream_route_output(w);
            w->current = before;
        }
    }
}
