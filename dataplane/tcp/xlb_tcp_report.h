/*
 * What a worker tells the control plane about its endpoint, in lib/'s layouts: the counters
 * (lib/xlb_tcp_stats.h) and the connection dump (lib/xlb_tcp_dump.h), for `xlbctl counters`,
 * `xlbctl tcp`, telemetry and Prometheus. Called by the worker that owns the endpoint.
 */
#ifndef XLB_TCP_REPORT_H
#define XLB_TCP_REPORT_H

#include <stdbool.h>

#include "xlb_tcp.h"
#include "xlb_tcp_dump.h"
#include "xlb_tcp_stats.h"

/* Copy the counters and gauges of a worker's endpoints (the relay's, the stream engine's),
 * summed, into out when they changed since the last copy (the control plane reads out; a loop
 * that changed nothing writes nothing to its cache lines). NULL entries are skipped; none:
 * nothing. */
void xlb_tcp_stats_publish(const struct xlb_tcp_endpoint *const *eps, unsigned n,
                           struct xlb_tcp_stats *out);

/* One slice of a connection dump (XLB_TCP_DUMP_SLICE control blocks) over a worker's
 * endpoints, one after the other, as worker `worker`; returns true when the dump is finished
 * (done stored, the worker forgets it). No endpoint (NULL entries): finished at once, empty. */
bool xlb_tcp_dump_step(const struct xlb_tcp_endpoint *const *eps, unsigned n,
                       struct xlb_tcp_dump *d, unsigned worker);

#endif
