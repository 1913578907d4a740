/* Helpers of one dependency-manager walk: watching, reasons, fingerprints. See dependency_walk.h.
 */
#include "dependency_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct xlb_xds_resource *dm_watch(struct dm_walk *w, enum xlb_xds_type type, const char *name)
{
    if (w->oom)
        return NULL;
    struct dm_watch_list *list = w->watch;
    if (list->n == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 32;
        struct xlb_xds_resource **items = realloc(list->items, cap * sizeof(*items));
        if (items == NULL) {
            w->oom = true;
            return NULL;
        }
        list->items = items;
        list->cap = cap;
    }
    struct xlb_xds_resource *res = xlb_xds_cache_get(w->cache, type, name);
    if (res == NULL) {
        w->oom = true;
        return NULL;
    }
    list->items[list->n++] = res;
    return res;
}

char *dm_printf(struct dm_walk *w, const char *fmt, ...)
{
    if (w->oom)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = len < 0 ? NULL : malloc((size_t)len + 1);
    if (text == NULL) {
        w->oom = true;
        return NULL;
    }
    va_start(ap, fmt);
    vsnprintf(text, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return text;
}

char *dm_unusable_reason(struct dm_walk *w, const struct xlb_xds_resource *res)
{
    const char *type = xlb_xds_type_name[res->type];
    if (res->state == XLB_RES_DOES_NOT_EXIST)
        return dm_printf(w, "%s \"%s\" does not exist", type, res->name);
    /* NACKED without a previous value: the validators' reasons already name the resource. */
    if (res->error != NULL)
        return dm_printf(w, "%s", res->error);
    return dm_printf(w, "%s \"%s\" was rejected", type, res->name);
}

uint64_t dm_hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t dm_hash_u64(uint64_t h, uint64_t v)
{
    return dm_hash_bytes(h, &v, sizeof(v));
}

uint64_t dm_hash_str(uint64_t h, const char *s)
{
    if (s == NULL)
        return dm_hash_u64(h, 0x9e3779b97f4a7c15ull);
    /* The terminating NUL separates consecutive strings: ("ab","c") differs from ("a","bc"). */
    return dm_hash_bytes(h, s, strlen(s) + 1);
}

uint64_t dm_hash_resource(uint64_t h, const struct xlb_xds_resource *res)
{
    h = dm_hash_u64(h, res->type);
    h = dm_hash_str(h, res->name);
    h = dm_hash_u64(h, res->state);
    h = dm_hash_u64(h, res->has_value);
    return dm_hash_u64(h, res->changes);
}
