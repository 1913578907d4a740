#include "xds_metrics.h"

#include "metrics_text.h"

const char *const xlb_xdsm_state_name[XLB_XDSM_STATES] = {
    [XLB_XDSM_REQUESTED] = "requested",
    [XLB_XDSM_ACKED] = "acked",
    [XLB_XDSM_NACKED] = "nacked",
    [XLB_XDSM_NACKED_BUT_CACHED] = "nacked_but_cached",
    [XLB_XDSM_DOES_NOT_EXIST] = "does_not_exist",
    [XLB_XDSM_STATIC] = "static",
};

/* Per resource type: the ACKs or the NACKs xlb sent. */
static void per_type(const struct xlb_xds_metrics *m, const char *name, const char *help,
                     const uint64_t *values, struct xlb_text *t)
{
    xlb_metrics_family(t, name, "counter", help);
    for (int type = 0; m->has_ads && type < XLB_XDS_TYPES; type++) {
        const struct xlb_label l[] = {{"type", xlb_xds_type_name[type]}};
        xlb_metrics_sample(t, name, l, 1, values[type]);
    }
}

void xlb_xds_metrics_render(const struct xlb_xds_metrics *m, struct xlb_text *t)
{
    xlb_metrics_family(t, "xlb_xds_stream_connected", "gauge",
                       "1 while the ADS stream to the server is open and the server has answered "
                       "on it (no series without xds_servers).");
    if (m->has_ads) {
        const struct xlb_label l[] = {{"server", m->ads.server}};
        xlb_metrics_sample(t, "xlb_xds_stream_connected", l, 1, m->ads.connected);
    }
    per_type(m, "xlb_xds_acks_total", "Responses xlb accepted (ACK), by resource type.",
             m->ads.acks, t);
    per_type(m, "xlb_xds_nacks_total",
             "Responses xlb rejected (NACK) for an invalid resource, by resource type.",
             m->ads.nacks, t);
    xlb_metrics_family(t, "xlb_xds_resources", "gauge",
                       "Resources xlb holds or waits for, by type and cache state.");
    for (int type = 0; type < XLB_XDS_TYPES; type++)
        for (int s = 0; s < XLB_XDSM_STATES; s++) {
            const struct xlb_label l[] = {{"type", xlb_xds_type_name[type]},
                                          {"state", xlb_xdsm_state_name[s]}};
            xlb_metrics_sample(t, "xlb_xds_resources", l, 2, m->resources[type][s]);
        }
}
