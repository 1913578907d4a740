/* Fuzz target: any bytes as the DATA of a gRPC call, fed in chunks the input itself chooses.
 * The reader must reassemble or refuse, never crash, over-read or leak. */
#include <stdint.h>
#include <stdlib.h>

#include "grpc_frame.h"

static void ignore(const uint8_t *msg, size_t len, void *arg)
{
    (void)msg;
    (*(size_t *)arg) += len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xlb_grpc_reader reader;
    size_t total = 0;
    /* A small cap so that the size check is reached often. */
    xlb_grpc_reader_init(&reader, 4096);
    size_t at = 0;
    while (at < size) {
        size_t chunk = 1 + data[at] % 64; /* chunk sizes come from the input */
        if (chunk > size - at)
            chunk = size - at;
        if (xlb_grpc_reader_feed(&reader, data + at, chunk, ignore, &total) != XLB_GRPC_FRAME_OK)
            break;
        at += chunk;
    }
    xlb_grpc_reader_free(&reader);
    return 0;
}
