/*
 * The bootstrap document: gRPC's part (bootstrap_grpc.c), then the xlb section, whose own keys
 * are read here through its key table; ports, SNAT and VIPs have files of their own.
 */
#include "bootstrap.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bootstrap_internal.h"

#define XLB_BOOTSTRAP_MAX_BYTES (64u << 20)

char *xlb_bootstrap_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* ---- the xlb section ---- */

/* Why an argument would break EAL's start in an obvious way, or NULL. xlbd appends its own
 * --lcores after the configured list, so "--" would hide it. */
static const char *eal_arg_problem(const char *arg)
{
    if (strcmp(arg, "--") == 0)
        return "\"--\" would end EAL's options";
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
        return "makes EAL print its usage and exit";
    return NULL;
}

static void read_eal(const cJSON *xlb, const char *path, const struct xlb_config_key *key,
                     void *ctx, struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const cJSON *eal = xlb_json_array(xlb, key->name, path, XLB_OPTIONAL, errs);
    if (eal == NULL)
        return;
    out->eal_args = calloc((size_t)cJSON_GetArraySize(eal) + 1, sizeof(char *));
    char list_path[XLB_PATH_MAX];
    xlb_path_key(list_path, path, key->name);
    unsigned i = 0;
    const cJSON *arg;
    cJSON_ArrayForEach(arg, eal) {
        char arg_path[XLB_PATH_MAX];
        xlb_path_index(arg_path, list_path, i++);
        if (!cJSON_IsString(arg) || arg->valuestring[0] == '\0')
            xlb_errors_add(errs, arg_path, "must be a non-empty string");
        else if (eal_arg_problem(arg->valuestring) != NULL)
            xlb_errors_add(errs, arg_path, "%s", eal_arg_problem(arg->valuestring));
        else if (out->eal_args != NULL)
            out->eal_args[out->n_eal_args++] = strdup(arg->valuestring);
    }
}

static void read_control_socket(const cJSON *xlb, const char *path,
                                const struct xlb_config_key *key, void *ctx,
                                struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const char *socket =
        xlb_json_string(xlb, key->name, path, XLB_OPTIONAL, XLB_SOCKET_PATH_MAX, errs);
    if (socket != NULL)
        snprintf(out->control_socket, sizeof(out->control_socket), "%s", socket);
}

/* A group name, resolved now: an unknown group is a configuration error --check reports. */
static void read_control_socket_group(const cJSON *xlb, const char *path,
                                      const struct xlb_config_key *key, void *ctx,
                                      struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const char *name = xlb_json_string(xlb, key->name, path, XLB_OPTIONAL, 256, errs);
    if (name == NULL)
        return;
    const struct group *g = getgrnam(name);
    if (g == NULL) {
        char key_path[XLB_PATH_MAX];
        xlb_path_key(key_path, path, key->name);
        xlb_errors_add(errs, key_path, "no group \"%s\" on this host", name);
        return;
    }
    out->control_socket_has_group = true;
    out->control_socket_group = g->gr_gid;
}

static void read_aggregate_compat(const cJSON *xlb, const char *path,
                                  const struct xlb_config_key *key, void *ctx,
                                  struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const cJSON *compat = cJSON_GetObjectItemCaseSensitive(xlb, key->name);
    if (compat != NULL && !cJSON_IsBool(compat)) {
        char key_path[XLB_PATH_MAX];
        xlb_path_key(key_path, path, key->name);
        xlb_errors_add(errs, key_path, "must be true or false");
    }
    out->aggregate_cluster_backward_compat = cJSON_IsTrue(compat);
}

/* true, false or "auto" (the default): whether L4 VIPs answer SYNs with SYN cookies; "auto"
 * once a worker's half-open pool is l4_syn_proxy_percent full. */
