/*
 * libFuzzer target for the HTTP/2 frame scanner. The input picks the direction (preface or
 * not), the header-block buffer size, the frame size limit, which callback stops the scan, and
 * up to 16 cut points; the rest is the byte stream. Invariant: feeding it cut at those points
 * gives exactly the callbacks (arguments, payloads, blocks), result and offset of feeding it
 * whole; and what the callbacks see is consistent (blocks within the buffer, offsets rising).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_h2_scan.h"

#define MAX_CUTS 16

/* A digest of the callbacks seen, and their count; a stop after the nth callback. */
struct trace {
    uint64_t hash;
    uint32_t calls;
    uint32_t stop_after;
    uint64_t last_offset;
    uint32_t block_cap;
};

static void mix(struct trace *t, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        t->hash = (t->hash ^ b[i]) * 0x100000001b3ull;
}

static void mix_frame(struct trace *t, const struct xlb_h2_frame *f)
{
    mix(t, &f->length, sizeof(f->length));
    mix(t, &f->type, 1);
    mix(t, &f->flags, 1);
    mix(t, &f->stream_id, sizeof(f->stream_id));
    mix(t, &f->offset, sizeof(f->offset));
}

static int counted(struct trace *t)
{
    return ++t->calls == t->stop_after ? -1 : 0;
}

static int on_start(void *user, const struct xlb_h2_frame *f)
{
    struct trace *t = user;
    if (f->offset < t->last_offset)
        abort();
    t->last_offset = f->offset;
    mix(t, "S", 1);
    mix_frame(t, f);
    return counted(t);
}

static int on_end(void *user, const struct xlb_h2_frame *f, const uint8_t *payload, uint32_t len)
{
    struct trace *t = user;
    if (len > XLB_H2_SMALL_PAYLOAD || len > f->length || (payload == NULL && len != 0))
        abort();
    mix(t, "E", 1);
    mix_frame(t, f);
    mix(t, &len, sizeof(len));
    mix(t, payload, len);
    return counted(t);
}

static int on_block(void *user, uint32_t stream_id, bool end_stream, const uint8_t *block,
                    uint32_t len, uint64_t append_at, const struct xlb_h2_frame *last)
{
    struct trace *t = user;
    if (len > t->block_cap || stream_id == 0 || append_at < last->offset + 9 ||
        append_at > last->offset + 9 + last->length)
        abort();
    mix(t, "B", 1);
    mix(t, &stream_id, sizeof(stream_id));
    mix(t, &end_stream, 1);
    mix(t, &len, sizeof(len));
    mix(t, block, len);
    mix(t, &append_at, sizeof(append_at));
    mix_frame(t, last);
    return counted(t);
}

static const struct xlb_h2_scan_events events = {on_start, on_end, on_block};
static uint8_t block_buf[1 << 16];

static int scan(const uint8_t *data, size_t len, const uint8_t *opts, const size_t *cuts,
                size_t n_cuts, struct trace *t, uint64_t *offset)
{
    struct xlb_h2_scanner s;
    t->block_cap = 1u << (opts[1] % 17);
    xlb_h2_scan_init(&s, opts[0] & 1, block_buf, t->block_cap);
    if (opts[0] & 2)
        s.max_frame_size = 1u << 20;
    size_t from = 0;
    int rc = 0;
    for (size_t i = 0; i <= n_cuts && rc == 0; i++) {
        size_t to = i < n_cuts ? cuts[i] : len;
        rc = xlb_h2_scan_feed(&s, data + from, (uint32_t)(to - from), &events, t);
        from = to;
    }
    *offset = xlb_h2_scan_offset(&s);
    if (rc == 0 && *offset != len)
        abort();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    const uint8_t *opts = data;
    uint32_t stop = data[2];
    size_t n_cuts = data[3] % (MAX_CUTS + 1);
    if (size < 4 + 2 * n_cuts)
        return 0;
    const uint8_t *cut_bytes = data + 4;
    const uint8_t *stream = data + 4 + 2 * n_cuts;
    size_t len = size - 4 - 2 * n_cuts;
    size_t cuts[MAX_CUTS];
    for (size_t i = 0; i < n_cuts; i++) /* ascending: each cut a step from the previous */
        cuts[i] = (size_t)(cut_bytes[2 * i] << 8 | cut_bytes[2 * i + 1]);
    for (size_t i = 0; i < n_cuts; i++) {
        size_t prev = i ? cuts[i - 1] : 0;
        cuts[i] = len == 0 ? 0 : prev + cuts[i] % (len - prev + 1);
    }
    struct trace whole = {.hash = 14695981039346656037ull, .stop_after = stop};
    struct trace split = whole;
    uint64_t off_whole, off_split;
    int rc_whole = scan(stream, len, opts, NULL, 0, &whole, &off_whole);
    int rc_split = scan(stream, len, opts, cuts, n_cuts, &split, &off_split);
    if (rc_whole != rc_split || whole.hash != split.hash || whole.calls != split.calls ||
        off_whole != off_split)
        abort();
    return 0;
}
