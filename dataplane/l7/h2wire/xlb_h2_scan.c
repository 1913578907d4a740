/*
 * HTTP/2 frame scanner (see xlb_h2_scan.h).
 *
 * A frame's payload is read in three phases: its fixed fields (pad length, priority, promised
 * id), its body (header-block fragment, control payload, or data) and its padding. Each phase
 * ends at a byte position known once the fixed fields are in, so every check and callback
 * happens at the same byte whatever the segment boundaries: that is what makes split feeding
 * equivalent to whole feeding.
 */
#include <stddef.h>
#include <string.h>

#include "xlb_h2_scan.h"

enum state { S_PREFACE, S_HEADER, S_PAYLOAD, S_DEAD };
enum phase { P_FIXED, P_BODY, P_PAD };

static const char preface[XLB_H2_PREFACE_LEN + 1] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* One feed call's callbacks, passed down instead of three arguments. */
struct run {
    struct xlb_h2_scanner *s;
    const struct xlb_h2_scan_events *ev;
    void *user;
};

void xlb_h2_scan_init(struct xlb_h2_scanner *s, bool expect_preface, uint8_t *block_buf,
                      uint32_t block_cap)
{
    memset(s, 0, sizeof(*s));
    s->max_frame_size = XLB_H2_DEFAULT_MAX_FRAME_SIZE;
    s->settings_header_table_size = UINT32_MAX;
    s->settings_max_frame_size = UINT32_MAX;
    s->state = expect_preface ? S_PREFACE : S_HEADER;
    s->block_buf = block_buf;
    s->block_cap = block_cap;
}

uint64_t xlb_h2_scan_offset(const struct xlb_h2_scanner *s)
{
    return s->offset;
}

const char *xlb_h2_scan_error_name(int err)
{
    switch (err) {
    case 0:
        return "ok";
    case XLB_H2_E_PREFACE:
        return "bad preface";
    case XLB_H2_E_FRAME_SIZE:
        return "frame too large";
    case XLB_H2_E_BLOCK_TOO_BIG:
        return "header block too big";
    case XLB_H2_E_CONTINUATION:
        return "bad CONTINUATION sequence";
    case XLB_H2_E_PADDING:
        return "bad padding";
    case XLB_H2_E_STREAM_ID:
        return "bad stream id";
    default:
        return "callback error";
    }
}

static uint32_t be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool is_block_frame(uint8_t type)
{
    return type == XLB_H2_HEADERS || type == XLB_H2_PUSH_PROMISE || type == XLB_H2_CONTINUATION;
}

