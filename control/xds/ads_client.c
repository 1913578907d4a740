/*
 * The ADS client's lifecycle: connection attempts to the configured servers, the ADS call on
 * each, reconnection with gRPC's backoff, A71's fallback and return, and the subscriptions.
 * Finished attempts are freed from a 0 ms timeout, never inside their channel's callbacks.
 */
#include <stdlib.h>
#include <string.h>

#include "ads_internal.h"
#include "xlb_log.h"

static void start_attempt(struct xlb_ads_client *c, unsigned server, bool probe);

/* ---- freeing attempts outside callbacks ---- */

static void reap(void *arg)
{
    struct xlb_ads_client *c = arg;
    c->reap_timer = 0;
    while (c->dead != NULL) {
        struct ads_attempt *a = c->dead;
        c->dead = a->next_dead;
        xlb_grpc_channel_destroy(a->channel);
        for (int t = 0; t < XLB_XDS_TYPES; t++)
            free(a->nonce[t]);
        free(a);
    }
}

static void lend_channel(struct xlb_ads_client *c, struct xlb_grpc_channel *ch)
{
    if (c->config.on_channel != NULL)
        c->config.on_channel(ch, c->arg);
}

static void retire(struct xlb_ads_client *c, struct ads_attempt *a)
{
    if (a == NULL)
        return;
    if (a == c->current)
        lend_channel(c, NULL);
    if (a->stream != NULL)
        xlb_grpc_stream_cancel(a->stream);
    a->stream = NULL;
    if (a == c->current)
        c->current = NULL;
    if (c->probes[a->server].attempt == a)
        c->probes[a->server].attempt = NULL;
    a->next_dead = c->dead;
    c->dead = a;
    if (c->reap_timer == 0)
        c->reap_timer = xlb_loop_add_timeout(c->loop, 0, reap, c);
}

/* ---- choosing the next server (A71) ---- */

static bool some_watched_uncached(const struct xlb_ads_client *c)
{
    for (int t = 0; t < XLB_XDS_TYPES; t++)
        for (const struct xlb_xds_resource *r = c->cache->list[t]; r != NULL; r = r->next)
            if (r->watched && !r->has_value && r->state != XLB_RES_DOES_NOT_EXIST)
                return true;
    return false;
}

static void on_retry(void *arg)
{
    struct xlb_ads_client *c = arg;
    c->retry_timer = 0;
    start_attempt(c, c->server, false);
}

static void on_probe(void *arg)
{
    struct ads_probe *p = arg;
    p->timer = 0;
    if (p->server < p->client->server && p->attempt == NULL)
        start_attempt(p->client, p->server, true);
}

static void schedule_probe(struct xlb_ads_client *c, struct ads_probe *p, uint64_t delay)
{
    if (p->timer == 0 && p->attempt == NULL)
        p->timer = xlb_loop_add_timeout(c->loop, delay, on_probe, p);
}

/* Stop retrying server i: it answered and is current, or a better one did. */
static void stop_probe(struct xlb_ads_client *c, struct ads_probe *p)
{
    retire(c, p->attempt);
    xlb_loop_cancel(c->loop, p->timer);
    p->timer = 0;
    xlb_grpc_backoff_reset(&p->backoff);
}

/* Every server above the current one is being retried; one not yet is tried after the first
 * backoff delay (the others keep their own schedule). */
static void probe_higher_servers(struct xlb_ads_client *c)
{
    for (unsigned i = 0; i < c->server; i++)
        schedule_probe(c, &c->probes[i], XLB_BACKOFF_INITIAL_MS);
}

/*
 * The current attempt ended. A stream that had delivered a response did not fail (A57: servers
 * end streams for load balancing or connection age): a new one starts at once on the same
 * server. One that ended before any response, or a connection that failed, did: fall back to
 * the next server at once while some watched resource is not cached (A71). Otherwise (all is
 * cached, or no server is left) the same server is retried with backoff: A71 falls back only
 * for resources it lacks, and the higher-priority servers keep being retried meanwhile.
 */
