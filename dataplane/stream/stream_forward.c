/*
 * An RPC from one session to the other. The request's headers are submitted on the picked
 * endpoint's subchannel less the connection-specific fields (RFC 9113 8.2.2); its DATA waits
 * in mbufs until the backend stream's data source takes it, and only then is it consumed on
 * the client's session (its window reopens): the client sends no faster than the backend
 * takes. The response goes back the same way: headers, DATA, trailers (after the last DATA).
 * A reset on either side resets the other; a subchannel lost ends its RPCs UNAVAILABLE, or
 * with RST_STREAM when their response had begun.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stream_conn.h"

static struct xlb_stream_conn *conn_of(struct xlb_stream_worker *w, const struct xlb_stream_rpc *r)
{
    return r->conn == XLB_STREAM_NONE ? NULL : &w->conns[r->conn];
}

static struct xlb_stream_sub *sub_of(struct xlb_stream_worker *w, const struct xlb_stream_rpc *r)
{
    return r->sub == XLB_STREAM_NONE ? NULL : &w->subs[r->sub];
}

static bool session_live(const struct xlb_stream_side *d)
{
    return d != NULL && d->h2 != NULL && !d->done;
}

struct xlb_stream_rpc *xlb_stream_rpc_get(struct xlb_stream_worker *w)
{
    if (w->rpc_free == XLB_STREAM_NONE)
        return NULL;
    struct xlb_stream_rpc *r = &w->rpcs[w->rpc_free];
    w->rpc_free = r->next_free;
    memset(r, 0, offsetof(struct xlb_stream_rpc, trailers));
    r->in_use = true;
    r->conn = r->sub = r->waiting = r->replay = XLB_STREAM_NONE;
    r->cluster_slot = XLB_CLUSTER_SLOTS; /* no call counted until a pick */
    w->rpcs_in_use++;
    return r;
}

/* An RPC's end for the LB core, as the splice mode counts a stream's: the call finished (the
 * circuit breaker's in-flight count), succeeded or failed for its locality's load report, and
 * for outlier detection its endpoint's outcome when the backend's answer said it (a client's
 * cancel says nothing of the backend). */
static void count_end(struct xlb_stream_worker *w, const struct xlb_stream_rpc *r)
{
    struct xlb_burst_ctx *ctx = w->ctx;
    xlb_flow_request_finished(ctx, r->cluster_slot, r->endpoint_slot);
    if (!r->outcome_known)
        return;
    if (ctx->lb != NULL && ctx->lb->load != NULL && r->locality_slot < XLB_LOCALITY_SLOTS) {
        if (r->ok)
            ctx->lb->load->localities[r->locality_slot].succeeded++;
        else
            ctx->lb->load->localities[r->locality_slot].failed++;
    }
    xlb_flow_count_endpoint(ctx, r->endpoint_slot, r->ok);
}

void xlb_stream_rpc_put(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    xlb_stream_unqueue(w, r);
    xlb_stream_deadline_cancel(w, r);
    xlb_stream_replay_drop(w, r);
    xlb_stream_bytes_clear(&r->up);
    xlb_stream_bytes_clear(&r->down);
    count_end(w, r);
    r->in_use = false;
    r->next_free = w->rpc_free;
    w->rpc_free = (uint32_t)(r - w->rpcs);
    w->rpcs_in_use--;
}

/* Free the RPC once neither side refers to it. An answer sent to the client may close its
 * stream at once (and free the RPC there) before the caller gets here: in_use says. */
static void rpc_release_if_done(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    if (r->in_use && r->conn == XLB_STREAM_NONE && r->sub == XLB_STREAM_NONE)
        xlb_stream_rpc_put(w, r);
}

struct xlb_stream_rpc *xlb_stream_rpc_of_client(struct xlb_stream_conn *c, int32_t stream_id)
{
    return c->side.h2 != NULL ? nghttp2_session_get_stream_user_data(c->side.h2, stream_id) : NULL;
}

static bool connection_specific(const char *name, uint32_t len)
{
    static const char *const names[] = {"connection", "keep-alive", "proxy-connection",
                                        "transfer-encoding", "upgrade"};
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            return true;
    return false;
}

/* ---- the request, client to backend ---- */

