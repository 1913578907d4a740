/*
 * The LRS client's life on the event loop: one StreamLoadStats call, the report timer, and the
 * settings of the server's latest LoadStatsResponse. Reports themselves are lrs_report.c's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lrs_internal.h"
#include "xlb_log.h"

struct xlb_lrs_client {
    struct xlb_loop *loop;
    struct xlb_lrs_client_config config;
    Envoy__Config__Core__V3__Node *node; /* our own copy */
    struct xlb_lrs_baseline baseline;    /* outlives streams: see lrs_client.h */
    struct xlb_grpc_stream *stream;
    bool have_settings; /* a LoadStatsResponse was accepted on this stream */
    struct xlb_lrs_settings settings;
    uint64_t timer;
    uint64_t reports;
    /* A send can fail the channel and end the call from inside it: on_stopped then waits
     * until the send has returned, so that the owner never frees the client under our feet. */
    bool sending, stop_pending;
    char stop_reason[300];
};

static uint64_t now(const struct xlb_lrs_client *c)
{
    return c->config.now_ms != NULL ? c->config.now_ms() : xlb_now_ms();
}

/* A deep copy, by a round trip through the wire format. */
static Envoy__Config__Core__V3__Node *copy_node(const Envoy__Config__Core__V3__Node *node)
{
    uint8_t *buf;
    size_t len;
    if (xlb_lrs_pack(&node->base, &buf, &len) != 0)
        return NULL;
    Envoy__Config__Core__V3__Node *copy = envoy__config__core__v3__node__unpack(NULL, len, buf);
    free(buf);
    return copy;
}

struct xlb_lrs_client *xlb_lrs_client_create(struct xlb_loop *loop,
                                             const struct xlb_lrs_client_config *config)
{
    if (config->node == NULL || config->source.enabled_clusters == NULL ||
        config->source.cluster_load == NULL)
        return NULL;
    struct xlb_lrs_client *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->loop = loop;
    c->config = *config;
    if (c->config.min_interval_ms == 0)
        c->config.min_interval_ms = XLB_LRS_MIN_INTERVAL_MS;
    c->node = copy_node(config->node);
    if (c->node == NULL) {
        free(c);
        return NULL;
    }
    c->config.node = c->node;
    xlb_lrs_baseline_init(&c->baseline, now(c));
    return c;
}

static void forget_stream(struct xlb_lrs_client *c)
{
    xlb_loop_cancel(c->loop, c->timer);
    c->timer = 0;
    c->stream = NULL;
    c->have_settings = false;
    xlb_lrs_settings_free(&c->settings);
}

void xlb_lrs_client_stop(struct xlb_lrs_client *c)
{
    if (c->stream != NULL)
        xlb_grpc_stream_cancel(c->stream);
    forget_stream(c);
    c->stop_pending = false;
}

void xlb_lrs_client_destroy(struct xlb_lrs_client *c)
{
    if (c == NULL)
        return;
    xlb_lrs_client_stop(c);
    xlb_lrs_baseline_free(&c->baseline);
    envoy__config__core__v3__node__free_unpacked(c->node, NULL);
    free(c);
}

bool xlb_lrs_client_running(const struct xlb_lrs_client *c)
{
    return c->stream != NULL;
}

uint64_t xlb_lrs_client_interval_ms(const struct xlb_lrs_client *c)
{
    return c->have_settings ? c->settings.interval_ms : 0;
}

uint64_t xlb_lrs_client_reports(const struct xlb_lrs_client *c)
{
    return c->reports;
}

/* Queue msg on the stream; 0, or -1 when it was refused or the call ended meanwhile. */
static int queue(struct xlb_lrs_client *c, const uint8_t *msg, size_t len)
{
    c->sending = true;
    int rc = xlb_grpc_stream_send(c->stream, msg, len);
    c->sending = false;
    return rc == 0 && c->stream != NULL ? 0 : -1;
}

static void notify_stopped(struct xlb_lrs_client *c)
{
    c->stop_pending = false;
    XLB_LOG(NOTICE, LRS, "%s", c->stop_reason);
    /* Last: the owner may restart or destroy the client from here. */
    if (c->config.on_stopped != NULL)
        c->config.on_stopped(c, c->stop_reason, c->config.arg);
}

