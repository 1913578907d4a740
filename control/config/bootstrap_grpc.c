/*
 * gRPC's part of the bootstrap: xds_servers and node, read as gRPC reads them. Unknown fields
 * are ignored here, as gRPC ignores them (a bootstrap may carry fields of newer gRPC versions or
 * other tools); only the xlb section rejects keys it does not know.
 */
#include <stdlib.h>
#include <string.h>

#include "bootstrap_internal.h"

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
        out->ca_certificate_file = xlb_bootstrap_dup(
            xlb_json_string(config, "ca_certificate_file", config_path, XLB_OPTIONAL, 4096, errs));
        out->certificate_file = xlb_bootstrap_dup(
            xlb_json_string(config, "certificate_file", config_path, XLB_OPTIONAL, 4096, errs));
        out->private_key_file = xlb_bootstrap_dup(
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

void xlb_bootstrap_read_xds_servers(const cJSON *root, struct xlb_bootstrap *out,
                                    struct xlb_errors *errs)
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
        cfg->server_uri = xlb_bootstrap_dup(
            xlb_json_string(server, "server_uri", path, XLB_REQUIRED, 1024, errs));
        read_channel_creds(server, path, cfg, errs);
        read_server_features(server, path, cfg, errs);
    }
}

void xlb_bootstrap_read_node(const cJSON *root, struct xlb_bootstrap *out, struct xlb_errors *errs)
{
    const cJSON *node = xlb_json_object(root, "node", "", XLB_OPTIONAL, errs);
    if (node == NULL)
        return;
    struct xlb_node_config *cfg = &out->node;
    cfg->id = xlb_bootstrap_dup(xlb_json_string(node, "id", "node", XLB_OPTIONAL, 1024, errs));
    cfg->cluster =
        xlb_bootstrap_dup(xlb_json_string(node, "cluster", "node", XLB_OPTIONAL, 1024, errs));
    const cJSON *locality = xlb_json_object(node, "locality", "node", XLB_OPTIONAL, errs);
    if (locality != NULL) {
        const char *p = "node.locality";
        cfg->region =
            xlb_bootstrap_dup(xlb_json_string(locality, "region", p, XLB_OPTIONAL, 256, errs));
        cfg->zone =
            xlb_bootstrap_dup(xlb_json_string(locality, "zone", p, XLB_OPTIONAL, 256, errs));
        cfg->sub_zone =
            xlb_bootstrap_dup(xlb_json_string(locality, "sub_zone", p, XLB_OPTIONAL, 256, errs));
    }
    const cJSON *metadata = xlb_json_object(node, "metadata", "node", XLB_OPTIONAL, errs);
    if (metadata != NULL)
        cfg->metadata = cJSON_Duplicate(metadata, true);
}
