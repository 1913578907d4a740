/*
 * The keys of the xlb section's objects. Each object has one table naming its keys in the
 * order they are read, with the function that reads each. The parser reads a key only through
 * its table entry, and a member the table does not name is an error that suggests the nearest
 * known key:
 *
 *     xlb.vips[0].tagret: unknown key; did you mean "target"?
 *
 * So a misspelt key never leaves a setting at its default unnoticed. The tables are exported
 * (xlb_bootstrap_objects) so that a test holds docs/configuration.md to them.
 *
 * gRPC's part of the bootstrap (xds_servers, node) does not use these: there, as in gRPC,
 * unknown fields are ignored.
 */
#ifndef XLB_CONFIG_KEYS_H
#define XLB_CONFIG_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "json_read.h"

struct xlb_config_key;

/* Reads one key of object (present or absent: a required key reports its absence) into ctx.
 * path is the object's. */
typedef void xlb_config_read_fn(const cJSON *object, const char *path,
                                const struct xlb_config_key *key, void *ctx,
                                struct xlb_errors *errs);

struct xlb_config_key {
    const char *name;
    xlb_config_read_fn *read;
    /* For xlb_config_read_uint: the bounds, and where in ctx the value goes. */
    int64_t min, max;
    size_t offset, size;
};

struct xlb_config_object {
    const char *path; /* as docs/configuration.md names it: "xlb", "xlb.ports[]" */
    const struct xlb_config_key *keys;
    size_t n_keys;
};

#define XLB_CONFIG_OBJECT(path_, keys_)                                                            \
    {                                                                                              \
        (path_), (keys_), sizeof(keys_) / sizeof((keys_)[0])                                       \
    }

/* An integer key in [lo, hi] stored into an unsigned field of ctx's type. */
#define XLB_CONFIG_UINT(name_, type_, field_, lo_, hi_)                                            \
    {                                                                                              \
        .name = (name_), .read = xlb_config_read_uint, .min = (lo_), .max = (hi_),                 \
        .offset = offsetof(type_, field_), .size = sizeof(((type_ *)0)->field_),                   \
    }
xlb_config_read_fn xlb_config_read_uint;

/* Report every member of object that schema does not name, and every key given twice (JSON
 * allows it, and only the first would count), then read the keys in table order. */
void xlb_config_object_read(const struct xlb_config_object *schema, const cJSON *object,
                            const char *path, void *ctx, struct xlb_errors *errs);

/* The known key nearest to word by edit distance, or NULL when none is near enough to be a
 * likely typo: at most 1 edit for keys up to 5 bytes, a third of the key's length beyond.
 * Case and '-' for '_' cost nothing; swapping two neighbours costs 1. Failing that, a key that
 * word starts with, as near ("wrokers_typo": "workers"), or a key that starts with word, when
 * word has 4 bytes or more ("mbuf_pool": "mbuf_pool_size"). The first in table order wins a
 * tie. */
const char *xlb_config_nearest_key(const struct xlb_config_object *schema, const char *word);

/* Edits (insert, delete, substitute, swap neighbours) from a to b, as nearest_key counts them;
 * strings longer than 64 bytes count as too far (UINT32_MAX). */
uint32_t xlb_config_edit_distance(const char *a, const char *b);

/* The child path of a member: "a.key", or a["k y"] when the key is not a plain name. */
void xlb_config_member_path(char *out, const char *parent, const char *key);

#endif
