#include "worker_dumps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "xlb_host_port.h"

/* One request waiting for the workers' dumps. */
struct request {
    struct xlb_reply_later *later;
    uint32_t limit;
    uint64_t deadline_ms;
    void *dumps[XLB_MAX_WORKERS]; /* NULL: the worker is not asked */
    bool sent[XLB_MAX_WORKERS];   /* its dump is with the worker */
    struct request *next;
};

struct xlb_worker_dumps {
    struct xlb_shared *shared;
    struct xlb_loop *loop;
    const struct xlb_worker_dump_kind *kind;
    /* The dump each worker is working on, until done (at most one per worker), and whether
     * its request has given up on it (then it is freed once done). */
    void *busy[XLB_MAX_WORKERS];
    bool orphan[XLB_MAX_WORKERS];
    struct request *requests;
    uint64_t timer; /* the next poll, while requests wait */
};

/* Free the dumps of workers that have finished one their request gave up on. */
static void reap_orphans(struct xlb_worker_dumps *wd)
{
    for (unsigned w = 0; w < wd->shared->n_workers; w++)
        if (wd->orphan[w] && wd->kind->done(wd->busy[w])) {
            free(wd->busy[w]);
            wd->busy[w] = NULL;
            wd->orphan[w] = false;
        }
}

/* Send the dumps whose worker is free; returns the first worker that is not done, or -1. */
static int request_progress(struct xlb_worker_dumps *wd, struct request *r)
{
    int waiting = -1;
    for (unsigned w = 0; w < wd->shared->n_workers; w++) {
        void *d = r->dumps[w];
        if (d == NULL)
            continue;
        if (!r->sent[w] && wd->busy[w] == NULL &&
            wd->kind->send(wd->shared->to_worker[w], d) == 0) {
            r->sent[w] = true;
            wd->busy[w] = d;
        }
        if (r->sent[w] && wd->kind->done(d)) {
            if (wd->busy[w] == d)
                wd->busy[w] = NULL;
        } else if (waiting < 0) {
            waiting = (int)w;
        }
    }
    return waiting;
}

/* Answer a request and free it; a dump still with its worker is left to reap_orphans. */
static void request_end(struct xlb_worker_dumps *wd, struct request *r, cJSON *reply)
{
    xlb_reply_later_send(r->later, reply);
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++) {
        if (r->dumps[w] != NULL && wd->busy[w] == r->dumps[w])
            wd->orphan[w] = true;
        else
            free(r->dumps[w]);
    }
    free(r);
}

static void on_poll(void *arg)
{
    struct xlb_worker_dumps *wd = arg;
    wd->timer = 0;
    reap_orphans(wd);
    uint64_t now = xlb_now_ms();
    struct request **link = &wd->requests;
    while (*link != NULL) {
        struct request *r = *link;
        int waiting = request_progress(wd, r);
        if (waiting >= 0 && now < r->deadline_ms) {
            link = &r->next;
            continue;
        }
        *link = r->next;
        request_end(wd, r,
                    waiting < 0
                        ? xlb_reply_ok(wd->kind->result(r->dumps, wd->shared->n_workers, r->limit))
                        : xlb_reply_error("worker %d did not answer within %u ms", waiting,
                                          wd->kind->timeout_ms));
    }
    if (wd->requests != NULL)
        wd->timer = xlb_loop_add_timeout(wd->loop, wd->kind->poll_ms, on_poll, wd);
}

struct xlb_worker_dumps *xlb_worker_dumps_create(struct xlb_shared *shared, struct xlb_loop *loop,
                                                 const struct xlb_worker_dump_kind *kind)
{
    struct xlb_worker_dumps *wd = calloc(1, sizeof(*wd));
    if (wd != NULL) {
        wd->shared = shared;
        wd->loop = loop;
        wd->kind = kind;
    }
    return wd;
}

void xlb_worker_dumps_destroy(struct xlb_worker_dumps *wd)
{
    if (wd == NULL)
        return;
    xlb_loop_cancel(wd->loop, wd->timer);
    while (wd->requests != NULL) {
        struct request *r = wd->requests;
        wd->requests = r->next;
        for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
            if (wd->busy[w] == r->dumps[w])
                wd->busy[w] = NULL; /* the workers have stopped: it is freed with r */
        request_end(wd, r, xlb_reply_error("xlbd is stopping"));
    }
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
        free(wd->busy[w]);
    free(wd);
}

static void free_dumps(void *dumps[XLB_MAX_WORKERS])
{
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
        free(dumps[w]);
}

cJSON *xlb_worker_dumps_ask(struct xlb_worker_dumps *wd, struct xlb_control_socket *sock,
                            void *dumps[XLB_MAX_WORKERS], uint32_t limit, char *error, size_t len)
{
    struct request *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        free_dumps(dumps);
        return NULL;
    }
    r->later = xlb_reply_later(sock);
    if (r->later == NULL) {
        snprintf(error, len, "%s cannot wait for the workers here", wd->kind->command);
        free_dumps(dumps);
        free(r);
        return NULL;
    }
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
        r->dumps[w] = dumps[w];
    r->limit = limit;
    r->deadline_ms = xlb_now_ms() + wd->kind->timeout_ms;
    request_progress(wd, r);
    r->next = wd->requests;
    wd->requests = r;
    if (wd->timer == 0)
        wd->timer = xlb_loop_add_timeout(wd->loop, wd->kind->poll_ms, on_poll, wd);
    return XLB_REPLY_LATER;
}

void xlb_worker_dump_add_address(cJSON *o, const char *name, uint8_t family, const uint8_t *bytes,
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
