/*
 * The values last reported over LRS, per cluster, kept sorted by name so that a report costs
 * a lookup per reported cluster rather than a scan of all of them.
 */
#include <stdlib.h>
#include <string.h>

#include "lrs_internal.h"

void xlb_lrs_baseline_init(struct xlb_lrs_baseline *b, uint64_t start_ms)
{
    memset(b, 0, sizeof(*b));
    b->start_ms = start_ms;
}

void xlb_lrs_cluster_mark_free(struct xlb_lrs_cluster_mark *mark)
{
    for (size_t i = 0; i < mark->n_localities; i++) {
        free(mark->localities[i].region);
        free(mark->localities[i].zone);
        free(mark->localities[i].sub_zone);
    }
    for (size_t i = 0; i < mark->n_drops; i++)
        free(mark->drops[i].category);
    free(mark->localities);
    free(mark->drops);
    free(mark->name);
    free(mark->service_name);
    memset(mark, 0, sizeof(*mark));
}

void xlb_lrs_baseline_free(struct xlb_lrs_baseline *b)
{
    for (size_t i = 0; i < b->n_clusters; i++)
        xlb_lrs_cluster_mark_free(&b->clusters[i]);
    free(b->clusters);
    b->clusters = NULL;
    b->n_clusters = b->cap = 0;
}

/* Index of name, or of where it would be inserted (with *found false). */
static size_t lower_bound(const struct xlb_lrs_baseline *b, const char *name, bool *found)
{
    size_t lo = 0, hi = b->n_clusters;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(b->clusters[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < b->n_clusters && strcmp(b->clusters[lo].name, name) == 0;
    return lo;
}

const struct xlb_lrs_cluster_mark *xlb_lrs_baseline_find(const struct xlb_lrs_baseline *b,
                                                         const char *name)
{
    bool found;
    size_t i = lower_bound(b, name, &found);
    return found ? &b->clusters[i] : NULL;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void xlb_lrs_baseline_prune(struct xlb_lrs_baseline *b, const char *const *names, size_t n)
{
    if (b->n_clusters == 0)
        return;
    const char **sorted = malloc((n ? n : 1) * sizeof(*sorted));
    if (sorted == NULL)
        return; /* keeping a stale mark only costs memory until the next report */
    if (n > 0)  /* names may be NULL when empty */
        memcpy(sorted, names, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), cmp_names);
    size_t kept = 0;
    for (size_t i = 0; i < b->n_clusters; i++) {
        const char *name = b->clusters[i].name;
        if (bsearch(&name, sorted, n, sizeof(*sorted), cmp_names) == NULL)
            xlb_lrs_cluster_mark_free(&b->clusters[i]);
        else
            b->clusters[kept++] = b->clusters[i];
    }
    b->n_clusters = kept;
    free(sorted);
}

int xlb_lrs_baseline_reserve(struct xlb_lrs_baseline *b, size_t n)
{
    if (b->cap - b->n_clusters >= n)
        return 0;
    size_t cap = b->n_clusters + n;
    if (cap < 2 * b->cap)
        cap = 2 * b->cap;
    struct xlb_lrs_cluster_mark *grown = realloc(b->clusters, cap * sizeof(*grown));
    if (grown == NULL)
        return -1;
    b->clusters = grown;
    b->cap = cap;
    return 0;
}

void xlb_lrs_baseline_put(struct xlb_lrs_baseline *b, struct xlb_lrs_cluster_mark *mark)
{
    bool found;
    size_t i = lower_bound(b, mark->name, &found);
    if (found) {
        xlb_lrs_cluster_mark_free(&b->clusters[i]);
    } else {
        memmove(&b->clusters[i + 1], &b->clusters[i], (b->n_clusters - i) * sizeof(b->clusters[0]));
        b->n_clusters++;
    }
    b->clusters[i] = *mark;
    memset(mark, 0, sizeof(*mark));
}
