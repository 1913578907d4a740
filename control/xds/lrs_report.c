/*
 * One load report: the stats source's cumulative counters minus what the baseline says was
 * last reported, as a LoadStatsRequest. The new cumulative values travel with the report as
 * cluster marks and become the baseline only when the report is committed (it was queued on
 * a stream), so a report lost with its stream is folded into the next one.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "envoy/service/load_stats/v3/lrs.pb-c.h"
#include "lrs_internal.h"

struct xlb_lrs_locality_delta {
    uint64_t issued, successful, errors, in_progress;
};

struct xlb_lrs_delta {
    struct xlb_lrs_locality_delta *localities; /* parallel to the mark's localities */
    uint64_t *drops;                           /* parallel to the mark's drops */
    uint64_t uncategorized_drops;
    uint64_t interval_ms;
};

static char *dup_or_empty(const char *s)
{
    return strdup(s != NULL ? s : "");
}

static bool same_str(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static bool same_locality(const struct xlb_lrs_locality_mark *m,
                          const struct xlb_lrs_locality_load *l)
{
    return m->priority == l->priority && same_str(m->region, l->region) &&
           same_str(m->zone, l->zone) && same_str(m->sub_zone, l->sub_zone);
}

static const struct xlb_lrs_locality_mark *find_locality(const struct xlb_lrs_locality_mark *marks,
                                                         size_t n,
                                                         const struct xlb_lrs_locality_load *l)
{
    for (size_t i = 0; i < n; i++)
        if (same_locality(&marks[i], l))
            return &marks[i];
    return NULL;
}

static const struct xlb_lrs_drop_mark *find_drop(const struct xlb_lrs_drop_mark *marks, size_t n,
                                                 const char *category)
{
    for (size_t i = 0; i < n; i++)
        if (same_str(marks[i].category, category))
            return &marks[i];
    return NULL;
}

/* Append one locality to mark/delta unless the source listed it twice (the first wins). */
static int add_locality(struct xlb_lrs_cluster_mark *mark, struct xlb_lrs_delta *delta,
                        const struct xlb_lrs_cluster_mark *old,
                        const struct xlb_lrs_locality_load *l)
{
    if (find_locality(mark->localities, mark->n_localities, l) != NULL)
        return 0;
    struct xlb_lrs_locality_mark *m = &mark->localities[mark->n_localities];
    m->region = dup_or_empty(l->region);
    m->zone = dup_or_empty(l->zone);
    m->sub_zone = dup_or_empty(l->sub_zone);
    mark->n_localities++; /* counted now so that a failure frees what was copied */
    if (m->region == NULL || m->zone == NULL || m->sub_zone == NULL)
        return -1;
    m->priority = l->priority;
    m->issued = l->issued;
    m->successful = l->successful;
    m->errors = l->errors;
    const struct xlb_lrs_locality_mark *last =
        old != NULL ? find_locality(old->localities, old->n_localities, l) : NULL;
    struct xlb_lrs_locality_delta *d = &delta->localities[mark->n_localities - 1];
    d->issued = xlb_lrs_delta(l->issued, last != NULL ? last->issued : 0);
    d->successful = xlb_lrs_delta(l->successful, last != NULL ? last->successful : 0);
    d->errors = xlb_lrs_delta(l->errors, last != NULL ? last->errors : 0);
    d->in_progress = l->in_progress; /* a gauge: its current value, not a difference */
    return 0;
}

static int add_drop(struct xlb_lrs_cluster_mark *mark, struct xlb_lrs_delta *delta,
                    const struct xlb_lrs_cluster_mark *old, const struct xlb_lrs_drop_load *l)
{
    if (find_drop(mark->drops, mark->n_drops, l->category) != NULL)
        return 0;
    struct xlb_lrs_drop_mark *m = &mark->drops[mark->n_drops];
    m->category = dup_or_empty(l->category);
    mark->n_drops++;
    if (m->category == NULL)
        return -1;
    m->dropped = l->dropped;
    const struct xlb_lrs_drop_mark *last =
        old != NULL ? find_drop(old->drops, old->n_drops, l->category) : NULL;
    delta->drops[mark->n_drops - 1] = xlb_lrs_delta(l->dropped, last != NULL ? last->dropped : 0);
    return 0;
}

/* Fill mark (its name already set) and delta from the source's load for the cluster. */
static int fill_cluster(struct xlb_lrs_cluster_mark *mark, struct xlb_lrs_delta *delta,
                        const struct xlb_lrs_cluster_mark *old,
                        const struct xlb_lrs_cluster_load *load, uint64_t since_ms, uint64_t now_ms)
{
    size_t nl = load->n_localities, nd = load->n_drops;
    mark->service_name = dup_or_empty(load->service_name);
    mark->localities = calloc(nl ? nl : 1, sizeof(*mark->localities));
    mark->drops = calloc(nd ? nd : 1, sizeof(*mark->drops));
    delta->localities = calloc(nl ? nl : 1, sizeof(*delta->localities));
    delta->drops = calloc(nd ? nd : 1, sizeof(*delta->drops));
    if (mark->service_name == NULL || mark->localities == NULL || mark->drops == NULL ||
        delta->localities == NULL || delta->drops == NULL)
        return -1;
    for (size_t i = 0; i < nl; i++)
        if (add_locality(mark, delta, old, &load->localities[i]) != 0)
            return -1;
    for (size_t i = 0; i < nd; i++)
        if (add_drop(mark, delta, old, &load->drops[i]) != 0)
            return -1;
    mark->uncategorized_drops = load->uncategorized_drops;
    delta->uncategorized_drops =
        xlb_lrs_delta(load->uncategorized_drops, old != NULL ? old->uncategorized_drops : 0);
    mark->reported_ms = now_ms;
    delta->interval_ms = now_ms > since_ms ? now_ms - since_ms : 0;
    return 0;
}

static void free_entries(struct xlb_lrs_cluster_mark *marks, struct xlb_lrs_delta *deltas, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        xlb_lrs_cluster_mark_free(&marks[i]);
        free(deltas[i].localities);
        free(deltas[i].drops);
    }
    free(marks);
    free(deltas);
}

