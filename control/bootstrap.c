#include "bootstrap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define XLB_BOOTSTRAP_MAX_BYTES (64u << 20)

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* ---- xds_servers and node: gRPC's bootstrap, unknown fields ignored ---- */

static void read_channel_creds(const cJSON *server, const char *path,
                               struct xlb_xds_server_config *out, struct xlb_errors *errs)
{
    const cJSON *creds = xlb_json_array(server, "channel_creds", path, XLB_REQUIRED, errs);
    if (creds == NULL)
        return;
    char creds_path[XLB_PATH_MAX];
    xlb_path_key(creds_path, path, "channel_creds");

    /* As gRPC does: the first entry of a supported type wins, others are skipped. */
    unsigned i = 0;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, creds) {
        char entry_path[XLB_PATH_MAX];
        xlb_path_index(entry_path, creds_path, i++);
        if (!cJSON_IsObject(entry)) {
            xlb_errors_add(errs, entry_path, "must be an object");
            return;
        }
        const char *type = xlb_json_string(entry, "type", entry_path, XLB_REQUIRED, 64, errs);
        if (type == NULL)
            return;
        if (strcmp(type, "insecure") == 0) {
            out->creds = XLB_CREDS_INSECURE;
            return;
        }
        if (strcmp(type, "tls") != 0)
            continue;
        out->creds = XLB_CREDS_TLS;
        const cJSON *config = xlb_json_object(entry, "config", entry_path, XLB_OPTIONAL, errs);
        if (config == NULL)
            return;
        char config_path[XLB_PATH_MAX];
        xlb_path_key(config_path, entry_path, "config");
        out->ca_certificate_file = dup_or_null(
            xlb_json_string(config, "ca_certificate_file", config_path, XLB_OPTIONAL, 4096, errs));
        out->certificate_file = dup_or_null(
            xlb_json_string(config, "certificate_file", config_path, XLB_OPTIONAL, 4096, errs));
        out->private_key_file = dup_or_null(
            xlb_json_string(config, "private_key_file", config_path, XLB_OPTIONAL, 4096, errs));
        if ((out->certificate_file == NULL) != (out->private_key_file == NULL))
            xlb_errors_add(errs, config_path,
                           "certificate_file and private_key_file must be given together");
        return;
    }
    xlb_errors_add(errs, creds_path, "no supported type (insecure, tls)");
}

static void read_server_features(const cJSON *server, const char *path,
                                 struct xlb_xds_server_config *out, struct xlb_errors *errs)
{
    const cJSON *features = xlb_json_array(server, "server_features", path, XLB_OPTIONAL, errs);
    unsigned i = 0;
    const cJSON *feature;
    cJSON_ArrayForEach(feature, features) {
        char feature_path[XLB_PATH_MAX], list_path[XLB_PATH_MAX];
        xlb_path_key(list_path, path, "server_features");
        xlb_path_index(feature_path, list_path, i++);
        if (!cJSON_IsString(feature))
            xlb_errors_add(errs, feature_path, "must be a string");
        else if (strcmp(feature->valuestring, "ignore_resource_deletion") == 0)
            out->ignore_resource_deletion = true;
    }
}

static void read_xds_servers(const cJSON *root, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    const cJSON *servers = xlb_json_array(root, "xds_servers", "", XLB_OPTIONAL, errs);
    if (servers == NULL)
        return;
    int n = cJSON_GetArraySize(servers);
    if (n == 0) {
        xlb_errors_add(errs, "xds_servers", "must not be empty when present");
        return;
    }
    out->xds_servers = calloc((size_t)n, sizeof(*out->xds_servers));
    if (out->xds_servers == NULL) {
        xlb_errors_add(errs, "xds_servers", "out of memory");
        return;
    }
    const cJSON *server;
    cJSON_ArrayForEach(server, servers) {
        char path[XLB_PATH_MAX];
        xlb_path_index(path, "xds_servers", out->n_xds_servers);
        struct xlb_xds_server_config *cfg = &out->xds_servers[out->n_xds_servers++];
        if (!cJSON_IsObject(server)) {
            xlb_errors_add(errs, path, "must be an object");
            continue;
        }
        cfg->server_uri =
            dup_or_null(xlb_json_string(server, "server_uri", path, XLB_REQUIRED, 1024, errs));
        read_channel_creds(server, path, cfg, errs);
        read_server_features(server, path, cfg, errs);
    }
}

