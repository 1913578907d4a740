/*
 * bench_l7's HTTP/2 bytes, made once with nghttp2's HPACK deflater: the client's first segment,
 * requests, responses and trailers, DATA frames (bench_l7_h2.c).
 */
#ifndef BENCH_L7_H2_H
#define BENCH_L7_H2_H

#include <stdbool.h>
#include <stdint.h>

#define FRAME_MAX    512
#define DATA_PAYLOAD 64 /* TCP payload of a DATA workload segment: a 9-byte frame header + 55 */

struct bytes {
    uint8_t b[FRAME_MAX];
    uint32_t len;
};

struct bench_h2 {
    /* HPACK blocks, in the order a connection sends them: requests; the response of stream 1,
     * then the first unary call's response and trailers, then every later call's. */
    struct bytes req_first, req_next;
    struct bytes resp_first, resp_second, resp_next;
    struct bytes trailers_first, trailers_next;
    struct bytes hello;         /* the client's first segment (step 3) */
    struct bytes settings_ack;  /* a SETTINGS ACK frame */
    struct bytes backend_hello; /* the backend's first data: SETTINGS, SETTINGS ACK, response */
    struct bytes data;          /* one DATA frame on stream 1: DATA_PAYLOAD bytes */
    uint8_t message[5 + 16];    /* a gRPC message: 16 bytes */
};

extern struct bench_h2 h2;

/* Make every byte string above (exits on a failure). */
void h2_make(void);
/* One unary call's request (HEADERS + DATA) on `stream`, and its response; bytes written. */
uint32_t rpc_request(uint8_t *out, uint32_t stream);
uint32_t rpc_response(uint8_t *out, uint32_t stream, bool first_call);

#endif
