/*
 * Fuzz target for the metrics listener's HTTP request framing: any bytes as what a scraper
 * sent so far, in an exactly sized buffer (a read past it is a crash). The exposition is
 * served only for "GET /metrics HTTP/1.x" at the very start; a request is complete only
 * once its blank line is there, and then stays complete, with the same answer, whatever
 * follows; a request cut before its blank line is never answered.
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_request.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static enum xlb_metrics_request read_copy(const uint8_t *data, size_t size)
{
    char *copy = malloc(size ? size : 1);
    CHECK(copy != NULL);
    memcpy(copy, data, size);
    enum xlb_metrics_request r = xlb_metrics_request_read(copy, size);
    free(copy);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum xlb_metrics_request r = read_copy(data, size);
    const uint8_t *end = memmem(data, size, "\r\n\r\n", 4);
    CHECK((r == XLB_METRICS_REQUEST_INCOMPLETE) == (end == NULL));
    if (r == XLB_METRICS_REQUEST_METRICS)
        CHECK(size >= 23 && (memcmp(data, "GET /metrics HTTP/1.1\r\n", 23) == 0 ||
                             memcmp(data, "GET /metrics HTTP/1.0\r\n", 23) == 0));
    if (end != NULL) {
        size_t head = (size_t)(end - data) + 4;
        /* What came after the blank line does not change the answer... */
        CHECK(read_copy(data, head) == r);
        /* ...and a request without its blank line waits. */
        CHECK(read_copy(data, head - 1) == XLB_METRICS_REQUEST_INCOMPLETE);
    }
    return 0;
}