static void current_failed(struct xlb_ads_client *c, const char *reason)
{
    bool answered = c->current != NULL && c->current->got_response;
    free(c->last_error);
    c->last_error = strdup(reason);
    if (answered)
        XLB_LOG(NOTICE, XDS, "%s: %s; reconnecting", c->config.servers[c->server].uri, reason);
    else
        XLB_LOG(WARNING, XDS, "%s: %s", c->config.servers[c->server].uri, reason);
    retire(c, c->current);
    ads_cancel_all_timers(c);
    uint64_t delay = 0;
    if (answered) {
        /* the response already reset the backoff; the server stays */
    } else if (some_watched_uncached(c) && c->server + 1 < c->config.n_servers) {
        c->server++;
        probe_higher_servers(c);
    } else {
        delay = xlb_grpc_backoff_next(&c->backoff);
    }
    c->next_retry_ms = xlb_now_ms() + delay;
    c->retry_timer = xlb_loop_add_timeout(c->loop, delay, on_retry, c);
}

static void probe_failed(struct xlb_ads_client *c, struct ads_attempt *a)
{
    struct ads_probe *p = &c->probes[a->server];
    retire(c, a);
    if (a->server < c->server)
        schedule_probe(c, p, xlb_grpc_backoff_next(&p->backoff));
}

/*
 * A higher-priority server answered: it becomes current. The previous current (backing off
 * or not) and every server below the new one stop; those above it go on being retried.
 */
static void promote_probe(struct xlb_ads_client *c, struct ads_attempt *a)
{
    XLB_LOG(NOTICE, XDS, "back on %s", c->config.servers[a->server].uri);
    unsigned old = c->server;
    c->probes[a->server].attempt = NULL;
    stop_probe(c, &c->probes[a->server]);
    for (unsigned i = a->server + 1; i < old; i++)
        stop_probe(c, &c->probes[i]);
    retire(c, c->current);
    xlb_loop_cancel(c->loop, c->retry_timer);
    c->retry_timer = 0;
    ads_cancel_all_timers(c); /* the old stream's; the new one's start with its requests */
    c->current = a;
    c->server = a->server;
    lend_channel(c, a->channel);
}

static bool is_probe(const struct xlb_ads_client *c, const struct ads_attempt *a)
{
    return a != c->current && c->probes[a->server].attempt == a;
}

/* ---- the ADS call ---- */

static void on_message(struct xlb_grpc_stream *s, const uint8_t *msg, size_t len, void *arg)
{
    struct ads_attempt *a = arg;
    struct xlb_ads_client *c = a->client;
    if (is_probe(c, a))
        promote_probe(c, a);
    if (a != c->current)
        return;
    /* Garbage instead of a DiscoveryResponse is no answer: end this stream, and back off unless
     * a real response came before it. */
    if (ads_handle_response(c, a, msg, len) != 0) {
        current_failed(c, "an undecodable DiscoveryResponse");
        return;
    }
    if (!a->got_response) {
        a->got_response = true;
        xlb_grpc_backoff_reset(&c->backoff);
        free(c->last_error);
        c->last_error = NULL;
    }
}

static void on_call_closed(struct xlb_grpc_stream *s, int status, const char *message, void *arg)
{
    struct ads_attempt *a = arg;
    struct xlb_ads_client *c = a->client;
    a->stream = NULL;
    char reason[512];
    snprintf(reason, sizeof(reason), "ADS call ended: status %d: %s", status, message);
    if (a == c->current)
        current_failed(c, reason);
    else if (is_probe(c, a))
        probe_failed(c, a);
}

/* Subscribe to everything watched, on a fresh stream. */
static void send_all(struct xlb_ads_client *c, struct ads_attempt *a)
{
    for (int t = 0; t < XLB_XDS_TYPES; t++) {
        if (a == c->current)
            ads_take_subscription(c, t);
        if (c->types[t].n_names == 0)
            continue;
        if (ads_send_request(c, a, t, NULL) == 0 && a == c->current)
            ads_start_timers(c, t, true);
    }
}