/* Control frames whose payload frame_end hands over. */
static bool keeps_payload(uint8_t type)
{
    return type == XLB_H2_SETTINGS || type == XLB_H2_PING || type == XLB_H2_RST_STREAM ||
           type == XLB_H2_GOAWAY || type == XLB_H2_WINDOW_UPDATE;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/* The payload offset where padding starts (known once the fixed fields are in). */
static uint32_t body_end(const struct xlb_h2_scanner *s)
{
    return s->frame.length - s->pad_len;
}

/* Frame-header checks, in a fixed order so that one frame always gives the same error. */
static int check_header(const struct xlb_h2_scanner *s, const struct xlb_h2_frame *f)
{
    if (f->length > s->max_frame_size)
        return XLB_H2_E_FRAME_SIZE;
    if (s->in_block ? f->type != XLB_H2_CONTINUATION || f->stream_id != s->block_stream
                    : f->type == XLB_H2_CONTINUATION)
        return XLB_H2_E_CONTINUATION;
    if (is_block_frame(f->type) && f->stream_id == 0)
        return XLB_H2_E_STREAM_ID;
    if ((f->type == XLB_H2_SETTINGS || f->type == XLB_H2_PING) && f->stream_id != 0)
        return XLB_H2_E_STREAM_ID;
    return 0;
}

/* Bytes of fixed fields at the payload's start; sets *padded. */
static uint8_t fixed_fields(const struct xlb_h2_frame *f, bool *padded)
{
    bool can_pad =
        f->type == XLB_H2_DATA || f->type == XLB_H2_HEADERS || f->type == XLB_H2_PUSH_PROMISE;
    *padded = can_pad && (f->flags & XLB_H2_FLAG_PADDED);
    uint8_t n = *padded ? 1 : 0;
    if (f->type == XLB_H2_HEADERS && (f->flags & XLB_H2_FLAG_PRIORITY))
        n += 5;
    if (f->type == XLB_H2_PUSH_PROMISE)
        n += 4;
    return n;
}

static void begin_block(struct xlb_h2_scanner *s)
{
    const struct xlb_h2_frame *f = &s->frame;
    s->in_block = true;
    s->block_len = 0;
    s->block_stream = f->stream_id;
    s->block_type = f->type;
    s->block_end_stream = f->type == XLB_H2_HEADERS && (f->flags & XLB_H2_FLAG_END_STREAM);
    s->promised_id = 0;
}

/* The 9-byte header is in: check it, announce the frame, set up its payload phases. */
static int start_frame(struct run *r)
{
    struct xlb_h2_scanner *s = r->s;
    struct xlb_h2_frame *f = &s->frame;
    f->length = be24(s->hdr);
    f->type = s->hdr[3];
    f->flags = s->hdr[4];
    f->stream_id = be32(s->hdr + 5) & 0x7fffffffu;
    int rc = check_header(s, f);
    if (rc != 0)
        return rc;
    bool padded;
    s->fixed_len = fixed_fields(f, &padded);
    if (padded && f->length == 0)
        return XLB_H2_E_PADDING;
    if (s->fixed_len > f->length)
        return XLB_H2_E_FRAME_SIZE;
    s->done = 0;
    s->pad_len = 0;
    s->past_body = false;
    if (f->type == XLB_H2_HEADERS || f->type == XLB_H2_PUSH_PROMISE)
        begin_block(s);
    if (f->type == XLB_H2_SETTINGS) {
        s->pending_table_size = s->settings_header_table_size;
        s->pending_max_frame_size = s->settings_max_frame_size;
    }
    s->state = S_PAYLOAD;
    return r->ev->frame_start ? r->ev->frame_start(r->user, f) : 0;
}

/* The fixed fields are in: padding and the header block's room can be checked now. */
static int fixed_done(struct xlb_h2_scanner *s)
{
    const struct xlb_h2_frame *f = &s->frame;
    bool padded;
    fixed_fields(f, &padded);
    if (padded) {
        s->pad_len = s->fixed[0];
        if (s->pad_len > f->length - s->fixed_len)
            return XLB_H2_E_PADDING;
    }
    if (f->type == XLB_H2_PUSH_PROMISE)
        s->promised_id = be32(s->fixed + (padded ? 1 : 0)) & 0x7fffffffu;
    if (is_block_frame(f->type) &&
        (uint64_t)s->block_len + (body_end(s) - s->fixed_len) > s->block_cap)
        return XLB_H2_E_BLOCK_TOO_BIG;
    return 0;
}

/* The body is in: an END_HEADERS frame completes its header block here, before its padding. */
static int body_done(struct run *r)
{
    struct xlb_h2_scanner *s = r->s;
    const struct xlb_h2_frame *f = &s->frame;
    if (!is_block_frame(f->type) || !(f->flags & XLB_H2_FLAG_END_HEADERS))
        return 0;
    s->in_block = false;
    if (r->ev->header_block == NULL)
        return 0;
    uint64_t append_at = f->offset + XLB_H2_FRAME_HEADER_LEN + body_end(s);
    return r->ev->header_block(r->user, s->block_stream, s->block_end_stream, s->block_buf,
                               s->block_len, append_at, f);
}

static int frame_done(struct run *r)
{
    struct xlb_h2_scanner *s = r->s;
    const struct xlb_h2_frame *f = &s->frame;
    s->state = S_HEADER;
    s->have = 0;
    if (f->type == XLB_H2_SETTINGS && !(f->flags & XLB_H2_FLAG_END_STREAM)) {
        s->settings_header_table_size = s->pending_table_size;
        s->settings_max_frame_size = s->pending_max_frame_size;
    }
    if (r->ev->frame_end == NULL)
        return 0;
    if (keeps_payload(f->type))
        return r->ev->frame_end(r->user, f, s->small, min_u32(f->length, XLB_H2_SMALL_PAYLOAD));
    return r->ev->frame_end(r->user, f, NULL, 0);
}

/* Run every phase end the consumed bytes have reached (several for empty phases). */
static int advance(struct run *r, enum phase *phase)
{
    struct xlb_h2_scanner *s = r->s;
    int rc;
    if (*phase == P_FIXED) {
        if (s->done < s->fixed_len)
            return 0;
        if ((rc = fixed_done(s)) != 0)
            return rc;
        *phase = P_BODY;
    }
    if (*phase == P_BODY) {
        if (s->done < body_end(s))
            return 0;
        *phase = P_PAD;
        if (!s->past_body) {
            s->past_body = true;
            if ((rc = body_done(r)) != 0)
                return rc;
        }
    }
    if (s->done < s->frame.length)
        return 0;
    return frame_done(r);
}

/* Which phase the consumed bytes are in. */
static enum phase phase_of(const struct xlb_h2_scanner *s)
{
    if (s->done < s->fixed_len)
        return P_FIXED;
    if (!s->past_body)
        return P_BODY;
    return P_PAD;
}

/* SETTINGS entries are 6 bytes (id, value); only the two the caller needs are kept. */
static void settings_byte(struct xlb_h2_scanner *s, uint32_t pos, uint8_t byte)
{
    s->setting[pos % 6] = byte;
    if (pos % 6 != 5)
        return;
    uint16_t id = (uint16_t)(s->setting[0] << 8 | s->setting[1]);
    uint32_t value = be32(s->setting + 2);
    if (id == XLB_H2_SETTINGS_HEADER_TABLE_SIZE)
        s->pending_table_size = value;
    else if (id == XLB_H2_SETTINGS_MAX_FRAME_SIZE)
        s->pending_max_frame_size = value;
}

/* Body bytes at body position pos: header-block fragment, kept control payload, or skipped. */
static void body_bytes(struct xlb_h2_scanner *s, const uint8_t *p, uint32_t n, uint32_t pos)
{
    uint8_t type = s->frame.type;
    if (is_block_frame(type)) {
        memcpy(s->block_buf + s->block_len, p, n);
        s->block_len += n;
        return;
    }
    if (!keeps_payload(type))
        return;
    if (pos < XLB_H2_SMALL_PAYLOAD)
        memcpy(s->small + pos, p, min_u32(n, XLB_H2_SMALL_PAYLOAD - pos));
    if (type == XLB_H2_SETTINGS)
        for (uint32_t i = 0; i < n; i++)
            settings_byte(s, pos + i, p[i]);
}

static int eat_payload(struct run *r, const uint8_t *p, uint32_t n, uint32_t *used)
{
    struct xlb_h2_scanner *s = r->s;
    enum phase phase = phase_of(s);
    uint32_t take;
    if (phase == P_FIXED) {
        take = min_u32(n, s->fixed_len - s->done);
        memcpy(s->fixed + s->done, p, take);
    } else if (phase == P_BODY) {
        take = min_u32(n, body_end(s) - s->done);
        body_bytes(s, p, take, s->done - s->fixed_len);
    } else {
        take = min_u32(n, s->frame.length - s->done);
    }
    s->done += take;
    s->offset += take;
    *used = take;
    return advance(r, &phase);
}

static int eat_header(struct run *r, const uint8_t *p, uint32_t n, uint32_t *used)
{
    struct xlb_h2_scanner *s = r->s;
    if (s->have == 0)
        s->frame.offset = s->offset;
    uint32_t take = min_u32(n, XLB_H2_FRAME_HEADER_LEN - s->have);
    memcpy(s->hdr + s->have, p, take);
    s->have += (uint8_t)take;
    s->offset += take;
    *used = take;
    if (s->have < XLB_H2_FRAME_HEADER_LEN)
        return 0;
    int rc = start_frame(r);
    if (rc != 0)
        return rc;
    enum phase phase = P_FIXED;
    return advance(r, &phase);
}

static int eat_preface(struct xlb_h2_scanner *s, const uint8_t *p, uint32_t n, uint32_t *used)
{
    uint32_t take = min_u32(n, XLB_H2_PREFACE_LEN - s->have);
    for (uint32_t i = 0; i < take; i++) {
        if (p[i] != (uint8_t)preface[s->have + i]) {
            s->offset += i + 1;
            *used = i + 1;
            return XLB_H2_E_PREFACE;
        }
    }
    s->have += (uint8_t)take;
    s->offset += take;
    *used = take;
    if (s->have == XLB_H2_PREFACE_LEN) {
        s->state = S_HEADER;
        s->have = 0;
    }
    return 0;
}

int xlb_h2_scan_feed(struct xlb_h2_scanner *s, const uint8_t *data, uint32_t len,
                     const struct xlb_h2_scan_events *ev, void *user)
{
    static const struct xlb_h2_scan_events none;
    struct run r = {s, ev ? ev : &none, user};
    uint32_t i = 0;
    int rc = s->error;
    while (rc == 0 && i < len) {
        uint32_t used = 0;
        if (s->state == S_PREFACE)
            rc = eat_preface(s, data + i, len - i, &used);
        else if (s->state == S_HEADER)
            rc = eat_header(&r, data + i, len - i, &used);
        else
            rc = eat_payload(&r, data + i, len - i, &used);
        i += used;
    }
    if (rc != 0) {
        s->error = rc;
        s->state = S_DEAD;
    }
    return rc;
}
