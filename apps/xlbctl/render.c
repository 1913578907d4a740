#include "render.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "table.h"

/* A member as text for a table cell: numbers without a fraction print as integers. */
static const char *cell(const cJSON *obj, const char *key, char *buf, size_t len)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsString(item))
        return item->valuestring;
    if (cJSON_IsNumber(item)) {
        double v = item->valuedouble;
        if (v == (double)(long long)v)
            snprintf(buf, len, "%lld", (long long)v);
        else
            snprintf(buf, len, "%.1f", v);
        return buf;
    }
    if (cJSON_IsBool(item))
        return cJSON_IsTrue(item) ? "yes" : "no";
    return "-";
}

static double number(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(item) ? item->valuedouble : 0;
}

/* A table column: its header and the member of each row object it shows. */
struct column {
    const char *header;
    const char *key;
};

/* One row per object of rows, one column per spec; values as cell() prints them. */
static void render_rows(const cJSON *rows, const struct column *cols, unsigned n, FILE *out)
{
    const char *headers[XLBCTL_TABLE_COLUMNS];
    for (unsigned c = 0; c < n && c < XLBCTL_TABLE_COLUMNS; c++)
        headers[c] = cols[c].header;
    struct xlbctl_table *t = xlbctl_table_new(n, headers);
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
        char buf[XLBCTL_TABLE_COLUMNS][64];
        const char *cells[XLBCTL_TABLE_COLUMNS];
        for (unsigned c = 0; c < n && c < XLBCTL_TABLE_COLUMNS; c++)
            cells[c] = cell(row, cols[c].key, buf[c], sizeof(buf[c]));
        xlbctl_table_row(t, cells);
    }
    xlbctl_table_print(t, out);
}

#define RENDER_ROWS(rows, out, ...)                                                                \
    do {                                                                                           \
        static const struct column cols_[] = {__VA_ARGS__};                                        \
        render_rows(rows, cols_, sizeof(cols_) / sizeof(cols_[0]), out);                           \
    } while (0)

static void render_workers(const cJSON *workers, FILE *out)
{
    RENDER_ROWS(
        workers, out, {"WORKER", "worker"}, {"LCORE", "lcore"}, {"GENERATION", "generation"},
        {"QUIESCENT (ms ago)", "last_quiescent_ms_ago"}, {"STALLED", "stalled"}, {"LOOPS", "loops"},
        {"BUSY LOOPS", "busy_loops"}, {"BUSY %", "busy_percent"}, {"FLOWS", "flows_in_use"},
        {"FLOWS MAX", "flows_high_water"}, {"L7 CONNS", "l7_connections_in_use"},
        {"L7 MAX", "l7_connections_high_water"}, {"L7 POOL", "l7_connections_capacity"},
        {"HPACK BYTES", "l7_hpack_bytes_in_use"}, {"HPACK MAX", "l7_hpack_bytes_high_water"},
        {"TCP CONNS", "tcp_connections_in_use"}, {"TCP MAX", "tcp_connections_high_water"});
}

static void render_ports(const cJSON *ports, FILE *out)
{
    /* A port's addresses print as one space-separated cell. */
    cJSON *rows = cJSON_Duplicate(ports, true);
    cJSON *p;
    cJSON_ArrayForEach(p, rows) {
        char text[256] = "";
        const cJSON *a;
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(p, "addresses")) {
            if (cJSON_IsString(a) && strlen(text) + strlen(a->valuestring) + 2 < sizeof(text)) {
                strcat(text, text[0] ? " " : "");
                strcat(text, a->valuestring);
            }
        }
        cJSON_AddStringToObject(p, "addresses_text", text);
    }
    RENDER_ROWS(rows, out, {"PORT", "name"}, {"ID", "port_id"}, {"LINK", "link"}, {"MAC", "mac"},
                {"RX", "rx_packets"}, {"TX", "tx_packets"}, {"RX DROPPED", "rx_dropped"},
                {"ADDRESSES", "addresses_text"});
    cJSON_Delete(rows);
}

static void render_vips(const cJSON *vips, FILE *out)
{
    /* The target (L7) or the cluster (L4) share a column: copy it under one key. */
    cJSON *rows = cJSON_Duplicate(vips, true);
    cJSON *v;
    cJSON_ArrayForEach(v, rows) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "target");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(v, "cluster");
        const cJSON *what = cJSON_IsString(t) ? t : c;
        if (cJSON_IsString(what))
            cJSON_AddStringToObject(v, "target_or_cluster", what->valuestring);
    }
    RENDER_ROWS(rows, out, {"VIP", "address"}, {"PORT", "port"}, {"MODE", "mode"},
                {"TARGET/CLUSTER", "target_or_cluster"}, {"STATE", "summary"});
    cJSON_Delete(rows);
}

