/* The LB trees for xlbctl: a cluster's summary and its endpoints' state. */
#include "lb_trees_internal.h"

void xlb_lb_trees_describe_cluster(const struct xlb_lb_trees *st, const char *name, cJSON *o)
{
    const struct cluster_entry *e = lb_trees_find_entry(st, name);
    if (e == NULL || e->compiled == NULL)
        return;
    const struct xlb_lb_cluster *c = e->compiled;
    uint32_t usable = 0, ejected = 0, ready = 0;
    for (uint32_t p = 0; p < c->n_priorities; p++)
        usable += c->priorities[p].n_usable;
    for (uint32_t i = 0; i < c->n_endpoints; i++) {
        ejected += c->endpoints[i].ejected;
        ready += xlb_lb_trees_endpoint_connectivity(st, c->endpoints[i].slot) == XLB_CONN_READY;
    }
    if (c->chosen_priority != XLB_PICK_NONE)
        cJSON_AddNumberToObject(o, "chosen_priority", c->chosen_priority);
    else
        cJSON_AddStringToObject(o, "chosen_priority", "none");
    cJSON_AddNumberToObject(o, "usable", usable);
    cJSON_AddNumberToObject(o, "ejected", ejected);
    /* Endpoints some worker has a READY subchannel to (L7 stream mode; 0 otherwise). */
    cJSON_AddNumberToObject(o, "ready", ready);
    cJSON_AddNumberToObject(o, "drop_categories", c->n_drops);
}

/*
 * A58: each worker's view of the endpoint (each worker is one channel): the weight its last
 * ORCA report gave (however old: blackout and expiry show in the share), and the share its
 * scheduler uses now, relative to the locality's heaviest endpoint (0: not a candidate, READY
 * endpoints only; 1 for all: round robin, while fewer than two have a weight out of blackout).
 */
static void describe_weights(const struct xlb_lb_trees *st, uint32_t slot, cJSON *item)
{
    if (st->loads == NULL || slot >= XLB_ENDPOINT_SLOTS)
        return;
    cJSON *list = cJSON_AddArrayToObject(item, "wrr");
    double sum = 0;
    unsigned reported = 0;
    for (unsigned w = 0; list != NULL && w < st->n_workers; w++) {
        const struct xlb_endpoint_weight *weight = &st->loads[w].endpoints[slot].weight;
        if (weight->last_update_ms != 0) {
            sum += weight->weight;
            reported++;
        }
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(list, o))
            break;
        cJSON_AddNumberToObject(o, "worker", w);
        cJSON_AddNumberToObject(o, "weight", weight->last_update_ms != 0 ? weight->weight : 0);
        cJSON_AddNumberToObject(o, "share", (double)weight->scaled / XLB_WRR_SCALE);
    }
    /* The table's one figure: the mean over the workers that have a report. */
    if (reported > 0)
        cJSON_AddNumberToObject(item, "wrr_weight", sum / reported);
}

void xlb_lb_trees_describe_endpoints(const struct xlb_lb_trees *st, const char *name,
                                     uint64_t now_ms, cJSON *list)
{
    const struct cluster_entry *e = lb_trees_find_entry(st, name);
    if (e == NULL || e->compiled == NULL)
        return;
    const struct xlb_lb_cluster *c = e->compiled;
    uint32_t i = 0;
    cJSON *item;
    cJSON_ArrayForEach(item, list) {
        if (i >= c->n_endpoints)
            break;
        const struct xlb_lb_endpoint *ep = &c->endpoints[i];
        bool draining = ep->health == XLB_HEALTH_DRAINING;
        cJSON_AddBoolToObject(item, "usable", !ep->ejected && !draining);
        cJSON_AddBoolToObject(item, "ejected", ep->ejected);
        struct xlb_outlier_endpoint_info info;
        if (e->outlier != NULL && xlb_outlier_endpoint_info(e->outlier, i, &info) == 0) {
            if (info.ejected)
                cJSON_AddNumberToObject(
                    item, "ejected_for_ms",
                    info.ejected_until_ms > now_ms ? (double)(info.ejected_until_ms - now_ms) : 0);
            cJSON_AddNumberToObject(item, "multiplier", info.multiplier);
        }
        /* A75: a draining endpoint no session has used for idle_timeout is drained. */
        if (draining)
            cJSON_AddBoolToObject(item, "drained",
                                  now_ms - e->last_use_ms[i] >= e->idle_timeout_ms);
        struct xlb_lb_endpoint_counts counts = xlb_lb_trees_endpoint_counts(st, ep->slot);
        cJSON_AddNumberToObject(item, "succeeded", (double)counts.succeeded);
        cJSON_AddNumberToObject(item, "failed", (double)counts.failed);
        cJSON_AddStringToObject(
            item, "connectivity",
            xlb_connectivity_name(xlb_lb_trees_endpoint_connectivity(st, ep->slot)));
        int k = xlb_lb_trees_endpoint_connected_address(st, ep->slot);
        if (k >= 0 && (uint32_t)k < xlb_lb_endpoint_n_addresses(ep)) {
            char where[XLB_HOST_PORT_STRLEN];
            xlb_host_port_format(xlb_lb_endpoint_address(c, i, (uint32_t)k), where, sizeof(where));
            cJSON_AddStringToObject(item, "connected_address", where);
        }
        if (c->policy == XLB_LB_POLICY_WRR)
            describe_weights(st, ep->slot, item);
        i++;
    }
}
