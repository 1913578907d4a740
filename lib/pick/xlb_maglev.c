#include "xlb_maglev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

/*
 * Table sizes: 65537 and then the first prime above each quarter-octave step, so a table is
 * never more than about 19% larger than it needs to be. Fixed here (not computed) so every
 * host picks the same size for the same endpoint count.
 */
static const uint32_t maglev_primes[] = {
    65537,    77951,    92683,    110221,   131101,   155887,   185369,   220447,    262151,
    311749,   370759,   440893,   524309,   623521,   741467,   881779,   1048601,   1246997,
    1482937,  1763539,  2097211,  2493991,  2965867,  3527033,  4194371,  4987973,   5931749,
    7054067,  8388739,  9975989,  11863471, 14108119, 16777499, 19951889, 23726947,  28216259,
    33554951, 39903823, 47453863, 56432483, 67109923, 79807579, 94907713, 112864963, 134219807,
};
#define N_PRIMES (sizeof(maglev_primes) / sizeof(maglev_primes[0]))
#define LARGEST  134219807u
#define SPREAD   100 /* table entries per endpoint at least */

struct maglev_member {
    const char *key;
    uint32_t slot;
    uint64_t weight;
    uint32_t offset, skip;
    uint32_t position;   /* next candidate in this member's permutation */
    uint64_t owed;       /* placements so far x the largest weight */
    uint64_t next_round; /* first round in which this member places again */
};

uint32_t xlb_maglev_size_for(uint32_t n_endpoints)
{
    uint64_t need = (uint64_t)n_endpoints * SPREAD;
    for (size_t i = 0; i < N_PRIMES; i++)
        if (maglev_primes[i] >= need)
            return maglev_primes[i];
    return 0;
}

int xlb_maglev_is_prime(uint32_t n)
{
    if (n < 2)
        return 0;
    if (n % 2 == 0 || n % 3 == 0)
        return n <= 3;
    for (uint32_t d = 5; (uint64_t)d * d <= n; d += 6)
        if (n % d == 0 || n % (d + 2) == 0)
            return 0;
    return 1;
}

static int compare_by_key(const void *a, const void *b)
{
    return strcmp(((const struct maglev_member *)a)->key, ((const struct maglev_member *)b)->key);
}

/* Weighted endpoints in key order: the order the paper's round-robin fill visits them. */
static int load_members(const struct xlb_maglev_endpoint *endpoints, uint32_t n,
                        struct maglev_member *members, uint32_t *n_members)
{
    uint32_t used = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *key = endpoints[i].key;
        size_t len = key == NULL ? 0 : strnlen(key, XLB_MAGLEV_MAX_KEY + 1);
        if (len == 0 || len > XLB_MAGLEV_MAX_KEY || endpoints[i].slot == XLB_PICK_NONE)
            return -EINVAL;
        if (endpoints[i].weight == 0)
            continue;
        members[used++] = (struct maglev_member){
            .key = key, .slot = endpoints[i].slot, .weight = endpoints[i].weight};
    }
    if (used == 0)
        return -EINVAL;
    qsort(members, used, sizeof(*members), compare_by_key);
    for (uint32_t i = 1; i < used; i++)
        if (strcmp(members[i - 1].key, members[i].key) == 0)
            return -EEXIST;
    *n_members = used;
    return 0;
}

static void seed_permutations(struct maglev_member *members, uint32_t n, uint32_t size)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t len = strlen(members[i].key);
        members[i].offset = (uint32_t)(XXH64(members[i].key, len, 0) % size);
        members[i].skip = (uint32_t)(XXH64(members[i].key, len, 1) % (size - 1) + 1);
        members[i].position = members[i].offset;
        members[i].next_round = 1;
    }
}

/* Min-heap of member indices ordered by (next_round, index): the fill's visiting order. */
struct round_heap {
    uint32_t *at;
    uint32_t n;
    const struct maglev_member *members;
};

static int heap_before(const struct round_heap *h, uint32_t a, uint32_t b)
{
    uint64_t ra = h->members[a].next_round, rb = h->members[b].next_round;
    return ra != rb ? ra < rb : a < b;
}

