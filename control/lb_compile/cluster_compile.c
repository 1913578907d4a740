#include <openssl/ssl.h>
#include "cluster_compile.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

uint32_t xlb_cluster_compile_count(const struct xlb_endpoint_config *eds)
{
    uint32_t n = 0;
    for (size_t p = 0; eds != NULL && p < eds->n_priorities; p++)
        for (size_t l = 0; l < eds->priorities[p].n_localities; l++)
            n += (uint32_t)eds->priorities[p].localities[l].n_endpoints;
    return n;
}

/* A draining endpoint is reachable only through a session (A55), never by a normal pick. */
static bool normal_pick_may_choose(const struct xlb_lb_endpoint *e)
{
    return e->health != XLB_HEALTH_DRAINING && !e->ejected;
}

static void fill_endpoints(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster *c)
{
    const struct xlb_endpoint_config *eds = in->endpoints;
    uint32_t i = 0;
    for (size_t p = 0; eds != NULL && p < eds->n_priorities; p++)
        for (size_t l = 0; l < eds->priorities[p].n_localities; l++) {
            const struct xlb_eds_locality *loc = &eds->priorities[p].localities[l];
            for (size_t e = 0; e < loc->n_endpoints; e++, i++) {
                struct xlb_lb_endpoint *out = &c->endpoints[i];
                out->where = loc->endpoints[e].addresses[0];
                out->slot = in->endpoint_slots ? in->endpoint_slots[i] : XLB_LB_NO_SLOT;
                out->weight = loc->endpoints[e].weight;
                out->priority = (uint16_t)p;
                out->locality = (uint16_t)l;
                out->health = (uint8_t)loc->endpoints[e].health;
                out->ejected = in->ejected != NULL && in->ejected[i];
                uint32_t n_addresses = loc->endpoints[e].n_addresses;
                out->n_addresses = (uint8_t)(n_addresses < XLB_MAX_ENDPOINT_ADDRESSES
                                                 ? n_addresses
                                                 : XLB_MAX_ENDPOINT_ADDRESSES);
                xlb_slot_set_usable(c->usable, i, !out->ejected);
            }
        }
}

/*
 * A61: the additional addresses connections try after the first, the first
 * XLB_MAX_ENDPOINT_ADDRESSES - 1 of each endpoint's (more stay in the override map only).
 * Their own array, allocated only when an endpoint has some: the endpoints array that picks
 * walk does not grow.
 */
static int fill_more_addresses(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster *c)
{
    const struct xlb_endpoint_config *eds = in->endpoints;
    bool any = false;
    for (uint32_t i = 0; i < c->n_endpoints; i++)
        any |= c->endpoints[i].n_addresses > 1;
    if (!any)
        return 0;
    const uint32_t stride = XLB_MAX_ENDPOINT_ADDRESSES - 1;
    c->more_addresses = calloc((size_t)c->n_endpoints * stride, sizeof(*c->more_addresses));
    if (c->more_addresses == NULL)
        return -ENOMEM;
    uint32_t i = 0;
    for (size_t p = 0; p < eds->n_priorities; p++)
        for (size_t l = 0; l < eds->priorities[p].n_localities; l++) {
            const struct xlb_eds_locality *loc = &eds->priorities[p].localities[l];
            for (size_t e = 0; e < loc->n_endpoints; e++, i++)
                for (uint32_t k = 1; k < c->endpoints[i].n_addresses; k++)
                    c->more_addresses[i * stride + k - 1] = loc->endpoints[e].addresses[k];
        }
    return 0;
}

static char *locality_name(const struct xlb_eds_locality *l)
{
    size_t len = strlen(l->region ? l->region : "") + strlen(l->zone ? l->zone : "") +
                 strlen(l->sub_zone ? l->sub_zone : "") + 3;
    char *name = malloc(len);
    if (name != NULL)
        snprintf(name, len, "%s/%s/%s", l->region ? l->region : "", l->zone ? l->zone : "",
                 l->sub_zone ? l->sub_zone : "");
    return name;
}

