/* Worker state, reference counting and names: the control-plane side of lib/lb. */
#include <openssl/ssl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "xlb_lb.h"
#include "xlb_lb_connectivity.h"

int xlb_lb_worker_init(struct xlb_lb_worker *w, uint64_t seed, struct xlb_worker_load *load,
                       const struct xlb_worker_load *loads, unsigned n_workers)
{
    memset(w, 0, sizeof(*w));
    xlb_rng_seed(&w->rng, seed);
    w->load = load;
    w->loads = loads;
    w->n_workers = n_workers;
    w->scratch = xlb_route_scratch_create();
    w->hash_match = pcre2_match_data_create(32, NULL);
    w->hash_limits = pcre2_match_context_create(NULL);
    if (w->scratch == NULL || w->hash_match == NULL || w->hash_limits == NULL) {
        xlb_lb_worker_fini(w);
        return -ENOMEM;
    }
    pcre2_set_match_limit(w->hash_limits, XLB_ROUTE_MATCH_LIMIT);
    pcre2_set_depth_limit(w->hash_limits, XLB_ROUTE_DEPTH_LIMIT);
    /* Each lcore is one gRPC client: its round robin starts at random positions. */
    for (uint32_t i = 0; i < XLB_LOCALITY_SLOTS; i++)
        w->cursors[i].next = (uint32_t)xlb_rng_next(&w->rng);
    return 0;
}

void xlb_lb_worker_fini(struct xlb_lb_worker *w)
{
    xlb_lb_connectivity_fini(w);
    xlb_route_scratch_free(w->scratch);
    pcre2_match_data_free(w->hash_match);
    pcre2_match_context_free(w->hash_limits);
    w->scratch = NULL;
    w->hash_match = NULL;
    w->hash_limits = NULL;
}