void xlb_lrs_report_discard(struct xlb_lrs_report *report)
{
    free_entries(report->marks, report->deltas, report->n_clusters);
    free(report->buf);
    memset(report, 0, sizeof(*report));
}

void xlb_lrs_report_commit(struct xlb_lrs_baseline *b, struct xlb_lrs_report *report)
{
    for (size_t i = 0; i < report->n_clusters; i++)
        xlb_lrs_baseline_put(b, &report->marks[i]);
    xlb_lrs_report_discard(report);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Copy the names of the enabled clusters the settings ask for, once each, into fresh marks:
 * the source's array is only valid until the next call into it. Returns how many, or -1. */
static ssize_t select_clusters(const char *const *enabled, size_t n_enabled,
                               const struct xlb_lrs_settings *settings,
                               struct xlb_lrs_cluster_mark *marks)
{
    const char **sorted = malloc((n_enabled ? n_enabled : 1) * sizeof(*sorted));
    if (sorted == NULL)
        return -1;
    if (n_enabled > 0) /* the source may hand out NULL for an empty list */
        memcpy(sorted, enabled, n_enabled * sizeof(*sorted));
    qsort(sorted, n_enabled, sizeof(*sorted), cmp_names);
    size_t n = 0;
    for (size_t i = 0; i < n_enabled; i++) {
        if (i > 0 && strcmp(sorted[i - 1], sorted[i]) == 0)
            continue;
        if (!xlb_lrs_settings_wants(settings, sorted[i]))
            continue;
        marks[n].name = strdup(sorted[i]);
        if (marks[n++].name == NULL) {
            free(sorted);
            return -1;
        }
    }
    free(sorted);
    return (ssize_t)n;
}

typedef Envoy__Config__Endpoint__V3__ClusterStats cluster_stats;
typedef Envoy__Config__Endpoint__V3__UpstreamLocalityStats locality_stats;
typedef Envoy__Config__Endpoint__V3__ClusterStats__DroppedRequests dropped_requests;

/* The protobuf-c scaffolding of one ClusterStats; its strings point into the mark. */
struct cluster_msg {
    cluster_stats cs;
    Google__Protobuf__Duration interval;
    Envoy__Config__Core__V3__Locality *loc;
    locality_stats *ul, **ul_ptrs;
    dropped_requests *dr, **dr_ptrs;
};

/* A locality that had nothing happen and has nothing in flight is left out, as gRPC does. */
static bool has_load(const struct xlb_lrs_locality_delta *d)
{
    return d->issued != 0 || d->successful != 0 || d->errors != 0 || d->in_progress != 0;
}

static void add_locality_msg(struct cluster_msg *m, const struct xlb_lrs_locality_mark *mark,
                             const struct xlb_lrs_locality_delta *d)
{
    size_t i = m->cs.n_upstream_locality_stats++;
    Envoy__Config__Core__V3__Locality loc;
    envoy__config__core__v3__locality__init(&loc);
    loc.region = mark->region;
    loc.zone = mark->zone;
    loc.sub_zone = mark->sub_zone;
    m->loc[i] = loc;
    locality_stats ul;
    envoy__config__endpoint__v3__upstream_locality_stats__init(&ul);
    ul.locality = &m->loc[i];
    ul.priority = mark->priority;
    ul.total_issued_requests = d->issued;
    ul.total_successful_requests = d->successful;
    ul.total_error_requests = d->errors;
    ul.total_requests_in_progress = d->in_progress;
    m->ul[i] = ul;
    m->ul_ptrs[i] = &m->ul[i];
}

static void add_drops_msg(struct cluster_msg *m, const struct xlb_lrs_cluster_mark *mark,
                          const struct xlb_lrs_delta *d)
{
    uint64_t total = d->uncategorized_drops;
    for (size_t i = 0; i < mark->n_drops; i++) {
        total += d->drops[i];
        if (d->drops[i] == 0)
            continue;
        size_t j = m->cs.n_dropped_requests++;
        dropped_requests dr;
        envoy__config__endpoint__v3__cluster_stats__dropped_requests__init(&dr);
        dr.category = mark->drops[i].category;
        dr.dropped_count = d->drops[i];
        m->dr[j] = dr;
        m->dr_ptrs[j] = &m->dr[j];
    }
    m->cs.total_dropped_requests = total;
}

static int build_cluster_msg(struct cluster_msg *m, const struct xlb_lrs_cluster_mark *mark,
                             const struct xlb_lrs_delta *d)
{
    size_t nl = mark->n_localities ? mark->n_localities : 1;
    size_t nd = mark->n_drops ? mark->n_drops : 1;
    m->loc = calloc(nl, sizeof(*m->loc));
    m->ul = calloc(nl, sizeof(*m->ul));
    m->ul_ptrs = calloc(nl, sizeof(*m->ul_ptrs));
    m->dr = calloc(nd, sizeof(*m->dr));
    m->dr_ptrs = calloc(nd, sizeof(*m->dr_ptrs));
    if (m->loc == NULL || m->ul == NULL || m->ul_ptrs == NULL || m->dr == NULL ||
        m->dr_ptrs == NULL)
        return -1;
    cluster_stats cs;
    envoy__config__endpoint__v3__cluster_stats__init(&cs);
    m->cs = cs;
    m->cs.cluster_name = mark->name;
    m->cs.cluster_service_name = mark->service_name;
    Google__Protobuf__Duration interval;
    google__protobuf__duration__init(&interval);
    interval.seconds = (int64_t)(d->interval_ms / 1000);
    interval.nanos = (int32_t)(d->interval_ms % 1000) * 1000000;
    m->interval = interval;
    m->cs.load_report_interval = &m->interval;
    m->cs.upstream_locality_stats = m->ul_ptrs;
    for (size_t i = 0; i < mark->n_localities; i++)
        if (has_load(&d->localities[i]))
            add_locality_msg(m, &mark->localities[i], &d->localities[i]);
    m->cs.dropped_requests = m->dr_ptrs;
    add_drops_msg(m, mark, d);
    return 0;
}

static void free_cluster_msg(struct cluster_msg *m)
{
    free(m->loc);
    free(m->ul);
    free(m->ul_ptrs);
    free(m->dr);
    free(m->dr_ptrs);
}

/* The LoadStatsRequest of n clusters (none: no buffer, nothing to send). */
static int pack_report(const struct xlb_lrs_cluster_mark *marks, const struct xlb_lrs_delta *deltas,
                       size_t n, uint8_t **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (n == 0)
        return 0;
    struct cluster_msg *msgs = calloc(n, sizeof(*msgs));
    cluster_stats **ptrs = calloc(n, sizeof(*ptrs));
    int rc = -1;
    if (msgs == NULL || ptrs == NULL)
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (build_cluster_msg(&msgs[i], &marks[i], &deltas[i]) != 0)
            goto done;
        ptrs[i] = &msgs[i].cs;
    }
    Envoy__Service__LoadStats__V3__LoadStatsRequest req;
    envoy__service__load_stats__v3__load_stats_request__init(&req);
    req.n_cluster_stats = n;
    req.cluster_stats = ptrs;
    rc = xlb_lrs_pack(&req.base, buf, len);
done:
    for (size_t i = 0; msgs != NULL && i < n; i++)
        free_cluster_msg(&msgs[i]);
    free(msgs);
    free(ptrs);
    return rc;
}

