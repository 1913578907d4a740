/*
 * RouteConfiguration.cluster_specifier_plugins (A28; RLS's A77 is the one gRPC implements):
 * the named plugins that routes may choose their cluster with. xlb implements none, so every
 * plugin is of an unsupported type: one marked is_optional is recorded so that the routes
 * naming it are ignored, as gRPC does; any other NACKs the resource. A route naming a plugin
 * that is not in the list NACKs it too (validate_route_action.c).
 */
#include <stdlib.h>
#include <string.h>

#include "validate_route_internal.h"

typedef Envoy__Config__Route__V3__ClusterSpecifierPlugin Plugin;

static bool known(const struct xv_cs_plugins *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->items[i].name, name) == 0)
            return true;
    return false;
}

/* One plugin; its name is recorded even when its config is in error, so that the routes
 * naming it add no second error for the same problem. */
static bool read_plugin(struct xv_ctx *ctx, const char *path, const Plugin *plugin,
                        struct xv_cs_plugins *out)
{
    char epath[XV_PATH_MAX], child[XV_PATH_MAX];
    xv_key(epath, path, "extension");
    const Envoy__Config__Core__V3__TypedExtensionConfig *ext = plugin->extension;
    if (ext == NULL) {
        xv_error(ctx, epath, "field not present");
        return false;
    }
    const char *name = ext->name != NULL ? ext->name : "";
    bool ok = true;
    if (known(out, name)) {
        xv_key(child, epath, "name");
        xv_error(ctx, child, "duplicate name \"%.96s\"", name);
        ok = false;
    } else {
        struct xv_cs_plugin *slot = &out->items[out->n];
        slot->name = xv_strdup(ctx, epath, name);
        if (slot->name == NULL)
            return false;
        out->n++;
        slot->skipped = false;
    }
    xv_key(child, epath, "typed_config");
    if (ext->typed_config == NULL) {
        xv_error(ctx, child, "field not present");
        return false;
    }
    struct xv_extension parsed;
    if (!xv_extension_read(ctx, child, ext->typed_config, &parsed))
        return false;
    xv_extension_release(&parsed);
    if (!plugin->is_optional) {
        xv_error(ctx, child, "unsupported ClusterSpecifierPlugin type");
        return false;
    }
    if (ok)
        out->items[out->n - 1].skipped = true;
    return ok;
}

bool xv_cs_plugins_read(struct xv_ctx *ctx, const char *path,
                        const Envoy__Config__Route__V3__RouteConfiguration *msg,
                        struct xv_cs_plugins *out)
{
    char ppath[XV_PATH_MAX];
    xv_key(ppath, path, "cluster_specifier_plugins");
    memset(out, 0, sizeof(*out));
    out->items = xv_calloc(ctx, ppath, msg->n_cluster_specifier_plugins, sizeof(*out->items));
    if (out->items == NULL)
        return false;
    bool ok = true;
    for (size_t i = 0; i < msg->n_cluster_specifier_plugins; i++) {
        char ipath[XV_PATH_MAX];
        xv_idx(ipath, ppath, i);
        ok = read_plugin(ctx, ipath, msg->cluster_specifier_plugins[i], out) && ok;
    }
    return ok;
}

enum xv_cs_plugin_use xv_cs_plugins_lookup(const struct xv_cs_plugins *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->items[i].name, name) == 0)
            return p->items[i].skipped ? XV_PLUGIN_SKIPPED : XV_PLUGIN_IN_ERROR;
    return XV_PLUGIN_UNKNOWN;
}

void xv_cs_plugins_free(struct xv_cs_plugins *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->items[i].name);
    free(p->items);
    memset(p, 0, sizeof(*p));
}