static void read_syn_proxy(const cJSON *xlb, const char *path, const struct xlb_config_key *key,
                           void *ctx, struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(xlb, key->name);
    if (value == NULL)
        return;
    if (cJSON_IsBool(value)) {
        out->l4_syn_proxy = cJSON_IsTrue(value) ? XLB_SYN_PROXY_ON : XLB_SYN_PROXY_OFF;
    } else if (cJSON_IsString(value) && strcmp(value->valuestring, "auto") == 0) {
        out->l4_syn_proxy = XLB_SYN_PROXY_AUTO;
    } else {
        char key_path[XLB_PATH_MAX];
        xlb_path_key(key_path, path, key->name);
        xlb_errors_add(errs, key_path, "must be true, false or \"auto\"");
    }
}

/* 32 hexadecimal digits: a 128-bit key for ring hash's connection hash. */
static bool parse_hash_key(const char *text, uint64_t key[2])
{
    if (strlen(text) != 32)
        return false;
    key[0] = key[1] = 0;
    for (int i = 0; i < 32; i++) {
        int c = text[i], v;
        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v = c - 'A' + 10;
        else
            return false;
        key[i / 16] = key[i / 16] << 4 | (uint64_t)v;
    }
    return true;
}

static void read_connection_hash_key(const cJSON *xlb, const char *path,
                                     const struct xlb_config_key *key, void *ctx,
                                     struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(xlb, key->name);
    if (value == NULL)
        return;
    if (!cJSON_IsString(value) || !parse_hash_key(value->valuestring, out->connection_hash_key)) {
        char key_path[XLB_PATH_MAX];
        xlb_path_key(key_path, path, key->name);
        xlb_errors_add(errs, key_path, "must be 32 hexadecimal digits (a 128-bit key)");
        return;
    }
    out->connection_hash_keyed = true;
}

/* "auto" (the default), "off", or the largest MSS a forwarded SYN may offer. 536 is the least
 * every IPv4 host must accept (RFC 9293 3.7.1); 65495 what a 65,535-byte datagram carries. */
static void read_mss_clamp(const cJSON *xlb, const char *path, const struct xlb_config_key *key,
                           void *ctx, struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const cJSON *clamp = cJSON_GetObjectItemCaseSensitive(xlb, key->name);
    if (clamp == NULL)
        return;
    if (cJSON_IsString(clamp) && strcmp(clamp->valuestring, "auto") == 0)
        out->tcp_mss_clamp = XLB_MSS_CLAMP_AUTO;
    else if (cJSON_IsString(clamp) && strcmp(clamp->valuestring, "off") == 0)
        out->tcp_mss_clamp = XLB_MSS_CLAMP_OFF;
    else if (cJSON_IsNumber(clamp) && clamp->valuedouble >= 536 && clamp->valuedouble <= 65495 &&
             clamp->valuedouble == (double)(int)clamp->valuedouble)
        out->tcp_mss_clamp = (uint16_t)clamp->valuedouble;
    else {
        char key_path[XLB_PATH_MAX];
        xlb_path_key(key_path, path, key->name);
        xlb_errors_add(errs, key_path, "must be \"auto\", \"off\" or an integer in 536..65495");
    }
}

/* static_resources: arrays of objects, handed whole to the xDS layer, which reads each one as
 * proto3 JSON (where, as for resources from a server, unknown fields are skipped). */
struct resources_reading {
    bool ok;
};

static void read_resource_list(const cJSON *resources, const char *path,
                               const struct xlb_config_key *key, void *ctx, struct xlb_errors *errs)
{
    struct resources_reading *r = ctx;
    const cJSON *list = xlb_json_array(resources, key->name, path, XLB_OPTIONAL, errs);
    r->ok &= list != NULL || !cJSON_HasObjectItem(resources, key->name);
    char list_path[XLB_PATH_MAX];
    xlb_path_key(list_path, path, key->name);
    unsigned i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, list) {
        char item_path[XLB_PATH_MAX];
        xlb_path_index(item_path, list_path, i++);
        if (!cJSON_IsObject(item)) {
            xlb_errors_add(errs, item_path, "must be an object");
            r->ok = false;
        }
    }
}

