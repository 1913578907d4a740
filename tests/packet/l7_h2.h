/*
 * HTTP/2 bytes for the L7 packet tests: frames, the client's preface, request and response
 * header blocks from nghttp2's deflater (as gRPC peers make them: fields go into the dynamic
 * table), and the decoding of what xlb sends with nghttp2's inflater.
 */
#ifndef XLB_L7_H2_H
#define XLB_L7_H2_H

#include <stdbool.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#define H2_DATA          0x0
#define H2_HEADERS       0x1
#define H2_RST_STREAM    0x3
#define H2_SETTINGS      0x4
#define H2_PING          0x6
#define H2_GOAWAY        0x7
#define H2_WINDOW_UPDATE 0x8
#define H2_END_STREAM    0x1
#define H2_ACK           0x1
#define H2_END_HEADERS   0x4

#define H2_PREFACE     "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24u

/* A growing byte string. */
struct h2_bytes {
    uint8_t b[4096];
    uint32_t len;
};

void h2_append(struct h2_bytes *out, const void *data, uint32_t len);
/* One frame appended; returns the offset of its header in out. */
uint32_t h2_frame(struct h2_bytes *out, uint8_t type, uint8_t flags, uint32_t stream,
                  const void *payload, uint32_t len);

/* The client's connection preface and SETTINGS (max concurrent streams 100, initial window
 * 1 MiB): 24 + 21 bytes. */
void h2_client_hello(struct h2_bytes *out);
/* The backend's SETTINGS (max concurrent streams 100): 15 bytes. */
void h2_backend_settings(struct h2_bytes *out);
void h2_settings_ack(struct h2_bytes *out);
void h2_ping(struct h2_bytes *out, const uint8_t opaque[8]);

/* Header blocks, as a gRPC peer's deflater writes them (the deflater keeps its table). */
struct h2_peer {
    nghttp2_hd_deflater *deflater;
};
void h2_peer_init(struct h2_peer *p);
void h2_peer_fini(struct h2_peer *p);
/* POST `path` with gRPC's fields and, when not NULL, a "cookie" field. */
void h2_request_block(struct h2_peer *p, struct h2_bytes *out, const char *path,
                      const char *cookie);
/* :status 200, content-type application/grpc. */
void h2_response_block(struct h2_peer *p, struct h2_bytes *out);
/* grpc-status `status`. */
void h2_trailers_block(struct h2_peer *p, struct h2_bytes *out, const char *status);
/* A HEADERS frame (END_HEADERS, and END_STREAM if asked) carrying a block. */
uint32_t h2_headers(struct h2_bytes *out, uint32_t stream, bool end_stream,
                    const struct h2_bytes *block);
/* A gRPC message of n bytes 'x' in a DATA frame. */
uint32_t h2_message(struct h2_bytes *out, uint32_t stream, bool end_stream, uint32_t n);

/* Decoded header fields. */
struct h2_field {
    char name[64];
    char value[512];
};
struct h2_fields {
    unsigned n;
    struct h2_field f[24];
};
/* Decode a whole header block with `inflater`; the test fails on an HPACK error. */
void h2_decode(nghttp2_hd_inflater *inflater, const uint8_t *block, uint32_t len,
               struct h2_fields *out);
/* The value of field `name` (the last one when repeated), or NULL. */
const char *h2_field(const struct h2_fields *fields, const char *name);

/* A frame header read back. */
struct h2_frame_header {
    uint32_t length;
    uint8_t type, flags;
    uint32_t stream;
};
struct h2_frame_header h2_frame_at(const uint8_t *p);

#endif
