/*
 * Weighted choice in O(1): Vose's alias method.
 *
 * Used for A27 weighted localities (a locality with weight 0 or no usable endpoint is left out
 * by the caller, or given weight 0 here) and for weighted clusters (A28). The table is built
 * once on the control plane; a pick is one random draw and one 16-byte read.
 *
 * Every item with a non-zero weight gets a column. A draw chooses a column uniformly with its
 * high 32 bits, then keeps the column's own item when the low 32 bits fall under the column's
 * threshold and takes the column's alias otherwise. The build works in exact integers, so each
 * item's probability is weight / total to within 2^-32 per column.
 */
#ifndef XLB_WCHOICE_H
#define XLB_WCHOICE_H

#include <stdint.h>

#include "xlb_pick.h"
#include "xlb_rng.h"

/* The most items one table holds; far above any locality or cluster count. */
#define XLB_WCHOICE_MAX_ITEMS (1u << 24)

struct xlb_wchoice_column {
    uint32_t threshold; /* keep `item` when the draw's low half is below this */
    uint32_t item;
    uint32_t alias;
    uint32_t reserved; /* keeps a column at 16 bytes: never straddles a cache line */
};

struct xlb_wchoice {
    uint32_t n_columns;
    struct xlb_wchoice_column columns[];
};

/*
 * Build a table choosing items[i] with probability weights[i] / sum(weights). Items are opaque
 * uint32 values (a locality index, a cluster index). Items with weight 0 are never chosen.
 * Returns 0 and sets *out, -EINVAL when n is 0 or above XLB_WCHOICE_MAX_ITEMS or every weight
 * is 0, or -ENOMEM.
 */
int xlb_wchoice_build(const uint32_t *items, const uint32_t *weights, uint32_t n,
                      struct xlb_wchoice **out);

void xlb_wchoice_free(struct xlb_wchoice *table);

/* Bytes the table occupies. */
uint64_t xlb_wchoice_bytes(const struct xlb_wchoice *table);

/* One weighted pick; XLB_PICK_NONE only for a NULL table. */
static inline uint32_t xlb_wchoice_pick(const struct xlb_wchoice *table, struct xlb_rng *rng)
{
    if (table == NULL)
        return XLB_PICK_NONE;
    uint64_t r = xlb_rng_next(rng);
    uint32_t col = (uint32_t)(((r >> 32) * table->n_columns) >> 32);
    const struct xlb_wchoice_column *c = &table->columns[col];
    return (uint32_t)r < c->threshold ? c->item : c->alias;
}

#endif
