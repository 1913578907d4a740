/*
 * libFuzzer target for the LB compiler fed with validated but hostile configurations: the
 * input is a Cluster and a ClusterLoadAssignment as an xDS server would send them (two bytes
 * of the Cluster's length, the Cluster, then the assignment). What the validators accept is
 * compiled (control/lb_compile) as a leaf of an L4 VIP, and the compiled tree takes picks:
 * each must name one of the cluster's endpoints, or fail as the LB core's outcomes say. Huge
 * weights, many localities and priorities, ring and table sizes at their bounds, drop
 * categories: nothing may crash, leak or read outside what was compiled (ASan, UBSan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_compile.h"
#include "cluster_config.h"
#include "endpoint_config.h"
#include "xlb_load.h"

#define MAX_ENDPOINTS 4096u
#define PICKS         64u

static struct xlb_worker_load *load;
static struct xlb_lb_worker worker;
static uint32_t next_locality, next_drop;

static uint32_t locality_slot(void *arg, uint32_t priority, const struct xlb_eds_locality *l)
{
    (void)arg;
    (void)priority;
    (void)l;
    return next_locality < XLB_LOCALITY_SLOTS ? next_locality++ : XLB_LB_NO_SLOT;
}

static uint32_t drop_slot(void *arg, const char *category)
{
    (void)arg;
    (void)category;
    return next_drop < XLB_DROP_SLOTS ? next_drop++ : XLB_LB_NO_SLOT;
}

/* Picks over the compiled cluster as the only leaf of an L4 VIP. */
static void pick_some(struct xlb_lb_cluster *c, uint64_t seed)
{
    struct xlb_lb_cluster *leaves[1] = {c};
    struct xlb_lb_target target = {.name = c->name, .ready = true, .n_leaves = 1, .leaves = leaves};
    struct xlb_lb_vip vip = {.routes = NULL, .n_targets = 1, .targets = &target};
    for (uint32_t i = 0; i < PICKS; i++) {
        struct xlb_lb_request request = {.connection_id = seed * 0x9e3779b97f4a7c15u + i};
        struct xlb_lb_trace trace;
        if (xlb_lb_pick(&vip, &request, &worker, &trace) == XLB_LB_PICKED &&
            (trace.cluster != c || trace.endpoint >= c->n_endpoints))
            abort(); /* a pick outside what was compiled */
    }
}

static void compile_and_pick(const struct xlb_cluster_config *cluster,
                             const struct xlb_endpoint_config *eds, uint64_t seed)
{
    uint32_t n = xlb_cluster_compile_count(eds);
    if (cluster->type != XLB_CLUSTER_EDS || n > MAX_ENDPOINTS)
        return;
    static uint32_t slots[MAX_ENDPOINTS];
    static bool ejected[MAX_ENDPOINTS];
    for (uint32_t i = 0; i < n; i++) {
        slots[i] = i;
        ejected[i] = (seed >> (i % 64)) & 1 && i % 3 == 0;
    }
    next_locality = next_drop = 0;
    struct xlb_cluster_compile_input in = {
        .name = cluster->name,
        .config = cluster,
        .endpoints = eds,
        .endpoint_slots = slots,
        .ejected = ejected,
        .cluster_slot = 1,
        .locality_slot = locality_slot,
        .drop_slot = drop_slot,
    };
    struct xlb_lb_cluster *c = NULL;
    char err[256];
    if (xlb_cluster_compile(&in, &c, err, sizeof(err)) != 0)
        return;
    pick_some(c, seed);
    xlb_lb_cluster_release(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (load == NULL) {
        load = calloc(1, sizeof(*load));
        if (load == NULL || xlb_lb_worker_init(&worker, 7, load, load, 1) != 0)
            abort();
    }
    if (size < 2)
        return 0;
    size_t cluster_len = (size_t)data[0] << 8 | data[1];
    if (cluster_len > size - 2)
        return 0;
    const uint8_t *cluster_bytes = data + 2, *eds_bytes = cluster_bytes + cluster_len;
    size_t eds_len = size - 2 - cluster_len;
    Envoy__Config__Cluster__V3__Cluster *cm =
        envoy__config__cluster__v3__cluster__unpack(NULL, cluster_len, cluster_bytes);
    Envoy__Config__Endpoint__V3__ClusterLoadAssignment *em =
        envoy__config__endpoint__v3__cluster_load_assignment__unpack(NULL, eds_len, eds_bytes);
    struct xlb_errors errs = {0};
    struct xlb_cluster_config cluster;
    struct xlb_endpoint_config eds;
    if (cm != NULL && em != NULL && xlb_validate_cluster(cm, &cluster, &errs) == 0) {
        if (xlb_validate_endpoints(em, &eds, &errs) == 0) {
            uint64_t seed = size > 9 ? data[size - 1] | (uint64_t)data[size - 2] << 8 : 1;
            compile_and_pick(&cluster, &eds, seed);
            xlb_endpoint_config_free(&eds);
        }
        xlb_cluster_config_free(&cluster);
    }
    xlb_errors_free(&errs);
    if (cm != NULL)
        envoy__config__cluster__v3__cluster__free_unpacked(cm, NULL);
    if (em != NULL)
        envoy__config__endpoint__v3__cluster_load_assignment__free_unpacked(em, NULL);
    return 0;
}
