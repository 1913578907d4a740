#include "json_read.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 4, 0))) static void add_error(struct xlb_errors *errs,
                                                            const char *path,
                                                            const char *suggestion, const char *fmt,
                                                            va_list ap)
{
    if (errs->n >= XLB_ERRORS_MAX) {
        errs->dropped++;
        return;
    }
    char message[256];
    vsnprintf(message, sizeof(message), fmt, ap);

    char hint[96] = "";
    if (suggestion != NULL)
        snprintf(hint, sizeof(hint), "; did you mean \"%s\"?", suggestion);
    size_t len = strlen(path) + strlen(message) + strlen(hint) + 3;
    char *line = malloc(len);
    struct xlb_error_detail detail = {
        .path = strdup(path),
        .message = strdup(message),
        .suggestion = suggestion ? strdup(suggestion) : NULL,
    };
    if (line == NULL || detail.path == NULL || detail.message == NULL ||
        (suggestion != NULL && detail.suggestion == NULL)) {
        free(line);
        free(detail.path);
        free(detail.message);
        free(detail.suggestion);
        errs->dropped++;
        return;
    }
    snprintf(line, len, "%s: %s%s", path, message, hint);
    errs->details[errs->n] = detail;
    errs->lines[errs->n++] = line;
}

void xlb_errors_add(struct xlb_errors *errs, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_error(errs, path, NULL, fmt, ap);
    va_end(ap);
}

void xlb_errors_add_suggestion(struct xlb_errors *errs, const char *path, const char *suggestion,
                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_error(errs, path, suggestion, fmt, ap);
    va_end(ap);
}

void xlb_errors_free(struct xlb_errors *errs)
{
    for (unsigned i = 0; i < errs->n; i++) {
        free(errs->lines[i]);
        free(errs->details[i].path);
        free(errs->details[i].message);
        free(errs->details[i].suggestion);
    }
    memset(errs, 0, sizeof(*errs));
}

char *xlb_errors_join(const struct xlb_errors *errs, unsigned from)
{
    size_t len = 1;
    for (unsigned i = from; i < errs->n; i++)
        len += strlen(errs->lines[i]) + 2;
    char *text = malloc(len);
    if (text == NULL)
        return NULL;
    text[0] = '\0';
    for (unsigned i = from; i < errs->n; i++) {
        if (i > from)
            strcat(text, "; ");
        strcat(text, errs->lines[i]);
    }
    return text;
}

/* Whether line is still "path: ..." as added. */
static bool line_as_added(const char *line, const struct xlb_error_detail *detail)
{
    size_t len = strlen(detail->path);
    return strncmp(line, detail->path, len) == 0 && strncmp(line + len, ": ", 2) == 0;
}

