/*
 * Frames and HPACK bytes xlb writes itself: its server preface, PING acks, GOAWAY, a field to
 * append to a header block (Set-Cookie), and a trailers-only gRPC response for requests xlb
 * answers itself (no route, no backend).
 */
#ifndef XLB_H2_BUILD_H
#define XLB_H2_BUILD_H

#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "xlb_h2_arena.h"

/* Longest grpc-message value written, after percent-encoding; longer messages are cut. */
#define XLB_H2_GRPC_MESSAGE_MAX 512u
/* The largest header block a trailers-only response may take: the peer's minimum
 * SETTINGS_MAX_FRAME_SIZE, so it always fits one frame. */
#define XLB_H2_BUILD_MAX_BLOCK 16384u

uint32_t xlb_h2_settings_frame(uint8_t out[9]); /* empty SETTINGS: xlb's server preface */
uint32_t xlb_h2_ping_ack(uint8_t out[17], const uint8_t opaque[8]);
uint32_t xlb_h2_goaway(uint8_t out[17], uint32_t last_stream_id, uint32_t error_code);

/*
 * Per-lcore HPACK encoder for what xlb itself writes: nghttp2's deflater with a dynamic table
 * budget of 0, so every field is a literal without indexing (or a static-table index) and
 * neither side's dynamic table ever changes. Such a deflater announces "table size 0" at the
 * start of its first block; init has it do so into a scratch buffer, so no output of this
 * encoder ever carries a dynamic table size update (which would be an error anywhere but at the
 * start of a block, and would shrink the peer's decoder table besides).
 */
struct xlb_hpack_encoder {
    nghttp2_hd_deflater *deflater;
};

/* Arena bytes an encoder needs: measured 2176 after init and 2240 at most while encoding (a
 * table budget of 0 keeps nothing between calls); test_h2_build.c checks it. */
#define XLB_HPACK_ENCODER_ARENA 4096u
/* 0 or -ENOMEM. */
int xlb_hpack_encoder_init(struct xlb_hpack_encoder *e, struct xlb_h2_arena *arena);
void xlb_hpack_encoder_fini(struct xlb_hpack_encoder *e);

/* HPACK bytes of one field (e.g. set-cookie) to append to a header block; 0 when cap is too
 * small (cap must cover nghttp2's bound: the name and value lengths plus a dozen bytes). */
uint32_t xlb_hpack_encode_field(struct xlb_hpack_encoder *e, uint8_t *out, uint32_t cap,
                                const char *name, const char *value, uint32_t value_len);

/*
 * A whole HEADERS frame (END_HEADERS|END_STREAM) with a trailers-only gRPC response: :status 200,
 * content-type application/grpc, grpc-status <status>, grpc-message <message percent-encoded as
 * gRPC's HTTP/2 protocol says; omitted when NULL>, and set-cookie when not NULL. 0 when cap is
 * too small.
 */
uint32_t xlb_h2_trailers_only(struct xlb_hpack_encoder *e, uint8_t *out, uint32_t cap,
                              uint32_t stream_id, unsigned grpc_status, const char *message,
                              const char *set_cookie);

/* gRPC's percent-encoding of a status message: bytes outside 0x20-0x7e and '%' become %XX.
 * Stops before an escape that would not fit; returns the length written (no NUL). */
uint32_t xlb_grpc_percent_encode(char *out, uint32_t cap, const char *message);

#endif