static void read_node(const cJSON *root, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    const cJSON *node = xlb_json_object(root, "node", "", XLB_OPTIONAL, errs);
    if (node == NULL)
        return;
    struct xlb_node_config *cfg = &out->node;
    cfg->id = dup_or_null(xlb_json_string(node, "id", "node", XLB_OPTIONAL, 1024, errs));
    cfg->cluster = dup_or_null(xlb_json_string(node, "cluster", "node", XLB_OPTIONAL, 1024, errs));
    const cJSON *locality = xlb_json_object(node, "locality", "node", XLB_OPTIONAL, errs);
    if (locality != NULL) {
        const char *p = "node.locality";
        cfg->region = dup_or_null(xlb_json_string(locality, "region", p, XLB_OPTIONAL, 256, errs));
        cfg->zone = dup_or_null(xlb_json_string(locality, "zone", p, XLB_OPTIONAL, 256, errs));
        cfg->sub_zone =
            dup_or_null(xlb_json_string(locality, "sub_zone", p, XLB_OPTIONAL, 256, errs));
    }
    const cJSON *metadata = xlb_json_object(node, "metadata", "node", XLB_OPTIONAL, errs);
    if (metadata != NULL)
        cfg->metadata = cJSON_Duplicate(metadata, true);
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

static void read_eal(const cJSON *xlb, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    const cJSON *eal = xlb_json_array(xlb, "eal", "xlb", XLB_OPTIONAL, errs);
    if (eal == NULL)
        return;
    out->eal_args = calloc((size_t)cJSON_GetArraySize(eal) + 1, sizeof(char *));
    unsigned i = 0;
    const cJSON *arg;
    cJSON_ArrayForEach(arg, eal) {
        char path[XLB_PATH_MAX];
        xlb_path_index(path, "xlb.eal", i++);
        if (!cJSON_IsString(arg) || arg->valuestring[0] == '\0')
            xlb_errors_add(errs, path, "must be a non-empty string");
        else if (eal_arg_problem(arg->valuestring) != NULL)
            xlb_errors_add(errs, path, "%s", eal_arg_problem(arg->valuestring));
        else if (out->eal_args != NULL)
            out->eal_args[out->n_eal_args++] = strdup(arg->valuestring);
    }
}

static void read_gateways(const cJSON *port, const char *path, struct xlb_port_config *cfg,
                          struct xlb_errors *errs)
{
    const cJSON *gateway = cJSON_GetObjectItemCaseSensitive(port, "gateway");
    if (gateway == NULL || cJSON_IsNull(gateway))
        return;
    char gw_path[XLB_PATH_MAX];
    xlb_path_key(gw_path, path, "gateway");

    /* One address, or a list of at most one per family. */
    const cJSON *single[1] = {gateway};
    bool is_list = cJSON_IsArray(gateway);
    int n = is_list ? cJSON_GetArraySize(gateway) : 1;
    if (n > XLB_MAX_GATEWAYS) {
        xlb_errors_add(errs, gw_path, "at most %d gateways (one per address family)",
                       XLB_MAX_GATEWAYS);
        return;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *item = is_list ? cJSON_GetArrayItem(gateway, i) : single[0];
        char item_path[XLB_PATH_MAX];
        if (is_list)
            xlb_path_index(item_path, gw_path, (unsigned)i);
        else
            snprintf(item_path, sizeof(item_path), "%s", gw_path);
        struct xlb_addr addr;
        if (!xlb_json_item_addr(item, item_path, &addr, errs))
            continue;
        bool on_link = false, same_family = false;
        for (unsigned a = 0; a < cfg->n_addresses; a++)
            on_link |= xlb_prefix_contains(&cfg->addresses[a], &addr);
        for (unsigned g = 0; g < cfg->n_gateways; g++)
            same_family |= cfg->gateways[g].family == addr.family;
        if (same_family)
            xlb_errors_add(errs, item_path, "a second gateway of the same address family");
        else if (!on_link)
            xlb_errors_add(errs, item_path, "%s is not on-link for any address of this port",
                           item->valuestring);
        else
            cfg->gateways[cfg->n_gateways++] = addr;
    }
}

/* Where addr is already a port address ("xlb.ports[P].addresses[A]"); false if nowhere. An
 * address owned twice would be answered twice and make replies leave by either port. */
static bool port_address_path(const struct xlb_bootstrap *out, const struct xlb_addr *addr,
                              char path[XLB_PATH_MAX])
{
    for (unsigned p = 0; p < out->n_ports; p++)
        for (unsigned a = 0; a < out->ports[p].n_addresses; a++)
            if (xlb_addr_equal(&out->ports[p].addresses[a].addr, addr)) {
                char port_path[XLB_PATH_MAX], list_path[XLB_PATH_MAX];
                xlb_path_index(port_path, "xlb.ports", p);
                xlb_path_key(list_path, port_path, "addresses");
                xlb_path_index(path, list_path, a);
                return true;
            }
    return false;
}

static void read_port_addresses(const cJSON *port, const char *path, struct xlb_bootstrap *out,
                                struct xlb_port_config *cfg, struct xlb_errors *errs)
{
    const cJSON *addresses = xlb_json_array(port, "addresses", path, XLB_REQUIRED, errs);
    if (addresses == NULL)
        return;
    char list_path[XLB_PATH_MAX];
    xlb_path_key(list_path, path, "addresses");
    int n = cJSON_GetArraySize(addresses);
    if (n == 0 || n > XLB_MAX_PORT_PREFIXES) {
        xlb_errors_add(errs, list_path, "must hold 1..%d addresses", XLB_MAX_PORT_PREFIXES);
        return;
    }
    unsigned i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, addresses) {
        char item_path[XLB_PATH_MAX];
        xlb_path_index(item_path, list_path, i++);
        struct xlb_prefix prefix;
        char first[XLB_PATH_MAX], text[XLB_ADDR_STRLEN];
        if (!cJSON_IsString(item))
            xlb_errors_add(errs, item_path, "must be a string");
        else if (xlb_prefix_parse(item->valuestring, &prefix) != 0)
            xlb_errors_add(errs, item_path, "\"%s\" is not ADDRESS/PREFIXLEN", item->valuestring);
        else if (port_address_path(out, &prefix.addr, first))
            xlb_errors_add(errs, item_path, "%s is already %s",
                           xlb_addr_format(&prefix.addr, text, sizeof(text)), first);
        else
            cfg->addresses[cfg->n_addresses++] = prefix;
    }
}

