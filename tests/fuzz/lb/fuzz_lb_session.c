/*
 * libFuzzer target for a session cookie's value as a client sends it (A55/A60): base64 of an
 * address list and an optional cluster. Whatever the decoder accepts then drives a pick on a
 * small compiled cluster, which must stay within the cluster's endpoints.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_compile.h"

/* The cluster's name, in the char * a parsed configuration holds. */
static char cluster_name[] = "web";

static struct xlb_lb_cluster *cluster;
static struct xlb_lb_vip vip;
static struct xlb_lb_target target;
static struct xlb_lb_worker worker;

/* Three endpoints in two priorities, one of them DRAINING. */
static void build_once(void)
{
    static const char *const addresses[] = {"198.18.0.21:80", "198.18.0.22:80", "[2001:2::31]:80"};
    static struct xlb_host_port where[3];
    static struct xlb_eds_endpoint endpoints[3];
    for (int i = 0; i < 3; i++) {
        if (xlb_host_port_parse(addresses[i], strlen(addresses[i]), &where[i]) != 0)
            abort();
        endpoints[i] = (struct xlb_eds_endpoint){&where[i], 1, XLB_HEALTH_HEALTHY, 1};
    }
    endpoints[1].health = XLB_HEALTH_DRAINING;
    static struct xlb_eds_locality localities[2] = {
        {.weight = 1, .endpoints = &endpoints[0], .n_endpoints = 2},
        {.weight = 1, .endpoints = &endpoints[2], .n_endpoints = 1},
    };
    static struct xlb_eds_priority priorities[2] = {{&localities[0], 1}, {&localities[1], 1}};
    static struct xlb_endpoint_config eds = {.priorities = priorities, .n_priorities = 2};
    static struct xlb_cluster_config config = {.name = cluster_name,
                                               .override_host_status = XLB_OVERRIDE_STATUS_DEFAULT};
    struct xlb_cluster_compile_input in = {.name = "web", .config = &config, .endpoints = &eds};
    char err[64];
    if (xlb_cluster_compile(&in, &cluster, err, sizeof(err)) != 0 ||
        xlb_lb_worker_init(&worker, 1, NULL, NULL, 0) != 0)
        abort();
    target = (struct xlb_lb_target){
        .name = cluster_name, .ready = true, .n_leaves = 1, .leaves = &cluster};
    vip = (struct xlb_lb_vip){.n_targets = 1, .targets = &target};
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (cluster == NULL)
        build_once();
    char scratch[XLB_LB_COOKIE_MAX];
    struct xlb_lb_session session;
    if (size > XLB_LB_COOKIE_MAX || xlb_lb_session_decode((const char *)data, (uint32_t)size,
                                                          scratch, sizeof(scratch), &session) != 0)
        return 0;
    if (session.n_addresses == 0 || session.n_addresses > XLB_HOST_PORT_LIST_MAX)
        abort();
    struct xlb_lb_request request = {.session = &session};
    struct xlb_lb_trace trace;
    if (xlb_lb_pick(&vip, &request, &worker, &trace) == XLB_LB_PICKED &&
        trace.endpoint >= cluster->n_endpoints)
        abort();
    /* Only the DRAINING endpoint's address may never be picked under the default statuses. */
    if (trace.outcome == XLB_LB_PICKED && trace.endpoint == 1)
        abort();
    return 0;
}
