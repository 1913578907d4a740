/*
 * gRPC's message framing on an HTTP/2 stream: each message is a 5-byte prefix (a compression
 * flag and a 32-bit big-endian length) followed by the message. The reader reassembles
 * messages from DATA chunks of any size and refuses messages over a size cap, so a peer
 * cannot make xlb buffer without bound.
 */
#ifndef XLB_GRPC_FRAME_H
#define XLB_GRPC_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XLB_GRPC_PREFIX_LEN 5
/*
 * The cap on a received message, whatever the bootstrap says: 16 MiB, four times gRPC's
 * default receive limit, because one state-of-the-world CDS or EDS response carries every
 * resource of its type (about 2.5 MiB for 1,000 clusters of 100 endpoints). A larger message
 * ends the call with INTERNAL; the ADS client then reconnects.
 */
#define XLB_GRPC_DEFAULT_MAX_MSG (16u * 1024 * 1024)

enum xlb_grpc_frame_error {
    XLB_GRPC_FRAME_OK = 0,
    XLB_GRPC_FRAME_TOO_LARGE,  /* a message's length exceeds the cap */
    XLB_GRPC_FRAME_COMPRESSED, /* compressed messages: xlb never asks for compression */
    XLB_GRPC_FRAME_NO_MEMORY,
};

typedef void (*xlb_grpc_message_cb)(const uint8_t *msg, size_t len, void *arg);

struct xlb_grpc_reader {
    size_t max_message;
    uint8_t prefix[XLB_GRPC_PREFIX_LEN];
    size_t prefix_have;
    uint8_t *msg; /* the message being filled, once its prefix is complete */
    size_t msg_len, msg_have;
};

void xlb_grpc_reader_init(struct xlb_grpc_reader *r, size_t max_message);
void xlb_grpc_reader_free(struct xlb_grpc_reader *r);

/* Feed a chunk; calls cb for each complete message. After an error the reader stays failed. */
enum xlb_grpc_frame_error xlb_grpc_reader_feed(struct xlb_grpc_reader *r, const uint8_t *data,
                                               size_t len, xlb_grpc_message_cb cb, void *arg);

/* True when no partial message is buffered (a stream may end only here). */
int xlb_grpc_reader_idle(const struct xlb_grpc_reader *r);

/* When the stream ends while a message is partly received: true, with what was cut off in
 * why (e.g. "truncated message: 10 of 100 bytes received"); false when the reader is idle. */
bool xlb_grpc_reader_truncation(const struct xlb_grpc_reader *r, char *why, size_t len);

/* Write the prefix for a message of len bytes. */
void xlb_grpc_frame_prefix(uint8_t out[XLB_GRPC_PREFIX_LEN], uint32_t len);

const char *xlb_grpc_frame_error_text(enum xlb_grpc_frame_error e);

#endif
