/*
 * Prometheus text exposition (format 0.0.4) of xlb's counters and state, for `xlbctl metrics`
 * and the optional loopback HTTP listener. Names carry the xlb_ prefix, counters end in
 * _total, and labels name the worker, port, reason, VIP, neighbour, cluster, locality,
 * endpoint or xDS resource type. Families with one series per entity are capped by
 * metrics_max_series: neighbours beyond it are left out (counted in
 * xlb_metrics_series_dropped); endpoints beyond it are folded into endpoint="other" series
 * (counted in xlb_metrics_endpoints_folded, see lb_metrics.h).
 */
#ifndef XLB_METRICS_H
#define XLB_METRICS_H

#include "text_buffer.h"

struct xlb_control_plane;

/* Render the exposition into text (check text->failed for out of memory). */
void xlb_metrics_render(const struct xlb_control_plane *cp, struct xlb_text *text);

#endif
