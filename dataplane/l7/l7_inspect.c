/*
 * After binding, both directions keep being read as HTTP/2 for the connection's life: request
 * header blocks (client to backend) open streams and carry session cookies; response header
 * blocks (backend to client) carry the RPC's status and are where Set-Cookie goes; RST_STREAM
 * and GOAWAY end streams. Each direction is scanned in order only: a segment beyond a gap is
 * dropped so its sender retransmits it (no reassembly buffer), and a retransmission of bytes
 * already scanned passes unread. Each side's SETTINGS bound what the other side may send
 * (frame size, HPACK table size), so they are applied to the other direction's scanner.
 */
#include <string.h>

#include "l7_conn.h"

#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)

struct inspect_step {
    struct xlb_burst_ctx *ctx;
    struct xlb_l7_conn *c;
};

/* Header table and frame sizes one side announced, for the other side's scanner/decoder. */
static int apply_settings(const struct xlb_h2_scanner *announcer, struct xlb_h2_scanner *other,
                          struct xlb_hpack_decoder *other_decoder)
{
    if (announcer->settings_max_frame_size != UINT32_MAX)
        other->max_frame_size = announcer->settings_max_frame_size;
    if (announcer->settings_header_table_size != UINT32_MAX &&
        xlb_hpack_decoder_set_max_table(other_decoder, announcer->settings_header_table_size) != 0)
        return -1;
    return 0;
}

static bool heap_empty(const struct xlb_h2_quota *q)
{
    return q->pool_empty && q->last_failed != 0;
}

/* Not followed any more: both decoders give their memory back to the worker's pool. */
static void stop_decoding(struct xlb_l7_conn *c)
{
    xlb_hpack_decoder_fini(&c->hpack);
    xlb_hpack_decoder_fini(&c->s2c_hpack);
    xlb_h2_quota_fini(&c->quota);
    xlb_h2_quota_fini(&c->s2c_quota);
}

void xlb_l7_inspect_start(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c)
{
    c->inspect = false;
    c->c2b_next = c->rcv_nxt;
    c->s2c_next = c->backend_isn + 1;
    xlb_h2_scan_init(&c->s2c_scan, false, c->s2c_block, sizeof(c->s2c_block));
    if (xlb_hpack_decoder_init_quota(&c->s2c_hpack, &c->s2c_quota) != 0 ||
        apply_settings(&c->scan, &c->s2c_scan, &c->s2c_hpack) != 0) {
        if (heap_empty(&c->s2c_quota))
            ctx->stats->events[XLB_EVENT_L7_HPACK_POOL_FULL]++; /* spliced on, not inspected */
        stop_decoding(c);
        return;
    }
    c->inspect = true;
}

static uint32_t stream_id_of(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]) & 0x7fffffffu;
}

/* Frames that end streams, either way; SETTINGS that bound the other way. */
static int on_frame_end(struct inspect_step *r, const struct xlb_h2_frame *f,
                        const uint8_t *payload, uint32_t len, bool from_backend)
{
    struct xlb_l7_conn *c = r->c;
    if (f->type == XLB_H2_DATA && from_backend && (f->flags & XLB_H2_FLAG_END_STREAM)) {
        struct xlb_l7_stream *s = xlb_l7_stream_find(c, f->stream_id);
        if (s != NULL)
            xlb_l7_stream_data_end(r->ctx, c, s);
    } else if (f->type == XLB_H2_RST_STREAM) {
        struct xlb_l7_stream *s = xlb_l7_stream_find(c, f->stream_id);
        if (s != NULL)
            xlb_l7_stream_end(r->ctx, c, s, false);
    } else if (f->type == XLB_H2_GOAWAY && from_backend && len >= 4) {
        xlb_l7_streams_goaway(r->ctx, c, stream_id_of(payload));
    } else if (f->type == XLB_H2_SETTINGS && !(f->flags & XLB_H2_FLAG_END_STREAM)) {
        if (from_backend)
            return apply_settings(&c->s2c_scan, &c->scan, &c->hpack);
        return apply_settings(&c->scan, &c->s2c_scan, &c->s2c_hpack);
    }
    return 0;
}

static int client_frame_end(void *user, const struct xlb_h2_frame *f, const uint8_t *payload,
                            uint32_t len)
{
    return on_frame_end(user, f, payload, len, false);
}

static int backend_frame_end(void *user, const struct xlb_h2_frame *f, const uint8_t *payload,
                             uint32_t len)
{
    return on_frame_end(user, f, payload, len, true);
}

