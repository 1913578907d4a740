/*
 * Helpers shared by the h2wire tests: real HTTP/2 bytes from nghttp2's own client and server
 * sessions, and a recorder of the scanner's callbacks (so two scans can be compared).
 */
#ifndef H2_TEST_H
#define H2_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <nghttp2/nghttp2.h>

#include "xlb_h2_scan.h"
#include "xlb_const.h"

/* A growable byte buffer (tests may allocate). */
struct h2t_bytes {
    uint8_t *data;
    size_t len, cap;
};

void h2t_append(struct h2t_bytes *b, const void *data, size_t len);
void h2t_free(struct h2t_bytes *b);

#define H2T_NV(name, value)                                                                        \
    {                                                                                              \
        XLB_UNCONST(name), XLB_UNCONST(value), sizeof(name) - 1, sizeof(value) - 1,                \
            NGHTTP2_NV_FLAG_NONE                                                                   \
    }

/* Client sessions: padding makes every frame that may be padded carry `pad` bytes of padding. */
nghttp2_session *h2t_client_new(size_t pad);
nghttp2_session *h2t_server_new(void);
/* Everything the session has to send, appended to out. */
void h2t_drain(nghttp2_session *s, struct h2t_bytes *out);
/* A request on a new stream (returned), END_STREAM; priority: weight 42 on stream 0 when set. */
int32_t h2t_request(nghttp2_session *s, const nghttp2_nv *nva, size_t n, bool priority);

/* Feed bytes to a session (a peer reading them); asserts it takes them all. */
void h2t_recv(nghttp2_session *s, const uint8_t *data, size_t len);

/* Frame header bytes. */
void h2t_frame(struct h2t_bytes *b, uint32_t length, uint8_t type, uint8_t flags, uint32_t stream);

/* What the scanner reported, as text lines, plus copies of the header blocks. */
#define H2T_MAX_BLOCKS 8
struct h2t_log {
    char text[1 << 16];
    size_t len;
    uint32_t n_blocks;
    uint8_t *blocks[H2T_MAX_BLOCKS];
    uint32_t block_len[H2T_MAX_BLOCKS];
    uint64_t append_at[H2T_MAX_BLOCKS];
    struct xlb_h2_frame last_frame[H2T_MAX_BLOCKS];
    uint32_t block_stream[H2T_MAX_BLOCKS];
    bool block_end_stream[H2T_MAX_BLOCKS];
    int stop_after; /* return -1 from the nth callback (1-based); 0: never */
    int calls;
};

extern const struct xlb_h2_scan_events h2t_log_events;
void h2t_log_reset(struct h2t_log *log);

/* Scan `data` in pieces cut at the given points (ascending, within len) into log; returns the
 * first non-zero feed result, or 0. */
int h2t_scan_split(const uint8_t *data, size_t len, bool preface, const size_t *cuts, size_t n_cuts,
                   uint8_t *block_buf, uint32_t block_cap, struct h2t_log *log);

#endif
