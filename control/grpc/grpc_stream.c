/*
 * The HTTP/2 side of a gRPC channel: the nghttp2 client session, its callbacks, and the calls
 * (streams) on it. Requests carry gRPC's headers; each stream's DATA is deframed into
 * messages; trailers give the call's grpc-status. Outgoing messages are queued per stream and
 * handed to nghttp2 through a deferred data provider, as a bidirectional call needs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_internal.h"
#include "xlb_const.h"

static struct xlb_grpc_stream *stream_of(nghttp2_session *session, int32_t id)
{
    return nghttp2_session_get_stream_user_data(session, id);
}

static void stream_free(struct xlb_grpc_stream *s)
{
    struct xlb_grpc_stream **link = &s->ch->streams;
    while (*link != NULL && *link != s)
        link = &(*link)->next;
    if (*link == s)
        *link = s->next;
    xlb_grpc_reader_free(&s->reader);
    free(s->out.data);
    free(s->message);
    free(s);
}

/* ---- sending ---- */

static ssize_t read_outgoing(nghttp2_session *session, int32_t id, uint8_t *buf, size_t len,
                             uint32_t *flags, nghttp2_data_source *source, void *user)
{
    struct xlb_grpc_stream *s = source->ptr;
    size_t left = s->out.len - s->out.sent;
    if (left == 0)
        return NGHTTP2_ERR_DEFERRED; /* resumed by the next xlb_grpc_stream_send */
    size_t n = left < len ? left : len;
    memcpy(buf, s->out.data + s->out.sent, n);
    s->out.sent += n;
    if (s->out.sent == s->out.len)
        s->out.len = s->out.sent = 0;
    *flags = NGHTTP2_DATA_FLAG_NONE; /* a streaming call never ends its side on its own */
    return (ssize_t)n;
}

int xlb_grpc_stream_send(struct xlb_grpc_stream *s, const void *msg, size_t len)
{
    if (s == NULL || s->cancelled || s->ch->state != CH_HTTP2 || len > UINT32_MAX)
        return -1;
    struct out_queue *q = &s->out;
    uint8_t *grown = realloc(q->data, q->len + XLB_GRPC_PREFIX_LEN + len);
    if (grown == NULL)
        return -1;
    q->data = grown;
    xlb_grpc_frame_prefix(q->data + q->len, (uint32_t)len);
    memcpy(q->data + q->len + XLB_GRPC_PREFIX_LEN, msg, len);
    q->len += XLB_GRPC_PREFIX_LEN + len;
    nghttp2_session_resume_data(s->ch->session, s->id);
    xlb_grpc_channel_flush(s->ch);
    return 0;
}

/* ---- opening and cancelling ---- */

/* nghttp2_nv's name and value are not const; nghttp2 only reads them. */
#define HEADER(name, value)                                                                        \
    {                                                                                              \
        XLB_UNCONST(name), XLB_UNCONST(value), sizeof(name) - 1, strlen(value),                    \
            NGHTTP2_NV_FLAG_NO_COPY_NAME                                                           \
    }

struct xlb_grpc_stream *xlb_grpc_stream_open(struct xlb_grpc_channel *ch, const char *path,
                                             const struct xlb_grpc_stream_callbacks *cb, void *arg)
{
    if (!xlb_grpc_channel_ready(ch))
        return NULL;
    struct xlb_grpc_stream *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->ch = ch;
    s->cb = *cb;
    s->arg = arg;
    s->status = -1;
    xlb_grpc_reader_init(&s->reader, ch->target.max_message);
    const nghttp2_nv headers[] = {
        HEADER(":method", "POST"),
        HEADER(":scheme", ch->target.tls ? "https" : "http"),
        HEADER(":path", path),
        HEADER(":authority", ch->authority),
        HEADER("content-type", "application/grpc"),
        HEADER("te", "trailers"),
        HEADER("user-agent", "xlb/" XLB_VERSION),
    };
    nghttp2_data_provider provider = {.source.ptr = s, .read_callback = read_outgoing};
    s->id = nghttp2_submit_request(ch->session, NULL, headers, sizeof(headers) / sizeof(headers[0]),
                                   &provider, s);
    if (s->id < 0) {
        xlb_grpc_reader_free(&s->reader);
        free(s);
        return NULL;
    }
    s->next = ch->streams;
    ch->streams = s;
    xlb_grpc_channel_flush(ch);
    return s;
}

