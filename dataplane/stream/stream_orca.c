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
