#include "lb_metrics.h"

#include <stdio.h>

#include "metrics_text.h"
#include "xlb_lb_connectivity.h"
#include "xlb_override_map.h"

const char *xlb_lbm_health_name(uint8_t health)
{
    static const char *const names[] = {
        [XLB_HEALTH_UNKNOWN] = "unknown",     [XLB_HEALTH_HEALTHY] = "healthy",
        [XLB_HEALTH_UNHEALTHY] = "unhealthy", [XLB_HEALTH_DRAINING] = "draining",
        [XLB_HEALTH_TIMEOUT] = "timeout",     [XLB_HEALTH_DEGRADED] = "degraded",
    };
    return health < sizeof(names) / sizeof(names[0]) ? names[health] : "other";
}

/* The pick arrays hold exactly these (lb_compile/cluster_compile.c). */
static bool usable(const struct xlb_lbm_endpoint *e)
{
    return e->health != XLB_HEALTH_DRAINING && !e->ejected;
}

/* ---- clusters ---- */

static uint64_t in_flight(const struct xlb_lbm_cluster *c)
{
    return c->started > c->finished ? c->started - c->finished : 0;
}

static void cluster_counts(const struct xlb_lbm_cluster *c, uint64_t *all, uint64_t *ok,
                           uint64_t *ejected)
{
    *all = c->n_endpoints;
    *ok = *ejected = 0;
    for (uint32_t e = 0; e < c->n_endpoints; e++) {
        *ok += usable(&c->endpoints[e]);
        *ejected += c->endpoints[e].ejected;
    }
}

/* One value per cluster, labelled {cluster}: which one is `field`. */
enum cluster_field {
    C_STARTED,
    C_FINISHED,
    C_IN_FLIGHT,
    C_CIRCUIT,
    C_ENDPOINTS,
    C_USABLE,
    C_EJECTED,
};

static uint64_t cluster_value(const struct xlb_lbm_cluster *c, enum cluster_field f)
{
    uint64_t all, ok, ejected;
    cluster_counts(c, &all, &ok, &ejected);
    switch (f) {
    case C_STARTED:
        return c->started;
    case C_FINISHED:
        return c->finished;
    case C_IN_FLIGHT:
        return in_flight(c);
    case C_CIRCUIT:
        return c->circuit_dropped;
    case C_ENDPOINTS:
        return all;
    case C_USABLE:
        return ok;
    default:
        return ejected;
    }
}

static void cluster_families(const struct xlb_lb_metrics *m, struct xlb_text *t)
{
    static const struct {
        enum cluster_field field;
        const char *name, *type, *help;
    } families[] = {
        {C_STARTED, "xlb_cluster_requests_started_total", "counter",
         "Requests (L4: connections) the cluster's picks started."},
        {C_FINISHED, "xlb_cluster_requests_finished_total", "counter",
         "Requests (L4: connections, when their flow ends) that finished."},
        {C_IN_FLIGHT, "xlb_cluster_requests_in_flight", "gauge",
         "Requests started and not finished: what circuit breaking compares with max_requests."},
        {C_CIRCUIT, "xlb_cluster_circuit_breaker_drops_total", "counter",
         "Requests the circuit breaker refused (max_requests in flight)."},
        {C_ENDPOINTS, "xlb_cluster_endpoints", "gauge",
         "Endpoints of the cluster, every priority."},
        {C_USABLE, "xlb_cluster_endpoints_usable", "gauge",
         "Endpoints that may take new requests: neither ejected nor draining."},
        {C_EJECTED, "xlb_cluster_endpoints_ejected", "gauge",
         "Endpoints outlier detection has ejected."},
    };
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
        xlb_metrics_family(t, families[f].name, families[f].type, families[f].help);
        for (uint32_t i = 0; i < m->n_clusters; i++) {
            const struct xlb_label l[] = {{"cluster", m->clusters[i].name}};
            xlb_metrics_sample(t, families[f].name, l, 1,
                               cluster_value(&m->clusters[i], families[f].field));
        }
    }
    xlb_metrics_family(t, "xlb_cluster_chosen_priority", "gauge",
                       "The priority new requests go to (gRPC A56), or -1 when none can.");
    for (uint32_t i = 0; i < m->n_clusters; i++) {
        const struct xlb_lbm_cluster *c = &m->clusters[i];
        const struct xlb_label l[] = {{"cluster", c->name}};
        xlb_metrics_sample_signed(
            t, "xlb_cluster_chosen_priority", l, 1,
            c->chosen_priority == XLB_LBM_NO_PRIORITY ? -1 : (int64_t)c->chosen_priority);
    }
}