void xlb_grpc_stream_cancel(struct xlb_grpc_stream *s)
{
    if (s == NULL || s->cancelled)
        return;
    s->cancelled = true;
    if (s->ch->state == CH_HTTP2) {
        nghttp2_submit_rst_stream(s->ch->session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
        xlb_grpc_channel_flush(s->ch); /* the stream is freed when nghttp2 closes it */
    }
}

/* ---- receiving ---- */

static void deliver(const uint8_t *msg, size_t len, void *arg)
{
    struct xlb_grpc_stream *s = arg;
    if (!s->cancelled)
        s->cb.on_message(s, msg, len, s->arg);
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t id, const uint8_t *data,
                         size_t len, void *user)
{
    struct xlb_grpc_stream *s = stream_of(session, id);
    if (s == NULL || s->cancelled)
        return 0;
    enum xlb_grpc_frame_error e = xlb_grpc_reader_feed(&s->reader, data, len, deliver, s);
    if (e != XLB_GRPC_FRAME_OK) {
        /* The call is broken: end it with a status that says why, then reset it. */
        s->broken = true;
        s->status = XLB_GRPC_INTERNAL;
        free(s->message);
        s->message = strdup(xlb_grpc_frame_error_text(e));
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    }
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                     size_t name_len, const uint8_t *value, size_t value_len, uint8_t flags,
                     void *user)
{
    struct xlb_grpc_stream *s = stream_of(session, frame->hd.stream_id);
    if (s == NULL || s->status == XLB_GRPC_INTERNAL)
        return 0;
    if (name_len == 7 && memcmp(name, ":status", 7) == 0) {
        s->http_status = atoi((const char *)value);
    } else if (name_len == 11 && memcmp(name, "grpc-status", 11) == 0) {
        s->status = atoi((const char *)value);
    } else if (name_len == 12 && memcmp(name, "grpc-message", 12) == 0) {
        free(s->message);
        s->message = strndup((const char *)value, value_len);
    }
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t id, uint32_t error_code, void *user)
{
    struct xlb_grpc_stream *s = stream_of(session, id);
    if (s == NULL)
        return 0;
    nghttp2_session_set_stream_user_data(session, id, NULL);
    if (!s->cancelled) {
        int status = s->status;
        char reason[128];
        const char *message = s->message;
        if (!s->broken && xlb_grpc_reader_truncation(&s->reader, reason, sizeof(reason))) {
            /* The last message was cut off: the call failed, whatever its trailers say. */
            status = XLB_GRPC_INTERNAL;
            message = reason;
        } else if (status < 0) {
            /* No trailers: reset by the server, or an HTTP error before gRPC began. */
            status = XLB_GRPC_UNAVAILABLE;
            if (error_code != NGHTTP2_NO_ERROR)
                snprintf(reason, sizeof(reason), "stream reset: %s",
                         nghttp2_http2_strerror(error_code));
            else
                snprintf(reason, sizeof(reason), "stream ended without grpc-status (HTTP %d)",
                         s->http_status);
            message = reason;
        }
        s->cb.on_close(s, status, message ? message : "", s->arg);
    }
    stream_free(s);
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
    struct xlb_grpc_channel *ch = user;
    /* The server ended the call (trailers, or DATA with END_STREAM) while our side is still
     * open, as streaming calls are: nghttp2 keeps such a stream half-closed forever. Resetting
     * our side closes it, and on_stream_close reports the status the trailers carried. */
    if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) && stream_of(session, frame->hd.stream_id))
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                                  NGHTTP2_NO_ERROR);
    if (frame->hd.type == NGHTTP2_SETTINGS && !(frame->hd.flags & NGHTTP2_FLAG_ACK) && !ch->ready)
        xlb_grpc_channel_became_ready(ch);
    else if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK))
        xlb_grpc_keepalive_acked(&ch->keepalive);
    return 0;
}

/* ---- the session ---- */

int xlb_grpc_session_start(struct xlb_grpc_channel *ch)
{
    nghttp2_session_callbacks *callbacks;
    if (nghttp2_session_callbacks_new(&callbacks) != 0)
        return -1;
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data_chunk);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
    int rc = nghttp2_session_client_new(&ch->session, callbacks, ch);
    nghttp2_session_callbacks_del(callbacks);
    if (rc != 0)
        return -1;
    /* Large windows: xDS responses can be megabytes, and only the control plane reads them. */
    const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 24},
    };
    nghttp2_submit_settings(ch->session, NGHTTP2_FLAG_NONE, settings, 2);
    nghttp2_session_set_local_window_size(ch->session, NGHTTP2_FLAG_NONE, 0, 1 << 26);
    xlb_grpc_channel_flush(ch);
    return 0;
}

/* The reason, followed by what was cut off when a message was partly received. */
static const char *with_truncation(const struct xlb_grpc_stream *s, const char *reason, char *text,
                                   size_t len)
{
    char cut[96];
    if (s->broken || !xlb_grpc_reader_truncation(&s->reader, cut, sizeof(cut)))
        return reason;
    snprintf(text, len, "%s; %s", reason, cut);
    return text;
}

/* The connection is gone: every open call ends with UNAVAILABLE and the reason. */
void xlb_grpc_streams_fail(struct xlb_grpc_channel *ch, const char *reason)
{
    char text[640];
    while (ch->streams != NULL) {
        struct xlb_grpc_stream *s = ch->streams;
        if (ch->session != NULL)
            nghttp2_session_set_stream_user_data(ch->session, s->id, NULL);
        if (!s->cancelled)
            s->cb.on_close(s, XLB_GRPC_UNAVAILABLE, with_truncation(s, reason, text, sizeof(text)),
                           s->arg);
        stream_free(s);
    }
}

void xlb_grpc_streams_free(struct xlb_grpc_channel *ch)
{
    while (ch->streams != NULL)
        stream_free(ch->streams);
}