/* A48 over a locality's endpoints (indexes in scratch), with their weights (Envoy's bias). */
static int build_least_request(const struct xlb_cluster_compile_input *in,
                               const struct xlb_lb_cluster *c, const uint32_t *indexes, uint32_t n,
                               struct xlb_least_request **out)
{
    uint32_t *weights = calloc(n, sizeof(*weights));
    if (weights == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        weights[i] = c->endpoints[indexes[i]].weight;
    /* A config built other than by CDS validation may leave it 0: A48's default then. */
    uint32_t choices = in->config->choice_count != 0 ? in->config->choice_count
                                                     : XLB_LEAST_REQUEST_DEFAULT_CHOICES;
    int rc = xlb_least_request_build(indexes, weights, n, choices, out);
    free(weights);
    return rc;
}

/* Round robin arrays per locality and the weighted choice over localities that can serve. */
static int build_localities(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster *c,
                            uint32_t p, uint32_t first, uint32_t *scratch)
{
    const struct xlb_eds_priority *src = &in->endpoints->priorities[p];
    struct xlb_lb_priority *prio = &c->priorities[p];
    prio->n_localities = (uint32_t)src->n_localities;
    prio->localities = calloc(src->n_localities, sizeof(*prio->localities));
    uint32_t *items = calloc(src->n_localities, sizeof(uint32_t));
    uint32_t *weights = calloc(src->n_localities, sizeof(uint32_t));
    int rc = prio->localities && items && weights ? 0 : -ENOMEM;
    uint32_t n_items = 0, index = first;
    for (uint32_t l = 0; rc == 0 && l < src->n_localities; l++) {
        struct xlb_lb_locality *loc = &prio->localities[l];
        loc->weight = src->localities[l].weight;
        loc->name = locality_name(&src->localities[l]);
        loc->load_slot =
            in->locality_slot ? in->locality_slot(in->arg, p, &src->localities[l]) : XLB_LB_NO_SLOT;
        uint32_t n = 0;
        for (size_t e = 0; e < src->localities[l].n_endpoints; e++, index++)
            if (normal_pick_may_choose(&c->endpoints[index]))
                scratch[n++] = index;
        if (loc->name == NULL || (n > 0 && xlb_rr_build(scratch, n, &loc->rr) != 0))
            rc = -ENOMEM;
        if (rc == 0 && n > 0 && c->policy == XLB_LB_POLICY_LEAST_REQUEST)
            rc = build_least_request(in, c, scratch, n, &loc->lr);
        if (n > 0) {
            items[n_items] = l;
            weights[n_items++] = loc->weight;
        }
        prio->n_usable += n;
    }
    if (rc == 0 && n_items > 0 &&
        xlb_wchoice_build(items, weights, n_items, &prio->locality_choice) != 0)
        rc = -ENOMEM;
    free(items);
    free(weights);
    return rc;
}

/* The ring's endpoints in a Maglev table (a weight of 0 taken as 1, as the ring takes it). */
static int build_maglev(const struct xlb_ring_hash_endpoint *ring_eps, uint32_t n,
                        uint32_t table_size, struct xlb_maglev **out)
{
    struct xlb_maglev_endpoint *eps = calloc(n, sizeof(*eps));
    if (eps == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        eps[i] = (struct xlb_maglev_endpoint){
            .key = ring_eps[i].key,
            .slot = ring_eps[i].slot,
            .weight = ring_eps[i].weight > 0 ? ring_eps[i].weight : 1,
        };
    int rc = xlb_maglev_build(eps, n, table_size, out);
    free(eps);
    return rc;
}

/* The EDS endpoints of priority p, in the order of the cluster's endpoints from `first`. */
static void priority_sources(const struct xlb_endpoint_config *eds, uint32_t p,
                             const struct xlb_eds_endpoint **out)
{
    uint32_t n = 0;
    for (size_t l = 0; l < eds->priorities[p].n_localities; l++)
        for (size_t e = 0; e < eds->priorities[p].localities[l].n_endpoints; e++)
            out[n++] = &eds->priorities[p].localities[l].endpoints[e];
}

struct ring_key {
    const char *key;
    uint32_t at;   /* its place in the priority's list: earlier ones keep a shared key */
    bool from_eds; /* the endpoint's hash_key (A76); else its address, which never changes */
};

static int compare_ring_keys(const void *a, const void *b)
{
    const struct ring_key *x = *(const struct ring_key *const *)a;
    const struct ring_key *y = *(const struct ring_key *const *)b;
    int c = strcmp(x->key, y->key);
    return c != 0 ? c : (x->at > y->at) - (x->at < y->at);
}

/*
 * A point of the ring holds one endpoint, so a key may place one endpoint only. A hash_key
 * that another endpoint of the priority also names, or that is another endpoint's address,
 * leaves the later endpoints (or the one whose address it is) placed by their addresses, which
 * are unique. Repeated until no key is shared: each pass moves at least one endpoint to its
 * address. Returns -ENOMEM or 0.
 */
static int unshare_ring_keys(struct ring_key *keys, uint32_t n,
                             char (*addresses)[XLB_HOST_PORT_STRLEN])
{
    struct ring_key **sorted = calloc(n + 1, sizeof(*sorted));
    if (sorted == NULL)
        return -ENOMEM;
    for (bool moved = true; moved;) {
        moved = false;
        for (uint32_t i = 0; i < n; i++)
            sorted[i] = &keys[i];
        qsort(sorted, n, sizeof(*sorted), compare_ring_keys);
        for (uint32_t i = 0; i < n;) {
            uint32_t end = i + 1, addressed = 0;
            while (end < n && strcmp(sorted[end]->key, sorted[i]->key) == 0)
                end++;
            for (uint32_t j = i; j < end; j++)
                addressed += !sorted[j]->from_eds;
            for (uint32_t j = i; end - i > 1 && j < end; j++)
                if (sorted[j]->from_eds && (addressed > 0 || j > i)) {
                    sorted[j]->key = addresses[sorted[j]->at];
                    sorted[j]->from_eds = false;
                    moved = true;
                }
            i = end;
        }
    }
    free(sorted);
    return 0;
}

/*
 * A42: every non-draining endpoint of the priority, weight = endpoint x locality weight, on a
 * ring; or with the same weights in a Maglev table. An endpoint's key is its EDS hash_key
 * (A76), else its address "host:port".
 */
static int build_hash_picker(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster *c,
                             uint32_t p, uint32_t first, uint32_t count)
{
    struct xlb_ring_hash_endpoint *ring_eps = calloc(count + 1, sizeof(*ring_eps));
    char(*addresses)[XLB_HOST_PORT_STRLEN] = calloc(count + 1, sizeof(*addresses));
    struct ring_key *keys = calloc(count + 1, sizeof(*keys));
    const struct xlb_eds_endpoint **sources = calloc(count + 1, sizeof(*sources));
    int rc = ring_eps && addresses && keys && sources ? 0 : -ENOMEM;
    uint32_t n = 0;
    if (rc == 0)
        priority_sources(in->endpoints, p, sources);
    for (uint32_t i = first; rc == 0 && i < first + count; i++) {
        const struct xlb_lb_endpoint *e = &c->endpoints[i];
        if (e->health == XLB_HEALTH_DRAINING)
            continue;
        uint64_t w =
            (uint64_t)e->weight * in->endpoints->priorities[p].localities[e->locality].weight;
        xlb_host_port_format(&e->where, addresses[n], sizeof(addresses[n]));
        const char *hash_key = sources[i - first]->hash_key;
        keys[n] =
            (struct ring_key){hash_key != NULL ? hash_key : addresses[n], n, hash_key != NULL};
        ring_eps[n] = (struct xlb_ring_hash_endpoint){
            .slot = i,
            .weight = w > UINT32_MAX ? UINT32_MAX : (uint32_t)w,
        };
        n++;
    }
    if (rc == 0 && n > 0)
        rc = unshare_ring_keys(keys, n, addresses);
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        ring_eps[i].key = keys[i].key;
    if (rc == 0 && n > 0 && c->policy == XLB_LB_POLICY_MAGLEV)
        rc = build_maglev(ring_eps, n, in->config->maglev_table_size, &c->priorities[p].maglev);
    else if (rc == 0 && n > 0)
        rc = xlb_ring_hash_build(ring_eps, n, &in->config->ring_hash, &c->priorities[p].ring);
    free(ring_eps);
    free(addresses);
    free(keys);
    free(sources);
    return rc;
}

/* Drawn once per process: the same endpoints give the same order until the process restarts,
 * other endpoints (an EDS update that changes them) another one. */
static uint64_t salt;

static void draw_salt(void)
{
    if (getrandom(&salt, sizeof(salt), 0) != (ssize_t)sizeof(salt))
        salt = (uint64_t)time(NULL) ^ (uint64_t)getpid(); /* a distinct order is enough */
}

static uint64_t shuffle_salt(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, draw_salt);
    return salt;
}

/*
 * A62: the priority's endpoints a normal pick may choose, localities in order and their
 * endpoints in EDS order, shuffled when the cluster says shuffle_address_list. The shuffle's
 * seed is the list's addresses with a per-process salt, so that it changes with the EDS
 * update (and not with an ejection or a recompile of the same endpoints).
 */
static int build_pick_first(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster *c,
                            uint32_t p, uint32_t first, uint32_t count)
{
    struct xlb_pick_first_entry *entries = calloc(count + 1, sizeof(*entries));
    if (entries == NULL)
        return -ENOMEM;
    uint32_t n = 0;
    uint64_t seed = shuffle_salt();
    for (uint32_t i = first; i < first + count; i++)
        if (normal_pick_may_choose(&c->endpoints[i])) {
            char key[XLB_HOST_PORT_STRLEN];
            entries[n++] = (struct xlb_pick_first_entry){.index = i, .key = c->endpoints[i].slot};
            xlb_host_port_format(&c->endpoints[i].where, key, sizeof(key));
            seed = XXH64(key, strlen(key), seed);
        }
    int rc = n == 0 ? 0
                    : xlb_pick_first_build(entries, n, in->config->shuffle_address_list, seed,
                                           &c->priorities[p].pick_first);
    free(entries);
    return rc;
}

static int build_priorities(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster *c)
{
    const struct xlb_endpoint_config *eds = in->endpoints;
    c->chosen_priority = XLB_PICK_NONE;
    if (eds == NULL || eds->n_priorities == 0)
        return 0;
    c->n_priorities = (uint32_t)eds->n_priorities;
    c->priorities = calloc(eds->n_priorities, sizeof(*c->priorities));
    uint32_t *scratch = calloc(c->n_endpoints + 1, sizeof(uint32_t));
    int rc = c->priorities && scratch ? 0 : -ENOMEM;
    uint32_t first = 0;
    for (uint32_t p = 0; rc == 0 && p < c->n_priorities; p++) {
        uint32_t count = 0;
        for (size_t l = 0; l < eds->priorities[p].n_localities; l++)
            count += (uint32_t)eds->priorities[p].localities[l].n_endpoints;
        rc = build_localities(in, c, p, first, scratch);
        if (rc == 0 && xlb_lb_policy_hashes(c->policy))
            rc = build_hash_picker(in, c, p, first, count);
        if (rc == 0 && c->policy == XLB_LB_POLICY_PICK_FIRST)
            rc = build_pick_first(in, c, p, first, count);
        if (c->chosen_priority == XLB_PICK_NONE && c->priorities[p].n_usable > 0)
            c->chosen_priority = p;
        first += count;
    }
    free(scratch);
    return rc;
}

static int build_drops(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster *c)
{
    const struct xlb_endpoint_config *eds = in->endpoints;
    if (eds == NULL || eds->n_drops == 0)
        return 0;
    c->drops = calloc(eds->n_drops, sizeof(*c->drops));
    if (c->drops == NULL)
        return -ENOMEM;
    c->n_drops = (uint32_t)eds->n_drops;
    for (uint32_t d = 0; d < c->n_drops; d++) {
        const struct xlb_drop_overload *src = &eds->drops[d];
        c->drops[d].threshold = ((uint64_t)src->parts_per_million << 32) / 1000000;
        c->drops[d].category = strdup(src->category);
        c->drops[d].load_slot =
            in->drop_slot ? in->drop_slot(in->arg, src->category) : XLB_LB_NO_SLOT;
        if (c->drops[d].category == NULL)
            return -ENOMEM;
    }
    return 0;
}

/* Every address of every endpoint (A61), across priorities (A75), to its endpoint index. */
static int build_override(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster *c)
{
    const struct xlb_endpoint_config *eds = in->endpoints;
    uint32_t n = 0, i = 0;
    for (size_t p = 0; eds != NULL && p < eds->n_priorities; p++)
        for (size_t l = 0; l < eds->priorities[p].n_localities; l++)
            for (size_t e = 0; e < eds->priorities[p].localities[l].n_endpoints; e++)
                n += eds->priorities[p].localities[l].endpoints[e].n_addresses;
    if (n == 0)
        return 0;
    struct xlb_override_endpoint *list = calloc(n, sizeof(*list));
    if (list == NULL)
        return -ENOMEM;
    n = 0;
    for (size_t p = 0; p < eds->n_priorities; p++)
        for (size_t l = 0; l < eds->priorities[p].n_localities; l++)
            for (size_t e = 0; e < eds->priorities[p].localities[l].n_endpoints; e++, i++) {
                const struct xlb_eds_endpoint *ep = &eds->priorities[p].localities[l].endpoints[e];
                for (uint32_t a = 0; a < ep->n_addresses; a++)
                    list[n++] = (struct xlb_override_endpoint){
                        .where = ep->addresses[a], .slot = i, .status = (uint8_t)ep->health};
            }
    int rc = xlb_override_map_build(list, n, &c->override);
    free(list);
    return rc;
}

int xlb_cluster_compile(const struct xlb_cluster_compile_input *in, struct xlb_lb_cluster **out,
                        char *err, size_t err_len)
{
    *out = NULL;
    struct xlb_lb_cluster *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        SSL_CTX_free(in->upstream_tls); /* taken in every case */
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    c->refs = 1;
    c->upstream_tls = in->upstream_tls;
    c->name = strdup(in->name);
    if (in->config->health_check_service != NULL)
        c->health_service = strdup(in->config->health_check_service);
    c->cluster_slot = in->cluster_slot;
    c->generation = xlb_lb_cluster_generation();
    c->policy = in->config->lb_policy == XLB_LB_RING_HASH       ? XLB_LB_POLICY_RING_HASH
                : in->config->lb_policy == XLB_LB_MAGLEV        ? XLB_LB_POLICY_MAGLEV
                : in->config->lb_policy == XLB_LB_LEAST_REQUEST ? XLB_LB_POLICY_LEAST_REQUEST
                : in->config->lb_policy == XLB_LB_PICK_FIRST    ? XLB_LB_POLICY_PICK_FIRST
                : in->config->lb_policy == XLB_LB_WRR           ? XLB_LB_POLICY_WRR
                                                                : XLB_LB_POLICY_ROUND_ROBIN;
    c->wrr = in->config->wrr;
    c->max_requests = in->config->max_requests;
    c->override_status = in->config->override_host_status;
    c->n_endpoints = xlb_cluster_compile_count(in->endpoints);
    c->endpoints = calloc(c->n_endpoints + 1, sizeof(*c->endpoints));
    c->usable = calloc(XLB_USABLE_WORDS(c->n_endpoints) + 1, sizeof(uint64_t));
    int rc = c->name && c->endpoints && c->usable &&
                     (in->config->health_check_service == NULL || c->health_service != NULL)
                 ? 0
                 : -ENOMEM;
    if (rc == 0) {
        fill_endpoints(in, c);
        rc = fill_more_addresses(in, c);
    }
    if (rc == 0) {
        rc = build_priorities(in, c);
    }
    if (rc == 0)
        rc = build_drops(in, c);
    if (rc == 0)
        rc = build_override(in, c);
    if (rc != 0) {
        snprintf(err, err_len, "%s",
                 rc == -EEXIST ? "an endpoint address appears twice" : "out of memory");
        xlb_lb_cluster_release(c);
        return -1;
    }
    *out = c;
    return 0;
}