/* Ask the source for each selected cluster; the ones it does not know are left out. Returns
 * how many are kept (compacted to the front), or -1. */
static ssize_t load_clusters(const struct xlb_lrs_baseline *b, const struct xlb_lrs_source *source,
                             uint64_t now_ms, struct xlb_lrs_report *out, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        struct xlb_lrs_cluster_mark *mark = &out->marks[kept];
        if (kept != i) {
            *mark = out->marks[i];
            memset(&out->marks[i], 0, sizeof(out->marks[i]));
        }
        struct xlb_lrs_cluster_load load;
        memset(&load, 0, sizeof(load));
        if (source->cluster_load(source->arg, mark->name, &load) != 0) {
            xlb_lrs_cluster_mark_free(mark);
            continue;
        }
        const struct xlb_lrs_cluster_mark *old = xlb_lrs_baseline_find(b, mark->name);
        uint64_t since = old != NULL ? old->reported_ms : b->start_ms;
        if (fill_cluster(mark, &out->deltas[kept++], old, &load, since, now_ms) != 0)
            return -1;
    }
    return (ssize_t)kept;
}

int xlb_lrs_report_build(struct xlb_lrs_baseline *b, const struct xlb_lrs_source *source,
                         const struct xlb_lrs_settings *settings, uint64_t now_ms,
                         struct xlb_lrs_report *out)
{
    memset(out, 0, sizeof(*out));
    const char *const *enabled = NULL;
    size_t n_enabled = source->enabled_clusters(source->arg, &enabled);
    xlb_lrs_baseline_prune(b, enabled, n_enabled);
    out->marks = calloc(n_enabled ? n_enabled : 1, sizeof(*out->marks));
    out->deltas = calloc(n_enabled ? n_enabled : 1, sizeof(*out->deltas));
    /* Until the end, n_clusters counts every entry that may own memory (all are zeroed). */
    out->n_clusters = n_enabled;
    if (out->marks == NULL || out->deltas == NULL)
        goto fail;
    ssize_t n = select_clusters(enabled, n_enabled, settings, out->marks);
    if (n < 0 || (n = load_clusters(b, source, now_ms, out, (size_t)n)) < 0)
        goto fail;
    out->n_clusters = (size_t)n;
    if (xlb_lrs_baseline_reserve(b, out->n_clusters) != 0 ||
        pack_report(out->marks, out->deltas, out->n_clusters, &out->buf, &out->len) != 0)
        goto fail;
    return 0;
fail:
    xlb_lrs_report_discard(out);
    return -1;
}
