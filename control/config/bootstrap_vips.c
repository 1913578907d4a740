/*
 * The VIPs: each a table of keys (address, port, target, cluster), then the rules between them
 * and against the rest of the document.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bootstrap_internal.h"

/* What a VIP's key readers leave for the rules between keys. */
struct vip_reading {
    struct xlb_bootstrap *out;
    struct xlb_vip_config *cfg;
    bool ok;
    const cJSON *address;
    const char *target, *cluster;
    bool has_target, has_cluster;
    bool has_l4_mode, has_congestion_control, has_l7_mode, has_tls;
};

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

static void read_address(const cJSON *vip, const char *path, const struct xlb_config_key *key,
                         void *ctx, struct xlb_errors *errs)
{
    struct vip_reading *r = ctx;
    char addr_path[XLB_PATH_MAX];
    xlb_path_key(addr_path, path, key->name);
    r->address = cJSON_GetObjectItemCaseSensitive(vip, key->name);
    if (r->address == NULL) {
        xlb_errors_add(errs, addr_path, "is required");
        r->ok = false;
    } else {
        r->ok &= xlb_json_item_addr(r->address, addr_path, &r->cfg->address, errs);
    }
}

static void read_port(const cJSON *vip, const char *path, const struct xlb_config_key *key,
                      void *ctx, struct xlb_errors *errs)
{
    struct vip_reading *r = ctx;
    int64_t port = 0;
    if (cJSON_GetObjectItemCaseSensitive(vip, key->name) == NULL) {
        char port_path[XLB_PATH_MAX];
        xlb_path_key(port_path, path, key->name);
        xlb_errors_add(errs, port_path, "is required");
        r->ok = false;
    } else {
        r->ok &= xlb_json_integer(vip, key->name, path, 1, 65535, &port, errs);
    }
    r->cfg->port = (uint16_t)port;
}

static void read_target(const cJSON *vip, const char *path, const struct xlb_config_key *key,
                        void *ctx, struct xlb_errors *errs)
{
    struct vip_reading *r = ctx;
    r->target = xlb_json_string(vip, key->name, path, XLB_OPTIONAL, 1024, errs);
    r->has_target = cJSON_HasObjectItem(vip, key->name);
}

static void read_cluster(const cJSON *vip, const char *path, const struct xlb_config_key *key,
                         void *ctx, struct xlb_errors *errs)
{
    struct vip_reading *r = ctx;
    r->cluster = xlb_json_string(vip, key->name, path, XLB_OPTIONAL, 1024, errs);
    r->has_cluster = cJSON_HasObjectItem(vip, key->name);
}

/* One of a key's allowed strings: its index, or -1 (reported) when absent-but-wrong. Absent: 0. */
static int read_choice(const cJSON *vip, const char *path, const char *name,
                       const char *const *choices, unsigned n, bool *present,
                       struct xlb_errors *errs)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(vip, name);
    *present = item != NULL;
    if (item == NULL)
        return 0;
    for (unsigned i = 0; cJSON_IsString(item) && i < n; i++)
        if (strcmp(item->valuestring, choices[i]) == 0)
            return (int)i;
    char key_path[XLB_PATH_MAX];
    xlb_path_key(key_path, path, name);
    xlb_errors_add(errs, key_path, "must be \"%s\" or \"%s\"", choices[0], choices[1]);
    return -1;
}

static void read_l4_mode(const cJSON *vip, const char *path, const struct xlb_config_key *key,
                         void *ctx, struct xlb_errors *errs)
{
    static const char *const modes[] = {"nat", "terminate"};
    struct vip_reading *r = ctx;
    int mode = read_choice(vip, path, key->name, modes, 2, &r->has_l4_mode, errs);
    r->ok &= mode >= 0;
    r->cfg->terminate = mode == 1;
}

/* "stream" (the default: every request stream balanced on its own, dataplane/stream/, set by
 * check_vip once the VIP is known to be L7) or "splice" (one backend per client connection,
 * dataplane/l7/). */
static void read_l7_mode(const cJSON *vip, const char *path, const struct xlb_config_key *key,
                         void *ctx, struct xlb_errors *errs)
{
    static const char *const modes[] = {"splice", "stream"};
    struct vip_reading *r = ctx;
    int mode = read_choice(vip, path, key->name, modes, 2, &r->has_l7_mode, errs);
    r->ok &= mode >= 0;
    r->cfg->stream = mode == 1;
}

static void read_congestion_control(const cJSON *vip, const char *path,
                                    const struct xlb_config_key *key, void *ctx,
                                    struct xlb_errors *errs)
{
    static const char *const algorithms[] = {"cubic", "newreno"};
    struct vip_reading *r = ctx;
    int cc = read_choice(vip, path, key->name, algorithms, 2, &r->has_congestion_control, errs);
    r->ok &= cc >= 0;
    r->cfg->newreno = cc == 1;
}

static void read_tls(const cJSON *vip, const char *path, const struct xlb_config_key *key,
                     void *ctx, struct xlb_errors *errs)
{
    struct vip_reading *r = ctx;
    r->has_tls = cJSON_HasObjectItem(vip, key->name);
    r->ok &= xlb_bootstrap_read_vip_tls(vip, path, key->name, r->out, &r->cfg->tls, errs);
}

