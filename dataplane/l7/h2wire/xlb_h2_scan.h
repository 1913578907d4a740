/*
 * An incremental HTTP/2 frame scanner over one direction of a TCP connection (RFC 9113 §4, §6).
 *
 * L7 mode splices a client to a backend and keeps watching both byte streams for the
 * connection's life: it needs every frame's boundaries, the payload of a few control frames and
 * each complete header block, and nothing else. Bytes arrive in TCP segments cut anywhere, so the
 * scanner keeps what it must across calls (a frame header, a short control payload, header-block
 * fragments into the caller's buffer) and skips everything else (DATA) without copying.
 *
 * Feeding a stream in any split produces exactly the same callbacks, in the same order, as
 * feeding it whole; an error is found at the same byte whatever the split.
 */
#ifndef XLB_H2_SCAN_H
#define XLB_H2_SCAN_H

#include <stdbool.h>
#include <stdint.h>

enum xlb_h2_frame_type {
    XLB_H2_DATA = 0,
    XLB_H2_HEADERS = 1,
    XLB_H2_PRIORITY = 2,
    XLB_H2_RST_STREAM = 3,
    XLB_H2_SETTINGS = 4,
    XLB_H2_PUSH_PROMISE = 5,
    XLB_H2_PING = 6,
    XLB_H2_GOAWAY = 7,
    XLB_H2_WINDOW_UPDATE = 8,
    XLB_H2_CONTINUATION = 9
};

#define XLB_H2_FLAG_END_STREAM  0x1 /* also ACK for SETTINGS/PING */
#define XLB_H2_FLAG_END_HEADERS 0x4
#define XLB_H2_FLAG_PADDED      0x8
#define XLB_H2_FLAG_PRIORITY    0x20

#define XLB_H2_PREFACE_LEN            24
#define XLB_H2_FRAME_HEADER_LEN       9
#define XLB_H2_SMALL_PAYLOAD          64 /* control frames whose payload is kept for frame_end */
#define XLB_H2_DEFAULT_MAX_FRAME_SIZE 16384u

/* SETTINGS identifiers the scanner keeps track of (RFC 9113 §6.5.2). */
#define XLB_H2_SETTINGS_HEADER_TABLE_SIZE 0x1
#define XLB_H2_SETTINGS_MAX_FRAME_SIZE    0x5

struct xlb_h2_frame {
    uint32_t length; /* payload */
    uint8_t type, flags;
    uint32_t stream_id;
    uint64_t offset; /* stream offset of the frame's 9-byte header: every byte fed counts,
                        preface included */
};

/* Any callback may be NULL; a negative return stops the scan and is returned by feed. */
struct xlb_h2_scan_events {
    /* The frame's 9-byte header was fed (and passed the checks below). */
    int (*frame_start)(void *user, const struct xlb_h2_frame *f);
    /* The frame's last byte was fed; payload given when type is SETTINGS, PING, RST_STREAM,
     * GOAWAY (first XLB_H2_SMALL_PAYLOAD bytes) or WINDOW_UPDATE, else NULL/0. */
    int (*frame_end)(void *user, const struct xlb_h2_frame *f, const uint8_t *payload,
                     uint32_t len);
    /* A complete header block: HEADERS or PUSH_PROMISE plus its CONTINUATIONs, with padding,
     * pad length, priority fields (and PUSH_PROMISE's promised id) removed. Called as soon as the
     * block's last fragment byte is fed: before the END_HEADERS frame's padding, if any, and
     * before that frame's frame_end. stream_id: the frame's stream (for PUSH_PROMISE the
     * associated stream; see block_type and promised_id in the scanner). end_stream:
     * END_STREAM of the HEADERS frame. append_at: stream offset just after the last fragment
     * byte of the END_HEADERS frame (before its padding), where xlb would insert a field;
     * last_frame: that END_HEADERS frame (its offset/length, so the caller can patch its
     * length). The block stays valid until the next feed. */
    int (*header_block)(void *user, uint32_t stream_id, bool end_stream, const uint8_t *block,
                        uint32_t len, uint64_t append_at, const struct xlb_h2_frame *last_frame);
};