static ssize_t request_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                            size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                            void *user)
{
    struct xlb_stream_sub *s = user;
    struct xlb_stream_rpc *r = source->ptr;
    struct xlb_stream_worker *w = s->side.w;
    (void)session;
    (void)stream_id;
    uint32_t n = xlb_stream_bytes_take(&r->up, buf, (uint32_t)length);
    xlb_stream_replay_note(w, r, buf, n);
    /* Bytes sent again after a refusal were consumed the first time. */
    uint32_t again = n < r->replayed ? n : r->replayed;
    r->replayed -= again;
    struct xlb_stream_conn *c = conn_of(w, r);
    if (n > again && c != NULL && session_live(&c->side)) {
        nghttp2_session_consume(c->side.h2, r->client_id, n - again);
        xlb_stream_send(&c->side); /* the client's WINDOW_UPDATE */
    }
    if (r->up.len == 0 && r->up_end) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
        return n;
    }
    return n > 0 ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
}

/* The time left before the RPC's deadline as a grpc-timeout value, in milliseconds (at least
 * 1: a deadline that has just passed is the deadline poll's to end). */
static size_t timeout_left(const struct xlb_stream_worker *w, const struct xlb_stream_rpc *r,
                           char *out, size_t size)
{
    uint64_t now = xlb_stream_now_ms(w->ctx);
    uint64_t left = r->deadline_ms > now ? r->deadline_ms - now : 1;
    if (left > 99999999u)
        left = 99999999u; /* 8 digits at most */
    int len = snprintf(out, size, "%" PRIu64 "m", left);
    return len > 0 ? (size_t)len : 0;
}

void xlb_stream_rpc_off_sub(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    if (r->sub == XLB_STREAM_NONE)
        return;
    w->subs[r->sub].rpcs--;
    r->sub = XLB_STREAM_NONE;
}

bool xlb_stream_forward_rpc(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                            struct xlb_stream_sub *s, const struct xlb_lb_trace *trace,
                            const struct xlb_stream_headers *h)
{
    struct xlb_stream_worker *w = c->side.w;
    const struct xlb_lb_endpoint *e = &trace->cluster->endpoints[trace->endpoint];
    r->cluster_slot = trace->cluster->cluster_slot;
    r->endpoint_slot = e->slot;
    r->locality_slot = trace->cluster->priorities[e->priority].localities[e->locality].load_slot;
    r->orca_per_call = trace->cluster->policy == XLB_LB_POLICY_WRR && !trace->cluster->wrr.oob;
    r->orca_penalty = trace->cluster->wrr.error_penalty;
    nghttp2_nv nva[XLB_STREAM_MAX_FIELDS];
    size_t n = 0;
    char left[24];
    for (uint32_t i = 0; i < h->n_fields; i++) {
        if (connection_specific(h->fields[i].name, h->fields[i].name_len))
            continue;
        nva[n++] = (nghttp2_nv){(uint8_t *)(uintptr_t)h->fields[i].name,
                                (uint8_t *)(uintptr_t)h->fields[i].value, h->fields[i].name_len,
                                h->fields[i].value_len, NGHTTP2_NV_FLAG_NONE};
        if (r->deadline_ms != 0 && h->fields[i].name_len == 12 &&
            memcmp(h->fields[i].name, "grpc-timeout", 12) == 0) {
            /* The backend gets what is left of it (nghttp2 copies the value). */
            nva[n - 1].value = (uint8_t *)left;
            nva[n - 1].valuelen = timeout_left(w, r, left, sizeof(left));
        }
    }
    bool ended = r->up_end && r->up.len == 0;
    nghttp2_data_provider body = {.source.ptr = r, .read_callback = request_body};
    int32_t id = nghttp2_submit_request(s->side.h2, NULL, nva, n, ended ? NULL : &body, r);
    if (id < 0) {
        nghttp2_session_set_stream_user_data(c->side.h2, r->client_id, NULL);
        r->conn = XLB_STREAM_NONE;
        xlb_stream_reply_unavailable(c, r->client_id, "xlb: the backend connection takes no RPC");
        xlb_stream_rpc_put(w, r);
        return false;
    }
    r->sub = (uint32_t)(s - w->subs);
    s->rpcs++;
    r->backend_id = id;
    xlb_stream_deadline_arm(w, r);
    xlb_stream_replay_keep(r, w, h);
    w->ctx->stats->events[XLB_EVENT_STREAM_RPCS_FORWARDED]++;
    xlb_stream_send(&s->side);
    return true;
}

