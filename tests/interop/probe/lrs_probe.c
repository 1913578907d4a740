/*
 * lrs_probe: xlb's LRS client against a real LRS server, without the rest of xlb. A fake stats
 * source counts known traffic on a timer; the client reports it as the server asks. After the
 * (N-1)th report queued the traffic makes one last step and stops, so the Nth report carries
 * the rest; then the probe prints the source's final cumulative figures as JSON (what the
 * server's reports must add up to) and exits 0. When the LRS call or the channel ends, the
 * probe starts the client again (on the same channel if it is still up, else on a new one,
 * retried until the server is back), as an owner does. Exits 1 on --timeout-ms or a failure
 * (reason on stderr).
 *
 *   lrs_probe --server URI --node-id ID [--reports N] [--min-interval-ms M] [--timeout-ms T]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_loop.h"
#include "grpc_channel.h"
#include "lrs_client.h"
#include "xlb_const.h"

#define TICK_MS      20
#define RESTART_MS   100
#define N_CLUSTERS   3
#define MAX_LOCALITY 2
#define MAX_DROPS    1

struct fake_cluster {
    const char *name, *service;
    bool enabled;
    struct xlb_lrs_locality_load loc[MAX_LOCALITY];
    size_t n_loc;
    struct xlb_lrs_drop_load drops[MAX_DROPS];
    size_t n_drops;
    uint64_t uncategorized;
};

struct probe {
    struct xlb_loop *loop;
    struct xlb_grpc_target target;
    struct xlb_grpc_channel *ch;
    bool channel_dead, restart_pending;
    struct xlb_lrs_client *lrs;
    struct fake_cluster clusters[N_CLUSTERS];
    const char *names[N_CLUSTERS];
    uint64_t ticks;
    bool frozen, done;
    unsigned reports, wanted, streams;
    int result; /* -1 while running */
};

static void init_clusters(struct probe *p)
{
    struct fake_cluster *a = &p->clusters[0], *b = &p->clusters[1], *off = &p->clusters[2];
    *a = (struct fake_cluster){.name = "cluster-a", .service = "svc-a", .enabled = true};
    a->loc[0] = (struct xlb_lrs_locality_load){.region = "r1", .zone = "z1"};
    a->loc[1] = (struct xlb_lrs_locality_load){
        .region = "r2", .zone = "z2", .sub_zone = "s2", .priority = 1};
    a->n_loc = 2;
    a->drops[0] = (struct xlb_lrs_drop_load){.category = "throttle"};
    a->n_drops = 1;
    *b = (struct fake_cluster){.name = "cluster-b", .enabled = true};
    b->loc[0] = (struct xlb_lrs_locality_load){.region = "r3"};
    b->n_loc = 1;
    b->drops[0] = (struct xlb_lrs_drop_load){.category = "lb"};
    b->n_drops = 1;
    *off = (struct fake_cluster){.name = "cluster-off"}; /* lrs_server not set: never reported */
    off->loc[0] = (struct xlb_lrs_locality_load){.region = "r9"};
    off->n_loc = 1;
}

/* One step of known traffic; the gauges stay above zero so every final report shows them. */
static void advance(struct probe *p)
{
    uint64_t t = ++p->ticks;
    struct fake_cluster *a = &p->clusters[0], *b = &p->clusters[1], *off = &p->clusters[2];
    a->loc[0].issued += 3;
    a->loc[0].successful += 2;
    a->loc[0].errors += 1;
    a->loc[0].in_progress = 1 + t % 3;
    a->loc[1].issued += 2;
    a->loc[1].successful += 2;
    a->loc[1].in_progress = 1 + t % 2;
    a->drops[0].dropped += 1;
    a->uncategorized += t % 2;
    b->loc[0].issued += 1;
    b->loc[0].successful += t % 4 != 0;
    b->loc[0].errors += t % 4 == 0;
    b->loc[0].in_progress = 2;
    b->drops[0].dropped += t % 3 == 0;
    off->loc[0].issued += 7;
}

static void on_tick(void *arg)
{
    struct probe *p = arg;
    if (p->frozen)
        return;
    advance(p);
    xlb_loop_add_timeout(p->loop, TICK_MS, on_tick, p);
}

