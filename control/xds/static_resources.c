#include "static_resources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_json.h"

struct kind {
    const char *key;
    enum xlb_xds_type type;
    const char *name_field;
};

static const struct kind kinds[] = {
    {"listeners", XLB_XDS_LDS, "name"},
    {"routes", XLB_XDS_RDS, "name"},
    {"clusters", XLB_XDS_CDS, "name"},
    {"endpoints", XLB_XDS_EDS, "cluster_name"},
};

/* The resource's name as proto3 JSON spells it (field name or its lowerCamelCase form). */
static const char *json_name(const cJSON *object, const struct kind *k)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(object, k->name_field);
    if (name == NULL && k->type == XLB_XDS_EDS)
        name = cJSON_GetObjectItemCaseSensitive(object, "clusterName");
    return cJSON_IsString(name) && name->valuestring[0] ? name->valuestring : NULL;
}

static int load_one(struct xlb_xds_cache *cache, const struct kind *k, const cJSON *object,
                    const char *path, struct xlb_errors *errs)
{
    const char *name = json_name(object, k);
    if (name == NULL) {
        xlb_errors_add(errs, path, "needs a \"%s\"", k->name_field);
        return -1;
    }
    if (xlb_xds_cache_find(cache, k->type, name) != NULL) {
        xlb_errors_add(errs, path, "%s \"%s\" is defined twice", xlb_xds_type_name[k->type], name);
        return -1;
    }
    ProtobufCMessage *msg =
        xlb_proto_json_read(xlb_proto_type_by_url(xlb_xds_type_url[k->type]), object, path, errs);
    if (msg == NULL)
        return -1;
    struct xlb_xds_resource *res = xlb_xds_cache_get(cache, k->type, name);
    if (res == NULL) {
        protobuf_c_message_free_unpacked(msg, NULL);
        xlb_errors_add(errs, path, "out of memory");
        return -1;
    }
    unsigned before = errs->n;
    if (xlb_xds_cache_update(cache, res, msg, "static", true, errs) != 0) {
        /* The validator's lines name the resource; say where it came from too. */
        for (unsigned i = before; i < errs->n; i++) {
            char line[1024];
            snprintf(line, sizeof(line), "%s: %s", path, errs->lines[i]);
            free(errs->lines[i]);
            errs->lines[i] = strdup(line);
        }
        return -1;
    }
    return 0;
}

int xlb_static_resources_load(struct xlb_xds_cache *cache, const cJSON *static_resources,
                              struct xlb_errors *errs)
{
    int rc = 0;
    for (size_t k = 0; static_resources != NULL && k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(static_resources, kinds[k].key);
        unsigned i = 0;
        const cJSON *object;
        cJSON_ArrayForEach(object, list) {
            char path[XLB_PATH_MAX];
            snprintf(path, sizeof(path), "xlb.static_resources.%s[%u]", kinds[k].key, i++);
            if (load_one(cache, &kinds[k], object, path, errs) != 0)
                rc = -1;
        }
    }
    return rc;
}