/* A new RPC for a client stream, bound to it; NULL (answered, counted) when the pool is out. */
struct xlb_stream_rpc *xlb_stream_rpc_open(struct xlb_stream_conn *c, int32_t stream_id, bool ended,
                                           const struct xlb_stream_headers *h)
{
    struct xlb_stream_worker *w = c->side.w;
    struct xlb_stream_rpc *r = xlb_stream_rpc_get(w);
    if (r == NULL) {
        w->ctx->stats->events[XLB_EVENT_STREAM_RPCS_FULL]++;
        xlb_stream_reply_unavailable(c, stream_id, "xlb: too many RPCs in flight");
        return NULL;
    }
    r->conn = (uint32_t)(c - w->conns);
    r->client_id = stream_id;
    r->up_end = ended;
    uint64_t timeout = xlb_stream_grpc_timeout_ms(h);
    r->deadline_ms = timeout > 0 ? xlb_stream_now_ms(w->ctx) + timeout : 0;
    nghttp2_session_set_stream_user_data(c->side.h2, stream_id, r);
    return r;
}

void xlb_stream_client_data(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                            const uint8_t *data, size_t len)
{
    struct xlb_stream_worker *w = c->side.w;
    struct xlb_stream_sub *s = sub_of(w, r);
    if (r->waiting != XLB_STREAM_NONE) {
        /* kept unconsumed: the client's window bounds what waits with the RPC */
        if (!xlb_stream_bytes_put(&r->up, w->ctx->pool, data, (uint32_t)len)) {
            w->ctx->stats->drops[XLB_DROP_NO_MBUF]++;
            nghttp2_submit_rst_stream(c->side.h2, NGHTTP2_FLAG_NONE, r->client_id,
                                      NGHTTP2_INTERNAL_ERROR);
        }
        return;
    }
    if (s == NULL || !session_live(&s->side)) {
        nghttp2_session_consume(c->side.h2, r->client_id, len); /* nowhere to go */
        return;
    }
    if (!xlb_stream_bytes_put(&r->up, w->ctx->pool, data, (uint32_t)len)) {
        w->ctx->stats->drops[XLB_DROP_NO_MBUF]++;
        nghttp2_submit_rst_stream(c->side.h2, NGHTTP2_FLAG_NONE, r->client_id,
                                  NGHTTP2_INTERNAL_ERROR);
        return;
    }
    nghttp2_session_resume_data(s->side.h2, r->backend_id);
    xlb_stream_send(&s->side);
}

void xlb_stream_client_end(struct xlb_stream_conn *c, struct xlb_stream_rpc *r)
{
    struct xlb_stream_sub *s = sub_of(c->side.w, r);
    r->up_end = true;
    if (s != NULL && session_live(&s->side)) {
        nghttp2_session_resume_data(s->side.h2, r->backend_id);
        xlb_stream_send(&s->side);
    }
}

/* The client's stream is gone (ended both ways, or reset): its backend stream is cancelled
 * if still open. */
void xlb_stream_client_closed(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                              uint32_t error_code)
{
    struct xlb_stream_worker *w = c->side.w;
    struct xlb_stream_sub *s = sub_of(w, r);
    r->conn = XLB_STREAM_NONE;
    xlb_stream_unqueue(w, r);
    /* What still waits for the backend was never consumed on the client's session: its
     * stream is gone, but the connection's window must reopen, or every stream of the
     * connection stalls once such leftovers add up to the window. */
    uint32_t unconsumed = r->up.len - (r->replayed < r->up.len ? r->replayed : r->up.len);
    if (unconsumed > 0 && session_live(&c->side)) {
        nghttp2_session_consume_connection(c->side.h2, unconsumed);
        xlb_stream_send(&c->side);
    }
    if (s != NULL && session_live(&s->side) && !r->down_end) {
        nghttp2_submit_rst_stream(s->side.h2, NGHTTP2_FLAG_NONE, r->backend_id,
                                  error_code != NGHTTP2_NO_ERROR ? error_code : NGHTTP2_CANCEL);
        xlb_stream_send(&s->side);
    }
    rpc_release_if_done(w, r);
}

void xlb_stream_conn_lost(struct xlb_stream_conn *c)
{
    struct xlb_stream_worker *w = c->side.w;
    uint32_t me = (uint32_t)(c - w->conns);
    if (c->rpcs_ended)
        return;
    c->rpcs_ended = true;
    for (uint32_t i = 0; i < w->n_rpcs && w->rpcs_in_use > 0; i++)
        if (w->rpcs[i].in_use && w->rpcs[i].conn == me)
            xlb_stream_client_closed(c, &w->rpcs[i], NGHTTP2_CANCEL);
}