static const struct xlb_config_key vip_keys[] = {
    {.name = "address", .read = read_address},
    {.name = "port", .read = read_port},
    {.name = "target", .read = read_target},
    {.name = "cluster", .read = read_cluster},
    {.name = "l4_mode", .read = read_l4_mode},
    {.name = "congestion_control", .read = read_congestion_control},
    {.name = "l7_mode", .read = read_l7_mode},
    {.name = "tls", .read = read_tls},
};
const struct xlb_config_object xlb_bootstrap_vip_object = XLB_CONFIG_OBJECT("xlb.vips[]", vip_keys);

/* The rules between a VIP's keys and against the document; the VIP counts if they hold. */
static void check_vip(struct vip_reading *r, const char *path, struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = r->out;
    struct xlb_vip_config *cfg = r->cfg;
    char addr_path[XLB_PATH_MAX];
    xlb_path_key(addr_path, path, "address");
    if (r->has_target && !r->has_l7_mode)
        cfg->stream = true; /* the default L7 mode */
    if (r->has_target == r->has_cluster) {
        xlb_errors_add(errs, path, "needs exactly one of \"target\" (L7) or \"cluster\" (L4)");
        r->ok = false;
    } else if (r->target != NULL && !valid_xds_target(r->target)) {
        char target_path[XLB_PATH_MAX];
        xlb_path_key(target_path, path, "target");
        xlb_errors_add(errs, target_path, "\"%s\" is not an xds: URI (xds:///NAME)", r->target);
        r->ok = false;
    } else if (r->target == NULL && r->cluster == NULL) {
        r->ok = false; /* the string getter reported it */
    } else if (r->has_target && r->has_l4_mode) {
        xlb_errors_add(errs, path, "\"l4_mode\" is for L4 VIPs (with a \"cluster\")");
        r->ok = false;
    } else if (r->has_cluster && r->has_l7_mode) {
        xlb_errors_add(errs, path, "\"l7_mode\" is for L7 VIPs (with a \"target\")");
        r->ok = false;
    } else if (r->has_congestion_control && !cfg->terminate) {
        xlb_errors_add(errs, path,
                       "\"congestion_control\" needs \"l4_mode\": \"terminate\" (xlb's own TCP)");
        r->ok = false;
    } else if (r->has_tls && !cfg->stream) {
        /* TLS needs xlb's own TCP and HTTP/2 on the client side (docs/tls.md). */
        xlb_errors_add(errs, path, "\"tls\" needs \"l7_mode\": \"stream\"");
        r->ok = false;
    } else if (r->has_tls && xlb_bootstrap_tls_vips(out) == XLB_MAX_TLS_VIPS) {
        xlb_errors_add(errs, path, "at most %d VIPs with \"tls\"", XLB_MAX_TLS_VIPS);
        r->ok = false;
    }
    if (!r->ok)
        return;
    const char *unusable = vip_address_unusable(&cfg->address);
    if (unusable != NULL) {
        xlb_errors_add(errs, addr_path, "%s is %s, not a VIP address", r->address->valuestring,
                       unusable);
        return;
    }
    bool new_vip6 = cfg->address.family == AF_INET6 && new_vip6_address(out, &cfg->address);
    if (new_vip6 && out->n_vip6_addresses == XLB_MAX_VIP6_ADDRESSES) {
        xlb_errors_add(errs, addr_path, "at most %d IPv6 VIP addresses", XLB_MAX_VIP6_ADDRESSES);
        return;
    }

    const char *clash = xlb_bootstrap_owned_as(out, &cfg->address);
    for (unsigned other = 0; other < out->n_vips && clash == NULL; other++)
        if (xlb_addr_equal(&out->vips[other].address, &cfg->address) &&
            out->vips[other].port == cfg->port) {
            xlb_errors_add(errs, path, "duplicates xlb.vips[%u] (same address and port)", other);
            return;
        }
    if (clash != NULL) {
        xlb_errors_add(errs, addr_path, "%s is already %s", r->address->valuestring, clash);
        return;
    }
    cfg->target = xlb_bootstrap_dup(r->target);
    cfg->cluster = xlb_bootstrap_dup(r->cluster);
    xlb_bootstrap_vip_tls_keep(out, &cfg->tls);
    out->n_vips++;
    out->n_vip6_addresses += new_vip6;
}

void xlb_bootstrap_read_vips(const cJSON *xlb, const char *path, const struct xlb_config_key *key,
                             void *ctx, struct xlb_errors *errs)
{
    struct xlb_bootstrap *out = ctx;
    const cJSON *vips = xlb_json_array(xlb, key->name, path, XLB_OPTIONAL, errs);
    if (vips == NULL)
        return;
    out->vips = calloc((size_t)cJSON_GetArraySize(vips) + 1, sizeof(*out->vips));
    if (out->vips == NULL)
        return;
    char list_path[XLB_PATH_MAX];
    xlb_path_key(list_path, path, key->name);
    unsigned i = 0;
    const cJSON *vip;
    cJSON_ArrayForEach(vip, vips) {
        char vip_path[XLB_PATH_MAX];
        xlb_path_index(vip_path, list_path, i++);
        if (!cJSON_IsObject(vip)) {
            xlb_errors_add(errs, vip_path, "must be an object");
            continue;
        }
        /* A rejected VIP leaves its slot to the next one: it is cleared, not counted. */
        struct xlb_vip_config *cfg = &out->vips[out->n_vips];
        memset(cfg, 0, sizeof(*cfg));
        struct vip_reading reading = {.out = out, .cfg = cfg, .ok = true};
        xlb_config_object_read(&xlb_bootstrap_vip_object, vip, vip_path, &reading, errs);
        check_vip(&reading, vip_path, errs);
    }
}