/* The TLS VIPs' certificates and handshakes, when there are any. */
static void render_vip_tls(const cJSON *vips, FILE *out)
{
    cJSON *rows = cJSON_CreateArray();
    const cJSON *v;
    cJSON_ArrayForEach(v, vips) {
        const cJSON *tls = cJSON_GetObjectItemCaseSensitive(v, "tls");
        if (!cJSON_IsObject(tls))
            continue;
        char b[2][64];
        char vip[160];
        snprintf(vip, sizeof(vip), "%s:%s", cell(v, "address", b[0], 64),
                 cell(v, "port", b[1], 64));
        /* A row per certificate: the default first, with the VIP's handshakes. */
        const cJSON *cert;
        bool first = true;
        cJSON_ArrayForEach(cert, cJSON_GetObjectItemCaseSensitive(tls, "certificates")) {
            cJSON *row = cJSON_Duplicate(first ? tls : cert, true);
            cJSON_AddStringToObject(row, "vip", first ? vip : "");
            cJSON_AddItemToArray(rows, row);
            first = false;
        }
    }
    if (cJSON_GetArraySize(rows) > 0) {
        fputc('\n', out);
        RENDER_ROWS(rows, out, {"TLS VIP", "vip"}, {"SUBJECT", "subject"}, {"SANS", "sans"},
                    {"EXPIRES", "not_after"}, {"HANDSHAKES", "handshakes"},
                    {"RESUMED", "resumptions"}, {"FAILED", "failed"});
    }
    cJSON_Delete(rows);
}

/* "reload: applied ..., needs restart: ..." once a SIGHUP happened. */
static void render_reload(const cJSON *reload, FILE *out)
{
    const cJSON *last = cJSON_GetObjectItemCaseSensitive(reload, "last");
    if (last == NULL)
        return;
    char b[4][32];
    fprintf(out, "\nlast reload %s s ago: %s (%s applied, %s rejected in all)\n",
            cell(reload, "last_s_ago", b[0], 32), cell(last, "result", b[1], 32),
            cell(reload, "applied", b[2], 32), cell(reload, "rejected", b[3], 32));
    static const char *const lists[] = {"needs_restart", "errors"};
    for (int l = 0; l < 2; l++) {
        const cJSON *item;
        cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(last, lists[l]))
            if (cJSON_IsString(item))
                fprintf(out, "  %s: %s\n", l == 0 ? "needs restart" : "error", item->valuestring);
    }
}

static void render_vip_list(const cJSON *r, FILE *out)
{
    const cJSON *vips = cJSON_GetObjectItemCaseSensitive(r, "vips");
    render_vips(vips, out);
    render_vip_tls(vips, out);
}

static void render_status(const cJSON *r, FILE *out)
{
    char b[3][32];
    fprintf(out, "xlbd %s, up %s s, snapshot generation %s\n\n", cell(r, "version", b[0], 32),
            cell(r, "uptime_s", b[1], 32), cell(r, "generation", b[2], 32));
    render_workers(cJSON_GetObjectItemCaseSensitive(r, "workers"), out);
    fputc('\n', out);
    render_ports(cJSON_GetObjectItemCaseSensitive(r, "ports"), out);
    const cJSON *vips = cJSON_GetObjectItemCaseSensitive(r, "vips");
    if (cJSON_GetArraySize(vips) > 0) {
        fputc('\n', out);
        render_vips(vips, out);
        render_vip_tls(vips, out);
    }
    render_reload(cJSON_GetObjectItemCaseSensitive(r, "reload"), out);
    const cJSON *retired = cJSON_GetObjectItemCaseSensitive(r, "retired_snapshots");
    if (number(retired, "waiting_for_stalled") > 0 || number(retired, "publishes_refused") > 0)
        fprintf(out,
                "\nretired snapshots waiting for a stalled worker: %s, publishes refused: %s\n",
                cell(retired, "waiting_for_stalled", b[0], 32),
                cell(retired, "publishes_refused", b[1], 32));
}