static const struct xlb_config_key static_resources_keys[] = {
    {.name = "listeners", .read = read_resource_list},
    {.name = "routes", .read = read_resource_list},
    {.name = "clusters", .read = read_resource_list},
    {.name = "endpoints", .read = read_resource_list},
};
const struct xlb_config_object xlb_bootstrap_static_resources_object =
    XLB_CONFIG_OBJECT("xlb.static_resources", static_resources_keys);

static void read_static_resources(const cJSON *xlb, const char *path,
                                  const struct xlb_config_key *key, void *ctx,
                                  struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const cJSON *resources = xlb_json_object(xlb, key->name, path, XLB_OPTIONAL, errs);
    if (resources == NULL)
        return;
    char resources_path[XLB_PATH_MAX];
    xlb_path_key(resources_path, path, key->name);
    unsigned errors_before = errs->n + errs->dropped;
    struct resources_reading reading = {.ok = true};
    xlb_config_object_read(&xlb_bootstrap_static_resources_object, resources, resources_path,
                           &reading, errs);
    if (reading.ok && errs->n + errs->dropped == errors_before)
        out->static_resources = cJSON_Duplicate(resources, true);
}

static bool is_loopback(const struct xlb_addr *addr)
{
    static const uint8_t v6_loopback[16] = {[15] = 1};
    if (addr->family == AF_INET)
        return addr->bytes[0] == 127;
    return memcmp(addr->bytes, v6_loopback, 16) == 0;
}

/* Metrics are served to local scrapers only: the listener must be on loopback. */
static void read_metrics_listen(const cJSON *xlb, const char *path,
                                const struct xlb_config_key *key, void *ctx,
                                struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const char *listen = xlb_json_string(xlb, key->name, path, XLB_OPTIONAL, 64, errs);
    if (listen == NULL)
        return;
    if (xlb_host_port_parse(listen, strlen(listen), &out->metrics_listen) != 0 ||
        !is_loopback(&out->metrics_listen.addr)) {
        char key_path[XLB_PATH_MAX];
        xlb_path_key(key_path, path, key->name);
        xlb_errors_add(errs, key_path,
                       "\"%s\" is not a loopback ADDRESS:PORT (127.0.0.1:9109 or [::1]:9109)",
                       listen);
        return;
    }
    out->metrics_enabled = true;
}

/* The xlb section's keys, in the order they are read: ports before snat and VIPs, which may
 * not reuse an address a port owns. */
