#include "tcp_listing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "xlb_host_port.h"
#include "xlb_msg.h"
#include "xlb_tcp_dump.h"

/* One `xlbctl tcp` waiting for the workers' dumps. */
struct listing {
    struct xlb_reply_later *later;
    uint32_t limit;
    uint64_t deadline_ms;
    struct xlb_tcp_dump *dumps[XLB_MAX_WORKERS];
    bool sent[XLB_MAX_WORKERS]; /* its dump is with the worker */
    struct listing *next;
};

struct xlb_tcp_listing {
    struct xlb_shared *shared;
    struct xlb_loop *loop;
    /* The dump each worker is working on, until done (at most one per worker), and whether
     * its listing has given up on it (then it is freed once done). */
    struct xlb_tcp_dump *busy[XLB_MAX_WORKERS];
    bool orphan[XLB_MAX_WORKERS];
    struct listing *listings;
    uint64_t timer; /* the next poll, while listings wait */
};

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
    add_side(o, "local", r->family, r->local, r->local_port);
    add_side(o, "remote", r->family, r->remote, r->remote_port);
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
static cJSON *listing_result(const struct xlb_tcp_listing *tl, const struct listing *l)
{
    cJSON *result = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(result, "connections");
    uint64_t total = 0, shown = 0;
    for (unsigned w = 0; w < tl->shared->n_workers; w++) {
        const struct xlb_tcp_dump *d = l->dumps[w];
        total += d->n_conns;
        for (uint32_t i = 0; i < d->n_records && shown < l->limit; i++, shown++)
            cJSON_AddItemToArray(list, conn_json(&d->records[i]));
    }
    cJSON_AddNumberToObject(result, "total", (double)total);
    cJSON_AddNumberToObject(result, "shown", (double)shown);
    return result;
}

/* Free the dumps of workers that have finished one their listing gave up on. */
static void reap_orphans(struct xlb_tcp_listing *tl)
{
    for (unsigned w = 0; w < tl->shared->n_workers; w++)
        if (tl->orphan[w] && xlb_tcp_dump_done(tl->busy[w])) {
            free(tl->busy[w]);
            tl->busy[w] = NULL;
            tl->orphan[w] = false;
        }
}

/* Send the dumps whose worker is free; returns the first worker that is not done, or -1. */
static int listing_progress(struct xlb_tcp_listing *tl, struct listing *l)
{
    int waiting = -1;
    for (unsigned w = 0; w < tl->shared->n_workers; w++) {
        struct xlb_tcp_dump *d = l->dumps[w];
        if (!l->sent[w] && tl->busy[w] == NULL) {
            struct xlb_msg msg = {.type = XLB_MSG_TCP_DUMP, .tcp_dump = d};
            if (xlb_msg_send(tl->shared->to_worker[w], &msg) == 0) {
                l->sent[w] = true;
                tl->busy[w] = d;
            }
        }
        if (l->sent[w] && xlb_tcp_dump_done(d)) {
            if (tl->busy[w] == d)
                tl->busy[w] = NULL;
        } else if (waiting < 0) {
            waiting = (int)w;
        }
    }
    return waiting;
}

/* Answer a listing and free it; a dump still with its worker is left to reap_orphans. */
static void listing_end(struct xlb_tcp_listing *tl, struct listing *l, cJSON *reply)
{
    xlb_reply_later_send(l->later, reply);
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++) {
        if (l->dumps[w] != NULL && tl->busy[w] == l->dumps[w])
            tl->orphan[w] = true;
        else
            free(l->dumps[w]);
    }
    free(l);
}

static void on_poll(void *arg)
{
    struct xlb_tcp_listing *tl = arg;
    tl->timer = 0;
    reap_orphans(tl);
    uint64_t now = xlb_now_ms();
    struct listing **link = &tl->listings;
    while (*link != NULL) {
        struct listing *l = *link;
        int waiting = listing_progress(tl, l);
        if (waiting >= 0 && now < l->deadline_ms) {
            link = &l->next;
            continue;
        }
        *link = l->next;
        listing_end(tl, l,
                    waiting < 0 ? xlb_reply_ok(listing_result(tl, l))
                                : xlb_reply_error("worker %d did not answer within %u ms", waiting,
                                                  XLB_TCP_LISTING_TIMEOUT_MS));
    }
    if (tl->listings != NULL)
        tl->timer = xlb_loop_add_timeout(tl->loop, XLB_TCP_LISTING_POLL_MS, on_poll, tl);
}

struct xlb_tcp_listing *xlb_tcp_listing_create(struct xlb_shared *shared, struct xlb_loop *loop)
{
    struct xlb_tcp_listing *tl = calloc(1, sizeof(*tl));
    if (tl != NULL) {
        tl->shared = shared;
        tl->loop = loop;
    }
    return tl;
}

void xlb_tcp_listing_destroy(struct xlb_tcp_listing *tl)
{
    if (tl == NULL)
        return;
    xlb_loop_cancel(tl->loop, tl->timer);
    while (tl->listings != NULL) {
        struct listing *l = tl->listings;
        tl->listings = l->next;
        for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
            if (tl->busy[w] == l->dumps[w])
                tl->busy[w] = NULL; /* the workers have stopped: it is freed with l */
        listing_end(tl, l, xlb_reply_error("xlbd is stopping"));
    }
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
        free(tl->busy[w]);
    free(tl);
}

static void listing_free(struct listing *l)
{
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
        free(l->dumps[w]);
    free(l);
}

/* A listing with a dump (and room for limit records) for every worker: one without an
 * endpoint answers at once, empty. */
static struct listing *listing_new(const struct xlb_shared *shared, uint32_t limit)
{
    struct listing *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->limit = limit;
    for (unsigned w = 0; w < shared->n_workers; w++) {
        struct xlb_tcp_dump *d =
            calloc(1, sizeof(*d) + (size_t)limit * sizeof(struct xlb_tcp_conn_record));
        if (d == NULL) {
            listing_free(l);
            return NULL;
        }
        d->records = (struct xlb_tcp_conn_record *)(d + 1);
        d->capacity = limit;
        l->dumps[w] = d;
    }
    return l;
}

cJSON *xlb_tcp_listing_list(struct xlb_tcp_listing *tl, struct xlb_control_socket *sock,
                            const cJSON *args, char *error, size_t len)
{
    uint32_t limit;
    if (read_limit(args, &limit, error, len) != 0)
        return NULL;
    struct listing *l = listing_new(tl->shared, limit);
    if (l == NULL)
        return NULL;
    l->later = xlb_reply_later(sock);
    if (l->later == NULL) {
        snprintf(error, len, "tcp cannot wait for the workers here");
        listing_free(l);
        return NULL;
    }
    l->deadline_ms = xlb_now_ms() + XLB_TCP_LISTING_TIMEOUT_MS;
    listing_progress(tl, l);
    l->next = tl->listings;
    tl->listings = l;
    if (tl->timer == 0)
        tl->timer = xlb_loop_add_timeout(tl->loop, XLB_TCP_LISTING_POLL_MS, on_poll, tl);
    return XLB_REPLY_LATER;
}