/* Build and queue one report; the baseline moves only if the stream took it. */
static void send_report(struct xlb_lrs_client *c)
{
    struct xlb_lrs_report report;
    if (xlb_lrs_report_build(&c->baseline, &c->config.source, &c->settings, now(c), &report) != 0) {
        XLB_LOG(WARNING, LRS, "out of memory building a load report; skipped");
        return;
    }
    if (report.n_clusters == 0) {
        xlb_lrs_report_discard(&report);
        return;
    }
    if (queue(c, report.buf, report.len) != 0) {
        /* Not committed: these counts go into the next report, on this stream or another. */
        xlb_lrs_report_discard(&report);
        if (c->stop_pending)
            notify_stopped(c);
        else
            XLB_LOG(WARNING, LRS, "cannot queue a load report; kept for the next one");
        return;
    }
    size_t n = report.n_clusters;
    xlb_lrs_report_commit(&c->baseline, &report);
    c->reports++;
    if (c->config.on_report != NULL)
        c->config.on_report(c, n, c->config.arg);
}

static void on_tick(void *arg)
{
    struct xlb_lrs_client *c = arg;
    /* Re-armed before reporting, so that on_report may stop or destroy the client. */
    c->timer = xlb_loop_add_timeout(c->loop, c->settings.interval_ms, on_tick, c);
    if (c->timer == 0)
        XLB_LOG(ERR, LRS, "cannot arm the report timer; reports stop until reconnect");
    send_report(c);
}

static void apply_settings(struct xlb_lrs_client *c, struct xlb_lrs_settings *settings)
{
    uint64_t old_interval = c->have_settings ? c->settings.interval_ms : 0;
    xlb_lrs_settings_free(&c->settings);
    c->settings = *settings;
    c->have_settings = true;
    if (settings->clamped)
        XLB_LOG(NOTICE, LRS, "server's interval raised to the %" PRIu64 " ms minimum",
                c->settings.interval_ms);
    /* Re-arm only when the interval changed: a server repeating its answer must not keep
     * pushing the next report away. A new cluster set takes effect at the next report. */
    if (c->timer != 0 && c->settings.interval_ms == old_interval)
        return;
    xlb_loop_cancel(c->loop, c->timer);
    c->timer = xlb_loop_add_timeout(c->loop, c->settings.interval_ms, on_tick, c);
    if (c->timer == 0)
        XLB_LOG(ERR, LRS, "cannot arm the report timer; reports stop until reconnect");
}

static void on_message(struct xlb_grpc_stream *s, const uint8_t *msg, size_t len, void *arg)
{
    struct xlb_lrs_client *c = arg;
    struct xlb_lrs_settings settings;
    char why[160];
    if (xlb_lrs_response_parse(msg, len, c->config.min_interval_ms, &settings, why, sizeof(why)) !=
        0) {
        XLB_LOG(WARNING, LRS, "LoadStatsResponse ignored: %s", why);
        return;
    }
    apply_settings(c, &settings);
}

static void on_close(struct xlb_grpc_stream *s, int status, const char *message, void *arg)
{
    struct xlb_lrs_client *c = arg;
    snprintf(c->stop_reason, sizeof(c->stop_reason), "LRS call ended: status %d: %s", status,
             message != NULL ? message : "");
    forget_stream(c);
    c->stop_pending = true;
    if (!c->sending)
        notify_stopped(c);
}

int xlb_lrs_client_start(struct xlb_lrs_client *c, struct xlb_grpc_channel *ch)
{
    static const struct xlb_grpc_stream_callbacks cb = {on_message, on_close};
    if (c->stream != NULL)
        return -1;
    uint8_t *buf;
    size_t len;
    if (xlb_lrs_initial_request(c->node, &buf, &len) != 0)
        return -1;
    c->stream = xlb_grpc_stream_open(ch, XLB_LRS_PATH, &cb, c);
    int rc = c->stream != NULL ? queue(c, buf, len) : -1;
    free(buf);
    if (rc != 0)
        xlb_lrs_client_stop(c); /* also drops a pending on_stopped: the -1 says it */
    return rc;
}
