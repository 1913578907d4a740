#include "config_keys.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define EDIT_MAX_LEN 64

static char fold(char c)
{
    return c == '-' ? '_' : (char)tolower((unsigned char)c);
}

static uint32_t min3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* Optimal string alignment distance over three rows of the table. */
uint32_t xlb_config_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > EDIT_MAX_LEN || lb > EDIT_MAX_LEN)
        return UINT32_MAX;
    uint32_t rows[3][EDIT_MAX_LEN + 1];
    uint32_t *before = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (uint32_t)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (uint32_t)i;
        for (size_t j = 1; j <= lb; j++) {
            uint32_t cost = fold(a[i - 1]) != fold(b[j - 1]);
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                fold(a[i - 2]) == fold(b[j - 1]) && before[j - 2] + 1 < cur[j])
                cur[j] = before[j - 2] + 1;
        }
        uint32_t *oldest = before;
        before = prev;
        prev = cur;
        cur = oldest;
    }
    return prev[lb];
}

static uint32_t near_enough(size_t key_len)
{
    return key_len <= 5 ? 1 : (uint32_t)(key_len / 3);
}

/* The distance from the first len bytes of longer to shorter (len: shorter's length). */
static uint32_t prefix_distance(const char *longer, const char *shorter)
{
    size_t len = strlen(shorter);
    if (strlen(longer) <= len || len > EDIT_MAX_LEN)
        return UINT32_MAX;
    char prefix[EDIT_MAX_LEN + 1];
    memcpy(prefix, longer, len);
    prefix[len] = '\0';
    return xlb_config_edit_distance(prefix, shorter);
}

/* How far word is from name, or UINT32_MAX when too far to suggest name. Next to a whole-word
 * match, and ranked after every one: a word that starts with a near spelling of name
 * ("wrokers_typo"), or a word of 4 bytes or more that name starts with ("mbuf_pool"). */
static uint32_t suggestion_rank(const char *word, const char *name)
{
    uint32_t d = xlb_config_edit_distance(word, name);
    if (d <= near_enough(strlen(name)))
        return d;
    d = prefix_distance(word, name);
    if (d <= near_enough(strlen(name)))
        return EDIT_MAX_LEN + d;
    d = strlen(word) >= 4 ? prefix_distance(name, word) : UINT32_MAX;
    if (d <= near_enough(strlen(word)))
        return 2 * EDIT_MAX_LEN + d;
    return UINT32_MAX;
}

const char *xlb_config_nearest_key(const struct xlb_config_object *schema, const char *word)
{
    const char *best = NULL;
    uint32_t best_rank = UINT32_MAX;
    for (size_t k = 0; k < schema->n_keys; k++) {
        uint32_t rank = suggestion_rank(word, schema->keys[k].name);
        if (rank < best_rank) {
            best = schema->keys[k].name;
            best_rank = rank;
        }
    }
    return best;
}

static bool plain_name(const char *key)
{
    if (key[0] == '\0')
        return false;
    for (const char *p = key; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
            return false;
    return true;
}

void xlb_config_member_path(char *out, const char *parent, const char *key)
{
    if (plain_name(key)) {
        xlb_path_key(out, parent, key);
        return;
    }
    /* A key people cannot read as a path element: quoted, JSON-escaped, cut at 32 bytes. */
    char quoted[3 * XLB_PATH_MAX];
    size_t n = 0;
    for (const char *p = key; *p && p - key < 32 && n + 8 < sizeof(quoted); p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            n += (size_t)snprintf(quoted + n, sizeof(quoted) - n, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            n += (size_t)snprintf(quoted + n, sizeof(quoted) - n, "\\u%04x", c);
        else
            quoted[n++] = (char)c;
    }
    quoted[n] = '\0';
    int len =
        snprintf(out, XLB_PATH_MAX, "%s[\"%s%s\"]", parent, quoted, strlen(key) > 32 ? "..." : "");
    if (len >= XLB_PATH_MAX) /* cut short: still end it as a quoted key */
        snprintf(out + XLB_PATH_MAX - 6, 6, "...\"]");
}

static const struct xlb_config_key *find_key(const struct xlb_config_object *schema,
                                             const char *name)
{
    for (size_t k = 0; k < schema->n_keys; k++)
        if (strcmp(schema->keys[k].name, name) == 0)
            return &schema->keys[k];
    return NULL;
}

/* Keys given twice: JSON allows it, and only the first would count. Counted per known key, so
 * that a file with many members costs keys x members, not members squared. */
static void reject_repeated(const struct xlb_config_object *schema, const cJSON *object,
                            const char *path, struct xlb_errors *errs)
{
    for (size_t k = 0; k < schema->n_keys; k++) {
        unsigned seen = 0;
        const cJSON *member;
        cJSON_ArrayForEach(member, object) {
            if (strcmp(member->string, schema->keys[k].name) != 0 || ++seen != 2)
                continue;
            char member_path[XLB_PATH_MAX];
            xlb_path_key(member_path, path, member->string);
            xlb_errors_add(errs, member_path, "is given more than once");
        }
    }
}

void xlb_config_object_read(const struct xlb_config_object *schema, const cJSON *object,
                            const char *path, void *ctx, struct xlb_errors *errs)
{
    const cJSON *member;
    cJSON_ArrayForEach(member, object) {
        if (find_key(schema, member->string) != NULL)
            continue;
        if (errs->n >= XLB_ERRORS_MAX) { /* counted, not worth a suggestion */
            errs->dropped++;
            continue;
        }
        char member_path[XLB_PATH_MAX];
        xlb_config_member_path(member_path, path, member->string);
        xlb_errors_add_suggestion(errs, member_path, xlb_config_nearest_key(schema, member->string),
                                  "unknown key");
    }
    reject_repeated(schema, object, path, errs);
    for (size_t k = 0; k < schema->n_keys; k++)
        schema->keys[k].read(object, path, &schema->keys[k], ctx, errs);
}

void xlb_config_read_uint(const cJSON *object, const char *path, const struct xlb_config_key *key,
                          void *ctx, struct xlb_errors *errs)
{
    int64_t value;
    if (!xlb_json_integer(object, key->name, path, key->min, key->max, &value, errs))
        return;
    char *field = (char *)ctx + key->offset;
    if (key->size == sizeof(uint16_t)) {
        uint16_t v = (uint16_t)value;
        memcpy(field, &v, sizeof(v));
    } else {
        uint32_t v = (uint32_t)value;
        memcpy(field, &v, sizeof(v));
    }
}