static cJSON *error_json(const char *line, const struct xlb_error_detail *detail)
{
    cJSON *item = cJSON_CreateObject();
    if (item == NULL)
        return NULL;
    bool ok;
    if (line_as_added(line, detail)) {
        ok = cJSON_AddStringToObject(item, "path", detail->path) &&
             cJSON_AddStringToObject(item, "message", detail->message) &&
             (detail->suggestion ? cJSON_AddStringToObject(item, "suggestion", detail->suggestion)
                                 : cJSON_AddNullToObject(item, "suggestion"));
    } else {
        const char *colon = strstr(line, ": ");
        size_t path_len = colon ? (size_t)(colon - line) : 0;
        char *path = strndup(line, path_len);
        ok = path != NULL && cJSON_AddStringToObject(item, "path", path) &&
             cJSON_AddStringToObject(item, "message", colon ? colon + 2 : line) &&
             cJSON_AddNullToObject(item, "suggestion");
        free(path);
    }
    if (!ok) {
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

cJSON *xlb_errors_json(const struct xlb_errors *errs)
{
    cJSON *list = cJSON_CreateArray();
    for (unsigned i = 0; list != NULL && i < errs->n; i++) {
        cJSON *item = error_json(errs->lines[i], &errs->details[i]);
        if (item == NULL || !cJSON_AddItemToArray(list, item)) {
            cJSON_Delete(item);
            cJSON_Delete(list);
            return NULL;
        }
    }
    return list;
}

void xlb_path_key(char *out, const char *parent, const char *key)
{
    if (parent[0] == '\0')
        snprintf(out, XLB_PATH_MAX, "%s", key);
    else
        snprintf(out, XLB_PATH_MAX, "%s.%s", parent, key);
}

void xlb_path_index(char *out, const char *parent, unsigned index)
{
    snprintf(out, XLB_PATH_MAX, "%s[%u]", parent, index);
}

/* The member, or NULL (with an error when it is required). */
static const cJSON *member(const cJSON *parent, const char *key, const char *path,
                           enum xlb_presence presence, struct xlb_errors *errs)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(parent, key);
    if ((item == NULL || cJSON_IsNull(item)) && presence == XLB_REQUIRED) {
        char child[XLB_PATH_MAX];
        xlb_path_key(child, path, key);
        xlb_errors_add(errs, child, "is required");
    }
    return cJSON_IsNull(item) ? NULL : item;
}

static const cJSON *typed_member(const cJSON *parent, const char *key, const char *path,
                                 enum xlb_presence presence, struct xlb_errors *errs,
                                 cJSON_bool (*is_type)(const cJSON *), const char *type_name)
{
    const cJSON *item = member(parent, key, path, presence, errs);
    if (item == NULL)
        return NULL;
    if (!is_type(item)) {
        char child[XLB_PATH_MAX];
        xlb_path_key(child, path, key);
        xlb_errors_add(errs, child, "must be %s", type_name);
        return NULL;
    }
    return item;
}

const cJSON *xlb_json_object(const cJSON *parent, const char *key, const char *path,
                             enum xlb_presence presence, struct xlb_errors *errs)
{
    return typed_member(parent, key, path, presence, errs, cJSON_IsObject, "an object");
}

const cJSON *xlb_json_array(const cJSON *parent, const char *key, const char *path,
                            enum xlb_presence presence, struct xlb_errors *errs)
{
    return typed_member(parent, key, path, presence, errs, cJSON_IsArray, "an array");
}

const char *xlb_json_string(const cJSON *parent, const char *key, const char *path,
                            enum xlb_presence presence, size_t max_len, struct xlb_errors *errs)
{
    const cJSON *item = typed_member(parent, key, path, presence, errs, cJSON_IsString, "a string");
    if (item == NULL)
        return NULL;
    char child[XLB_PATH_MAX];
    xlb_path_key(child, path, key);
    size_t len = strlen(item->valuestring);
    if (len == 0) {
        xlb_errors_add(errs, child, "must not be empty");
        return NULL;
    }
    if (len > max_len) {
        xlb_errors_add(errs, child, "must be at most %zu bytes", max_len);
        return NULL;
    }
    return item->valuestring;
}

bool xlb_json_integer(const cJSON *parent, const char *key, const char *path, int64_t min,
                      int64_t max, int64_t *out, struct xlb_errors *errs)
{
    const cJSON *item = member(parent, key, path, XLB_OPTIONAL, errs);
    if (item == NULL)
        return false;
    char child[XLB_PATH_MAX];
    xlb_path_key(child, path, key);
    double value = item->valuedouble;
    if (!cJSON_IsNumber(item) || !isfinite(value) || value != floor(value)) {
        xlb_errors_add(errs, child, "must be an integer");
        return false;
    }
    if (value < (double)min || value > (double)max) {
        xlb_errors_add(errs, child, "must be %" PRId64 "..%" PRId64, min, max);
        return false;
    }
    *out = (int64_t)value;
    return true;
}

bool xlb_json_item_addr(const cJSON *item, const char *path, struct xlb_addr *out,
                        struct xlb_errors *errs)
{
    if (!cJSON_IsString(item)) {
        xlb_errors_add(errs, path, "must be a string");
        return false;
    }
    if (xlb_addr_parse(item->valuestring, out) != 0) {
        xlb_errors_add(errs, path, "\"%s\" is not an IPv4 or IPv6 address", item->valuestring);
        return false;
    }
    return true;
}