/* One row per counter that is non-zero somewhere (rx and tx always), a column per worker. */
static void counter_rows(struct xlbctl_table *t, const cJSON *total, const cJSON *workers,
                         const char *group)
{
    const cJSON *source = group ? cJSON_GetObjectItemCaseSensitive(total, group) : total;
    const cJSON *counter;
    cJSON_ArrayForEach(counter, source) {
        if (!cJSON_IsNumber(counter) || (group != NULL && counter->valuedouble == 0))
            continue;
        char name[96], b[XLBCTL_TABLE_COLUMNS][32];
        snprintf(name, sizeof(name), "%s%s%s", group ? group : "", group ? "." : "",
                 counter->string);
        const char *row[XLBCTL_TABLE_COLUMNS] = {name, cell(source, counter->string, b[0], 32)};
        unsigned col = 2;
        const cJSON *w;
        cJSON_ArrayForEach(w, workers) {
            if (col == XLBCTL_TABLE_COLUMNS)
                break;
            const cJSON *ws = group ? cJSON_GetObjectItemCaseSensitive(w, group) : w;
            row[col] = cell(ws, counter->string, b[col], 32);
            col++;
        }
        xlbctl_table_row(t, row);
    }
}

static void render_counters(const cJSON *r, FILE *out)
{
    const cJSON *workers = cJSON_GetObjectItemCaseSensitive(r, "workers");
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(r, "total");
    const char *headers[XLBCTL_TABLE_COLUMNS] = {"COUNTER", "TOTAL"};
    char names[XLBCTL_TABLE_COLUMNS][16];
    unsigned n = 2;
    const cJSON *w;
    cJSON_ArrayForEach(w, workers) {
        if (n == XLBCTL_TABLE_COLUMNS)
            break;
        snprintf(names[n], sizeof(names[n]), "WORKER %d", (int)number(w, "worker"));
        headers[n] = names[n];
        n++;
    }
    struct xlbctl_table *t = xlbctl_table_new(n, headers);
    const char *const rows[] = {"rx_packets", "tx_packets"};
    for (unsigned i = 0; i < 2; i++) {
        char b[XLBCTL_TABLE_COLUMNS][32];
        const char *row[XLBCTL_TABLE_COLUMNS] = {rows[i], cell(total, rows[i], b[0], 32)};
        unsigned col = 2;
        cJSON_ArrayForEach(w, workers) {
            if (col == n)
                break;
            row[col] = cell(w, rows[i], b[col], 32);
            col++;
        }
        xlbctl_table_row(t, row);
    }
    counter_rows(t, total, workers, "events");
    counter_rows(t, total, workers, "drops");
    counter_rows(t, total, workers, "tcp");
    xlbctl_table_print(t, out);
}

static void render_neighbours(const cJSON *r, FILE *out)
{
    RENDER_ROWS(r, out, {"ADDRESS", "address"}, {"PORT", "port"}, {"ROLE", "role"},
                {"STATE", "state"}, {"MAC", "mac"}, {"SOLICITATIONS", "solicitations"});
}

static void render_metrics(const cJSON *r, FILE *out)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(r, "text");
    if (cJSON_IsString(text))
        fputs(text->valuestring, out);
}

static void render_log(const cJSON *r, FILE *out)
{
    RENDER_ROWS(r, out, {"COMPONENT", "component"}, {"LEVEL", "level"});
}

static void render_config_dump(const cJSON *r, FILE *out)
{
    RENDER_ROWS(r, out, {"TYPE", "type"}, {"NAME", "name"}, {"STATE", "state"},
                {"VERSION", "version"}, {"ERROR", "error"});
    fprintf(out, "(xlbctl --json config dump prints every resource in full)\n");
}

static void render_clusters(const cJSON *r, FILE *out)
{
    RENDER_ROWS(r, out, {"CLUSTER", "name"}, {"TYPE", "type"}, {"POLICY", "lb_policy"},
                {"STATE", "state"}, {"PRIOS", "priorities"}, {"LOCALITIES", "localities"},
                {"ENDPOINTS", "endpoints"}, {"USABLE", "usable"}, {"EJECTED", "ejected"},
                {"READY", "ready"}, {"CHOSEN PRIO", "chosen_priority"}, {"ERROR", "error"});
}