static const struct xlb_config_key section_keys[] = {
    {.name = "eal", .read = read_eal},
    XLB_CONFIG_UINT("workers", struct xlb_bootstrap, workers, 1, XLB_MAX_WORKERS),
    {.name = "control_socket", .read = read_control_socket},
    {.name = "control_socket_group", .read = read_control_socket_group},
    XLB_CONFIG_UINT("control_idle_timeout_ms", struct xlb_bootstrap, control_idle_timeout_ms, 100,
                    86400000),
    XLB_CONFIG_UINT("worker_idle_sleep_us", struct xlb_bootstrap, worker_idle_sleep_us, 0, 100000),
    XLB_CONFIG_UINT("worker_stall_ms", struct xlb_bootstrap, worker_stall_ms, 100, 600000),
    XLB_CONFIG_UINT("mbuf_pool_size", struct xlb_bootstrap, mbuf_pool_size, 1023, 1 << 24),
    XLB_CONFIG_UINT("flows_per_worker", struct xlb_bootstrap, flows_per_worker, 1024, 1 << 24),
    XLB_CONFIG_UINT("tcp_connections_per_worker", struct xlb_bootstrap, tcp_connections_per_worker,
                    0, 1 << 20),
    XLB_CONFIG_UINT("stream_max_concurrent_streams", struct xlb_bootstrap,
                    stream_max_concurrent_streams, 1, 65535),
    XLB_CONFIG_UINT("stream_window_bytes", struct xlb_bootstrap, stream_window_bytes, 1024,
                    16777216),
    XLB_CONFIG_UINT("stream_rpcs_per_connection", struct xlb_bootstrap, stream_rpcs_per_connection,
                    1, 256),
    XLB_CONFIG_UINT("stream_waiting_rpcs", struct xlb_bootstrap, stream_waiting_rpcs, 1, 1024),
    XLB_CONFIG_UINT("stream_retry_buffers", struct xlb_bootstrap, stream_retry_buffers, 0, 1024),
    XLB_CONFIG_UINT("stream_retry_buffer_bytes", struct xlb_bootstrap, stream_retry_buffer_bytes,
                    1024, 1 << 20),
    XLB_CONFIG_UINT("stream_subchannels_per_endpoint", struct xlb_bootstrap,
                    stream_subchannels_per_endpoint, 1, 64),
    XLB_CONFIG_UINT("drain_seconds", struct xlb_bootstrap, drain_seconds, 0, 3600),
    XLB_CONFIG_UINT("l7_connections_per_worker", struct xlb_bootstrap, l7_connections_per_worker, 0,
                    1 << 20),
    {.name = "aggregate_cluster_backward_compat", .read = read_aggregate_compat},
    {.name = "tcp_mss_clamp", .read = read_mss_clamp},
    {.name = "l4_syn_proxy", .read = read_syn_proxy},
    XLB_CONFIG_UINT("l4_syn_proxy_percent", struct xlb_bootstrap, l4_syn_proxy_percent, 1, 100),
    {.name = "connection_hash_key", .read = read_connection_hash_key},
    {.name = "ports", .read = xlb_bootstrap_read_ports},
    {.name = "snat", .read = xlb_bootstrap_read_snat},
    {.name = "vips", .read = xlb_bootstrap_read_vips},
    {.name = "static_resources", .read = read_static_resources},
    XLB_CONFIG_UINT("metrics_max_series", struct xlb_bootstrap, metrics_max_series, 100, 1000000),
    {.name = "metrics_listen", .read = read_metrics_listen},
};
const struct xlb_config_object xlb_bootstrap_section_object =
    XLB_CONFIG_OBJECT("xlb", section_keys);

const struct xlb_config_object *const xlb_bootstrap_objects[] = {
    &xlb_bootstrap_section_object, &xlb_bootstrap_port_object,
    &xlb_bootstrap_vip_object,     &xlb_bootstrap_static_resources_object,
    &xlb_bootstrap_vip_tls_object, NULL,
};

static void report_syntax_error(const char *text, const char *where, struct xlb_errors *errs)
{
    unsigned line = 1, column = 1;
    for (const char *p = text; where != NULL && p < where && *p; p++) {
        if (*p == '\n') {
            line++;
            column = 1;
        } else {
            column++;
        }
    }
    xlb_errors_add(errs, "(json)", "syntax error near line %u, column %u", line, column);
}

