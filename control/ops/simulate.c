#include "simulate.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_lb.h"

#define MAX_FIELDS 64

struct sim_request {
    char *path, *authority;
    struct xlb_route_field fields[MAX_FIELDS];
    char *owned[MAX_FIELDS]; /* lower-cased names */
    uint32_t n_fields;
    struct xlb_route_request http;
    bool fixed_connection;
    uint64_t connection_id;
};

static const struct xlb_vip_view *find_vip(const struct xlb_snapshot *snap, const char *text,
                                           char *error, size_t len)
{
    struct xlb_host_port hp;
    if (text == NULL || xlb_host_port_parse(text, strlen(text), &hp) != 0) {
        snprintf(error, len,
                 "simulate needs --vip ADDR:PORT (\"198.18.0.100:80\", \"[2001:2::1]:80\")");
        return NULL;
    }
    for (uint32_t v = 0; snap != NULL && v < snap->n_vips; v++)
        if (xlb_addr_equal(&snap->vips[v].addr, &hp.addr) && snap->vips[v].l4_port == hp.port)
            return &snap->vips[v];
    snprintf(error, len, "no VIP %.64s (see xlbctl status)", text);
    return NULL;
}

static const char *string_arg(const cJSON *args, const char *name, const char *fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
    return cJSON_IsString(v) ? v->valuestring : fallback;
}

/* A request field: the name is lower-cased (HPACK delivers names lower-case) and owned; the
 * value points into the request's arguments, which outlive the run. */
