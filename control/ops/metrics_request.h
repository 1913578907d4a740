/*
 * The metrics listener's HTTP request framing: what a scraper's bytes ask for, read from the
 * bytes alone (no socket), so the listener and its fuzz target (tests/fuzz/metrics) run the
 * same code. One request per connection: "GET /metrics HTTP/1.x", header lines, a blank line;
 * headers are not read and a body is not expected.
 */
#ifndef XLB_METRICS_REQUEST_H
#define XLB_METRICS_REQUEST_H

#include <stddef.h>

enum xlb_metrics_request {
    XLB_METRICS_REQUEST_INCOMPLETE, /* no blank line yet: wait for more */
    XLB_METRICS_REQUEST_BAD,        /* 400: the request line is not method SP path SP HTTP/1.x */
    XLB_METRICS_REQUEST_NOT_GET,    /* 405 */
    XLB_METRICS_REQUEST_NOT_FOUND,  /* 404: a path other than /metrics */
    XLB_METRICS_REQUEST_METRICS,    /* 200 with the exposition */
};

/* Read len bytes (not necessarily NUL-terminated; a NUL in them is a bad request). */
enum xlb_metrics_request xlb_metrics_request_read(const char *data, size_t len);

#endif
