/*
 * The reader's JSON path and error lines. The path is one buffer extended on the way down and
 * cut back on the way up, so a deep document costs no allocation per level.
 */
#include "pj_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void pj_error(struct pj_reader *r, const char *fmt, ...)
{
    char message[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    r->n_errors++;
    xlb_errors_add(r->errs, r->path, "%s", message);
}

/* Appends prefix, text and suffix; a path too long to keep ends in "..." instead. */
static size_t path_append(struct pj_reader *r, const char *prefix, const char *text,
                          const char *suffix)
{
    size_t saved = r->path_len;
    size_t room = sizeof(r->path) - saved;
    int n = snprintf(r->path + saved, room, "%s%s%s", prefix, text, suffix);
    if (n < 0 || (size_t)n >= room) {
        memcpy(r->path + sizeof(r->path) - 4, "...", 4);
        r->path_len = sizeof(r->path) - 1;
    } else {
        r->path_len += (size_t)n;
    }
    return saved;
}

size_t pj_path_push_key(struct pj_reader *r, const char *key)
{
    return path_append(r, r->path_len == 0 ? "" : ".", key, "");
}

size_t pj_path_push_index(struct pj_reader *r, unsigned index)
{
    char text[16];
    snprintf(text, sizeof(text), "%u", index);
    return path_append(r, "[", text, "]");
}

size_t pj_path_push_map_key(struct pj_reader *r, const char *key)
{
    return path_append(r, "[\"", key, "\"]");
}

void pj_path_pop(struct pj_reader *r, size_t saved)
{
    r->path_len = saved;
    r->path[saved] = '\0';
}

void pj_describe(const cJSON *json, char *out, size_t size)
{
    if (cJSON_IsString(json)) {
        size_t len = strlen(json->valuestring);
        if (len > 40)
            snprintf(out, size, "\"%.40s...\"", json->valuestring);
        else
            snprintf(out, size, "\"%s\"", json->valuestring);
    } else if (cJSON_IsNumber(json)) {
        snprintf(out, size, "%.17g", json->valuedouble);
    } else if (cJSON_IsBool(json)) {
        snprintf(out, size, "%s", cJSON_IsTrue(json) ? "true" : "false");
    } else if (cJSON_IsArray(json)) {
        snprintf(out, size, "an array");
    } else if (cJSON_IsObject(json)) {
        snprintf(out, size, "an object");
    } else {
        snprintf(out, size, "null");
    }
}