static void read_ports(const cJSON *xlb, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    const cJSON *ports = xlb_json_array(xlb, "ports", "xlb", XLB_REQUIRED, errs);
    if (ports == NULL)
        return;
    int n = cJSON_GetArraySize(ports);
    if (n == 0 || n > XLB_MAX_PORTS) {
        xlb_errors_add(errs, "xlb.ports", "must hold 1..%d ports", XLB_MAX_PORTS);
        return;
    }
    const cJSON *port;
    cJSON_ArrayForEach(port, ports) {
        char path[XLB_PATH_MAX];
        xlb_path_index(path, "xlb.ports", out->n_ports);
        struct xlb_port_config *cfg = &out->ports[out->n_ports++];
        if (!cJSON_IsObject(port)) {
            xlb_errors_add(errs, path, "must be an object");
            continue;
        }
        const char *name =
            xlb_json_string(port, "name", path, XLB_REQUIRED, XLB_PORT_NAME_MAX, errs);
        if (name != NULL)
            snprintf(cfg->name, sizeof(cfg->name), "%s", name);
        for (unsigned other = 0; name != NULL && other + 1 < out->n_ports; other++)
            if (strcmp(out->ports[other].name, name) == 0)
                xlb_errors_add(errs, path, "name \"%s\" is used by xlb.ports[%u] too", name, other);
        read_port_addresses(port, path, out, cfg, errs);
        read_gateways(port, path, cfg, errs);
        int64_t mtu;
        if (xlb_json_integer(port, "mtu", path, 576, XLB_PORT_MTU_MAX, &mtu, errs))
            cfg->mtu = (uint16_t)mtu;
    }
}

