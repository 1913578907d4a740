/*
 * Typed reads from cJSON objects that report problems as "json.path: what is wrong" lines,
 * the form `xlbd --check` prints. Every getter appends at most one error and never aborts, so
 * a reader can report all problems of a document in one pass.
 */
#ifndef XLB_JSON_READ_H
#define XLB_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "xlb_addr.h"

#define XLB_ERRORS_MAX 64
#define XLB_PATH_MAX   128

/* One problem as tools see it (xlbd --check --json): its parts before they became a line. */
struct xlb_error_detail {
    char *path;
    char *message;
    char *suggestion; /* a key to write instead, or NULL */
};

struct xlb_errors {
    unsigned n;
    unsigned dropped;            /* problems beyond XLB_ERRORS_MAX */
    char *lines[XLB_ERRORS_MAX]; /* "path: message", what people read */
    struct xlb_error_detail details[XLB_ERRORS_MAX];
};

void xlb_errors_add(struct xlb_errors *errs, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* As xlb_errors_add, with a suggestion (or NULL): the line ends in `; did you mean "KEY"?`. */
void xlb_errors_add_suggestion(struct xlb_errors *errs, const char *path, const char *suggestion,
                               const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void xlb_errors_free(struct xlb_errors *errs);
/* Lines from..n joined with "; " into one malloc'd string (a NACK's error_detail, say). */
char *xlb_errors_join(const struct xlb_errors *errs, unsigned from);
/* The problems as a JSON array of {"path", "message", "suggestion"} (suggestion null when
 * there is none). A line another layer rewrote after adding it (a prefix naming where a
 * resource came from) is split at its first ": " instead. NULL when out of memory. */
cJSON *xlb_errors_json(const struct xlb_errors *errs);

/* Child paths: "a.b" and "a[3]". */
void xlb_path_key(char *out, const char *parent, const char *key);
void xlb_path_index(char *out, const char *parent, unsigned index);

enum xlb_presence { XLB_OPTIONAL, XLB_REQUIRED };

/* Each returns the item (NULL when absent or of the wrong type, with an error where due). */
const cJSON *xlb_json_object(const cJSON *parent, const char *key, const char *path,
                             enum xlb_presence presence, struct xlb_errors *errs);
const cJSON *xlb_json_array(const cJSON *parent, const char *key, const char *path,
                            enum xlb_presence presence, struct xlb_errors *errs);
/* A non-empty string no longer than max_len bytes. */
const char *xlb_json_string(const cJSON *parent, const char *key, const char *path,
                            enum xlb_presence presence, size_t max_len, struct xlb_errors *errs);

/* An integer in [min, max]; *out is left unchanged when absent or invalid. Returns true if set.
 * JSON has no integer type and cJSON keeps only the double, so the value decides, not its
 * spelling: 80, 80.0 and 8e1 are all 80; 80.5 (or a string, or a boolean) is "must be an
 * integer". */
bool xlb_json_integer(const cJSON *parent, const char *key, const char *path, int64_t min,
                      int64_t max, int64_t *out, struct xlb_errors *errs);

/* The string item itself must be an address; path names it. */
bool xlb_json_item_addr(const cJSON *item, const char *path, struct xlb_addr *out,
                        struct xlb_errors *errs);

#endif
