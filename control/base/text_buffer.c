#include "text_buffer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static bool reserve(struct xlb_text *text, size_t more)
{
    if (text->len + more + 1 <= text->cap)
        return true;
    size_t cap = text->cap ? text->cap : 4096;
    while (cap < text->len + more + 1)
        cap *= 2;
    char *grown = realloc(text->data, cap);
    if (grown == NULL) {
        text->failed = true;
        return false;
    }
    text->data = grown;
    text->cap = cap;
    return true;
}

void xlb_text_printf(struct xlb_text *text, const char *fmt, ...)
{
    if (text->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0 || !reserve(text, (size_t)need))
        return;
    va_start(ap, fmt);
    vsnprintf(text->data + text->len, (size_t)need + 1, fmt, ap);
    va_end(ap);
    text->len += (size_t)need;
}

void xlb_text_free(struct xlb_text *text)
{
    free(text->data);
    *text = (struct xlb_text){0};
}
