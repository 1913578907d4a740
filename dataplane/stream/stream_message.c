/*
 * The calls xlb makes itself on its subchannels (A17's health Watch, A51's load reports):
 * their request headers, and their messages in gRPC's length-prefixed framing, read into a
 * buffer of the call's own, one message at a time, whatever DATA frame boundaries the server
 * chose.
 */
#include <string.h>

#include "stream_conn.h"

#define NV(name, value)                                                                            \
    {                                                                                              \
        (uint8_t *)(uintptr_t)(name), (uint8_t *)(uintptr_t)(value), sizeof(name) - 1,             \
            sizeof(value) - 1, NGHTTP2_NV_FLAG_NONE                                                \
    }

int32_t xlb_stream_call_submit(struct xlb_stream_sub *s, const char *path,
                               nghttp2_data_provider *body)
{
    char authority[XLB_HOST_PORT_STRLEN];
    /* The address it connected to (A61: maybe not the endpoint's first). */
    int authority_len =
        xlb_host_port_format(&s->addrs.at[s->address], authority, sizeof(authority));
    nghttp2_nv nva[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        {(uint8_t *)(uintptr_t) ":path", (uint8_t *)(uintptr_t)path, 5, strlen(path),
         NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)(uintptr_t) ":authority", (uint8_t *)authority, 10,
         authority_len > 0 ? (size_t)authority_len : 0, NGHTTP2_NV_FLAG_NONE},
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
    };
    return nghttp2_submit_request(s->side.h2, NULL, nva, RTE_DIM(nva), body, NULL);
}

#define GRPC_FRAME_HEADER 5 /* compressed flag, 4-byte big-endian length */

enum xlb_stream_message_step xlb_stream_message_feed(struct xlb_stream_message *m, uint8_t *buf,
                                                     uint32_t cap, const uint8_t *data, size_t len,
                                                     size_t *at)
{
    while (*at < len) {
        buf[m->len++] = data[(*at)++];
        if (m->len == GRPC_FRAME_HEADER) {
            uint32_t body =
                (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
            if (buf[0] != 0 || body > cap - GRPC_FRAME_HEADER)
                return XLB_STREAM_MESSAGE_BAD; /* compressed, or longer than kept */
            m->need = GRPC_FRAME_HEADER + body;
        }
        if (m->len >= GRPC_FRAME_HEADER && m->len == m->need) {
            m->len = m->need = 0;
            return XLB_STREAM_MESSAGE_DONE;
        }
    }
    return XLB_STREAM_MESSAGE_MORE;
}
