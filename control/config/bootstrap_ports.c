/*
 * The ports (each a table of keys: name, addresses, gateway, mtu) and the addresses xlb owns:
 * the ports' and the SNAT addresses, each owned once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap_internal.h"

/* What a port's key readers fill: the port, and the document so far for clashes. */
struct port_reading {
    const struct xlb_bootstrap *out;
    struct xlb_port_config *cfg;
};

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

static void read_gateway(const cJSON *port, const char *path, const struct xlb_config_key *key,
                         void *ctx, struct xlb_errors *errs)
{
    struct xlb_port_config *cfg = ((struct port_reading *)ctx)->cfg;
    const cJSON *gateway = cJSON_GetObjectItemCaseSensitive(port, key->name);
    if (gateway == NULL || cJSON_IsNull(gateway))
        return;
    char gw_path[XLB_PATH_MAX];
    xlb_path_key(gw_path, path, key->name);

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

static void read_addresses(const cJSON *port, const char *path, const struct xlb_config_key *key,
                           void *ctx, struct xlb_errors *errs)
{
    const struct xlb_bootstrap *out = ((struct port_reading *)ctx)->out;
    struct xlb_port_config *cfg = ((struct port_reading *)ctx)->cfg;
    const cJSON *addresses = xlb_json_array(port, key->name, path, XLB_REQUIRED, errs);
    if (addresses == NULL)
        return;
    char list_path[XLB_PATH_MAX];
    xlb_path_key(list_path, path, key->name);
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

static void read_name(const cJSON *port, const char *path, const struct xlb_config_key *key,
                      void *ctx, struct xlb_errors *errs)
{
    const struct xlb_bootstrap *out = ((struct port_reading *)ctx)->out;
    struct xlb_port_config *cfg = ((struct port_reading *)ctx)->cfg;
    const char *name =
        xlb_json_string(port, key->name, path, XLB_REQUIRED, XLB_PORT_NAME_MAX, errs);
    if (name == NULL)
        return;
    snprintf(cfg->name, sizeof(cfg->name), "%s", name);
    for (unsigned other = 0; &out->ports[other] != cfg; other++)
        if (strcmp(out->ports[other].name, name) == 0)
            xlb_errors_add(errs, path, "name \"%s\" is used by xlb.ports[%u] too", name, other);
}

static void read_mtu(const cJSON *port, const char *path, const struct xlb_config_key *key,
                     void *ctx, struct xlb_errors *errs)
{
    int64_t mtu;
    if (xlb_json_integer(port, key->name, path, 576, XLB_PORT_MTU_MAX, &mtu, errs))
        ((struct port_reading *)ctx)->cfg->mtu = (uint16_t)mtu;
}

static const struct xlb_config_key port_keys[] = {
    {.name = "name", .read = read_name},
    {.name = "addresses", .read = read_addresses},
    {.name = "gateway", .read = read_gateway},
    {.name = "mtu", .read = read_mtu},
};
const struct xlb_config_object xlb_bootstrap_port_object =
    XLB_CONFIG_OBJECT("xlb.ports[]", port_keys);

void xlb_bootstrap_read_ports(const cJSON *xlb, const char *path, const struct xlb_config_key *key,
                              void *ctx, struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const cJSON *ports = xlb_json_array(xlb, key->name, path, XLB_REQUIRED, errs);
    if (ports == NULL)
        return;
    char list_path[XLB_PATH_MAX];
    xlb_path_key(list_path, path, key->name);
    int n = cJSON_GetArraySize(ports);
    if (n == 0 || n > XLB_MAX_PORTS) {
        xlb_errors_add(errs, list_path, "must hold 1..%d ports", XLB_MAX_PORTS);
        return;
    }
    const cJSON *port;
    cJSON_ArrayForEach(port, ports) {
        char port_path[XLB_PATH_MAX];
        xlb_path_index(port_path, list_path, out->n_ports);
        struct port_reading reading = {.out = out, .cfg = &out->ports[out->n_ports++]};
        if (!cJSON_IsObject(port))
            xlb_errors_add(errs, port_path, "must be an object");
        else
            xlb_config_object_read(&xlb_bootstrap_port_object, port, port_path, &reading, errs);
    }
}

/* What an owned address already is, for clash messages; NULL if it is new. */
const char *xlb_bootstrap_owned_as(const struct xlb_bootstrap *out, const struct xlb_addr *addr)
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

void xlb_bootstrap_read_snat(const cJSON *xlb, const char *path, const struct xlb_config_key *key,
                             void *ctx, struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const cJSON *snat = xlb_json_array(xlb, key->name, path, XLB_OPTIONAL, errs);
    if (snat == NULL)
        return;
    out->snat = calloc((size_t)cJSON_GetArraySize(snat) + 1, sizeof(*out->snat));
    char list_path[XLB_PATH_MAX];
    xlb_path_key(list_path, path, key->name);
    unsigned i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, snat) {
        char item_path[XLB_PATH_MAX];
        xlb_path_index(item_path, list_path, i++);
        struct xlb_addr addr;
        if (!xlb_json_item_addr(item, item_path, &addr, errs) || out->snat == NULL)
            continue;
        const char *clash = xlb_bootstrap_owned_as(out, &addr);
        if (clash != NULL)
            xlb_errors_add(errs, item_path, "%s is already %s", item->valuestring, clash);
        else if (out->n_snat == XLB_MAX_SNAT)
            xlb_errors_add(errs, item_path, "at most %d snat addresses", XLB_MAX_SNAT);
        else
            out->snat[out->n_snat++] = addr;
    }
}