/* What an owned address already is, for clash messages; NULL if it is new. */
static const char *owned_as(const struct xlb_bootstrap *out, const struct xlb_addr *addr)
{
    for (unsigned p = 0; p < out->n_ports; p++)
        for (unsigned a = 0; a < out->ports[p].n_addresses; a++)
            if (xlb_addr_equal(&out->ports[p].addresses[a].addr, addr))
                return "a port address";
    for (unsigned s = 0; s < out->n_snat; s++)
        if (xlb_addr_equal(&out->snat[s], addr))
            return "an snat address";
    return NULL;
}

static void read_snat(const cJSON *xlb, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    const cJSON *snat = xlb_json_array(xlb, "snat", "xlb", XLB_OPTIONAL, errs);
    if (snat == NULL)
        return;
    out->snat = calloc((size_t)cJSON_GetArraySize(snat) + 1, sizeof(*out->snat));
    unsigned i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, snat) {
        char path[XLB_PATH_MAX];
        xlb_path_index(path, "xlb.snat", i++);
        struct xlb_addr addr;
        if (!xlb_json_item_addr(item, path, &addr, errs) || out->snat == NULL)
            continue;
        const char *clash = owned_as(out, &addr);
        if (clash != NULL)
            xlb_errors_add(errs, path, "%s is already %s", item->valuestring, clash);
        else if (out->n_snat == XLB_MAX_SNAT)
            xlb_errors_add(errs, path, "at most %d snat addresses", XLB_MAX_SNAT);
        else
            out->snat[out->n_snat++] = addr;
    }
}

static bool valid_xds_target(const char *target)
{
    /* gRPC's forms: xds:///name and xds://authority/name; the LDS name is the path. */
    if (strncmp(target, "xds:", 4) != 0)
        return false;
    const char *rest = target + 4;
    if (strncmp(rest, "//", 2) != 0)
        return rest[0] != '\0';
    const char *slash = strchr(rest + 2, '/');
    return slash != NULL && slash[1] != '\0';
}

/* Why an address cannot be a VIP (which clients reach by unicast), or NULL. */
static const char *vip_address_unusable(const struct xlb_addr *a)
{
    static const uint8_t zero[16];
    if (a->family == AF_INET) {
        if (a->bytes[0] == 0)
            return "in 0.0.0.0/8";
        if (a->bytes[0] == 127)
            return "a loopback address";
        if (a->bytes[0] >= 224)
            return "multicast, reserved or broadcast";
        return NULL;
    }
    if (memcmp(a->bytes, zero, 16) == 0)
        return "the unspecified address";
    if (memcmp(a->bytes, zero, 15) == 0 && a->bytes[15] == 1)
        return "the loopback address";
    if (a->bytes[0] == 0xff)
        return "multicast";
    return NULL;
}

static bool new_vip6_address(const struct xlb_bootstrap *out, const struct xlb_addr *a)
{
    for (unsigned v = 0; v < out->n_vips; v++)
        if (xlb_addr_equal(&out->vips[v].address, a))
            return false;
    return true;
}

static void read_vip(const cJSON *vip, const char *path, struct xlb_bootstrap *out,
                     struct xlb_errors *errs)
{
    struct xlb_vip_config *cfg = &out->vips[out->n_vips];
    const cJSON *address = cJSON_GetObjectItemCaseSensitive(vip, "address");
    char addr_path[XLB_PATH_MAX];
    xlb_path_key(addr_path, path, "address");
    bool ok = true;
    if (address == NULL) {
        xlb_errors_add(errs, addr_path, "is required");
        ok = false;
    } else {
        ok &= xlb_json_item_addr(address, addr_path, &cfg->address, errs);
    }
    int64_t port = 0;
    char port_path[XLB_PATH_MAX];
    xlb_path_key(port_path, path, "port");
    if (cJSON_GetObjectItemCaseSensitive(vip, "port") == NULL) {
        xlb_errors_add(errs, port_path, "is required");
        ok = false;
    } else {
        ok &= xlb_json_integer(vip, "port", path, 1, 65535, &port, errs);
    }
    cfg->port = (uint16_t)port;

