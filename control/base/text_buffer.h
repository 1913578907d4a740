/* A growable text buffer for rendered output (metrics exposition). */
#ifndef XLB_TEXT_BUFFER_H
#define XLB_TEXT_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

struct xlb_text {
    char *data; /* NUL-terminated while not failed */
    size_t len, cap;
    bool failed; /* out of memory: later appends do nothing */
};

void xlb_text_printf(struct xlb_text *text, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void xlb_text_free(struct xlb_text *text);

#endif