/* ---- the response, backend to client ---- */

static ssize_t response_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                             size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                             void *user)
{
    struct xlb_stream_conn *c = user;
    struct xlb_stream_rpc *r = source->ptr;
    struct xlb_stream_worker *w = c->side.w;
    uint32_t n = xlb_stream_bytes_take(&r->down, buf, (uint32_t)length);
    struct xlb_stream_sub *s = sub_of(w, r);
    if (n > 0 && s != NULL && session_live(&s->side)) {
        nghttp2_session_consume(s->side.h2, r->backend_id, n);
        xlb_stream_send(&s->side);
    }
    if (r->down.len == 0 && r->down_end) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
        if (r->n_trailers > 0) {
            *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
            nghttp2_submit_trailer(session, stream_id, r->trailers, r->n_trailers);
        }
        return n;
    }
    return n > 0 ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
}

/* A header block from the backend, as nghttp2 name-value pairs over w->response. */
static size_t response_nva(const struct xlb_stream_headers *h, nghttp2_nv *nva)
{
    size_t n = 0;
    for (uint32_t i = 0; i < h->n_fields; i++) {
        if (connection_specific(h->fields[i].name, h->fields[i].name_len))
            continue;
        nva[n++] = (nghttp2_nv){(uint8_t *)(uintptr_t)h->fields[i].name,
                                (uint8_t *)(uintptr_t)h->fields[i].value, h->fields[i].name_len,
                                h->fields[i].value_len, NGHTTP2_NV_FLAG_NONE};
    }
    return n;
}

/* Trailers are kept until the response's DATA has gone. */
static bool keep_trailers(struct xlb_stream_rpc *r, const struct xlb_stream_headers *h)
{
    r->n_trailers = 0;
    r->trailer_used = 0;
    for (uint32_t i = 0; i < h->n_fields; i++) {
        uint32_t nl = h->fields[i].name_len, vl = h->fields[i].value_len;
        if (r->n_trailers == XLB_STREAM_TRAILERS ||
            nl + vl > XLB_STREAM_TRAILER_BYTES - (uint32_t)r->trailer_used)
            return false;
        uint8_t *at = r->trailer_bytes + r->trailer_used;
        memcpy(at, h->fields[i].name, nl);
        memcpy(at + nl, h->fields[i].value, vl);
        r->trailers[r->n_trailers++] = (nghttp2_nv){at, at + nl, nl, vl, NGHTTP2_NV_FLAG_NONE};
        r->trailer_used = (uint16_t)(r->trailer_used + nl + vl);
    }
    return true;
}

int xlb_stream_grpc_status(const struct xlb_stream_headers *h)
{
    for (uint32_t i = 0; i < h->n_fields; i++) {
        if (h->fields[i].name_len != 11 || memcmp(h->fields[i].name, "grpc-status", 11) != 0)
            continue;
        int status = 0;
        uint32_t k;
        for (k = 0; k < h->fields[i].value_len && k < 4; k++) {
            char d = h->fields[i].value[k];
            if (d < '0' || d > '9')
                return 2; /* not a status code: UNKNOWN, as gRPC reads it */
            status = status * 10 + (d - '0');
        }
        return k == 0 || k < h->fields[i].value_len ? 2 : status;
    }
    return -1;
}

/* What a header block says of the call: grpc-status 0 (gRPC), else a 2xx :status (HTTP). */
static void note_outcome(struct xlb_stream_rpc *r, const struct xlb_stream_headers *h)
{
    int status = xlb_stream_grpc_status(h);
    if (status >= 0) {
        r->outcome_known = true;
        r->ok = status == 0;
        return;
    }
    for (uint32_t i = 0; i < h->n_fields && !r->outcome_known; i++)
        if (h->fields[i].name_len == 7 && memcmp(h->fields[i].name, ":status", 7) == 0) {
            r->outcome_known = true;
            r->ok = h->fields[i].value_len == 3 && h->fields[i].value[0] == '2';
        }
}