static int request_block(void *user, uint32_t stream_id, bool end_stream, const uint8_t *block,
                         uint32_t len, uint64_t append_at, const struct xlb_h2_frame *last)
{
    (void)end_stream, (void)append_at, (void)last;
    struct inspect_step *r = user;
    struct xlb_h2_headers h;
    char storage[2048];
    if (xlb_hpack_decode(&r->c->hpack, block, len, &h, storage, sizeof(storage)) != 0)
        return -1;
    if (r->c->scan.block_type == XLB_H2_HEADERS)
        xlb_l7_stream_request(r->ctx, r->c, stream_id, &h);
    return 0;
}

/* Where the Set-Cookie goes: after the response's first header block, in the frame that ends
 * it. Only when that frame's header is in the segment being fed (it is patched there). */
static void plan_insert(struct inspect_step *r, uint64_t append_at, const struct xlb_h2_frame *last)
{
    struct xlb_l7_conn *c = r->c;
    uint32_t base = c->backend_isn + 1;
    struct xlb_l7_insert ins = {.at = base + (uint32_t)append_at,
                                .frame_at = base + (uint32_t)last->offset};
    if (SEQ_LT(ins.frame_at, c->feeding_seq) || c->n_new == XLB_L7_NEW_INSERTS) {
        r->ctx->stats->events[XLB_EVENT_L7_SET_COOKIE_MISSED]++;
        return;
    }
    c->new_inserts[c->n_new++] = ins;
}

static int response_block(void *user, uint32_t stream_id, bool end_stream, const uint8_t *block,
                          uint32_t len, uint64_t append_at, const struct xlb_h2_frame *last)
{
    struct inspect_step *r = user;
    struct xlb_l7_conn *c = r->c;
    struct xlb_h2_headers h;
    char storage[1024];
    if (xlb_hpack_decode(&c->s2c_hpack, block, len, &h, storage, sizeof(storage)) != 0)
        return -1;
    struct xlb_l7_stream *s = xlb_l7_stream_find(c, stream_id);
    if (s == NULL || c->s2c_scan.block_type != XLB_H2_HEADERS)
        return 0;
    if (!s->responded && s->needs_cookie)
        plan_insert(r, append_at, last);
    xlb_l7_stream_response(r->ctx, c, s, &h, end_stream);
    return 0;
}

static const struct xlb_h2_scan_events client_events = {
    .frame_end = client_frame_end,
    .header_block = request_block,
};

static const struct xlb_h2_scan_events backend_events = {
    .frame_end = backend_frame_end,
    .header_block = response_block,
};

/* A direction could not be followed: splice only from now on, its streams counted as failed. */
static void give_up(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c)
{
    c->inspect = false;
    c->n_new = 0;
    ctx->stats->events[XLB_EVENT_L7_INSPECT_ERRORS]++;
    if (heap_empty(&c->quota) || heap_empty(&c->s2c_quota))
        ctx->stats->events[XLB_EVENT_L7_HPACK_POOL_FULL]++;
    stop_decoding(c);
    xlb_l7_streams_end_all(ctx, c);
}

/* Feed what is new of (seq, data, len) given the next expected seq; false: out of order. */
static bool feed(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, struct xlb_h2_scanner *scan,
                 uint32_t *next, uint32_t seq, const uint8_t *data, uint32_t len,
                 const struct xlb_h2_scan_events *events)
{
    if (!c->inspect || len == 0)
        return true;
    if (SEQ_LT(*next, seq))
        return false;
    uint32_t skip = *next - seq;
    if (skip >= len)
        return true; /* a retransmission: read already */
    struct inspect_step r = {ctx, c};
    if (xlb_h2_scan_feed(scan, data + skip, len - skip, events, &r) != 0)
        give_up(ctx, c);
    *next = seq + len;
    return true;
}

bool xlb_l7_inspect_client(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, uint32_t seq,
                           const uint8_t *data, uint32_t len)
{
    return feed(ctx, c, &c->scan, &c->c2b_next, seq, data, len, &client_events);
}

bool xlb_l7_inspect_backend(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, uint32_t seq,
                            const uint8_t *data, uint32_t len)
{
    c->n_new = 0;
    c->feeding_seq = seq;
    c->feeding_len = len;
    return feed(ctx, c, &c->s2c_scan, &c->s2c_next, seq, data, len, &backend_events);
}
