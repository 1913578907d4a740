#include "xlb_wchoice.h"

#include <errno.h>
#include <stdlib.h>

/*
 * Build state: each column's remaining mass, scaled so that a column holds exactly `total`
 * (the sum of weights). Item i starts with weight[i] * n_columns; scaling by the column count
 * instead of dividing keeps everything in exact integers.
 */
struct alias_build {
    uint32_t n;
    uint64_t total;
    uint64_t *mass;
    uint32_t *item;
    uint32_t *small, n_small;
    uint32_t *large, n_large;
};

/* floor(mass / total * 2^32) for mass < total: the share of a column its own item keeps. */
static uint32_t share_threshold(uint64_t mass, uint64_t total)
{
    return (uint32_t)(((unsigned __int128)mass << 32) / total);
}

static void push_by_mass(struct alias_build *b, uint32_t col)
{
    if (b->mass[col] < b->total)
        b->small[b->n_small++] = col;
    else
        b->large[b->n_large++] = col;
}

/*
 * Vose's pairing: an under-full column is topped up from an over-full one, which then
 * goes back on whichever list its remaining mass belongs to. Columns left over at the end
 * hold exactly `total` (integer arithmetic leaves no rounding debris) and keep their item.
 */
static void pair_columns(struct alias_build *b, struct xlb_wchoice *table)
{
    for (uint32_t i = 0; i < b->n; i++)
        push_by_mass(b, i);

    while (b->n_small > 0 && b->n_large > 0) {
        uint32_t lo = b->small[--b->n_small];
        uint32_t hi = b->large[--b->n_large];
        table->columns[lo] = (struct xlb_wchoice_column){
            .threshold = share_threshold(b->mass[lo], b->total),
            .item = b->item[lo],
            .alias = b->item[hi],
        };
        b->mass[hi] -= b->total - b->mass[lo];
        push_by_mass(b, hi);
    }
    while (b->n_large > 0) {
        uint32_t col = b->large[--b->n_large];
        table->columns[col] = (struct xlb_wchoice_column){
            .threshold = UINT32_MAX, .item = b->item[col], .alias = b->item[col]};
    }
}

static void alias_build_release(struct alias_build *b)
{
    free(b->mass);
    free(b->item);
    free(b->small);
    free(b->large);
}

int xlb_wchoice_build(const uint32_t *items, const uint32_t *weights, uint32_t n,
                      struct xlb_wchoice **out)
{
    *out = NULL;
    if (items == NULL || weights == NULL || n == 0 || n > XLB_WCHOICE_MAX_ITEMS)
        return -EINVAL;

    uint32_t used = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        used += weights[i] != 0;
        total += weights[i];
    }
    if (used == 0)
        return -EINVAL;

    struct alias_build b = {
        .n = used,
        .total = total,
        .mass = malloc(sizeof(*b.mass) * used),
        .item = malloc(sizeof(*b.item) * used),
        .small = malloc(sizeof(*b.small) * used),
        .large = malloc(sizeof(*b.large) * used),
    };
    struct xlb_wchoice *table = malloc(sizeof(*table) + sizeof(table->columns[0]) * used);
    if (b.mass == NULL || b.item == NULL || b.small == NULL || b.large == NULL || table == NULL) {
        alias_build_release(&b);
        free(table);
        return -ENOMEM;
    }

    uint32_t col = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (weights[i] == 0)
            continue;
        b.mass[col] = (uint64_t)weights[i] * used;
        b.item[col] = items[i];
        col++;
    }
    table->n_columns = used;
    pair_columns(&b, table);
    alias_build_release(&b);
    *out = table;
    return 0;
}

void xlb_wchoice_free(struct xlb_wchoice *table)
{
    free(table);
}

uint64_t xlb_wchoice_bytes(const struct xlb_wchoice *table)
{
    return sizeof(*table) + (uint64_t)table->n_columns * sizeof(table->columns[0]);
}