static void response_headers(struct xlb_stream_sub *s, struct xlb_stream_rpc *r, bool ended)
{
    struct xlb_stream_worker *w = s->side.w;
    note_outcome(r, &w->response);
    if (r->orca_per_call)
        xlb_stream_orca_note(w, r, &w->response);
    struct xlb_stream_conn *c = conn_of(w, r);
    if (c == NULL || !session_live(&c->side))
        return;
    if (r->response_sent) { /* trailers */
        r->down_end = true;
        if (!keep_trailers(r, &w->response))
            nghttp2_submit_rst_stream(c->side.h2, NGHTTP2_FLAG_NONE, r->client_id,
                                      NGHTTP2_INTERNAL_ERROR);
        else
            nghttp2_session_resume_data(c->side.h2, r->client_id);
        xlb_stream_send(&c->side);
        return;
    }
    xlb_stream_replay_drop(w, r); /* the backend took the stream: no retry from here */
    nghttp2_nv nva[XLB_STREAM_MAX_FIELDS + 1];
    size_t n = response_nva(&w->response, nva);
    if (r->cookie_len > 0) { /* nghttp2 copies the fields: trailer_bytes is free after this */
        static const char name[] = "set-cookie";
        nva[n++] = (nghttp2_nv){(uint8_t *)(uintptr_t)name, r->trailer_bytes, sizeof(name) - 1,
                                r->cookie_len, NGHTTP2_NV_FLAG_NONE};
        w->ctx->stats->events[XLB_EVENT_L7_SET_COOKIES]++;
        r->cookie_len = 0;
    }
    nghttp2_data_provider body = {.source.ptr = r, .read_callback = response_body};
    r->response_sent = true;
    r->down_end = ended;
    if (nghttp2_submit_response(c->side.h2, r->client_id, nva, n, ended ? NULL : &body) != 0)
        nghttp2_submit_rst_stream(c->side.h2, NGHTTP2_FLAG_NONE, r->client_id,
                                  NGHTTP2_INTERNAL_ERROR);
    xlb_stream_send(&c->side);
}

static struct xlb_stream_rpc *rpc_of_backend(nghttp2_session *session, int32_t id)
{
    return nghttp2_session_get_stream_user_data(session, id);
}

static int sub_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
    struct xlb_stream_sub *s = user;
    (void)session;
    struct xlb_stream_headers *h = &s->side.w->response;
    h->stream_id = frame->hd.stream_id;
    h->overflow = false;
    h->n_fields = 0;
    h->used = 0;
    return 0;
}

static int sub_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                      size_t name_len, const uint8_t *value, size_t value_len, uint8_t flags,
                      void *user)
{
    struct xlb_stream_sub *s = user;
    (void)session;
    (void)flags;
    struct xlb_stream_headers *h = &s->side.w->response;
    if (frame->hd.stream_id != h->stream_id || h->overflow)
        return 0;
    if (h->n_fields == XLB_STREAM_MAX_FIELDS || name_len + value_len > sizeof(h->bytes) - h->used) {
        h->overflow = true;
        return 0;
    }
    char *at = h->bytes + h->used;
    memcpy(at, name, name_len);
    memcpy(at + name_len, value, value_len);
    h->used += (uint32_t)(name_len + value_len);
    h->fields[h->n_fields].name = at;
    h->fields[h->n_fields].name_len = (uint32_t)name_len;
    h->fields[h->n_fields].value = at + name_len;
    h->fields[h->n_fields].value_len = (uint32_t)value_len;
    h->n_fields++;
    return 0;
}

static int sub_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
    struct xlb_stream_sub *s = user;
    struct xlb_stream_worker *w = s->side.w;
    if (frame->hd.type == NGHTTP2_SETTINGS && !(frame->hd.flags & NGHTTP2_FLAG_ACK)) {
        if (!s->ready) {
            xlb_flow_count_endpoint(w->ctx, s->endpoint_slot, true);
            s->ready = true;
            /* A17: READY only once the backend says SERVING; A51: the load reports, when the
             * cluster asks. */
            xlb_stream_subcalls_start(s);
            xlb_stream_sub_report(s, xlb_stream_sub_state(s));
        }
        return 0;
    }
    struct xlb_stream_subcall *call = xlb_stream_subcall_of(s, frame->hd.stream_id);
    if (call != NULL) {
        if (frame->hd.type == NGHTTP2_HEADERS)
            xlb_stream_subcall_headers(s, call);
        return 0;
    }
    if (frame->hd.type == NGHTTP2_GOAWAY) {
        xlb_stream_sub_goaway(s);
        return 0;
    }
    struct xlb_stream_rpc *r = rpc_of_backend(session, frame->hd.stream_id);
    if (r == NULL)
        return 0;
    bool ended = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (frame->hd.type == NGHTTP2_HEADERS) {
        if (w->response.overflow)
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the backend stream is reset */
        if (xlb_stream_deadline_overdue(w, r))
            return 0;
        response_headers(s, r, ended);
    } else if (frame->hd.type == NGHTTP2_DATA && ended) {
        r->down_end = true;
        struct xlb_stream_conn *c = conn_of(w, r);
        if (c != NULL && session_live(&c->side)) {
            nghttp2_session_resume_data(c->side.h2, r->client_id);
            xlb_stream_send(&c->side);
        }
    }
    return 0;
}