static void drop_family(const struct xlb_lb_metrics *m, struct xlb_text *t)
{
    xlb_metrics_family(t, "xlb_drop_overload_total", "counter",
                       "Requests an EDS drop_overloads category dropped (gRPC A27).");
    for (uint32_t i = 0; i < m->n_clusters; i++)
        for (uint32_t d = 0; d < m->clusters[i].n_drops; d++) {
            const struct xlb_lbm_drop *drop = &m->clusters[i].drops[d];
            const struct xlb_label l[] = {{"cluster", m->clusters[i].name},
                                          {"category", drop->category}};
            xlb_metrics_sample(t, "xlb_drop_overload_total", l, 2, drop->dropped);
        }
}

/* ---- localities ---- */

static uint64_t locality_usable(const struct xlb_lbm_cluster *c, uint32_t loc)
{
    uint64_t n = 0;
    for (uint32_t e = 0; e < c->n_endpoints; e++)
        n += c->endpoints[e].locality == loc && usable(&c->endpoints[e]);
    return n;
}

/* Family f's value for localities [from, to) of a cluster, summed. */
static uint64_t locality_value(const struct xlb_lbm_cluster *c, int f, uint32_t from, uint32_t to)
{
    uint64_t sum = 0;
    for (uint32_t l = from; l < to; l++)
        sum += f == 0   ? c->localities[l].started
               : f == 1 ? c->localities[l].weight
                        : locality_usable(c, l);
    return sum;
}

static uint32_t take(uint32_t *room, uint32_t n);

/* At most max_series localities (in cluster order) get series of their own; each cluster's
 * others are summed into one priority="other", locality="other". Returns how many were. */
static uint32_t locality_families(const struct xlb_lb_metrics *m, uint32_t max_series,
                                  struct xlb_text *t)
{
    static const char *const names[] = {"xlb_locality_requests_started_total",
                                        "xlb_locality_weight", "xlb_locality_endpoints_usable"};
    static const char *const types[] = {"counter", "gauge", "gauge"};
    static const char *const helps[] = {"Requests the picks sent to an endpoint of this locality.",
                                        "The locality's load_balancing_weight from EDS.",
                                        "Endpoints of this locality neither ejected nor draining."};
    uint32_t folded = 0;
    for (int f = 0; f < 3; f++) {
        xlb_metrics_family(t, names[f], types[f], helps[f]);
        uint32_t room = max_series;
        folded = 0;
        for (uint32_t i = 0; i < m->n_clusters; i++) {
            const struct xlb_lbm_cluster *c = &m->clusters[i];
            uint32_t shown = take(&room, c->n_localities);
            for (uint32_t l = 0; l < shown; l++) {
                char priority[16];
                snprintf(priority, sizeof(priority), "%u", c->localities[l].priority);
                const struct xlb_label labels[] = {{"cluster", c->name},
                                                   {"priority", priority},
                                                   {"locality", c->localities[l].name}};
                xlb_metrics_sample(t, names[f], labels, 3, locality_value(c, f, l, l + 1));
            }
            if (shown == c->n_localities)
                continue;
            const struct xlb_label other[] = {
                {"cluster", c->name}, {"priority", "other"}, {"locality", "other"}};
            xlb_metrics_sample(t, names[f], other, 3, locality_value(c, f, shown, c->n_localities));
            folded += c->n_localities - shown;
        }
    }
    return folded;
}

/* ---- endpoints ---- */

/* How many of the next cluster's n endpoints get series of their own; the rest are folded. */
static uint32_t take(uint32_t *room, uint32_t n)
{
    uint32_t shown = n < *room ? n : *room;
    *room -= shown;
    return shown;
}

static void endpoint_labels(const struct xlb_lbm_cluster *c, const struct xlb_lbm_endpoint *e,
                            struct xlb_label *l)
{
    l[0] = (struct xlb_label){"cluster", c->name};
    l[1] = (struct xlb_label){"locality", e ? c->localities[e->locality].name : "other"};
    l[2] = (struct xlb_label){"endpoint", e ? e->address : "other"};
}