static size_t source_enabled(void *arg, const char *const **names)
{
    struct probe *p = arg;
    size_t n = 0;
    for (size_t i = 0; i < N_CLUSTERS && !p->done; i++)
        if (p->clusters[i].enabled)
            p->names[n++] = p->clusters[i].name;
    *names = p->names;
    return n;
}

static int source_load(void *arg, const char *cluster, struct xlb_lrs_cluster_load *out)
{
    struct probe *p = arg;
    for (size_t i = 0; i < N_CLUSTERS; i++) {
        const struct fake_cluster *c = &p->clusters[i];
        if (strcmp(c->name, cluster) != 0)
            continue;
        *out = (struct xlb_lrs_cluster_load){c->service, c->loc,     c->n_loc,
                                             c->drops,   c->n_drops, c->uncategorized};
        return 0;
    }
    return -1;
}

static void print_totals(const struct probe *p)
{
    printf("{\"reports\": %u, \"streams\": %u, \"clusters\": {", p->reports, p->streams);
    for (size_t i = 0; i < N_CLUSTERS; i++) {
        const struct fake_cluster *c = &p->clusters[i];
        printf("%s\"%s\": {\"service\": \"%s\", \"uncategorized\": %" PRIu64 ", \"drops\": {",
               i ? ", " : "", c->name, c->service ? c->service : "", c->uncategorized);
        for (size_t d = 0; d < c->n_drops; d++)
            printf("%s\"%s\": %" PRIu64, d ? ", " : "", c->drops[d].category, c->drops[d].dropped);
        printf("}, \"localities\": [");
        for (size_t l = 0; l < c->n_loc; l++) {
            const struct xlb_lrs_locality_load *x = &c->loc[l];
            printf("%s{\"region\": \"%s\", \"zone\": \"%s\", \"sub_zone\": \"%s\", "
                   "\"priority\": %u, \"issued\": %" PRIu64 ", \"successful\": %" PRIu64
                   ", \"errors\": %" PRIu64 ", \"in_progress\": %" PRIu64 "}",
                   l ? ", " : "", x->region ? x->region : "", x->zone ? x->zone : "",
                   x->sub_zone ? x->sub_zone : "", x->priority, x->issued, x->successful, x->errors,
                   x->in_progress);
        }
        printf("]}");
    }
    printf("}}\n");
    fflush(stdout);
}

static void finish(struct probe *p, int result, const char *why)
{
    if (p->result >= 0)
        return;
    p->result = result;
    if (why != NULL)
        fprintf(stderr, "lrs_probe: %s\n", why);
    xlb_loop_stop(p->loop);
}

static void stop_loop(void *arg)
{
    finish(arg, 0, NULL);
}

static void on_report(struct xlb_lrs_client *c, size_t n_clusters, void *arg)
{
    struct probe *p = arg;
    p->reports++;
    if (p->reports + 1 == p->wanted) {
        advance(p); /* a last step for the final report to carry */
        p->frozen = true;
    } else if (p->reports == p->wanted) {
        print_totals(p);
        p->done = true; /* no cluster left to report: nothing more is sent */
        /* Give the report a moment to leave before stopping. */
        xlb_loop_add_timeout(p->loop, 300, stop_loop, p);
    }
}

static void start_lrs(struct probe *p)
{
    if (p->result >= 0)
        return;
    p->streams++;
    if (xlb_lrs_client_start(p->lrs, p->ch) != 0)
        finish(p, 1, "cannot start the LRS call");
}

static void on_ready(struct xlb_grpc_channel *ch, void *arg)
{
    start_lrs(arg);
}

static void restart(void *arg);

/* Start again soon (once, however many callbacks ask), never from inside a callback. */
static void schedule_restart(struct probe *p)
{
    if (p->restart_pending)
        return;
    p->restart_pending = true;
    xlb_loop_add_timeout(p->loop, RESTART_MS, restart, p);
}

static void on_closed(struct xlb_grpc_channel *ch, const char *reason, void *arg)
{
    struct probe *p = arg;
    fprintf(stderr, "lrs_probe: channel closed: %s\n", reason);
    p->channel_dead = true; /* destroyed and replaced from a timeout, not from here */
    schedule_restart(p);    /* also when it never connected: the server may be restarting */
}