static void render_endpoints(const cJSON *r, FILE *out)
{
    RENDER_ROWS(r, out, {"PRIORITY", "priority"}, {"LOCALITY", "locality"},
                {"LOCALITY WEIGHT", "locality_weight"}, {"ADDRESS", "address"},
                {"WEIGHT", "weight"}, {"HEALTH", "health"}, {"USABLE", "usable"},
                {"EJECTED", "ejected"}, {"EJECTED FOR MS", "ejected_for_ms"},
                {"MULTIPLIER", "multiplier"}, {"DRAINED", "drained"}, {"OK", "succeeded"},
                {"FAILED", "failed"}, {"CONNECTIVITY", "connectivity"},
                {"CONNECTED TO", "connected_address"}, {"WRR WEIGHT", "wrr_weight"});
}

static void render_simulate(const cJSON *r, FILE *out)
{
    char b[4][64];
    fprintf(out, "%s picks on VIP %s (generation %s):", cell(r, "n", b[0], 64),
            cell(r, "vip", b[1], 64), cell(r, "generation", b[2], 64));
    const cJSON *outcomes = cJSON_GetObjectItemCaseSensitive(r, "outcomes"), *outcome;
    cJSON_ArrayForEach(outcome, outcomes)
        fprintf(out, " %s %s", outcome->string, cell(outcomes, outcome->string, b[0], 64));
    fprintf(out, "\n");
    RENDER_ROWS(cJSON_GetObjectItemCaseSensitive(r, "endpoints"), out, {"CLUSTER", "cluster"},
                {"ENDPOINT", "address"}, {"PRIORITY", "priority"}, {"LOCALITY", "locality"},
                {"PICKS", "picks"}, {"SHARE", "percent"});
    fprintf(out, "trace of the first pick:\n");
    const cJSON *trace = cJSON_GetObjectItemCaseSensitive(r, "trace"), *item;
    cJSON_ArrayForEach(item, trace) {
        if (cJSON_IsObject(item))
            fprintf(out, "  %-16s %s %s (priority %s, locality %s)\n", item->string,
                    cell(item, "cluster", b[0], 64), cell(item, "address", b[1], 64),
                    cell(item, "priority", b[2], 64), cell(item, "locality", b[3], 64));
        else
            fprintf(out, "  %-16s %s\n", item->string, cell(trace, item->string, b[0], 64));
    }
}

static void render_flows(const cJSON *r, FILE *out)
{
    char b[2][64];
    RENDER_ROWS(cJSON_GetObjectItemCaseSensitive(r, "flows"), out, {"WORKER", "worker"},
                {"CLIENT", "client"}, {"VIP", "vip"}, {"SNAT", "snat"}, {"BACKEND", "backend"},
                {"STATE", "state"}, {"EXPIRES IN MS", "expires_in_ms"});
    fprintf(out, "%s flows match, %s shown\n", cell(r, "matching", b[0], 64),
            cell(r, "shown", b[1], 64));
}

/* The TCP endpoint's connections, like `ss -ti`: srtt/rttvar in one cell, as ss prints them. */
static void render_tcp(const cJSON *r, FILE *out)
{
    cJSON *rows = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(r, "connections"), true);
    cJSON *c;
    cJSON_ArrayForEach(c, rows) {
        char rtt[48];
        snprintf(rtt, sizeof(rtt), "%.1f/%.1f", number(c, "srtt_ms"), number(c, "rttvar_ms"));
        cJSON_AddStringToObject(c, "rtt", rtt);
    }
    RENDER_ROWS(rows, out, {"WORKER", "worker"}, {"LOCAL", "local"}, {"REMOTE", "remote"},
                {"STATE", "state"}, {"CWND", "cwnd"}, {"SSTHRESH", "ssthresh"}, {"RTT ms", "rtt"},
                {"RTO ms", "rto_ms"}, {"MSS", "mss"}, {"SND WND", "snd_wnd"},
                {"RCV WND", "rcv_wnd"}, {"SEND Q", "send_queue"}, {"RECV Q", "recv_queue"},
                {"OOO", "ooo_bytes"}, {"UNACKED", "unacked"}, {"RETRANS", "retransmits"},
                {"MEMORY", "memory"});
    cJSON_Delete(rows);
    char b[2][64];
    fprintf(out, "%s connections, %s shown\n", cell(r, "total", b[0], 64),
            cell(r, "shown", b[1], 64));
}

/* "12s ago" from a *_s_ago member; "-" when it is negative (never). */
static const char *age(const cJSON *obj, const char *key, char *buf, size_t len)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(item) || item->valuedouble < 0)
        return "-";
    snprintf(buf, len, "%.0fs ago", item->valuedouble);
    return buf;
}