static void requests_family(const struct xlb_lb_metrics *m, uint32_t max, struct xlb_text *t)
{
    const char *name = "xlb_endpoint_requests_total";
    xlb_metrics_family(t, name, "counter",
                       "Results of the endpoint's requests (L4: connects; success is the "
                       "backend's SYN-ACK, failure its RST or a SYN timeout).");
    uint32_t room = max;
    for (uint32_t i = 0; i < m->n_clusters; i++) {
        const struct xlb_lbm_cluster *c = &m->clusters[i];
        uint32_t shown = take(&room, c->n_endpoints);
        uint64_t ok = 0, failed = 0;
        struct xlb_label l[4];
        for (uint32_t e = 0; e < c->n_endpoints; e++) {
            if (e >= shown) {
                ok += c->endpoints[e].succeeded;
                failed += c->endpoints[e].failed;
                continue;
            }
            endpoint_labels(c, &c->endpoints[e], l);
            l[3] = (struct xlb_label){"result", "success"};
            xlb_metrics_sample(t, name, l, 4, c->endpoints[e].succeeded);
            l[3].value = "failure";
            xlb_metrics_sample(t, name, l, 4, c->endpoints[e].failed);
        }
        if (shown == c->n_endpoints)
            continue;
        endpoint_labels(c, NULL, l);
        l[3] = (struct xlb_label){"result", "success"};
        xlb_metrics_sample(t, name, l, 4, ok);
        l[3].value = "failure";
        xlb_metrics_sample(t, name, l, 4, failed);
    }
}

static void state_families(const struct xlb_lb_metrics *m, uint32_t max, struct xlb_text *t)
{
    xlb_metrics_family(t, "xlb_endpoint_health", "gauge",
                       "1, labelled with the endpoint's EDS health status.");
    uint32_t room = max;
    for (uint32_t i = 0; i < m->n_clusters; i++) {
        const struct xlb_lbm_cluster *c = &m->clusters[i];
        uint32_t shown = take(&room, c->n_endpoints);
        struct xlb_label l[4];
        for (uint32_t e = 0; e < shown; e++) {
            endpoint_labels(c, &c->endpoints[e], l);
            l[3] = (struct xlb_label){"status", xlb_lbm_health_name(c->endpoints[e].health)};
            xlb_metrics_sample(t, "xlb_endpoint_health", l, 4, 1);
        }
    }
    xlb_metrics_family(t, "xlb_endpoint_connectivity", "gauge",
                       "1, labelled with the state of the workers' subchannels to the endpoint "
                       "(L7 stream mode: READY if any worker's is, else CONNECTING, else "
                       "TRANSIENT_FAILURE, else IDLE).");
    room = max;
    for (uint32_t i = 0; i < m->n_clusters; i++) {
        const struct xlb_lbm_cluster *c = &m->clusters[i];
        uint32_t shown = take(&room, c->n_endpoints);
        struct xlb_label l[4];
        for (uint32_t e = 0; e < shown; e++) {
            endpoint_labels(c, &c->endpoints[e], l);
            l[3] = (struct xlb_label){"state", xlb_connectivity_name(c->endpoints[e].connectivity)};
            xlb_metrics_sample(t, "xlb_endpoint_connectivity", l, 4, 1);
        }
    }
    xlb_metrics_family(t, "xlb_endpoint_ejected", "gauge",
                       "1 when outlier detection has ejected the endpoint (endpoint=\"other\": "
                       "how many of the folded ones are).");
    room = max;
    for (uint32_t i = 0; i < m->n_clusters; i++) {
        const struct xlb_lbm_cluster *c = &m->clusters[i];
        uint32_t shown = take(&room, c->n_endpoints);
        uint64_t folded = 0;
        struct xlb_label l[3];
        for (uint32_t e = 0; e < c->n_endpoints; e++) {
            if (e >= shown) {
                folded += c->endpoints[e].ejected;
                continue;
            }
            endpoint_labels(c, &c->endpoints[e], l);
            xlb_metrics_sample(t, "xlb_endpoint_ejected", l, 3, c->endpoints[e].ejected);
        }
        if (shown < c->n_endpoints) {
            endpoint_labels(c, NULL, l);
            xlb_metrics_sample(t, "xlb_endpoint_ejected", l, 3, folded);
        }
    }
}

uint32_t xlb_lb_metrics_render(const struct xlb_lb_metrics *m, uint32_t max_endpoints,
                               struct xlb_text *t)
{
    cluster_families(m, t);
    drop_family(m, t);
    uint32_t localities_folded = locality_families(m, max_endpoints, t);
    xlb_metrics_family(
        t, "xlb_metrics_localities_folded", "gauge",
        "Localities beyond metrics_max_series, counted in locality=\"other\" series.");
    xlb_metrics_sample(t, "xlb_metrics_localities_folded", NULL, 0, localities_folded);
    requests_family(m, max_endpoints, t);
    state_families(m, max_endpoints, t);
    uint32_t folded = 0, room = max_endpoints;
    for (uint32_t i = 0; i < m->n_clusters; i++)
        folded += m->clusters[i].n_endpoints - take(&room, m->clusters[i].n_endpoints);
    xlb_metrics_family(
        t, "xlb_metrics_endpoints_folded", "gauge",
        "Endpoints beyond metrics_max_series, counted in endpoint=\"other\" series.");
    xlb_metrics_sample(t, "xlb_metrics_endpoints_folded", NULL, 0, folded);
    return folded;
}
