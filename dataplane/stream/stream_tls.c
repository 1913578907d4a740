/*
 * TLS on a client connection of a TLS VIP, and on a subchannel to a cluster with upstream TLS
 * (A29), docs/tls.md. The glue (dataplane/tls/) sits between xlb's TCP and the connection's
 * HTTP/2 session: ciphertext is peeked from the TCP receive queue and consumed as the glue
 * takes it (at most two records held), the plaintext goes to the session; the session's output
 * is sealed into mbufs for the TCP send queue. The session is made with the connection, as
 * for cleartext; its SETTINGS leave once the handshake is done.
 *
 * A worker runs at most XLB_STREAM_TLS_STEPS handshake steps per poll (a step holds the
 * private-key signature): a connection over budget waits on the deferred list, so a flood of
 * ClientHellos delays handshakes but never stalls the worker. A handshake not done within
 * XLB_STREAM_TLS_HANDSHAKE_MS is ended, which also bounds how long a replaced TLS server must
 * outlive its snapshot (control/orchestration/tls_watch.h).
 *
 * OpenSSL allocates from the worker's TLS heap (dataplane/tls/xlb_tls_mem.h), a block of EAL
 * memory taken with the engine: the worker enters it at its first TLS call or poll, and from
 * then on a full heap fails the connection asking (stream_tls_no_memory, or its handshake),
 * never calls malloc.
 */
#include <inttypes.h>
#include <string.h>

#include <rte_malloc.h>

#include "stream_conn.h"
#include "xlb_log.h"

#define XLB_STREAM_TLS_STEPS        8u
#define XLB_STREAM_TLS_HANDSHAKE_MS 10000u
#define XLB_STREAM_TLS_READS        8u /* plaintext reads per piece of ciphertext fed */
#define TIMEOUTS_PER_POLL           64u

uint32_t xlb_stream_tls_heap_bytes(const struct xlb_stream_limits *limits)
{
    return limits->tls_heap_bytes != 0 ? limits->tls_heap_bytes
                                       : xlb_tls_heap_bytes(limits->connections, 0);
}

bool xlb_stream_tls_heap_create(struct xlb_stream_worker *w, unsigned worker_id, int socket)
{
    uint32_t bytes = xlb_stream_tls_heap_bytes(&w->limits);
    w->tls_block = rte_malloc_socket("xlb_stream_tls_heap", bytes, RTE_CACHE_LINE_SIZE, socket);
    if (w->tls_block == NULL)
        return false;
    if (!xlb_tls_heap_init(&w->tls_heap, w->tls_block, bytes, worker_id)) {
        rte_free(w->tls_block);
        w->tls_block = NULL;
        return false;
    }
    return true;
}

void xlb_stream_tls_heap_free(struct xlb_stream_worker *w)
{
    if (w->tls_block == NULL)
        return;
    XLB_LOG(INFO, WORKER,
            "worker %u: TLS heap of %u bytes, at most %u used, %" PRIu64 " requests refused",
            w->tls_heap.worker, w->tls_heap.arena.size, xlb_tls_heap_high_water(&w->tls_heap),
            w->tls_heap.failed);
    /* OpenSSL may read what it left there until it cleans up at exit: rte_free then. */
    xlb_tls_heap_retire(&w->tls_heap, rte_free, w->tls_block);
    w->tls_block = NULL;
}

/* OpenSSL allocates from this worker's heap from now on (a thread-local compare once set). */
static void enter_heap(struct xlb_stream_worker *w)
{
    if (xlb_tls_heap_current() != &w->tls_heap)
        xlb_tls_heap_enter(&w->tls_heap);
}

/* The handshake's deadline on the worker's wheel. */
static void arm_deadline(struct xlb_stream_side *d)
{
    struct xlb_stream_worker *w = d->w;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    if (w->handshakes.armed == 0)
        xlb_tcp_wheel_init(&w->handshakes, now);
    xlb_tcp_wheel_arm(&w->handshakes, &d->handshake, now + XLB_STREAM_TLS_HANDSHAKE_MS);
}

bool xlb_stream_tls_accept(struct xlb_stream_side *d, const struct xlb_vip_view *vip)
{
    struct xlb_stream_worker *w = d->w;
    enter_heap(w);
    if (xlb_tls_conn_open(&d->tls, vip->tls, &w->ctx->stats->tls[vip->tls_index]) != 0) {
        w->ctx->stats->events[XLB_EVENT_STREAM_TLS_NO_MEMORY]++;
        return false;
    }
    arm_deadline(d);
    return true;
}

bool xlb_stream_tls_connect(struct xlb_stream_side *d, struct ssl_ctx_st *ctx)
{
    struct xlb_stream_worker *w = d->w;
    enter_heap(w);
    if (xlb_tls_conn_open_client(&d->tls, ctx, &w->ctx->stats->upstream_tls) != 0) {
        w->ctx->stats->events[XLB_EVENT_STREAM_TLS_NO_MEMORY]++;
        return false;
    }
    arm_deadline(d);
    return true;
}

void xlb_stream_tls_close(struct xlb_stream_side *d)
{
    if (xlb_tcp_timer_armed(&d->handshake))
        xlb_tcp_wheel_cancel(&d->w->handshakes, &d->handshake);
    if (d->tls.ssl != NULL)
        xlb_tls_conn_free(&d->tls);
}

bool xlb_stream_tls_failed(struct xlb_stream_side *d)
{
    return d->tls.ssl != NULL && d->tls.state == XLB_TLS_FAILED;
}