/* The stream line: server, state, and while backing off when the next attempt is due. */
static void render_xds_stream(const cJSON *r, FILE *out)
{
    char b[2][32];
    fprintf(out, "server %s: %s", cell(r, "server", b[0], 32), cell(r, "stream", b[1], 32));
    const cJSON *retry = cJSON_GetObjectItemCaseSensitive(r, "retry_in_s");
    if (cJSON_IsNumber(retry))
        fprintf(out, ", retry in %.1fs", retry->valuedouble > 0 ? retry->valuedouble : 0.0);
    fprintf(out, "\n");
    const cJSON *probing = cJSON_GetObjectItemCaseSensitive(r, "probing");
    if (cJSON_GetArraySize(probing) > 0) {
        fprintf(out, "retrying higher-priority servers:");
        const cJSON *uri;
        cJSON_ArrayForEach(uri, probing) {
            fprintf(out, " %s", cJSON_IsString(uri) ? uri->valuestring : "?");
        }
        fprintf(out, "\n");
    }
}

static void render_xds(const cJSON *r, FILE *out)
{
    render_xds_stream(r, out);
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(r, "last_error");
    if (cJSON_IsString(error))
        fprintf(out, "last error: %s\n", error->valuestring);
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(r, "note");
    if (cJSON_IsString(note))
        fprintf(out, "%s\n", note->valuestring);
    static const char *const headers[] = {"TYPE",     "SUBSCRIBED", "VERSION",   "NONCE",
                                          "LAST ACK", "LAST NACK",  "NACK ERROR"};
    struct xlbctl_table *t = xlbctl_table_new(7, headers);
    const cJSON *type;
    cJSON_ArrayForEach(type, cJSON_GetObjectItemCaseSensitive(r, "types")) {
        char b[6][32];
        const char *version = cell(type, "version", b[1], 32);
        const char *nonce = cell(type, "nonce", b[2], 32);
        const char *row[] = {type->string,
                             cell(type, "subscribed", b[0], 32),
                             version[0] ? version : "-",
                             nonce[0] ? nonce : "-",
                             age(type, "last_ack_s_ago", b[3], 32),
                             age(type, "last_nack_s_ago", b[4], 32),
                             cell(type, "last_nack_error", b[5], 32)};
        xlbctl_table_row(t, row);
    }
    xlbctl_table_print(t, out);
}

static void render_help(const cJSON *r, FILE *out)
{
    if (cJSON_IsObject(r)) {
        char b[2][32];
        fprintf(out, "usage: xlbctl %s\n  %s\n", cell(r, "usage", b[0], 32),
                cell(r, "summary", b[1], 32));
        return;
    }
    /* Usages up to this wide share a column; a longer one puts its summary on a line below. */
    const int column = 40;
    int width = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, r) {
        char b[64];
        int len = (int)strlen(cell(c, "usage", b, sizeof(b)));
        width = len > width && len <= column ? len : width;
    }
    fprintf(out, "commands:\n");
    cJSON_ArrayForEach(c, r) {
        char b[2][64];
        const char *usage = cell(c, "usage", b[0], 64), *summary = cell(c, "summary", b[1], 64);
        if ((int)strlen(usage) > column)
            fprintf(out, "  %s\n  %-*s  %s\n", usage, width, "", summary);
        else
            fprintf(out, "  %-*s  %s\n", width, usage, summary);
    }
}

void xlbctl_render(const char *command, const cJSON *result, FILE *out)
{
    static const struct {
        const char *name;
        void (*render)(const cJSON *, FILE *);
    } renderers[] = {
        {"status", render_status},
        {"vips", render_vip_list},
        {"counters", render_counters},
        {"neighbours", render_neighbours},
        {"help", render_help},
        {"metrics", render_metrics},
        {"log", render_log},
        {"config_dump", render_config_dump},
        {"xds", render_xds},
        {"clusters", render_clusters},
        {"endpoints", render_endpoints},
        {"simulate", render_simulate},
        {"flows", render_flows},
        {"tcp", render_tcp},
    };
    for (size_t i = 0; i < sizeof(renderers) / sizeof(renderers[0]); i++)
        if (strcmp(renderers[i].name, command) == 0) {
            renderers[i].render(result, out);
            return;
        }
    char *text = cJSON_Print(result);
    fprintf(out, "%s\n", text ? text : "null");
    cJSON_free(text);
}
