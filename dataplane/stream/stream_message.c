/*
 * The messages of the calls xlb makes itself on its subchannels (A17's health Watch, A51's
 * load reports): gRPC's length-prefixed framing, read into a buffer of the call's own, one
 * message at a time, whatever DATA frame boundaries the server chose.
 */
#include "stream_conn.h"

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