static void restart(void *arg)
{
    static const struct xlb_grpc_channel_callbacks cb = {on_ready, on_closed};
    struct probe *p = arg;
    p->restart_pending = false;
    if (p->result >= 0 || xlb_lrs_client_running(p->lrs))
        return;
    if (!p->channel_dead && xlb_grpc_channel_ready(p->ch)) {
        start_lrs(p);
        return;
    }
    xlb_grpc_channel_destroy(p->ch);
    p->channel_dead = false;
    p->ch = xlb_grpc_channel_connect(p->loop, &p->target, &cb, p);
    if (p->ch == NULL)
        finish(p, 1, "cannot create a channel");
}

static void on_stopped(struct xlb_lrs_client *c, const char *reason, void *arg)
{
    struct probe *p = arg;
    fprintf(stderr, "lrs_probe: %s; restarting\n", reason);
    schedule_restart(p);
}

static void on_timeout(void *arg)
{
    finish(arg, 1, "timed out");
}

struct options {
    const char *server, *node_id;
    unsigned long timeout_ms, min_interval_ms, reports;
};

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option opts[] = {
        {"server", required_argument, NULL, 's'},
        {"node-id", required_argument, NULL, 'n'},
        {"reports", required_argument, NULL, 'r'},
        {"min-interval-ms", required_argument, NULL, 'm'},
        {"timeout-ms", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){.timeout_ms = 20000, .reports = 5};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            o->server = optarg;
            break;
        case 'n':
            o->node_id = optarg;
            break;
        case 'r':
            o->reports = strtoul(optarg, NULL, 10);
            break;
        case 'm':
            o->min_interval_ms = strtoul(optarg, NULL, 10);
            break;
        case 'T':
            o->timeout_ms = strtoul(optarg, NULL, 10);
            break;
        default:
            return -1;
        }
    }
    if (o->server == NULL || o->node_id == NULL || o->reports < 2) {
        fprintf(stderr, "usage: lrs_probe --server URI --node-id ID [--reports N>=2] "
                        "[--min-interval-ms M] [--timeout-ms T]\n");
        return -1;
    }
    return 0;
}

static struct xlb_lrs_client *create_client(struct probe *p, const struct options *o)
{
    Envoy__Config__Core__V3__Locality loc;
    envoy__config__core__v3__locality__init(&loc);
    loc.region = XLB_STR("interop");
    Envoy__Config__Core__V3__Node node;
    envoy__config__core__v3__node__init(&node);
    node.id = XLB_UNCONST(o->node_id);
    node.cluster = XLB_STR("xlb-interop");
    node.locality = &loc;
    node.user_agent_name = XLB_STR("xlb");
    node.user_agent_version_type_case =
        ENVOY__CONFIG__CORE__V3__NODE__USER_AGENT_VERSION_TYPE_USER_AGENT_VERSION;
    node.user_agent_version = XLB_STR("lrs_probe");
    struct xlb_lrs_client_config config = {
        .node = &node,
        .source = {source_enabled, source_load, p},
        .min_interval_ms = o->min_interval_ms,
        .on_stopped = on_stopped,
        .on_report = on_report,
        .arg = p,
    };
    return xlb_lrs_client_create(p->loop, &config);
}

int main(int argc, char **argv)
{
    static const struct xlb_grpc_channel_callbacks cb = {on_ready, on_closed};
    struct options o;
    struct probe p = {.result = -1};
    char error[256];
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    if (xlb_grpc_target_parse(o.server, &p.target, error, sizeof(error)) != 0) {
        fprintf(stderr, "lrs_probe: %s\n", error);
        return 2;
    }
    p.wanted = (unsigned)o.reports;
    init_clusters(&p);
    p.loop = xlb_loop_create();
    p.lrs = create_client(&p, &o);
    p.ch = xlb_grpc_channel_connect(p.loop, &p.target, &cb, &p);
    if (p.loop == NULL || p.lrs == NULL || p.ch == NULL) {
        fprintf(stderr, "lrs_probe: cannot set up\n");
        return 1;
    }
    xlb_loop_add_timeout(p.loop, TICK_MS, on_tick, &p);
    xlb_loop_add_timeout(p.loop, o.timeout_ms, on_timeout, &p);
    xlb_loop_run(p.loop);
    xlb_lrs_client_stop(p.lrs); /* before the channel it runs on goes */
    xlb_grpc_channel_destroy(p.ch);
    xlb_lrs_client_destroy(p.lrs);
    xlb_loop_destroy(p.loop);
    return p.result == 0 ? 0 : 1;
}
