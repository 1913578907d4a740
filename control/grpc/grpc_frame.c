#include "grpc_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xlb_grpc_reader_init(struct xlb_grpc_reader *r, size_t max_message)
{
    memset(r, 0, sizeof(*r));
    r->max_message = max_message;
}

void xlb_grpc_reader_free(struct xlb_grpc_reader *r)
{
    free(r->msg);
    r->msg = NULL;
}

int xlb_grpc_reader_idle(const struct xlb_grpc_reader *r)
{
    return r->prefix_have == 0 && r->msg == NULL;
}

bool xlb_grpc_reader_truncation(const struct xlb_grpc_reader *r, char *why, size_t len)
{
    if (xlb_grpc_reader_idle(r))
        return false;
    if (r->msg == NULL)
        snprintf(why, len, "truncated message: %zu of %d prefix bytes received", r->prefix_have,
                 XLB_GRPC_PREFIX_LEN);
    else
        snprintf(why, len, "truncated message: %zu of %zu bytes received", r->msg_have, r->msg_len);
    return true;
}

void xlb_grpc_frame_prefix(uint8_t out[XLB_GRPC_PREFIX_LEN], uint32_t len)
{
    out[0] = 0;
    out[1] = (uint8_t)(len >> 24);
    out[2] = (uint8_t)(len >> 16);
    out[3] = (uint8_t)(len >> 8);
    out[4] = (uint8_t)len;
}

/* The prefix is complete: check it and get room for the message. */
static enum xlb_grpc_frame_error start_message(struct xlb_grpc_reader *r)
{
    const uint8_t *p = r->prefix;
    uint32_t len = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
    if (p[0] != 0)
        return XLB_GRPC_FRAME_COMPRESSED;
    if (len > r->max_message)
        return XLB_GRPC_FRAME_TOO_LARGE;
    r->msg = malloc(len ? len : 1);
    if (r->msg == NULL)
        return XLB_GRPC_FRAME_NO_MEMORY;
    r->msg_len = len;
    r->msg_have = 0;
    return XLB_GRPC_FRAME_OK;
}

enum xlb_grpc_frame_error xlb_grpc_reader_feed(struct xlb_grpc_reader *r, const uint8_t *data,
                                               size_t len, xlb_grpc_message_cb cb, void *arg)
{
    while (len > 0 || (r->msg != NULL && r->msg_have == r->msg_len)) {
        if (r->msg == NULL) {
            size_t take = XLB_GRPC_PREFIX_LEN - r->prefix_have;
            take = take < len ? take : len;
            memcpy(r->prefix + r->prefix_have, data, take);
            r->prefix_have += take;
            data += take;
            len -= take;
            if (r->prefix_have < XLB_GRPC_PREFIX_LEN)
                break;
            enum xlb_grpc_frame_error e = start_message(r);
            if (e != XLB_GRPC_FRAME_OK)
                return e;
        }
        size_t take = r->msg_len - r->msg_have;
        take = take < len ? take : len;
        memcpy(r->msg + r->msg_have, data, take);
        r->msg_have += take;
        data += take;
        len -= take;
        if (r->msg_have < r->msg_len)
            break;
        uint8_t *msg = r->msg;
        size_t msg_len = r->msg_len;
        r->msg = NULL;
        r->prefix_have = 0;
        cb(msg, msg_len, arg);
        free(msg);
    }
    return XLB_GRPC_FRAME_OK;
}

const char *xlb_grpc_frame_error_text(enum xlb_grpc_frame_error e)
{
    switch (e) {
    case XLB_GRPC_FRAME_OK:
        return "ok";
    case XLB_GRPC_FRAME_TOO_LARGE:
        return "message larger than the limit";
    case XLB_GRPC_FRAME_COMPRESSED:
        return "compressed message (compression was not negotiated)";
    case XLB_GRPC_FRAME_NO_MEMORY:
        return "out of memory";
    }
    return "unknown";
}