static int push_field(struct sim_request *r, const char *name, size_t name_len, const char *value)
{
    char *owned = strndup(name, name_len);
    if (owned == NULL)
        return -1;
    for (char *p = owned; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    r->owned[r->n_fields] = owned;
    r->fields[r->n_fields++] = (struct xlb_route_field){
        .name = owned,
        .name_len = (uint32_t)name_len,
        .value = value,
        .value_len = (uint32_t)strlen(value),
    };
    return 0;
}

/* "name=value" -> a request field. */
static int add_field(struct sim_request *r, const char *text, char *error, size_t len)
{
    const char *eq = strchr(text, '=');
    if (eq == NULL || eq == text || r->n_fields == MAX_FIELDS) {
        snprintf(error, len, "header \"%.64s\": expected NAME=VALUE (at most %d)", text,
                 MAX_FIELDS);
        return -1;
    }
    return push_field(r, text, (size_t)(eq - text), eq + 1);
}

static int read_request(const cJSON *args, struct sim_request *r, char *error, size_t len)
{
    memset(r, 0, sizeof(*r));
    const char *path = string_arg(args, "path", "/");
    const char *authority = string_arg(args, "authority", "");
    r->http.path = path;
    r->http.path_len = (uint32_t)strlen(path);
    r->http.authority = authority;
    r->http.authority_len = (uint32_t)strlen(authority);
    const cJSON *headers = cJSON_GetObjectItemCaseSensitive(args, "headers"), *h;
    cJSON_ArrayForEach(h, headers) {
        if (!cJSON_IsString(h) || add_field(r, h->valuestring, error, len) != 0)
            return -1;
    }
    const char *cookie = string_arg(args, "cookie", NULL);
    /* The cookie goes in as the request's "cookie" header, where the pick looks for it. */
    if (cookie != NULL && (strchr(cookie, '=') == NULL || r->n_fields == MAX_FIELDS)) {
        snprintf(error, len, "cookie: expected NAME=VALUE");
        return -1;
    }
    if (cookie != NULL && push_field(r, "cookie", 6, cookie) != 0)
        return -1;
    r->http.fields = r->fields;
    r->http.n_fields = r->n_fields;
    const cJSON *conn = cJSON_GetObjectItemCaseSensitive(args, "connection_id");
    if (cJSON_IsNumber(conn)) {
        r->fixed_connection = true;
        r->connection_id = (uint64_t)conn->valuedouble;
    }
    return 0;
}

static void free_request(struct sim_request *r)
{
    for (uint32_t i = 0; i < r->n_fields; i++)
        free(r->owned[i]);
}

static int number_arg(const cJSON *args, const char *name, double fallback, double max, double *out,
                      char *error, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
    *out = fallback;
    if (v == NULL)
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > max) {
        snprintf(error, len, "%s must be a number in 1..%.0f", name, max);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

static cJSON *endpoint_json(const struct xlb_lb_cluster *c, uint32_t index)
{
    cJSON *o = cJSON_CreateObject();
    const struct xlb_lb_endpoint *e = &c->endpoints[index];
    char address[XLB_HOST_PORT_STRLEN];
    xlb_host_port_format(&e->where, address, sizeof(address));
    cJSON_AddStringToObject(o, "cluster", c->name);
    cJSON_AddStringToObject(o, "address", address);
    cJSON_AddNumberToObject(o, "priority", e->priority);
    cJSON_AddStringToObject(o, "locality", c->priorities[e->priority].localities[e->locality].name);
    return o;
}

static const char *policy_name(uint8_t policy)
{
    static const char *const names[] = {
        [XLB_LB_POLICY_ROUND_ROBIN] = "round_robin",
        [XLB_LB_POLICY_RING_HASH] = "ring_hash",
        [XLB_LB_POLICY_MAGLEV] = "maglev",
        [XLB_LB_POLICY_LEAST_REQUEST] = "least_request",
        [XLB_LB_POLICY_WRR] = "weighted_round_robin",
        [XLB_LB_POLICY_PICK_FIRST] = "pick_first",
    };
    return policy < sizeof(names) / sizeof(names[0]) ? names[policy] : "unknown";
}

/* The least-request candidates of the first pick, their in-flight counts summed over workers. */
static cJSON *candidates_json(const struct xlb_lb_cluster *c,
                              const struct xlb_least_request_trace *lt)
{
    cJSON *list = cJSON_CreateArray();
    for (uint32_t i = 0; i < lt->n_candidates; i++) {
        if (lt->slots[i] >= c->n_endpoints)
            continue;
        cJSON *o = endpoint_json(c, lt->slots[i]);
        cJSON_AddNumberToObject(o, "in_flight", lt->in_flight[i]);
        cJSON_AddBoolToObject(o, "usable", lt->usable[i]);
        cJSON_AddItemToArray(list, o);
    }
    return list;
}

/* The session cookie that applied: the route's, or its weighted entry's (A39). */
static void session_cookie_json(cJSON *o, const char *name, const struct xlb_lb_cookie_attrs *a)
{
    cJSON_AddStringToObject(o, "session_cookie", name);
    if (a != NULL && a->path != NULL)
        cJSON_AddStringToObject(o, "session_cookie_path", a->path);
    if (a != NULL && a->has_max_age)
        cJSON_AddNumberToObject(o, "session_cookie_max_age", a->max_age_s);
}

static cJSON *trace_json(const struct xlb_lb_vip *vip, const struct xlb_lb_trace *t,
                         const struct xlb_least_request_trace *lt)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "outcome", xlb_lb_outcome_name(t->outcome));
    if (t->vhost != XLB_ROUTE_NONE)
        cJSON_AddNumberToObject(o, "virtual_host", t->vhost);
    if (t->route != XLB_ROUTE_NONE)
        cJSON_AddNumberToObject(o, "route", t->route);
    if (t->target != XLB_ROUTE_NONE && t->target < vip->n_targets)
        cJSON_AddStringToObject(o, "route_cluster", vip->targets[t->target].name);
    if (t->cluster != NULL)
        cJSON_AddStringToObject(o, "cluster", t->cluster->name);
    if (t->cluster != NULL && t->priority != XLB_PICK_NONE)
        cJSON_AddNumberToObject(o, "priority", t->priority);
    if (t->endpoint != XLB_PICK_NONE) {
        cJSON *e = endpoint_json(t->cluster, t->endpoint);
        cJSON_AddItemToObject(o, "endpoint", e);
    }
    if (t->entry != XLB_ROUTE_NONE)
        cJSON_AddNumberToObject(o, "weighted_entry", t->entry);
    if (t->session_cookie != NULL)
        session_cookie_json(o, t->session_cookie, t->session_attrs);
    cJSON_AddStringToObject(o, "override", xlb_lb_override_name(t->override));
    if (t->drop_category != NULL)
        cJSON_AddStringToObject(o, "drop_category", t->drop_category);
    if (t->cluster != NULL)
        cJSON_AddStringToObject(o, "policy", policy_name(t->cluster->policy));
    if (t->cluster != NULL && t->cluster->policy == XLB_LB_POLICY_LEAST_REQUEST &&
        t->outcome == XLB_LB_PICKED && t->override != XLB_LB_OVERRIDE_USED) {
        cJSON_AddItemToObject(o, "candidates", candidates_json(t->cluster, lt));
        if (lt->fell_back)
            cJSON_AddBoolToObject(o, "fell_back", true);
    }
    if (t->cluster != NULL && xlb_lb_policy_hashes(t->cluster->policy)) {
        char hash[24];
        snprintf(hash, sizeof(hash), "%016" PRIx64, t->hash);
        cJSON_AddStringToObject(o, "hash", hash);
        cJSON_AddStringToObject(o, "hash_source", t->hashed ? "hash policy" : "random");
    }
    return o;
}

/* Counts per (cluster, endpoint): clusters are few, so a short list of per-cluster arrays. */
struct tally {
    const struct xlb_lb_cluster *cluster;
    uint64_t *counts;
};

static void count(struct tally *tallies, uint32_t *n_tallies, uint32_t cap,
                  const struct xlb_lb_trace *t)
{
    for (uint32_t i = 0; i < *n_tallies; i++)
        if (tallies[i].cluster == t->cluster) {
            tallies[i].counts[t->endpoint]++;
            return;
        }
    if (*n_tallies == cap)
        return;
    uint64_t *counts = calloc(t->cluster->n_endpoints + 1, sizeof(uint64_t));
    if (counts == NULL)
        return;
    counts[t->endpoint] = 1;
    tallies[(*n_tallies)++] = (struct tally){t->cluster, counts};
}

