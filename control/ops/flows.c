#include "flows.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_cycles.h>

#include "xlb_flow_table.h"
#include "xlb_host_port.h"
#include "xlb_msg.h"

/* "ADDR" or "ADDR:PORT" / "[ADDR6]:PORT" (port 0 = any). */
static int parse_target(const char *text, struct xlb_addr *addr, uint16_t *port)
{
    struct xlb_host_port hp;
    if (xlb_host_port_parse(text, strlen(text), &hp) == 0) {
        *addr = hp.addr;
        *port = hp.port;
        return 0;
    }
    *port = 0;
    return xlb_addr_parse(text, addr);
}

struct filter {
    bool by_vip, by_endpoint;
    struct xlb_addr vip, endpoint;
    uint16_t vip_port, endpoint_port;
};

static bool matches(const struct xlb_flow_key *k, bool src, const struct xlb_addr *a, uint16_t port)
{
    size_t len = a->family == AF_INET ? 4 : 16;
    const uint8_t *bytes = src ? k->src : k->dst;
    uint16_t p = rte_be_to_cpu_16(src ? k->src_port : k->dst_port);
    return k->family == a->family && memcmp(bytes, a->bytes, len) == 0 && (port == 0 || p == port);
}

static void format_side(const struct xlb_flow_key *k, bool src, char *buf, size_t len)
{
    struct xlb_host_port hp = {.port = rte_be_to_cpu_16(src ? k->src_port : k->dst_port)};
    hp.addr.family = k->family;
    memcpy(hp.addr.bytes, src ? k->src : k->dst, k->family == AF_INET ? 4 : 16);
    if (xlb_host_port_format(&hp, buf, len) < 0)
        snprintf(buf, len, "?");
}

static const char *const state_names[] = {"syn_sent", "established", "closing",
                                          "closed",   "reset",       "resuming"};

/* A copy of one flow and its two keys: the worker may be changing them as they are read. */
struct flow_copy {
    struct xlb_flow flow;
    struct xlb_flow_key client, reply;
    uint64_t due_tsc; /* when its idle timeout has passed */
};

static cJSON *flow_json(unsigned worker, const struct flow_copy *c, uint64_t now, uint64_t hz)
{
    const struct xlb_flow *f = &c->flow;
    char client[XLB_HOST_PORT_STRLEN], vip[XLB_HOST_PORT_STRLEN], snat[XLB_HOST_PORT_STRLEN],
        backend[XLB_HOST_PORT_STRLEN];
    format_side(&c->client, true, client, sizeof(client));
    format_side(&c->client, false, vip, sizeof(vip));
    format_side(&c->reply, false, snat, sizeof(snat));
    format_side(&c->reply, true, backend, sizeof(backend));
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "worker", worker);
    cJSON_AddStringToObject(o, "client", client);
    cJSON_AddStringToObject(o, "vip", vip);
    cJSON_AddStringToObject(o, "snat", snat);
    cJSON_AddStringToObject(o, "backend", backend);
    cJSON_AddStringToObject(o, "state",
                            f->state < RTE_DIM(state_names) ? state_names[f->state] : "?");
    cJSON_AddNumberToObject(o, "expires_in_ms",
                            c->due_tsc > now ? (double)(c->due_tsc - now) * 1000 / hz : 0);
    return o;
}

static int read_filter(const cJSON *args, struct filter *flt, double *limit, char *error,
                       size_t len)
{
    memset(flt, 0, sizeof(*flt));
    const cJSON *vip = cJSON_GetObjectItemCaseSensitive(args, "vip");
    const cJSON *endpoint = cJSON_GetObjectItemCaseSensitive(args, "endpoint");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(args, "limit");
    if (vip != NULL &&
        (!cJSON_IsString(vip) || parse_target(vip->valuestring, &flt->vip, &flt->vip_port) != 0)) {
        snprintf(error, len, "--vip takes ADDR or ADDR:PORT");
        return -1;
    }
    if (endpoint != NULL &&
        (!cJSON_IsString(endpoint) ||
         parse_target(endpoint->valuestring, &flt->endpoint, &flt->endpoint_port) != 0)) {
        snprintf(error, len, "--endpoint takes ADDR or ADDR:PORT");
        return -1;
    }
    flt->by_vip = vip != NULL;
    flt->by_endpoint = endpoint != NULL;
    *limit = 100;
    if (n != NULL) {
        if (!cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > XLB_FLOWS_MAX_LIST) {
            snprintf(error, len, "--limit must be in 1..%d", XLB_FLOWS_MAX_LIST);
            return -1;
        }
        *limit = n->valuedouble;
    }
    return 0;
}

cJSON *xlb_flows_list(const struct xlb_shared *shared, const cJSON *args, char *error, size_t len)
{
    struct filter flt;
    double limit;
    if (read_filter(args, &flt, &limit, error, len) != 0)
        return NULL;
    uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
    cJSON *result = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(result, "flows");
    uint64_t total = 0, shown = 0;
    for (unsigned w = 0; w < shared->n_workers; w++) {
        const struct xlb_flow_table *t = shared->flows[w];
        for (uint32_t i = 0; t != NULL && i < t->capacity; i++) {
            struct flow_copy c = {.flow = t->flows[i]};
            if (!c.flow.used || c.flow.snat_index >= t->n_snat)
                continue;
            xlb_flow_client_key(t, &t->flows[i], &c.client);
            xlb_flow_reply_key(t, &c.flow, &c.reply);
            c.due_tsc = xlb_flow_due_tsc(t, &c.flow);
            if ((flt.by_vip && !matches(&c.client, false, &flt.vip, flt.vip_port)) ||
                (flt.by_endpoint && !matches(&c.reply, true, &flt.endpoint, flt.endpoint_port)))
                continue;
            total++;
            if (shown < (uint64_t)limit) {
                cJSON_AddItemToArray(list, flow_json(w, &c, now, hz));
                shown++;
            }
        }
    }
    cJSON_AddNumberToObject(result, "matching", (double)total);
    cJSON_AddNumberToObject(result, "shown", (double)shown);
    return result;
}

cJSON *xlb_flows_flush(struct xlb_shared *shared, const cJSON *args, char *error, size_t len)
{
    const cJSON *endpoint = cJSON_GetObjectItemCaseSensitive(args, "endpoint");
    struct xlb_msg msg = {.type = XLB_MSG_FLUSH_ENDPOINT};
    if (!cJSON_IsString(endpoint) ||
        parse_target(endpoint->valuestring, &msg.addr, &msg.l4_port) != 0) {
        snprintf(error, len, "flows flush takes --endpoint ADDR or ADDR:PORT");
        return NULL;
    }
    unsigned sent = 0;
    for (unsigned w = 0; w < shared->n_workers; w++)
        if (shared->flows[w] != NULL && xlb_msg_send(shared->to_worker[w], &msg) == 0)
            sent++;
    cJSON *result = cJSON_CreateObject();
    cJSON_AddNumberToObject(result, "workers", sent);
    cJSON_AddStringToObject(result, "note",
                            "each worker ends the flows within a few poll loops; see counter "
                            "events.flows_flushed");
    return result;
}