static void on_ready(struct xlb_grpc_channel *ch, void *arg)
{
    struct ads_attempt *a = arg;
    static const struct xlb_grpc_stream_callbacks cb = {on_message, on_call_closed};
    a->stream = xlb_grpc_stream_open(ch, ADS_PATH, &cb, a);
    if (a->stream != NULL)
        send_all(a->client, a);
    if (a == a->client->current)
        lend_channel(a->client, ch);
}

static void on_closed(struct xlb_grpc_channel *ch, const char *reason, void *arg)
{
    struct ads_attempt *a = arg;
    struct xlb_ads_client *c = a->client;
    if (a == c->current)
        current_failed(c, reason);
    else if (is_probe(c, a))
        probe_failed(c, a);
}

static void start_attempt(struct xlb_ads_client *c, unsigned server, bool probe)
{
    struct ads_attempt *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return;
    a->client = c;
    a->server = server;
    if (probe)
        c->probes[server].attempt = a;
    else
        c->current = a;
    static const struct xlb_grpc_channel_callbacks cb = {on_ready, on_closed};
    a->channel = xlb_grpc_channel_connect(c->loop, &c->config.servers[server].target, &cb, a);
    if (a->channel == NULL) {
        if (probe)
            probe_failed(c, a);
        else
            current_failed(c, "cannot create a channel (see the log)");
    }
}

/* ---- public ---- */

struct xlb_ads_client *xlb_ads_client_create(struct xlb_loop *loop, struct xlb_xds_cache *cache,
                                             const struct xlb_ads_config *config,
                                             xlb_ads_changed_cb changed, void *arg)
{
    if (config->n_servers == 0)
        return NULL;
    struct xlb_ads_client *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->loop = loop;
    c->cache = cache;
    c->config = *config;
    if (c->config.does_not_exist_ms == 0)
        c->config.does_not_exist_ms = XLB_ADS_DOES_NOT_EXIST_MS;
    c->changed = changed;
    c->arg = arg;
    xlb_grpc_backoff_init(&c->backoff, config->backoff_seed);
    for (unsigned i = 0; i < XLB_ADS_MAX_SERVERS; i++) {
        c->probes[i].client = c;
        c->probes[i].server = i;
        xlb_grpc_backoff_init(&c->probes[i].backoff, config->backoff_seed + i + 1);
    }
    start_attempt(c, 0, false);
    return c;
}

void xlb_ads_client_update_watches(struct xlb_ads_client *c)
{
    struct ads_attempt *a = c->current;
    for (int t = 0; t < XLB_XDS_TYPES; t++) {
        if (!ads_subscription_changed(c, t))
            continue;
        /* Resources no longer watched stop their does-not-exist timers. */
        for (struct xlb_xds_resource *r = c->cache->list[t]; r != NULL; r = r->next)
            if (!r->watched)
                ads_cancel_timer(c, t, r->name);
        ads_take_subscription(c, t);
        if (a != NULL && a->stream != NULL && xlb_grpc_channel_ready(a->channel) &&
            (c->types[t].n_names > 0 || a->sent[t]) && ads_send_request(c, a, t, NULL) == 0)
            ads_start_timers(c, t, false);
        for (unsigned i = 0; i < c->server; i++) {
            struct ads_attempt *p = c->probes[i].attempt;
            if (p != NULL && p->stream != NULL)
                ads_send_request(c, p, t, NULL);
        }
    }
}

