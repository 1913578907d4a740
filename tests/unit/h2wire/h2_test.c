/* Helpers shared by the h2wire tests (see h2_test.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_test.h"

void h2t_append(struct h2t_bytes *b, const void *data, size_t len)
{
    if (b->len + len > b->cap) {
        b->cap = (b->len + len) * 2 + 64;
        b->data = realloc(b->data, b->cap);
        assert_non_null(b->data);
    }
    if (len != 0) /* data may be NULL then (memcpy's arguments must not be) */
        memcpy(b->data + b->len, data, len);
    b->len += len;
}

void h2t_free(struct h2t_bytes *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

static ssize_t pad_to(nghttp2_session *s, const nghttp2_frame *f, size_t max_payloadlen, void *user)
{
    size_t pad = *(size_t *)user;
    size_t want = f->hd.length + pad + 1;
    return (ssize_t)(want < max_payloadlen ? want : max_payloadlen);
}

static size_t pad_len;

nghttp2_session *h2t_client_new(size_t pad)
{
    nghttp2_session_callbacks *cb;
    nghttp2_session *s;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    pad_len = pad;
    if (pad > 0)
        nghttp2_session_callbacks_set_select_padding_callback(cb, pad_to);
    assert_int_equal(nghttp2_session_client_new(&s, cb, &pad_len), 0);
    nghttp2_session_callbacks_del(cb);
    /* A realistic start: SETTINGS with a larger window, then a connection WINDOW_UPDATE. */
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
                                   {NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
    assert_int_equal(nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, iv, 2), 0);
    assert_int_equal(nghttp2_submit_window_update(s, NGHTTP2_FLAG_NONE, 0, 1 << 20), 0);
    return s;
}

nghttp2_session *h2t_server_new(void)
{
    nghttp2_session_callbacks *cb;
    nghttp2_session *s;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    assert_int_equal(nghttp2_session_server_new(&s, cb, NULL), 0);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0), 0);
    return s;
}

void h2t_drain(nghttp2_session *s, struct h2t_bytes *out)
{
    for (;;) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(s, &data);
        assert_true(n >= 0);
        if (n == 0)
            return;
        h2t_append(out, data, (size_t)n);
    }
}

int32_t h2t_request(nghttp2_session *s, const nghttp2_nv *nva, size_t n, bool priority)
{
    nghttp2_priority_spec pri;
    nghttp2_priority_spec_init(&pri, 0, 42, 0);
    int32_t id = nghttp2_submit_request(s, priority ? &pri : NULL, nva, n, NULL, NULL);
    assert_true(id > 0);
    return id;
}

void h2t_recv(nghttp2_session *s, const uint8_t *data, size_t len)
{
    ssize_t n = nghttp2_session_mem_recv(s, data, len);
    assert_int_equal(n, (ssize_t)len);
}

void h2t_frame(struct h2t_bytes *b, uint32_t length, uint8_t type, uint8_t flags, uint32_t stream)
{
    uint8_t h[9] = {(uint8_t)(length >> 16),
                    (uint8_t)(length >> 8),
                    (uint8_t)length,
                    type,
                    flags,
                    (uint8_t)(stream >> 24),
                    (uint8_t)(stream >> 16),
                    (uint8_t)(stream >> 8),
                    (uint8_t)stream};
    h2t_append(b, h, sizeof(h));
}

__attribute__((format(printf, 2, 3))) static void logf_(struct h2t_log *log, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(log->text + log->len, sizeof(log->text) - log->len, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof(log->text) - log->len)
        log->len += (size_t)n;
}

/* Every callback counts; the stop_after'th one asks the scanner to stop. */
static int counted(struct h2t_log *log)
{
    return ++log->calls == log->stop_after ? -1 : 0;
}

static int on_start(void *user, const struct xlb_h2_frame *f)
{
    logf_(user, "start type=%u flags=%02x stream=%u len=%u off=%llu\n", f->type, f->flags,
          f->stream_id, f->length, (unsigned long long)f->offset);
    return counted(user);
}

static int on_end(void *user, const struct xlb_h2_frame *f, const uint8_t *payload, uint32_t len)
{
    struct h2t_log *log = user;
    logf_(log, "end type=%u off=%llu payload=%s:", f->type, (unsigned long long)f->offset,
          payload ? "yes" : "no");
    for (uint32_t i = 0; i < len; i++)
        logf_(log, "%02x", payload[i]);
    logf_(log, "\n");
    return counted(log);
}

static int on_block(void *user, uint32_t stream_id, bool end_stream, const uint8_t *block,
                    uint32_t len, uint64_t append_at, const struct xlb_h2_frame *last)
{
    struct h2t_log *log = user;
    uint32_t i = log->n_blocks;
    if (i < H2T_MAX_BLOCKS) {
        log->blocks[i] = malloc(len ? len : 1);
        memcpy(log->blocks[i], block, len);
        log->block_len[i] = len;
        log->append_at[i] = append_at;
        log->last_frame[i] = *last;
        log->block_stream[i] = stream_id;
        log->block_end_stream[i] = end_stream;
        log->n_blocks++;
    }
    uint32_t hash = 2166136261u;
    for (uint32_t k = 0; k < len; k++)
        hash = (hash ^ block[k]) * 16777619u;
    logf_(log, "block stream=%u end=%d len=%u hash=%08x at=%llu last=%llu\n", stream_id, end_stream,
          len, hash, (unsigned long long)append_at, (unsigned long long)last->offset);
    return counted(log);
}

const struct xlb_h2_scan_events h2t_log_events = {on_start, on_end, on_block};

void h2t_log_reset(struct h2t_log *log)
{
    for (uint32_t i = 0; i < log->n_blocks; i++)
        free(log->blocks[i]);
    int stop = log->stop_after;
    memset(log, 0, sizeof(*log));
    log->stop_after = stop;
}

int h2t_scan_split(const uint8_t *data, size_t len, bool preface, const size_t *cuts, size_t n_cuts,
                   uint8_t *block_buf, uint32_t block_cap, struct h2t_log *log)
{
    struct xlb_h2_scanner s;
    xlb_h2_scan_init(&s, preface, block_buf, block_cap);
    size_t from = 0;
    for (size_t i = 0; i <= n_cuts; i++) {
        size_t to = i < n_cuts ? cuts[i] : len;
        int rc = xlb_h2_scan_feed(&s, data + from, (uint32_t)(to - from), &h2t_log_events, log);
        if (rc != 0) {
            logf_(log, "error %d at %llu\n", rc, (unsigned long long)xlb_h2_scan_offset(&s));
            return rc;
        }
        from = to;
    }
    return 0;
}