/* Run the handshake if input waits for it; over budget, the next poll goes on. */
static void handshake(struct xlb_stream_side *d)
{
    struct xlb_stream_worker *w = d->w;
    if (d->tls.state != XLB_TLS_HANDSHAKING || !d->tls.handshake_due)
        return;
    if (xlb_tls_conn_advance(&d->tls, &w->tls_budget) == XLB_TLS_HANDSHAKING &&
        d->tls.handshake_due) {
        w->ctx->stats->events[XLB_EVENT_STREAM_TLS_DEFERRED]++;
        xlb_stream_defer(d);
    }
    if (d->tls.state != XLB_TLS_HANDSHAKING && xlb_tcp_timer_armed(&d->handshake))
        xlb_tcp_wheel_cancel(&w->handshakes, &d->handshake);
}

/* The plaintext the glue has to the session; false when the session failed. */
static bool deliver(struct xlb_stream_side *d, bool *progress)
{
    struct xlb_stream_worker *w = d->w;
    for (uint32_t i = 0; i < XLB_STREAM_TLS_READS; i++) {
        uint32_t got = xlb_tls_conn_read(&d->tls, w->tls_plain, sizeof(w->tls_plain));
        if (got == 0)
            break;
        *progress = true;
        if (nghttp2_session_mem_recv(d->h2, w->tls_plain, got) < 0) {
            w->ctx->stats->events[XLB_EVENT_STREAM_SESSION_ERRORS]++;
            return false;
        }
        if (d->done || d->h2 == NULL)
            return true;
    }
    return true;
}

bool xlb_stream_tls_input(struct xlb_stream_side *d, bool *eof)
{
    struct xlb_stream_worker *w = d->w;
    *eof = false;
    for (int i = 0; i < XLB_STREAM_RECV_PIECES; i++) {
        bool progress = false;
        const uint8_t *data;
        uint32_t len;
        if (xlb_tcp_peek(d->tcp, &data, &len, eof) > 0 && len > 0) {
            uint32_t took = xlb_tls_conn_feed(&d->tls, data, len);
            if (took > 0) {
                xlb_tcp_consume(w->ep, d->tcp, took);
                progress = true;
            }
        }
        handshake(d);
        if (!deliver(d, &progress))
            return false;
        if (d->done || d->h2 == NULL || d->tls.state == XLB_TLS_FAILED)
            return true;
        if (d->tls.state == XLB_TLS_CLOSED)
            *eof = true; /* close_notify: the client sends nothing more */
        if (!progress)
            break;
    }
    return true;
}

/* Append the glue's ciphertext to a chain; false when the pool has too few mbufs. */
static bool take_into(struct xlb_stream_side *d, struct rte_mbuf **head, struct rte_mbuf **tail)
{
    struct rte_mempool *pool = d->w->ctx->pool;
    while (xlb_tls_conn_pending(&d->tls) > 0) {
        if (*tail == NULL || rte_pktmbuf_tailroom(*tail) == 0) {
            struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
            if (m == NULL)
                return false;
            if (*head == NULL) {
                *head = m;
            } else {
                (*tail)->next = m;
                (*head)->nb_segs++;
            }
            *tail = m;
        }
        uint16_t room = rte_pktmbuf_tailroom(*tail);
        uint8_t *at = rte_pktmbuf_mtod_offset(*tail, uint8_t *, rte_pktmbuf_data_len(*tail));
        uint32_t got = xlb_tls_conn_take(&d->tls, at, room);
        if (got == 0)
            break;
        (*tail)->data_len = (uint16_t)((*tail)->data_len + got);
        (*head)->pkt_len += got;
    }
    return true;
}

struct rte_mbuf *xlb_stream_tls_take(struct xlb_stream_side *d)
{
    struct rte_mbuf *head = NULL, *tail = NULL;
    if (!take_into(d, &head, &tail)) {
        rte_pktmbuf_free(head);
        return NULL;
    }
    return head;
}

struct rte_mbuf *xlb_stream_tls_seal(struct xlb_stream_side *d, const uint8_t *data, uint32_t n)
{
    struct rte_mbuf *head = NULL, *tail = NULL;
    /* The glue takes at most two records' worth before its output is taken: alternate. */
    while (n > 0) {
        uint32_t sealed = xlb_tls_conn_write(&d->tls, data, n);
        data += sealed;
        n -= sealed;
        if (!take_into(d, &head, &tail) || (sealed == 0 && n > 0)) {
            rte_pktmbuf_free(head);
            return NULL;
        }
    }
    return head;
}

bool xlb_stream_tls_notify(struct xlb_stream_side *d)
{
    if (d->tls_notified || d->tls.state != XLB_TLS_OPEN)
        return false;
    d->tls_notified = true;
    xlb_tls_conn_shutdown(&d->tls);
    return xlb_tls_conn_pending(&d->tls) > 0;
}

void xlb_stream_tls_poll(struct xlb_stream_worker *w)
{
    w->tls_budget.handshake_steps = XLB_STREAM_TLS_STEPS;
    enter_heap(w);
    if (w->handshakes.armed == 0)
        return;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    for (uint32_t n = 0; n < TIMEOUTS_PER_POLL; n++) {
        struct xlb_tcp_timer *t = xlb_tcp_wheel_expired(&w->handshakes, now);
        if (t == NULL)
            break;
        struct xlb_stream_side *d =
            (struct xlb_stream_side *)((uint8_t *)t - offsetof(struct xlb_stream_side, handshake));
        w->ctx->stats->events[XLB_EVENT_STREAM_TLS_TIMEOUTS]++;
        w->current = &d->link;
        xlb_stream_abort(d);
        xlb_stream_route_output(w);
    }
    w->current = NULL;
}