void xlb_ads_client_destroy(struct xlb_ads_client *c)
{
    if (c == NULL)
        return;
    ads_cancel_all_timers(c);
    xlb_loop_cancel(c->loop, c->retry_timer);
    xlb_loop_cancel(c->loop, c->reap_timer);
    retire(c, c->current);
    for (unsigned i = 0; i < XLB_ADS_MAX_SERVERS; i++)
        stop_probe(c, &c->probes[i]);
    c->reap_timer = 0;
    reap(c);
    for (int t = 0; t < XLB_XDS_TYPES; t++) {
        ads_free_names(&c->types[t]);
        free(c->types[t].version);
        free(c->types[t].last_error);
    }
    for (unsigned i = 0; i < XLB_ADS_NACK_HISTORY; i++) {
        free(c->nacks[i].version);
        free(c->nacks[i].error);
    }
    free(c->last_error);
    free(c);
}

static double ago_s(uint64_t ms)
{
    return ms ? (double)(xlb_now_ms() - ms) / 1000.0 : -1;
}

cJSON *xlb_ads_client_status(const struct xlb_ads_client *c)
{
    cJSON *s = cJSON_CreateObject();
    const struct ads_attempt *a = c->current;
    cJSON_AddStringToObject(s, "server", c->config.servers[c->server].uri);
    cJSON_AddNumberToObject(s, "server_index", c->server);
    cJSON_AddStringToObject(s, "stream",
                            a == NULL           ? "backing off"
                            : a->stream == NULL ? "connecting"
                            : a->got_response   ? "established"
                                                : "waiting for a response");
    if (c->retry_timer != 0)
        cJSON_AddNumberToObject(s, "retry_in_s",
                                (double)(c->next_retry_ms - xlb_now_ms()) / 1000.0);
    if (c->last_error != NULL)
        cJSON_AddStringToObject(s, "last_error", c->last_error);
    cJSON *probing = cJSON_AddArrayToObject(s, "probing");
    for (unsigned i = 0; i < c->server; i++)
        cJSON_AddItemToArray(probing, cJSON_CreateString(c->config.servers[i].uri));
    cJSON_AddBoolToObject(s, "probing_primary", c->server > 0);
    cJSON *types = cJSON_AddObjectToObject(s, "types");
    for (int t = 0; t < XLB_XDS_TYPES; t++) {
        const struct ads_type_state *ts = &c->types[t];
        const char *nonce = a != NULL && a->nonce[t] != NULL ? a->nonce[t] : "";
        cJSON *o = cJSON_AddObjectToObject(types, xlb_xds_type_name[t]);
        cJSON_AddNumberToObject(o, "subscribed", (double)ts->n_names);
        cJSON_AddStringToObject(o, "version", ts->version ? ts->version : "");
        cJSON_AddStringToObject(o, "nonce", nonce);
        cJSON_AddNumberToObject(o, "last_ack_s_ago", ago_s(ts->last_ack_ms));
        cJSON_AddNumberToObject(o, "last_nack_s_ago", ago_s(ts->last_nack_ms));
        if (ts->last_error != NULL)
            cJSON_AddStringToObject(o, "last_nack_error", ts->last_error);
    }
    cJSON *history = cJSON_AddArrayToObject(s, "nack_history");
    for (unsigned i = 0; i < c->n_nacks; i++) {
        unsigned at = (c->next_nack + XLB_ADS_NACK_HISTORY - c->n_nacks + i) % XLB_ADS_NACK_HISTORY;
        const struct ads_nack_record *n = &c->nacks[at];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "s_ago", ago_s(n->at_ms));
        cJSON_AddStringToObject(o, "type", xlb_xds_type_name[n->type]);
        cJSON_AddStringToObject(o, "version", n->version ? n->version : "");
        cJSON_AddStringToObject(o, "error", n->error ? n->error : "");
        cJSON_AddItemToArray(history, o);
    }
    return s;
}

void xlb_ads_client_counters(const struct xlb_ads_client *c, struct xlb_ads_counters *out)
{
    const struct ads_attempt *a = c->current;
    out->server = c->config.servers[c->server].uri;
    out->connected = a != NULL && a->stream != NULL && a->got_response;
    for (int t = 0; t < XLB_XDS_TYPES; t++) {
        out->acks[t] = c->types[t].acks;
        out->nacks[t] = c->types[t].nacks;
    }
}
