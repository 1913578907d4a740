#define _GNU_SOURCE /* memmem */
#include "metrics_request.h"

#include <stdbool.h>
#include <string.h>

#define HEADER_END     "\r\n\r\n"
#define HEADER_END_LEN 4

static bool is_token(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] <= ' ' || s[i] == 0x7f)
            return false;
    return len > 0;
}

/* "HTTP/1.0" or "HTTP/1.1": a scraper speaks nothing else to this listener. */
static bool is_http1(const char *s, size_t len)
{
    return len == 8 && memcmp(s, "HTTP/1.", 7) == 0 && (s[7] == '0' || s[7] == '1');
}

enum xlb_metrics_request xlb_metrics_request_read(const char *data, size_t len)
{
    const char *end = memmem(data, len, HEADER_END, HEADER_END_LEN);
    if (end == NULL)
        return XLB_METRICS_REQUEST_INCOMPLETE;
    /* Everything up to the blank line is text: a NUL there would cut what C strings see. */
    if (memchr(data, '\0', (size_t)(end - data)) != NULL)
        return XLB_METRICS_REQUEST_BAD;
    const char *line_end = memmem(data, (size_t)(end - data) + 2, "\r\n", 2);
    size_t line_len = (size_t)(line_end - data);
    const char *sp1 = memchr(data, ' ', line_len);
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
    if (sp2 == NULL)
        return XLB_METRICS_REQUEST_BAD;
    const char *method = data, *path = sp1 + 1, *version = sp2 + 1;
    size_t method_len = (size_t)(sp1 - method), path_len = (size_t)(sp2 - path),
           version_len = (size_t)(line_end - version);
    if (!is_token(method, method_len) || !is_token(path, path_len) ||
        !is_http1(version, version_len))
        return XLB_METRICS_REQUEST_BAD;
    if (method_len != 3 || memcmp(method, "GET", 3) != 0)
        return XLB_METRICS_REQUEST_NOT_GET;
    if (path_len != 8 || memcmp(path, "/metrics", 8) != 0)
        return XLB_METRICS_REQUEST_NOT_FOUND;
    return XLB_METRICS_REQUEST_METRICS;
}
