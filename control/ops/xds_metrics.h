/*
 * The xDS part of the metrics: the ADS stream, ACKs and NACKs per resource type, and the
 * resources xlb holds by type and cache state (the states gRPC A78 names). Gathered by
 * xlb_xds_plane_metrics, rendered here from plain values.
 */
#ifndef XLB_XDS_METRICS_H
#define XLB_XDS_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "ads_client.h"
#include "text_buffer.h"

enum xlb_xdsm_state {
    XLB_XDSM_REQUESTED,         /* watched, nothing received yet */
    XLB_XDSM_ACKED,             /* the last update was valid */
    XLB_XDSM_NACKED,            /* the last update was invalid and no earlier value is held */
    XLB_XDSM_NACKED_BUT_CACHED, /* the last update was invalid; an earlier value serves */
    XLB_XDSM_DOES_NOT_EXIST,
    XLB_XDSM_STATIC, /* from static_resources */
    XLB_XDSM_STATES,
};

struct xlb_xds_metrics {
    bool has_ads; /* xds_servers configured; ads is meaningful */
    struct xlb_ads_counters ads;
    uint32_t resources[XLB_XDS_TYPES][XLB_XDSM_STATES];
};

extern const char *const xlb_xdsm_state_name[XLB_XDSM_STATES];

/* xlb_xds_stream_connected, xlb_xds_acks_total, xlb_xds_nacks_total, xlb_xds_resources. */
void xlb_xds_metrics_render(const struct xlb_xds_metrics *m, struct xlb_text *text);

#endif
