/*
 * The messages of StreamLoadStats other than reports: the server's LoadStatsResponse (which
 * clusters, how often) and the client's first request (who we are).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envoy/service/load_stats/v3/lrs.pb-c.h"
#include "lrs_internal.h"
#include "xlb_const.h"

#define NANOS_PER_SECOND 1000000000

typedef Envoy__Service__LoadStats__V3__LoadStatsResponse lrs_response;

/* The interval in ms, or -1 with a reason. A missing interval reads as 0 (then clamped). */
static int64_t interval_ms(const Google__Protobuf__Duration *d, char *why, size_t why_len)
{
    if (d == NULL)
        return 0;
    if (d->seconds < 0 || d->nanos < 0) {
        snprintf(why, why_len, "negative load_reporting_interval (%lld s, %d ns)",
                 (long long)d->seconds, (int)d->nanos);
        return -1;
    }
    if (d->nanos >= NANOS_PER_SECOND) {
        snprintf(why, why_len, "load_reporting_interval nanos out of range (%d)", (int)d->nanos);
        return -1;
    }
    if ((uint64_t)d->seconds > XLB_LRS_MAX_INTERVAL_MS / 1000) {
        snprintf(why, why_len, "load_reporting_interval of %lld s is above the %llu s limit",
                 (long long)d->seconds, XLB_LRS_MAX_INTERVAL_MS / 1000);
        return -1;
    }
    /* Round sub-millisecond parts up: never report sooner than asked. */
    return d->seconds * 1000 + (d->nanos + 999999) / 1000000;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Copy the non-empty names, sorted and without duplicates: a name listed twice must not be
 * reported twice (both would carry the same delta). */
static int copy_clusters(const lrs_response *resp, struct xlb_lrs_settings *out)
{
    out->clusters = calloc(resp->n_clusters ? resp->n_clusters : 1, sizeof(char *));
    if (out->clusters == NULL)
        return -1;
    for (size_t i = 0; i < resp->n_clusters; i++) {
        if (resp->clusters[i][0] == '\0')
            continue;
        out->clusters[out->n_clusters] = strdup(resp->clusters[i]);
        if (out->clusters[out->n_clusters] == NULL)
            return -1;
        out->n_clusters++;
    }
    qsort(out->clusters, out->n_clusters, sizeof(char *), cmp_str);
    size_t kept = 0;
    for (size_t i = 0; i < out->n_clusters; i++) {
        if (kept > 0 && strcmp(out->clusters[kept - 1], out->clusters[i]) == 0)
            free(out->clusters[i]);
        else
            out->clusters[kept++] = out->clusters[i];
    }
    out->n_clusters = kept;
    return 0;
}

static int read_response(const lrs_response *resp, uint64_t min_interval_ms,
                         struct xlb_lrs_settings *out, char *why, size_t why_len)
{
    int64_t ms = interval_ms(resp->load_reporting_interval, why, why_len);
    if (ms < 0)
        return -1;
    memset(out, 0, sizeof(*out));
    out->send_all = resp->send_all_clusters;
    out->interval_ms = (uint64_t)ms;
    if (out->interval_ms < min_interval_ms) {
        out->interval_ms = min_interval_ms;
        out->clamped = true;
    }
    if (!out->send_all && copy_clusters(resp, out) != 0) {
        xlb_lrs_settings_free(out);
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    return 0;
}

int xlb_lrs_response_parse(const uint8_t *msg, size_t len, uint64_t min_interval_ms,
                           struct xlb_lrs_settings *out, char *why, size_t why_len)
{
    lrs_response *resp =
        envoy__service__load_stats__v3__load_stats_response__unpack(NULL, len, msg);
    if (resp == NULL) {
        snprintf(why, why_len, "undecodable LoadStatsResponse (%zu bytes)", len);
        return -1;
    }
    struct xlb_lrs_settings parsed;
    int rc = read_response(resp, min_interval_ms, &parsed, why, why_len);
    envoy__service__load_stats__v3__load_stats_response__free_unpacked(resp, NULL);
    if (rc == 0)
        *out = parsed;
    return rc;
}

void xlb_lrs_settings_free(struct xlb_lrs_settings *settings)
{
    for (size_t i = 0; i < settings->n_clusters; i++)
        free(settings->clusters[i]);
    free(settings->clusters);
    memset(settings, 0, sizeof(*settings));
}

bool xlb_lrs_settings_wants(const struct xlb_lrs_settings *settings, const char *cluster)
{
    if (settings->send_all)
        return true;
    if (settings->n_clusters == 0)
        return false; /* bsearch must not see the NULL of an empty list */
    return bsearch(&cluster, settings->clusters, settings->n_clusters, sizeof(char *), cmp_str) !=
           NULL;
}

int xlb_lrs_pack(const ProtobufCMessage *msg, uint8_t **buf, size_t *len)
{
    *len = protobuf_c_message_get_packed_size(msg);
    *buf = malloc(*len ? *len : 1);
    if (*buf == NULL)
        return -1;
    protobuf_c_message_pack(msg, *buf);
    return 0;
}

int xlb_lrs_initial_request(const Envoy__Config__Core__V3__Node *node, uint8_t **buf, size_t *len)
{
    Envoy__Config__Core__V3__Node copy = *node;
    char **features = calloc(node->n_client_features + 1, sizeof(*features));
    if (features == NULL)
        return -1;
    bool present = false;
    for (size_t i = 0; i < node->n_client_features; i++) {
        features[i] = node->client_features[i];
        present = present || strcmp(features[i], XLB_LRS_FEATURE_SEND_ALL) == 0;
    }
    copy.client_features = features;
    copy.n_client_features = node->n_client_features;
    if (!present)
        features[copy.n_client_features++] =
            XLB_UNCONST(XLB_LRS_FEATURE_SEND_ALL); /* packed only */
    Envoy__Service__LoadStats__V3__LoadStatsRequest req;
    envoy__service__load_stats__v3__load_stats_request__init(&req);
    req.node = &copy;
    int rc = xlb_lrs_pack(&req.base, buf, len);
    free(features);
    return rc;
}
