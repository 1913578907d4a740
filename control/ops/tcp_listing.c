#include "tcp_listing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "xlb_msg.h"
#include "worker_dumps.h"
#include "xlb_tcp_dump.h"

struct xlb_tcp_listing {
    struct xlb_shared *shared;
    struct xlb_worker_dumps *dumps;
};

/* A window or threshold in bytes; null for "unlimited" (an ssthresh before the first loss). */
static void add_bytes(cJSON *o, const char *name, uint32_t bytes)
{
    if (bytes == UINT32_MAX)
        cJSON_AddNullToObject(o, name);
    else
        cJSON_AddNumberToObject(o, name, bytes);
}

static cJSON *conn_json(const struct xlb_tcp_conn_record *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "worker", r->worker);
    xlb_worker_dump_add_address(o, "local", r->family, r->local, r->local_port);
    xlb_worker_dump_add_address(o, "remote", r->family, r->remote, r->remote_port);
    char state[XLB_TCP_STATE_STRLEN + 1];
    snprintf(state, sizeof(state), "%.*s", XLB_TCP_STATE_STRLEN, r->state);
    cJSON_AddStringToObject(o, "state", state);
    add_bytes(o, "cwnd", r->cwnd);
    add_bytes(o, "ssthresh", r->ssthresh);
    cJSON_AddNumberToObject(o, "srtt_ms", r->srtt_us / 1000.0);
    cJSON_AddNumberToObject(o, "rttvar_ms", r->rttvar_us / 1000.0);
    cJSON_AddNumberToObject(o, "rto_ms", r->rto_ms);
    cJSON_AddNumberToObject(o, "mss", r->mss);
    add_bytes(o, "snd_wnd", r->snd_wnd);
    add_bytes(o, "rcv_wnd", r->rcv_wnd);
    cJSON_AddNumberToObject(o, "send_queue", r->snd_queue);
    cJSON_AddNumberToObject(o, "recv_queue", r->rcv_queue);
    cJSON_AddNumberToObject(o, "ooo_bytes", r->ooo_bytes);
    cJSON_AddNumberToObject(o, "unacked", r->unacked);
    cJSON_AddNumberToObject(o, "retransmits", (double)r->retransmits);
    cJSON_AddNumberToObject(o, "memory", r->memory);
    return o;
}

static int read_limit(const cJSON *args, uint32_t *limit, char *error, size_t len)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(args, "limit");
    *limit = XLB_TCP_LISTING_DEFAULT;
    if (n == NULL)
        return 0;
    if (!cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > XLB_TCP_LISTING_MAX) {
        snprintf(error, len, "--limit must be in 1..%d", XLB_TCP_LISTING_MAX);
        return -1;
    }
    *limit = (uint32_t)n->valuedouble;
    return 0;
}

/* Every worker's connections in worker order, the first `limit` shown. */
static cJSON *listing_result(void *const *dumps, unsigned n_workers, uint32_t limit)
{
    cJSON *result = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(result, "connections");
    uint64_t total = 0, shown = 0;
    for (unsigned w = 0; w < n_workers; w++) {
        const struct xlb_tcp_dump *d = dumps[w];
        total += d->n_conns;
        for (uint32_t i = 0; i < d->n_records && shown < limit; i++, shown++)
            cJSON_AddItemToArray(list, conn_json(&d->records[i]));
    }
    cJSON_AddNumberToObject(result, "total", (double)total);
    cJSON_AddNumberToObject(result, "shown", (double)shown);
    return result;
}

static int send_dump(struct rte_ring *to_worker, void *dump)
{
    const struct xlb_msg msg = {.type = XLB_MSG_TCP_DUMP, .tcp_dump = dump};
    return xlb_msg_send(to_worker, &msg);
}

static bool dump_done(const void *dump)
{
    return xlb_tcp_dump_done(dump);
}

static const struct xlb_worker_dump_kind tcp_kind = {
    .command = "tcp",
    .poll_ms = XLB_TCP_LISTING_POLL_MS,
    .timeout_ms = XLB_TCP_LISTING_TIMEOUT_MS,
    .send = send_dump,
    .done = dump_done,
    .result = listing_result,
};

struct xlb_tcp_listing *xlb_tcp_listing_create(struct xlb_shared *shared, struct xlb_loop *loop)
{
    struct xlb_tcp_listing *tl = calloc(1, sizeof(*tl));
    if (tl == NULL)
        return NULL;
    tl->shared = shared;
    tl->dumps = xlb_worker_dumps_create(shared, loop, &tcp_kind);
    if (tl->dumps == NULL) {
        free(tl);
        return NULL;
    }
    return tl;
}

void xlb_tcp_listing_destroy(struct xlb_tcp_listing *tl)
{
    if (tl == NULL)
        return;
    xlb_worker_dumps_destroy(tl->dumps);
    free(tl);
}

/* A dump (with room for limit records) for every worker, which answers even without an
 * endpoint (empty); false without memory. */
static bool dumps_new(const struct xlb_shared *shared, uint32_t limit, void *dumps[XLB_MAX_WORKERS])
{
    for (unsigned w = 0; w < shared->n_workers; w++) {
        struct xlb_tcp_dump *d =
            calloc(1, sizeof(*d) + (size_t)limit * sizeof(struct xlb_tcp_conn_record));
        if (d == NULL) {
            for (unsigned v = 0; v < w; v++)
                free(dumps[v]);
            return false;
        }
        d->records = (struct xlb_tcp_conn_record *)(d + 1);
        d->capacity = limit;
        dumps[w] = d;
    }
    return true;
}

cJSON *xlb_tcp_listing_list(struct xlb_tcp_listing *tl, struct xlb_control_socket *sock,
                            const cJSON *args, char *error, size_t len)
{
    uint32_t limit;
    if (read_limit(args, &limit, error, len) != 0)
        return NULL;
    void *dumps[XLB_MAX_WORKERS] = {NULL};
    if (!dumps_new(tl->shared, limit, dumps))
        return NULL;
    return xlb_worker_dumps_ask(tl->dumps, sock, dumps, limit, error, len);
}