    const char *target = xlb_json_string(vip, "target", path, XLB_OPTIONAL, 1024, errs);
    const char *cluster = xlb_json_string(vip, "cluster", path, XLB_OPTIONAL, 1024, errs);
    bool has_target = cJSON_HasObjectItem(vip, "target");
    bool has_cluster = cJSON_HasObjectItem(vip, "cluster");
    if (has_target == has_cluster) {
        xlb_errors_add(errs, path, "needs exactly one of \"target\" (L7) or \"cluster\" (L4)");
        ok = false;
    } else if (target != NULL && !valid_xds_target(target)) {
        char target_path[XLB_PATH_MAX];
        xlb_path_key(target_path, path, "target");
        xlb_errors_add(errs, target_path, "\"%s\" is not an xds: URI (xds:///NAME)", target);
        ok = false;
    } else if (target == NULL && cluster == NULL) {
        ok = false; /* the string getter reported it */
    }
    if (!ok)
        return;
    const char *unusable = vip_address_unusable(&cfg->address);
    if (unusable != NULL) {
        xlb_errors_add(errs, addr_path, "%s is %s, not a VIP address", address->valuestring,
                       unusable);
        return;
    }
    bool new_vip6 = cfg->address.family == AF_INET6 && new_vip6_address(out, &cfg->address);
    if (new_vip6 && out->n_vip6_addresses == XLB_MAX_VIP6_ADDRESSES) {
        xlb_errors_add(errs, addr_path, "at most %d IPv6 VIP addresses", XLB_MAX_VIP6_ADDRESSES);
        return;
    }

    const char *clash = owned_as(out, &cfg->address);
    for (unsigned other = 0; other < out->n_vips && clash == NULL; other++)
        if (xlb_addr_equal(&out->vips[other].address, &cfg->address) &&
            out->vips[other].port == cfg->port) {
            xlb_errors_add(errs, path, "duplicates xlb.vips[%u] (same address and port)", other);
            return;
        }
    if (clash != NULL) {
        xlb_errors_add(errs, addr_path, "%s is already %s", address->valuestring, clash);
        return;
    }
    cfg->target = dup_or_null(target);
    cfg->cluster = dup_or_null(cluster);
    out->n_vips++;
    out->n_vip6_addresses += new_vip6;
}

static void read_vips(const cJSON *xlb, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    const cJSON *vips = xlb_json_array(xlb, "vips", "xlb", XLB_OPTIONAL, errs);
    if (vips == NULL)
        return;
    out->vips = calloc((size_t)cJSON_GetArraySize(vips) + 1, sizeof(*out->vips));
    if (out->vips == NULL)
        return;
    unsigned i = 0;
    const cJSON *vip;
    cJSON_ArrayForEach(vip, vips) {
        char path[XLB_PATH_MAX];
        xlb_path_index(path, "xlb.vips", i++);
        if (!cJSON_IsObject(vip))
            xlb_errors_add(errs, path, "must be an object");
        else
            read_vip(vip, path, out, errs);
    }
}

static void read_static_resources(const cJSON *xlb, struct xlb_bootstrap *out,
                                  struct xlb_errors *errs)
{
    static const char *const kinds[] = {"listeners", "routes", "clusters", "endpoints"};
    const cJSON *resources = xlb_json_object(xlb, "static_resources", "xlb", XLB_OPTIONAL, errs);
    if (resources == NULL)
        return;
    bool ok = true;
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        const cJSON *list =
            xlb_json_array(resources, kinds[k], "xlb.static_resources", XLB_OPTIONAL, errs);
        ok &= list != NULL || !cJSON_HasObjectItem(resources, kinds[k]);
        unsigned i = 0;
        const cJSON *item;
        cJSON_ArrayForEach(item, list) {
            char list_path[XLB_PATH_MAX], path[XLB_PATH_MAX];
            xlb_path_key(list_path, "xlb.static_resources", kinds[k]);
            xlb_path_index(path, list_path, i++);
            if (!cJSON_IsObject(item)) {
                xlb_errors_add(errs, path, "must be an object");
                ok = false;
            }
        }
    }
    if (ok)
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
static void read_metrics(const cJSON *xlb, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    int64_t value;
    if (xlb_json_integer(xlb, "metrics_max_series", "xlb", 100, 1000000, &value, errs))
        out->metrics_max_series = (unsigned)value;
    const char *listen = xlb_json_string(xlb, "metrics_listen", "xlb", XLB_OPTIONAL, 64, errs);
    if (listen == NULL)
        return;
    if (xlb_host_port_parse(listen, strlen(listen), &out->metrics_listen) != 0 ||
        !is_loopback(&out->metrics_listen.addr)) {
        xlb_errors_add(errs, "xlb.metrics_listen",
                       "\"%s\" is not a loopback ADDRESS:PORT (127.0.0.1:9109 or [::1]:9109)",
                       listen);
        return;
    }
    out->metrics_enabled = true;
}

