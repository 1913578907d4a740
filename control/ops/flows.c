#include "flows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_cycles.h>

#include "xlb_flow_dump.h"
#include "xlb_host_port.h"
#include "xlb_msg.h"
#include "worker_dumps.h"

struct xlb_flows {
    struct xlb_shared *shared;
    struct xlb_worker_dumps *dumps;
};

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

static const char *const state_names[] = {"syn_sent", "established", "closing",
                                          "closed",   "reset",       "resuming"};

static cJSON *flow_json(const struct xlb_flow_record *r, uint64_t hz)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "worker", r->worker);
    xlb_worker_dump_add_address(o, "client", r->family, r->client, r->client_port);
    xlb_worker_dump_add_address(o, "vip", r->family, r->vip, r->vip_port);
    xlb_worker_dump_add_address(o, "snat", r->family, r->snat, r->snat_port);
    xlb_worker_dump_add_address(o, "backend", r->family, r->backend, r->backend_port);
    cJSON_AddStringToObject(o, "state",
                            r->state < RTE_DIM(state_names) ? state_names[r->state] : "?");
    cJSON_AddNumberToObject(o, "expires_in_ms", (double)r->expires_in_tsc * 1000 / hz);
    return o;
}

static int read_filter(const cJSON *args, struct xlb_flow_dump_filter *flt, uint32_t *limit,
                       char *error, size_t len)
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
        *limit = (uint32_t)n->valuedouble; /* a fraction is cut off, as it always was */
    }
    return 0;
}

/* Every worker's records in worker order, the first `limit` shown: as one table would. */
static cJSON *flows_result(void *const *dumps, unsigned n_workers, uint32_t limit)
{
    uint64_t hz = rte_get_tsc_hz();
    cJSON *result = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(result, "flows");
    uint64_t total = 0, shown = 0;
    for (unsigned w = 0; w < n_workers; w++) {
        const struct xlb_flow_dump *d = dumps[w];
        if (d == NULL)
            continue;
        total += d->n_matching;
        for (uint32_t i = 0; i < d->n_records && shown < limit; i++, shown++)
            cJSON_AddItemToArray(list, flow_json(&d->records[i], hz));
    }
    cJSON_AddNumberToObject(result, "matching", (double)total);
    cJSON_AddNumberToObject(result, "shown", (double)shown);
    return result;
}

static int send_dump(struct rte_ring *to_worker, void *dump)
{
    const struct xlb_msg msg = {.type = XLB_MSG_FLOWS_DUMP, .dump = dump};
    return xlb_msg_send(to_worker, &msg);
}

static bool dump_done(const void *dump)
{
    return xlb_flow_dump_done(dump);
}

static const struct xlb_worker_dump_kind flows_kind = {
    .command = "flows",
    .poll_ms = XLB_FLOWS_POLL_MS,
    .timeout_ms = XLB_FLOWS_TIMEOUT_MS,
    .send = send_dump,
    .done = dump_done,
    .result = flows_result,
};

struct xlb_flows *xlb_flows_create(struct xlb_shared *shared, struct xlb_loop *loop)
{
    struct xlb_flows *fl = calloc(1, sizeof(*fl));
    if (fl == NULL)
        return NULL;
    fl->shared = shared;
    fl->dumps = xlb_worker_dumps_create(shared, loop, &flows_kind);
    if (fl->dumps == NULL) {
        free(fl);
        return NULL;
    }
    return fl;
}

void xlb_flows_destroy(struct xlb_flows *fl)
{
    if (fl == NULL)
        return;
    xlb_worker_dumps_destroy(fl->dumps);
    free(fl);
}

/* A dump (with room for limit records) for every worker that forwards; false without memory. */
static bool dumps_new(const struct xlb_shared *shared, const struct xlb_flow_dump_filter *flt,
                      uint32_t limit, void *dumps[XLB_MAX_WORKERS])
{
    for (unsigned w = 0; w < shared->n_workers; w++) {
        if (!shared->has_flows[w])
            continue;
        struct xlb_flow_dump *d =
            calloc(1, sizeof(*d) + (size_t)limit * sizeof(struct xlb_flow_record));
        if (d == NULL) {
            for (unsigned v = 0; v < w; v++)
                free(dumps[v]);
            return false;
        }
        d->filter = *flt;
        d->records = (struct xlb_flow_record *)(d + 1);
        d->capacity = limit;
        dumps[w] = d;
    }
    return true;
}

cJSON *xlb_flows_list(struct xlb_flows *fl, struct xlb_control_socket *sock, const cJSON *args,
                      char *error, size_t len)
{
    struct xlb_flow_dump_filter flt;
    uint32_t limit;
    if (read_filter(args, &flt, &limit, error, len) != 0)
        return NULL;
    void *dumps[XLB_MAX_WORKERS] = {NULL};
    if (!dumps_new(fl->shared, &flt, limit, dumps))
        return NULL;
    bool any = false;
    for (unsigned w = 0; w < fl->shared->n_workers; w++)
        any |= dumps[w] != NULL;
    if (!any) /* no worker forwards: the empty answer, at once */
        return flows_result(dumps, fl->shared->n_workers, limit);
    return xlb_worker_dumps_ask(fl->dumps, sock, dumps, limit, error, len);
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
        if (shared->has_flows[w] && xlb_msg_send(shared->to_worker[w], &msg) == 0)
            sent++;
    cJSON *result = cJSON_CreateObject();
    cJSON_AddNumberToObject(result, "workers", sent);
    cJSON_AddStringToObject(result, "note",
                            "each worker ends the flows within a few poll loops; see counter "
                            "events.flows_flushed");
    return result;
}
