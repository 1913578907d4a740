/* Helpers shared by the lib/lb tests; see lb_test.h. */
#include "lb_test.h"
#include "xlb_const.h"

/* Strings of the hand-built configurations, in the char * their parsed forms hold (const
 * arguments go in through XLB_UNCONST): the compiler only reads them. */
static char cluster_web[] = "web", region[] = "r", no_string[] = "";

void assert_binomial(uint64_t count, uint64_t draws, double p)
{
    double mean = (double)draws * p;
    double bound = 5.0 * sqrt((double)draws * p * (1.0 - p)) + 1.0;
    if (fabs((double)count - mean) > bound)
        fail_msg("count %llu outside %.1f +- %.1f (draws %llu, p %.6g)", (unsigned long long)count,
                 mean, bound, (unsigned long long)draws, p);
}

struct xlb_host_port hp(const char *text)
{
    struct xlb_host_port out;
    if (xlb_host_port_parse(text, strlen(text), &out) != 0)
        fail_msg("bad address in test: %s", text);
    return out;
}

void assert_hp(const struct xlb_host_port *got, const char *want)
{
    char text[XLB_HOST_PORT_STRLEN];
    assert_true(xlb_host_port_format(got, text, sizeof(text)) > 0);
    assert_string_equal(text, want);
}

/* ---- a ClusterLoadAssignment built by hand ---- */

struct eds *eds_new(void)
{
    struct eds *e = calloc(1, sizeof(*e));
    assert_non_null(e);
    e->cfg.cluster_name = cluster_web;
    e->cfg.priorities = e->prios;
    e->cfg.drops = e->drops;
    return e;
}

void eds_priority(struct eds *e)
{
    assert_true(e->cfg.n_priorities < EDS_PRIOS);
    size_t p = e->cfg.n_priorities++;
    e->prios[p].localities = e->locs[p];
}

void eds_locality(struct eds *e, uint32_t weight)
{
    assert_true(e->cfg.n_priorities > 0);
    size_t p = e->cfg.n_priorities - 1;
    struct xlb_eds_priority *prio = &e->prios[p];
    assert_true(prio->n_localities < EDS_LOCS);
    size_t l = prio->n_localities++;
    struct xlb_eds_locality *loc = &e->locs[p][l];
    snprintf(e->zones[p][l], sizeof(e->zones[p][l]), "z%zu%zu", p, l);
    loc->region = region;
    loc->zone = e->zones[p][l];
    loc->sub_zone = no_string;
    loc->weight = weight;
    loc->endpoints = e->eps[p][l];
}

struct eds *eds_one_locality(uint32_t weight)
{
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, weight);
    return e;
}

uint32_t eds_endpoint(struct eds *e, const char *addr, uint32_t weight,
                      enum xlb_health_status health)
{
    assert_true(e->cfg.n_priorities > 0);
    size_t p = e->cfg.n_priorities - 1;
    assert_true(e->prios[p].n_localities > 0);
    size_t l = e->prios[p].n_localities - 1;
    struct xlb_eds_locality *loc = &e->locs[p][l];
    assert_true(loc->n_endpoints < EDS_EPS);
    size_t i = loc->n_endpoints++;
    struct xlb_eds_endpoint *ep = &loc->endpoints[i];
    ep->addresses = e->addrs[p][l][i];
    ep->addresses[0] = hp(addr);
    ep->n_addresses = 1;
    ep->health = health;
    ep->weight = weight;
    return e->n_endpoints++;
}

void eds_address(struct eds *e, const char *addr)
{
    size_t p = e->cfg.n_priorities - 1;
    size_t l = e->prios[p].n_localities - 1;
    struct xlb_eds_endpoint *ep = &e->locs[p][l].endpoints[e->locs[p][l].n_endpoints - 1];
    assert_true(ep->n_addresses < EDS_ADDRS);
    ep->addresses[ep->n_addresses++] = hp(addr);
}

void eds_drop(struct eds *e, const char *category, uint32_t ppm)
{
    assert_true(e->cfg.n_drops < EDS_DROPS);
    e->drops[e->cfg.n_drops++] =
        (struct xlb_drop_overload){.category = XLB_UNCONST(category), .parts_per_million = ppm};
}

/* ---- cluster config and compile ---- */

struct xlb_cluster_config cluster_config(enum xlb_lb_policy policy)
{
    struct xlb_cluster_config c = {
        .name = cluster_web,
        .type = XLB_CLUSTER_EDS,
        .eds_service_name = no_string,
        .lb_policy = policy,
        .max_requests = 0,
        .override_host_status = XLB_OVERRIDE_STATUS_DEFAULT,
    };
    xlb_ring_hash_config_default(&c.ring_hash);
    return c;
}

static uint32_t next_locality_slot = 1;
static uint32_t next_drop_slot = 1;
static struct {
    const char *category;
    uint32_t slot;
} drop_slots[64];
static uint32_t n_drop_slots;

static uint32_t test_locality_slot(void *arg, uint32_t priority, const struct xlb_eds_locality *l)
{
    (void)arg;
    (void)priority;
    (void)l;
    return next_locality_slot++;
}

static uint32_t test_drop_slot(void *arg, const char *category)
{
    (void)arg;
    assert_true(n_drop_slots < 64);
    drop_slots[n_drop_slots].category = category;
    drop_slots[n_drop_slots].slot = next_drop_slot++;
    return drop_slots[n_drop_slots++].slot;
}

