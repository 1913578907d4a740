#include "flows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_cycles.h>

#include "xlb_flow_dump.h"
#include "xlb_host_port.h"
#include "xlb_msg.h"

/* One `xlbctl flows` waiting for the workers' dumps. */
struct listing {
    struct xlb_reply_later *later;
    uint32_t limit;
    uint64_t deadline_ms;
    struct xlb_flow_dump *dumps[XLB_MAX_WORKERS]; /* NULL: the worker does not forward */
    bool sent[XLB_MAX_WORKERS];                   /* its dump is with the worker */
    struct listing *next;
};

struct xlb_flows {
    struct xlb_shared *shared;
    struct xlb_loop *loop;
    /* The dump each worker is working on, until done (at most one per worker), and whether
     * its listing has given up on it (then it is freed once done). */
    struct xlb_flow_dump *busy[XLB_MAX_WORKERS];
    bool orphan[XLB_MAX_WORKERS];
    struct listing *listings;
    uint64_t timer; /* the next poll, while listings wait */
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

static void add_side(cJSON *o, const char *name, uint8_t family, const uint8_t *bytes,
                     uint16_t port)
{
    char text[XLB_HOST_PORT_STRLEN];
    struct xlb_host_port hp = {.port = port};
    hp.addr.family = family;
    memcpy(hp.addr.bytes, bytes, family == AF_INET ? 4 : 16);
    if (xlb_host_port_format(&hp, text, sizeof(text)) < 0)
        snprintf(text, sizeof(text), "?");
    cJSON_AddStringToObject(o, name, text);
}

static const char *const state_names[] = {"syn_sent", "established", "closing",
                                          "closed",   "reset",       "resuming"};

static cJSON *flow_json(const struct xlb_flow_record *r, uint64_t hz)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "worker", r->worker);
    add_side(o, "client", r->family, r->client, r->client_port);
    add_side(o, "vip", r->family, r->vip, r->vip_port);
    add_side(o, "snat", r->family, r->snat, r->snat_port);
    add_side(o, "backend", r->family, r->backend, r->backend_port);
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
static cJSON *listing_result(const struct xlb_flows *fl, const struct listing *l)
{
    uint64_t hz = rte_get_tsc_hz();
    cJSON *result = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(result, "flows");
    uint64_t total = 0, shown = 0;
    for (unsigned w = 0; w < fl->shared->n_workers; w++) {
        const struct xlb_flow_dump *d = l->dumps[w];
        if (d == NULL)
            continue;
        total += d->n_matching;
        for (uint32_t i = 0; i < d->n_records && shown < l->limit; i++, shown++)
            cJSON_AddItemToArray(list, flow_json(&d->records[i], hz));
    }
    cJSON_AddNumberToObject(result, "matching", (double)total);
    cJSON_AddNumberToObject(result, "shown", (double)shown);
    return result;
}

/* Free the dumps of workers that have finished one their listing gave up on. */
static void reap_orphans(struct xlb_flows *fl)
{
    for (unsigned w = 0; w < fl->shared->n_workers; w++)
        if (fl->orphan[w] && xlb_flow_dump_done(fl->busy[w])) {
            free(fl->busy[w]);
            fl->busy[w] = NULL;
            fl->orphan[w] = false;
        }
}

/* Send the dumps whose worker is free; returns the first worker that is not done, or -1. */
static int listing_progress(struct xlb_flows *fl, struct listing *l)
{
    int waiting = -1;
    for (unsigned w = 0; w < fl->shared->n_workers; w++) {
        struct xlb_flow_dump *d = l->dumps[w];
        if (d == NULL)
            continue;
        if (!l->sent[w] && fl->busy[w] == NULL) {
            struct xlb_msg msg = {.type = XLB_MSG_FLOWS_DUMP, .dump = d};
            if (xlb_msg_send(fl->shared->to_worker[w], &msg) == 0) {
                l->sent[w] = true;
                fl->busy[w] = d;
            }
        }
        if (l->sent[w] && xlb_flow_dump_done(d)) {
            if (fl->busy[w] == d)
                fl->busy[w] = NULL;
        } else if (waiting < 0) {
            waiting = (int)w;
        }
    }
    return waiting;
}