enum xlb_h2_scan_error {
    XLB_H2_E_PREFACE = -1001,
    /* Longer than max_frame_size, or too short for its fixed fields (a HEADERS with PRIORITY
     * under 5 bytes, a PUSH_PROMISE under 4). */
    XLB_H2_E_FRAME_SIZE = -1002,
    XLB_H2_E_BLOCK_TOO_BIG = -1003, /* a header block longer than block_cap */
    /* A frame other than CONTINUATION of the same stream inside a header block, or
     * CONTINUATION outside one. */
    XLB_H2_E_CONTINUATION = -1004,
    /* DATA, HEADERS or PUSH_PROMISE with PADDED: no room for the pad length byte, or a pad
     * length greater than what is left after it and the fixed fields (RFC 9113 §6.1: padding of
     * the payload's length or more). */
    XLB_H2_E_PADDING = -1005,
    /* HEADERS/CONTINUATION/PUSH_PROMISE on stream 0, or SETTINGS/PING on a non-zero stream. */
    XLB_H2_E_STREAM_ID = -1006,
};

/* Fixed size, no pointers except the caller's block buffer. Fields marked "read" may be read by
 * the caller (during callbacks too); only max_frame_size may be written. */
struct xlb_h2_scanner {
    /* read/write: the largest payload accepted; 16384 unless the receiving peer's SETTINGS
     * raised it (see settings_max_frame_size of the other direction's scanner). */
    uint32_t max_frame_size;
    /* read: the latest SETTINGS_HEADER_TABLE_SIZE and SETTINGS_MAX_FRAME_SIZE this direction
     * announced, taken when their SETTINGS frame ends (the whole payload is seen, not only the
     * first XLB_H2_SMALL_PAYLOAD bytes); UINT32_MAX when never announced. */
    uint32_t settings_header_table_size;
    uint32_t settings_max_frame_size;
    /* read, during header_block: HEADERS or PUSH_PROMISE, and the latter's promised stream. */
    uint8_t block_type;
    uint32_t promised_id;

    /* Private from here on. */
    uint64_t offset; /* bytes consumed */
    int error;       /* sticky: once non-zero, every feed returns it */
    uint8_t state;   /* enum in xlb_h2_scan.c */
    uint8_t have;    /* bytes of the preface or frame header read so far */
    uint8_t hdr[XLB_H2_FRAME_HEADER_LEN];
    struct xlb_h2_frame frame; /* the current frame */
    uint32_t done;             /* payload bytes of the current frame consumed */
    uint8_t fixed_len;         /* pad length + priority + promised id bytes at its start */
    uint8_t fixed[10];
    uint8_t pad_len;
    bool past_body; /* the current frame's body is over (its end was handled) */
    uint8_t small[XLB_H2_SMALL_PAYLOAD];
    uint8_t setting[6]; /* the SETTINGS entry being read */
    uint32_t pending_table_size, pending_max_frame_size;
    bool in_block; /* between a HEADERS/PUSH_PROMISE and its END_HEADERS */
    bool block_end_stream;
    uint32_t block_stream;
    uint8_t *block_buf;
    uint32_t block_cap, block_len;
};

/* expect_preface: the client direction starts with the 24-byte preface
 * "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n". block_buf/block_cap: where header blocks are assembled
 * (the caller's memory). */
void xlb_h2_scan_init(struct xlb_h2_scanner *s, bool expect_preface, uint8_t *block_buf,
                      uint32_t block_cap);
/* 0, an error above, or a callback's negative return. Any non-zero return is sticky: every
 * later feed returns it again without reading (an HTTP/2 connection error ends the connection). */
int xlb_h2_scan_feed(struct xlb_h2_scanner *s, const uint8_t *data, uint32_t len,
                     const struct xlb_h2_scan_events *ev, void *user);
/* Bytes fed so far (up to and including the byte an error was found at). */
uint64_t xlb_h2_scan_offset(const struct xlb_h2_scanner *s);
/* "bad preface", "frame too large", ...; "callback error" for other negative values. */
const char *xlb_h2_scan_error_name(int err);

#endif