uint32_t drop_slot_of(const char *category)
{
    for (uint32_t i = n_drop_slots; i > 0; i--)
        if (strcmp(drop_slots[i - 1].category, category) == 0)
            return drop_slots[i - 1].slot;
    fail_msg("no drop slot for %s", category);
    return XLB_LB_NO_SLOT;
}

int try_compile(const char *name, const struct xlb_cluster_config *config, const struct eds *e,
                const bool *ejected, uint32_t cluster_slot, struct xlb_lb_cluster **out, char *err,
                size_t err_len)
{
    uint32_t n = e != NULL ? xlb_cluster_compile_count(&e->cfg) : 0;
    uint32_t *slots = calloc(n + 1, sizeof(*slots));
    assert_non_null(slots);
    for (uint32_t i = 0; i < n; i++)
        slots[i] = ENDPOINT_SLOT_BASE + i;
    struct xlb_cluster_compile_input in = {
        .name = name,
        .config = config,
        .endpoints = e != NULL ? &e->cfg : NULL,
        .endpoint_slots = slots,
        .ejected = ejected,
        .cluster_slot = cluster_slot,
        .locality_slot = test_locality_slot,
        .drop_slot = test_drop_slot,
    };
    int rc = xlb_cluster_compile(&in, out, err, err_len);
    free(slots);
    return rc;
}

struct xlb_lb_cluster *compile(const char *name, const struct xlb_cluster_config *config,
                               const struct eds *e, const bool *ejected, uint32_t cluster_slot)
{
    struct xlb_lb_cluster *c;
    char err[256] = "";
    if (try_compile(name, config, e, ejected, cluster_slot, &c, err, sizeof(err)) != 0)
        fail_msg("compile %s: %s", name, err);
    assert_non_null(c);
    return c;
}

/* ---- an L4 VIP with one target ---- */

void vip_init(struct vip1 *v, const char *target_name, struct xlb_lb_cluster *const *leaves,
              uint32_t n)
{
    assert_true(n <= VIP_LEAVES);
    memset(v, 0, sizeof(*v));
    for (uint32_t i = 0; i < n; i++)
        v->leaves[i] = leaves[i];
    v->target = (struct xlb_lb_target){
        .name = XLB_UNCONST(target_name), .ready = true, .n_leaves = n, .leaves = v->leaves};
    v->vip = (struct xlb_lb_vip){.routes = NULL, .n_targets = 1, .targets = &v->target};
}

void vip_one(struct vip1 *v, struct xlb_lb_cluster *c)
{
    vip_init(v, c->name, &c, 1);
}

void vip_done(struct vip1 *v)
{
    for (uint32_t i = 0; i < v->target.n_leaves; i++)
        xlb_lb_cluster_release(v->leaves[i]);
    memset(v, 0, sizeof(*v));
}

enum xlb_lb_outcome pick(const struct vip1 *v, struct xlb_lb_worker *w, uint64_t connection_id,
                         const struct xlb_lb_session *session, struct xlb_lb_trace *trace)
{
    struct xlb_lb_request req = {.connection_id = connection_id, .session = session};
    return xlb_lb_pick(&v->vip, &req, w, trace);
}

void worker(struct xlb_lb_worker *w, struct xlb_worker_load *load,
            const struct xlb_worker_load *loads, unsigned n_workers)
{
    assert_int_equal(xlb_lb_worker_init(w, SEED, load, loads, n_workers), 0);
}

struct xlb_worker_load *loads_new(unsigned n)
{
    struct xlb_worker_load *loads = calloc(n, sizeof(*loads));
    assert_non_null(loads);
    return loads;
}

struct xlb_lb_session session_of(const char *cluster, const char *addr, ...)
{
    struct xlb_lb_session s = {0};
    va_list ap;
    va_start(ap, addr);
    for (const char *a = addr; a != NULL; a = va_arg(ap, const char *)) {
        assert_true(s.n_addresses < XLB_HOST_PORT_LIST_MAX);
        s.addresses[s.n_addresses++] = hp(a);
    }
    va_end(ap);
    if (cluster != NULL) {
        s.cluster = cluster;
        s.cluster_len = (uint32_t)strlen(cluster);
    }
    return s;
}

/* ---- the pick fixture ---- */

void fixture_start(struct fixture *f, struct eds *e, const struct xlb_cluster_config *cfg,
                   const bool *ejected, uint32_t cluster_slot, bool counted)
{
    f->e = e;
    vip_one(&f->v, compile("web", cfg, e, ejected, cluster_slot));
    f->load = counted ? loads_new(1) : NULL;
    worker(&f->w, f->load, NULL, 0);
}

void fixture_rr(struct fixture *f, struct eds *e, const bool *ejected)
{
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    fixture_start(f, e, &cfg, ejected, 1, false);
}

void fixture_done(struct fixture *f)
{
    xlb_lb_worker_fini(&f->w);
    free(f->load);
    vip_done(&f->v);
    free(f->e);
    memset(f, 0, sizeof(*f));
}

struct xlb_lb_trace pick_ok(struct fixture *f, uint64_t connection_id,
                            const struct xlb_lb_session *session)
{
    struct xlb_lb_trace t;
    assert_int_equal(pick(&f->v, &f->w, connection_id, session, &t), XLB_LB_PICKED);
    return t;
}