static void heap_sift_down(struct round_heap *h, uint32_t i)
{
    for (;;) {
        uint32_t best = i, l = 2 * i + 1, r = l + 1;
        if (l < h->n && heap_before(h, h->at[l], h->at[best]))
            best = l;
        if (r < h->n && heap_before(h, h->at[r], h->at[best]))
            best = r;
        if (best == i)
            return;
        uint32_t t = h->at[i];
        h->at[i] = h->at[best];
        h->at[best] = t;
        i = best;
    }
}

/* Place one entry for member m at its next free permutation position. */
static void place(struct xlb_maglev *maglev, struct maglev_member *m)
{
    uint32_t pos = m->position;
    while (maglev->table[pos] != XLB_PICK_NONE) {
        pos += m->skip;
        if (pos >= maglev->size)
            pos -= maglev->size;
    }
    maglev->table[pos] = m->slot;
    pos += m->skip;
    m->position = pos >= maglev->size ? pos - maglev->size : pos;
}

/*
 * Envoy's weighted rule, in integers: a member may place in round k when k * weight is at
 * least `owed`, which grows by the largest weight per placement. Rather than scanning every
 * member every round (slow when one weight dwarfs the rest), the heap yields members in
 * exactly the (round, key order) sequence that scan would.
 */
static int fill_table(struct xlb_maglev *maglev, struct maglev_member *members, uint32_t n)
{
    uint64_t max_weight = 0;
    for (uint32_t i = 0; i < n; i++)
        max_weight = members[i].weight > max_weight ? members[i].weight : max_weight;

    struct round_heap heap = {.at = malloc(sizeof(uint32_t) * n), .n = n, .members = members};
    if (heap.at == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        heap.at[i] = i; /* all start in round 1, in key order: already a heap */

    for (uint32_t filled = 0; filled < maglev->size; filled++) {
        struct maglev_member *m = &members[heap.at[0]];
        place(maglev, m);
        m->owed += max_weight;
        uint64_t due = (m->owed + m->weight - 1) / m->weight;
        m->next_round = due > m->next_round ? due : m->next_round + 1;
        heap_sift_down(&heap, 0);
    }
    free(heap.at);
    return 0;
}

static int choose_size(uint32_t requested, uint32_t n_members, uint32_t *size)
{
    if (requested == 0) {
        *size = xlb_maglev_size_for(n_members);
        return *size == 0 ? -E2BIG : 0;
    }
    if (!xlb_maglev_is_prime(requested) || requested < n_members || requested > LARGEST)
        return -EINVAL;
    *size = requested;
    return 0;
}

int xlb_maglev_build(const struct xlb_maglev_endpoint *endpoints, uint32_t n, uint32_t table_size,
                     struct xlb_maglev **out)
{
    *out = NULL;
    if (endpoints == NULL || n == 0)
        return -EINVAL;
    struct maglev_member *members = calloc(n, sizeof(*members));
    if (members == NULL)
        return -ENOMEM;

    uint32_t used = 0, size = 0;
    int rc = load_members(endpoints, n, members, &used);
    if (rc == 0)
        rc = choose_size(table_size, used, &size);
    struct xlb_maglev *maglev = NULL;
    if (rc == 0) {
        maglev = malloc(sizeof(*maglev) + sizeof(maglev->table[0]) * (size_t)size);
        rc = maglev == NULL ? -ENOMEM : 0;
    }
    if (rc == 0) {
        maglev->size = size;
        maglev->n_endpoints = used;
        memset(maglev->table, 0xff, sizeof(maglev->table[0]) * (size_t)size);
        seed_permutations(members, used, size);
        rc = fill_table(maglev, members, used);
    }
    free(members);
    if (rc != 0) {
        free(maglev);
        return rc;
    }
    *out = maglev;
    return 0;
}

void xlb_maglev_free(struct xlb_maglev *maglev)
{
    free(maglev);
}

uint64_t xlb_maglev_bytes(const struct xlb_maglev *maglev)
{
    return sizeof(*maglev) + (uint64_t)maglev->size * sizeof(maglev->table[0]);
}

uint32_t xlb_maglev_pick_usable(const struct xlb_maglev *maglev, uint64_t hash,
                                const uint64_t *usable)
{
    if (maglev == NULL)
        return XLB_PICK_NONE;
    return xlb_next_usable(maglev->table, maglev->size, (uint32_t)(hash % maglev->size), usable);
}