int xlb_bootstrap_parse(const char *text, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    memset(out, 0, sizeof(*out));
    out->workers = 1;
    out->worker_stall_ms = XLB_DEFAULT_WORKER_STALL_MS;
    out->mbuf_pool_size = XLB_MBUF_POOL_AUTO;
    out->flows_per_worker = XLB_DEFAULT_FLOWS_PER_WORKER;
    out->l7_connections_per_worker = XLB_L7_CONNECTIONS_AUTO;
    out->tcp_connections_per_worker = XLB_DEFAULT_TCP_CONNECTIONS_PER_WORKER;
    out->tcp_mss_clamp = XLB_MSS_CLAMP_AUTO;
    out->stream_max_concurrent_streams = 100; /* XLB_STREAM_DEFAULT_MAX_CONCURRENT_STREAMS */
    out->stream_window_bytes = 65535;         /* XLB_STREAM_DEFAULT_WINDOW_BYTES */
    /* The XLB_STREAM_DEFAULT_* of dataplane/stream/stream.h (control/ does not include it). */
    out->stream_rpcs_per_connection = 4;
    out->stream_waiting_rpcs = 32;
    out->stream_retry_buffers = 64;
    out->stream_retry_buffer_bytes = 16384;
    out->stream_subchannels_per_endpoint = 8;
    out->drain_seconds = 10;
    out->l4_syn_proxy = XLB_SYN_PROXY_AUTO;
    out->l4_syn_proxy_percent = XLB_SYN_PROXY_AUTO_PERCENT;
    out->metrics_max_series = XLB_DEFAULT_MAX_SERIES;
    out->control_idle_timeout_ms = XLB_DEFAULT_CONTROL_IDLE_MS;
    snprintf(out->control_socket, sizeof(out->control_socket), "%s", XLB_DEFAULT_CONTROL_SOCKET);
    unsigned errors_before = errs->n + errs->dropped;

    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, true);
    if (root == NULL) {
        report_syntax_error(text, end, errs);
        return -1;
    }
    if (!cJSON_IsObject(root)) {
        xlb_errors_add(errs, "(root)", "must be an object");
    } else {
        xlb_bootstrap_read_xds_servers(root, out, errs);
        xlb_bootstrap_read_node(root, out, errs);
        xlb_bootstrap_read_certificate_providers(root, out, errs); /* before VIPs name them */
        const cJSON *xlb = xlb_json_object(root, "xlb", "", XLB_REQUIRED, errs);
        if (xlb != NULL)
            xlb_config_object_read(&xlb_bootstrap_section_object, xlb, "xlb", out, errs);
    }
    cJSON_Delete(root);
    return errs->n + errs->dropped == errors_before ? 0 : -1;
}

int xlb_bootstrap_load(const char *path, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    memset(out, 0, sizeof(*out));
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        xlb_errors_add(errs, path, "%s", strerror(errno));
        return -1;
    }
    char *text = malloc(XLB_BOOTSTRAP_MAX_BYTES + 1);
    size_t len = text ? fread(text, 1, XLB_BOOTSTRAP_MAX_BYTES + 1, file) : 0;
    bool read_error = ferror(file) != 0;
    fclose(file);
    int rc = -1;
    if (text == NULL || read_error)
        xlb_errors_add(errs, path, "cannot read the file");
    else if (len > XLB_BOOTSTRAP_MAX_BYTES)
        xlb_errors_add(errs, path, "larger than %u bytes", XLB_BOOTSTRAP_MAX_BYTES);
    else if (memchr(text, '\0', len) != NULL)
        xlb_errors_add(errs, path, "contains a NUL byte");
    else {
        text[len] = '\0';
        rc = xlb_bootstrap_parse(text, out, errs);
    }
    free(text);
    return rc;
}

void xlb_bootstrap_free(struct xlb_bootstrap *b)
{
    for (unsigned i = 0; i < b->n_xds_servers; i++) {
        free(b->xds_servers[i].server_uri);
        free(b->xds_servers[i].ca_certificate_file);
        free(b->xds_servers[i].certificate_file);
        free(b->xds_servers[i].private_key_file);
    }
    free(b->xds_servers);
    free(b->node.id);
    free(b->node.cluster);
    free(b->node.region);
    free(b->node.zone);
    free(b->node.sub_zone);
    cJSON_Delete(b->node.metadata);
    for (unsigned i = 0; i < b->n_eal_args; i++)
        free(b->eal_args[i]);
    free(b->eal_args);
    free(b->snat);
    for (unsigned i = 0; i < b->n_vips; i++) {
        free(b->vips[i].target);
        free(b->vips[i].cluster);
        xlb_bootstrap_vip_tls_free(&b->vips[i].tls);
    }
    free(b->vips);
    xlb_bootstrap_free_cert_providers(b);
    cJSON_Delete(b->static_resources);
    memset(b, 0, sizeof(*b));
}