/* Answer a listing and free it; a dump still with its worker is left to reap_orphans. */
static void listing_end(struct xlb_flows *fl, struct listing *l, cJSON *reply)
{
    xlb_reply_later_send(l->later, reply);
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++) {
        if (l->dumps[w] != NULL && fl->busy[w] == l->dumps[w])
            fl->orphan[w] = true;
        else
            free(l->dumps[w]);
    }
    free(l);
}

static void on_poll(void *arg)
{
    struct xlb_flows *fl = arg;
    fl->timer = 0;
    reap_orphans(fl);
    uint64_t now = xlb_now_ms();
    struct listing **link = &fl->listings;
    while (*link != NULL) {
        struct listing *l = *link;
        int waiting = listing_progress(fl, l);
        if (waiting >= 0 && now < l->deadline_ms) {
            link = &l->next;
            continue;
        }
        *link = l->next;
        listing_end(fl, l,
                    waiting < 0 ? xlb_reply_ok(listing_result(fl, l))
                                : xlb_reply_error("worker %d did not answer within %u ms", waiting,
                                                  XLB_FLOWS_TIMEOUT_MS));
    }
    if (fl->listings != NULL)
        fl->timer = xlb_loop_add_timeout(fl->loop, XLB_FLOWS_POLL_MS, on_poll, fl);
}

struct xlb_flows *xlb_flows_create(struct xlb_shared *shared, struct xlb_loop *loop)
{
    struct xlb_flows *fl = calloc(1, sizeof(*fl));
    if (fl != NULL) {
        fl->shared = shared;
        fl->loop = loop;
    }
    return fl;
}

void xlb_flows_destroy(struct xlb_flows *fl)
{
    if (fl == NULL)
        return;
    xlb_loop_cancel(fl->loop, fl->timer);
    while (fl->listings != NULL) {
        struct listing *l = fl->listings;
        fl->listings = l->next;
        for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
            if (fl->busy[w] == l->dumps[w])
                fl->busy[w] = NULL; /* the workers have stopped: it is freed with l */
        listing_end(fl, l, xlb_reply_error("xlbd is stopping"));
    }
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
        free(fl->busy[w]);
    free(fl);
}

/* A listing with a dump (and room for limit records) for every worker that forwards. */
static struct listing *listing_new(const struct xlb_shared *shared,
                                   const struct xlb_flow_dump_filter *flt, uint32_t limit)
{
    struct listing *l = calloc(1, sizeof(*l));
    for (unsigned w = 0; l != NULL && w < shared->n_workers; w++) {
        if (!shared->has_flows[w])
            continue;
        struct xlb_flow_dump *d =
            calloc(1, sizeof(*d) + (size_t)limit * sizeof(struct xlb_flow_record));
        if (d == NULL) {
            for (unsigned v = 0; v < w; v++)
                free(l->dumps[v]);
            free(l);
            return NULL;
        }
        d->filter = *flt;
        d->records = (struct xlb_flow_record *)(d + 1);
        d->capacity = limit;
        l->dumps[w] = d;
    }
    if (l != NULL)
        l->limit = limit;
    return l;
}

cJSON *xlb_flows_list(struct xlb_flows *fl, struct xlb_control_socket *sock, const cJSON *args,
                      char *error, size_t len)
{
    struct xlb_flow_dump_filter flt;
    uint32_t limit;
    if (read_filter(args, &flt, &limit, error, len) != 0)
        return NULL;
    struct listing *l = listing_new(fl->shared, &flt, limit);
    if (l == NULL)
        return NULL;
    bool any = false;
    for (unsigned w = 0; w < fl->shared->n_workers; w++)
        any |= l->dumps[w] != NULL;
    if (!any) {
        cJSON *result = listing_result(fl, l);
        free(l);
        return result;
    }
    l->later = xlb_reply_later(sock);
    if (l->later == NULL) {
        snprintf(error, len, "flows cannot wait for the workers here");
        for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
            free(l->dumps[w]);
        free(l);
        return NULL;
    }
    l->deadline_ms = xlb_now_ms() + XLB_FLOWS_TIMEOUT_MS;
    listing_progress(fl, l);
    l->next = fl->listings;
    fl->listings = l;
    if (fl->timer == 0)
        fl->timer = xlb_loop_add_timeout(fl->loop, XLB_FLOWS_POLL_MS, on_poll, fl);
    return XLB_REPLY_LATER;
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