/* "auto" (the default), "off", or the largest MSS a forwarded SYN may offer. 536 is the least
 * every IPv4 host must accept (RFC 9293 3.7.1); 65495 what a 65,535-byte datagram carries. */
static void read_mss_clamp(const cJSON *xlb, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    const cJSON *clamp = cJSON_GetObjectItemCaseSensitive(xlb, "tcp_mss_clamp");
    if (clamp == NULL)
        return;
    if (cJSON_IsString(clamp) && strcmp(clamp->valuestring, "auto") == 0)
        out->tcp_mss_clamp = XLB_MSS_CLAMP_AUTO;
    else if (cJSON_IsString(clamp) && strcmp(clamp->valuestring, "off") == 0)
        out->tcp_mss_clamp = XLB_MSS_CLAMP_OFF;
    else if (cJSON_IsNumber(clamp) && clamp->valuedouble >= 536 && clamp->valuedouble <= 65495 &&
             clamp->valuedouble == (double)(int)clamp->valuedouble)
        out->tcp_mss_clamp = (uint16_t)clamp->valuedouble;
    else
        xlb_errors_add(errs, "xlb.tcp_mss_clamp",
                       "must be \"auto\", \"off\" or an integer in 536..65495");
}

static void read_xlb_section(const cJSON *xlb, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    int64_t value;
    read_eal(xlb, out, errs);
    if (xlb_json_integer(xlb, "workers", "xlb", 1, XLB_MAX_WORKERS, &value, errs))
        out->workers = (unsigned)value;
    const char *socket =
        xlb_json_string(xlb, "control_socket", "xlb", XLB_OPTIONAL, XLB_SOCKET_PATH_MAX, errs);
    if (socket != NULL)
        snprintf(out->control_socket, sizeof(out->control_socket), "%s", socket);
    if (xlb_json_integer(xlb, "worker_idle_sleep_us", "xlb", 0, 100000, &value, errs))
        out->worker_idle_sleep_us = (unsigned)value;
    if (xlb_json_integer(xlb, "mbuf_pool_size", "xlb", 1023, 1 << 24, &value, errs))
        out->mbuf_pool_size = (unsigned)value;
    if (xlb_json_integer(xlb, "flows_per_worker", "xlb", 1024, 1 << 24, &value, errs))
        out->flows_per_worker = (uint32_t)value;
    if (xlb_json_integer(xlb, "l7_connections_per_worker", "xlb", 0, 1 << 20, &value, errs))
        out->l7_connections_per_worker = (uint32_t)value;
    const cJSON *compat =
        cJSON_GetObjectItemCaseSensitive(xlb, "aggregate_cluster_backward_compat");
    if (compat != NULL && !cJSON_IsBool(compat))
        xlb_errors_add(errs, "xlb.aggregate_cluster_backward_compat", "must be true or false");
    out->aggregate_cluster_backward_compat = cJSON_IsTrue(compat);
    read_mss_clamp(xlb, out, errs);
    read_ports(xlb, out, errs);
    read_snat(xlb, out, errs);
    read_vips(xlb, out, errs);
    read_static_resources(xlb, out, errs);
    read_metrics(xlb, out, errs);
}

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
    out->mbuf_pool_size = XLB_DEFAULT_MBUFS;
    out->flows_per_worker = XLB_DEFAULT_FLOWS_PER_WORKER;
    out->l7_connections_per_worker = XLB_L7_CONNECTIONS_AUTO;
    out->tcp_mss_clamp = XLB_MSS_CLAMP_AUTO;
    out->metrics_max_series = XLB_DEFAULT_MAX_SERIES;
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
        read_xds_servers(root, out, errs);
        read_node(root, out, errs);
        const cJSON *xlb = xlb_json_object(root, "xlb", "", XLB_REQUIRED, errs);
        if (xlb != NULL)
            read_xlb_section(xlb, out, errs);
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
    }
    free(b->vips);
    cJSON_Delete(b->static_resources);
    memset(b, 0, sizeof(*b));
}