uint64_t xlb_lb_cluster_generation(void)
{
    static uint64_t last;
    return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

static void cluster_free(struct xlb_lb_cluster *c)
{
    for (uint32_t p = 0; p < c->n_priorities; p++) {
        struct xlb_lb_priority *prio = &c->priorities[p];
        for (uint32_t l = 0; l < prio->n_localities; l++) {
            xlb_rr_free(prio->localities[l].rr);
            xlb_least_request_free(prio->localities[l].lr);
            free(prio->localities[l].name);
        }
        free(prio->localities);
        xlb_wchoice_free(prio->locality_choice);
        xlb_ring_hash_free(prio->ring);
        xlb_maglev_free(prio->maglev);
        xlb_pick_first_free(prio->pick_first);
    }
    free(c->priorities);
    for (uint32_t d = 0; d < c->n_drops; d++)
        free(c->drops[d].category);
    free(c->drops);
    xlb_override_map_free(c->override);
    SSL_CTX_free(c->upstream_tls);
    free(c->health_service);
    free(c->endpoints);
    free(c->more_addresses);
    free(c->usable);
    free(c->name);
    free(c->policy_from);
    free(c);
}

void xlb_lb_cluster_hold(struct xlb_lb_cluster *c)
{
    if (c != NULL)
        c->refs++;
}

void xlb_lb_cluster_release(struct xlb_lb_cluster *c)
{
    if (c != NULL && --c->refs == 0)
        cluster_free(c);
}

static void routing_free(struct xlb_lb_vip *v)
{
    for (uint32_t h = 0; h < v->n_hash_policies; h++) {
        free(v->hash_policies[h].header);
        pcre2_code_free(v->hash_policies[h].re);
        free(v->hash_policies[h].substitution);
    }
    free(v->hash_policies);
    for (uint32_t r = 0; v->route_cookie != NULL && v->routes != NULL && r < v->routes->n_routes;
         r++)
        free(v->route_cookie[r]);
    free(v->route_cookie);
    for (uint32_t r = 0;
         v->route_cookie_attrs != NULL && v->routes != NULL && r < v->routes->n_routes; r++)
        free(v->route_cookie_attrs[r].path);
    free(v->route_cookie_attrs);
    for (uint32_t e = 0; v->entry_cookie != NULL && e < v->n_entry_cookies; e++)
        free(v->entry_cookie[e]);
    for (uint32_t e = 0; v->entry_cookie_attrs != NULL && e < v->n_entry_cookies; e++)
        free(v->entry_cookie_attrs[e].path);
    free(v->entry_cookie);
    free(v->entry_cookie_attrs);
    free(v->route_first_entry);
    free(v->route_first_hash);
    free(v->route_n_hash);
    xlb_route_table_free(v->routes);
}

static void vip_free(struct xlb_lb_vip *v)
{
    for (uint32_t t = 0; t < v->n_targets; t++) {
        for (uint32_t l = 0; l < v->targets[t].n_leaves; l++)
            xlb_lb_cluster_release(v->targets[t].leaves[l]);
        free(v->targets[t].leaves);
        free(v->targets[t].name);
    }
    free(v->targets);
    if (v->routing_refs == NULL || --*v->routing_refs == 0) {
        free(v->routing_refs);
        routing_free(v);
    }
    free(v);
}

void xlb_lb_vip_hold(struct xlb_lb_vip *v)
{
    if (v != NULL)
        v->refs++;
}

void xlb_lb_vip_release(struct xlb_lb_vip *v)
{
    if (v != NULL && --v->refs == 0)
        vip_free(v);
}

const char *xlb_lb_outcome_name(enum xlb_lb_outcome outcome)
{
    static const char *const names[] = {
        [XLB_LB_PICKED] = "picked",
        [XLB_LB_NO_ROUTE] = "no_route",
        [XLB_LB_NON_FORWARDING] = "non_forwarding",
        [XLB_LB_NOT_READY] = "cluster_not_ready",
        [XLB_LB_DROPPED] = "dropped",
        [XLB_LB_CIRCUIT_OPEN] = "circuit_open",
        [XLB_LB_NO_ENDPOINT] = "no_endpoint",
        [XLB_LB_QUEUE] = "queue",
    };
    return (unsigned)outcome < sizeof(names) / sizeof(names[0]) ? names[outcome] : "unknown";
}

const char *xlb_lb_override_name(enum xlb_lb_override_outcome outcome)
{
    static const char *const names[] = {
        [XLB_LB_OVERRIDE_NONE] = "no session",
        [XLB_LB_OVERRIDE_USED] = "used",
        [XLB_LB_OVERRIDE_OTHER_CLUSTER] = "cookie names another cluster",
        [XLB_LB_OVERRIDE_UNKNOWN] = "cookie's endpoint is not in the cluster",
        [XLB_LB_OVERRIDE_STATUS] = "endpoint's health status is not in override_host_status",
        [XLB_LB_OVERRIDE_UNUSABLE] = "endpoint is ejected or failing",
    };
    return (unsigned)outcome < sizeof(names) / sizeof(names[0]) ? names[outcome] : "unknown";
}

int xlb_lb_session_decode(const char *value, uint32_t len, char *scratch, uint32_t scratch_len,
                          struct xlb_lb_session *out)
{
    memset(out, 0, sizeof(*out));
    if (len == 0 || len % 4 != 0 || scratch_len < len)
        return -EINVAL;
    int n = EVP_DecodeBlock((unsigned char *)scratch, (const unsigned char *)value, (int)len);
    if (n < 0)
        return -EINVAL;
    /* EVP_DecodeBlock counts the bytes '=' padding stands for; take them off again. */
    for (uint32_t i = len; i > 0 && value[i - 1] == '=' && n > 0; i--)
        n--;
    const char *semi = memchr(scratch, ';', (size_t)n);
    uint32_t list_len = semi ? (uint32_t)(semi - scratch) : (uint32_t)n;
    int count = xlb_host_port_list_parse(scratch, list_len, out->addresses, XLB_HOST_PORT_LIST_MAX);
    if (count <= 0)
        return -EINVAL;
    out->n_addresses = (uint32_t)count;
    if (semi != NULL) {
        out->cluster = semi + 1;
        out->cluster_len = (uint32_t)n - list_len - 1;
        if (out->cluster_len == 0 || memchr(out->cluster, '\0', out->cluster_len) != NULL) {
            memset(out, 0, sizeof(*out));
            return -EINVAL;
        }
    }
    return 0;
}