static int sub_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                          const uint8_t *data, size_t len, void *user)
{
    struct xlb_stream_sub *s = user;
    struct xlb_stream_worker *w = s->side.w;
    (void)flags;
    struct xlb_stream_subcall *call = xlb_stream_subcall_of(s, stream_id);
    if (call != NULL) {
        xlb_stream_subcall_data(s, call, data, len);
        return 0;
    }
    struct xlb_stream_rpc *r = rpc_of_backend(session, stream_id);
    struct xlb_stream_conn *c = r != NULL ? conn_of(w, r) : NULL;
    if (c == NULL || !session_live(&c->side) || !r->response_sent) {
        nghttp2_session_consume(session, stream_id, len);
        return 0;
    }
    if (!xlb_stream_bytes_put(&r->down, w->ctx->pool, data, (uint32_t)len)) {
        w->ctx->stats->drops[XLB_DROP_NO_MBUF]++;
        nghttp2_session_consume(session, stream_id, len);
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    nghttp2_session_resume_data(c->side.h2, r->client_id);
    xlb_stream_send(&c->side);
    return 0;
}

/* The backend's side of an RPC is over: a reset or a stream that ended without its response
 * ends the client's stream as a gRPC client would see a failed call. */
static void backend_gone(struct xlb_stream_sub *s, struct xlb_stream_rpc *r, uint32_t error_code)
{
    struct xlb_stream_worker *w = s->side.w;
    struct xlb_stream_conn *c = conn_of(w, r);
    xlb_stream_rpc_off_sub(w, r);
    if (!r->down_end) { /* a reset or a lost connection: the call failed at the backend */
        r->outcome_known = true;
        r->ok = false;
    }
    if (c != NULL && session_live(&c->side) && !r->down_end) {
        if (!r->response_sent)
            xlb_stream_reply_unavailable(c, r->client_id,
                                         error_code == NGHTTP2_REFUSED_STREAM
                                             ? "xlb: the backend refused the stream"
                                             : "xlb: the backend connection or stream failed");
        else
            nghttp2_submit_rst_stream(c->side.h2, NGHTTP2_FLAG_NONE, r->client_id,
                                      error_code != NGHTTP2_NO_ERROR ? error_code
                                                                     : NGHTTP2_INTERNAL_ERROR);
        xlb_stream_send(&c->side);
    }
    rpc_release_if_done(w, r);
}

static int sub_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                            void *user)
{
    struct xlb_stream_subcall *call = xlb_stream_subcall_of(user, stream_id);
    if (call != NULL) {
        xlb_stream_subcall_closed(user, call);
        return 0;
    }
    struct xlb_stream_rpc *r = rpc_of_backend(session, stream_id);
    if (r != NULL && r->in_use && r->sub != XLB_STREAM_NONE) {
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        /* The response bytes still waiting for the client were not consumed: the stream's
         * window goes with it, the subchannel's must reopen now (a slow client would
         * otherwise leak it, and every RPC on the subchannel would stall). */
        if (r->down.len > 0) {
            nghttp2_session_consume_connection(session, r->down.len);
            xlb_stream_send(&((struct xlb_stream_sub *)user)->side);
        }
        struct xlb_stream_worker *w = ((struct xlb_stream_sub *)user)->side.w;
        if (error_code == NGHTTP2_REFUSED_STREAM && xlb_stream_retry(w, r))
            return 0;
        backend_gone(user, r, error_code);
    }
    return 0;
}

void xlb_stream_sub_lost(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    uint32_t me = (uint32_t)(s - w->subs);
    for (uint32_t i = 0; i < w->n_rpcs && w->rpcs_in_use > 0; i++)
        if (w->rpcs[i].in_use && w->rpcs[i].sub == me)
            backend_gone(s, &w->rpcs[i], NGHTTP2_NO_ERROR);
}

void xlb_stream_sub_callbacks(nghttp2_session_callbacks *cb)
{
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, sub_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, sub_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, sub_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, sub_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, sub_stream_close);
}