static cJSON *histogram(struct tally *tallies, uint32_t n_tallies, uint64_t n)
{
    cJSON *list = cJSON_CreateArray();
    for (uint32_t i = 0; i < n_tallies; i++) {
        for (uint32_t e = 0; e < tallies[i].cluster->n_endpoints; e++) {
            if (tallies[i].counts[e] == 0)
                continue;
            cJSON *o = endpoint_json(tallies[i].cluster, e);
            cJSON_AddNumberToObject(o, "picks", (double)tallies[i].counts[e]);
            double share = (double)tallies[i].counts[e] / (double)n;
            char percent[16];
            snprintf(percent, sizeof(percent), "%.2f%%", share * 100);
            cJSON_AddNumberToObject(o, "share", share);
            cJSON_AddStringToObject(o, "percent", percent);
            cJSON_AddItemToArray(list, o);
        }
        free(tallies[i].counts);
    }
    return list;
}

#define MAX_TALLIES 64

static cJSON *run(const struct xlb_vip_view *vip, struct sim_request *r, uint64_t n,
                  struct xlb_lb_worker *w)
{
    uint64_t outcomes[XLB_LB_QUEUE + 1] = {0};
    struct tally tallies[MAX_TALLIES];
    uint32_t n_tallies = 0;
    cJSON *trace = NULL;
    struct xlb_lb_request request = {.http = &r->http};
    for (uint64_t i = 0; i < n; i++) {
        struct xlb_lb_trace t;
        request.connection_id = r->fixed_connection ? r->connection_id : xlb_rng_next(&w->rng);
        xlb_lb_pick(vip->lb, &request, w, &t);
        outcomes[t.outcome]++;
        if (trace == NULL)
            trace = trace_json(vip->lb, &t, w->least_request_trace);
        if (t.outcome == XLB_LB_PICKED)
            count(tallies, &n_tallies, MAX_TALLIES, &t);
    }
    cJSON *result = cJSON_CreateObject();
    cJSON_AddNumberToObject(result, "n", (double)n);
    cJSON *o = cJSON_AddObjectToObject(result, "outcomes");
    for (int k = 0; k <= XLB_LB_QUEUE; k++)
        if (outcomes[k] > 0)
            cJSON_AddNumberToObject(o, xlb_lb_outcome_name(k), (double)outcomes[k]);
    cJSON_AddItemToObject(result, "endpoints", histogram(tallies, n_tallies, n));
    cJSON_AddItemToObject(result, "trace", trace);
    return result;
}

cJSON *xlb_simulate(const struct xlb_snapshot *snap, const struct xlb_worker_load *loads,
                    unsigned n_workers, const cJSON *args, char *error, size_t len)
{
    const struct xlb_vip_view *vip = find_vip(snap, string_arg(args, "vip", NULL), error, len);
    double n, seed;
    if (vip == NULL || number_arg(args, "n", 1000, XLB_SIMULATE_MAX_PICKS, &n, error, len) != 0 ||
        number_arg(args, "seed", 1, 1e15, &seed, error, len) != 0)
        return NULL;
    if (vip->lb == NULL) {
        snprintf(error, len, "VIP has no complete configuration yet (see xlbctl status)");
        return NULL;
    }
    struct sim_request r;
    struct xlb_lb_worker *w = calloc(1, sizeof(*w));
    if (w == NULL || read_request(args, &r, error, len) != 0 ||
        xlb_lb_worker_init(w, (uint64_t)seed, NULL, loads, n_workers) != 0) {
        if (w != NULL)
            free_request(&r);
        free(w);
        return NULL;
    }
    /* Least request reads what every worker has in flight (the picks here count nothing). */
    uint32_t *sums = calloc(XLB_ENDPOINT_SLOTS, sizeof(uint32_t));
    for (unsigned k = 0; sums != NULL && loads != NULL && k < n_workers; k++)
        for (uint32_t e = 0; e < XLB_ENDPOINT_SLOTS; e++)
            sums[e] += __atomic_load_n(&loads[k].endpoints[e].in_flight, __ATOMIC_RELAXED);
    w->in_flight_sums = sums;
    /* Weighted round robin picks by the shares the workers use now: their mean. */
    uint32_t *shares = calloc(XLB_ENDPOINT_SLOTS, sizeof(uint32_t));
    for (uint32_t e = 0; shares != NULL && loads != NULL && n_workers > 0 && e < XLB_ENDPOINT_SLOTS;
         e++) {
        uint64_t sum = 0;
        for (unsigned k = 0; k < n_workers; k++)
            sum += __atomic_load_n(&loads[k].endpoints[e].weight.scaled, __ATOMIC_RELAXED);
        shares[e] = (uint32_t)(sum / n_workers);
    }
    w->wrr_shares = shares;
    struct xlb_least_request_trace lt = {0};
    w->least_request_trace = &lt;
    cJSON *result = run(vip, &r, (uint64_t)n, w);
    free(sums);
    free(shares);
    cJSON_AddStringToObject(result, "vip", string_arg(args, "vip", ""));
    cJSON_AddNumberToObject(result, "generation", (double)snap->generation);
    xlb_lb_worker_fini(w);
    free(w);
    free_request(&r);
    return result;
}
