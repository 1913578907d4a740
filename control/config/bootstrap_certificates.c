/*
 * Certificates (docs/tls.md): gRPC's certificate_providers section (A29), read as gRPC reads
 * it, and a VIP's "tls" object naming one of its instances. Only the file_watcher plugin is
 * known; the files themselves are checked when the TLS servers are built (xlbd --check and each
 * reload), not here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap_internal.h"
#include "xlb_const.h"

#define REFRESH_MIN_MS 1000
#define REFRESH_MAX_MS 86400000

/* A protobuf JSON Duration ("600s", "1.5s") in milliseconds, or -1. */
static long long duration_ms(const char *text)
{
    char *end = NULL;
    double seconds = strtod(text, &end);
    if (end == text || strcmp(end, "s") != 0 || !(seconds >= 0) || seconds > 1e9)
        return -1;
    return (long long)(seconds * 1000.0 + 0.5);
}

static void read_refresh_interval(const cJSON *config, const char *path,
                                  struct xlb_cert_provider_config *p, struct xlb_errors *errs)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(config, "refresh_interval");
    p->refresh_interval_ms = XLB_DEFAULT_CERT_REFRESH_MS;
    if (item == NULL)
        return;
    long long ms = cJSON_IsString(item) ? duration_ms(item->valuestring) : -1;
    if (ms < REFRESH_MIN_MS || ms > REFRESH_MAX_MS) {
        char item_path[XLB_PATH_MAX];
        xlb_path_key(item_path, path, "refresh_interval");
        xlb_errors_add(errs, item_path, "must be a duration from \"1s\" to \"86400s\"");
        return;
    }
    p->refresh_interval_ms = (unsigned)ms;
}

static bool read_file_watcher(const cJSON *config, const char *path,
                              struct xlb_cert_provider_config *p, struct xlb_errors *errs)
{
    unsigned before = errs->n + errs->dropped;
    const char *cert = xlb_json_string(config, "certificate_file", path, XLB_OPTIONAL, 4096, errs);
    const char *key = xlb_json_string(config, "private_key_file", path, XLB_OPTIONAL, 4096, errs);
    const char *ca = xlb_json_string(config, "ca_certificate_file", path, XLB_OPTIONAL, 4096, errs);
    read_refresh_interval(config, path, p, errs);
    if (errs->n + errs->dropped != before)
        return false;
    if ((cert == NULL) != (key == NULL)) {
        xlb_errors_add(errs, path, "certificate_file and private_key_file go together");
        return false;
    }
    if (cert == NULL && ca == NULL) {
        xlb_errors_add(errs, path,
                       "needs certificate_file and private_key_file, or ca_certificate_file");
        return false;
    }
    p->certificate_file = xlb_bootstrap_dup(cert);
    p->private_key_file = xlb_bootstrap_dup(key);
    p->ca_certificate_file = xlb_bootstrap_dup(ca);
    return true;
}

static void read_provider(const cJSON *instance, const char *path, struct xlb_bootstrap *out,
                          struct xlb_errors *errs)
{
    if (!cJSON_IsObject(instance)) {
        xlb_errors_add(errs, path, "must be an object");
        return;
    }
    const char *plugin = xlb_json_string(instance, "plugin_name", path, XLB_REQUIRED, 64, errs);
    if (plugin == NULL)
        return;
    if (strcmp(plugin, "file_watcher") != 0) {
        char plugin_path[XLB_PATH_MAX];
        xlb_path_key(plugin_path, path, "plugin_name");
        xlb_errors_add(errs, plugin_path, "\"%s\" is not supported (only \"file_watcher\")",
                       plugin);
        return;
    }
    const cJSON *config = xlb_json_object(instance, "config", path, XLB_REQUIRED, errs);
    if (config == NULL)
        return;
    char config_path[XLB_PATH_MAX];
    xlb_path_key(config_path, path, "config");
    struct xlb_cert_provider_config *p = &out->cert_providers[out->n_cert_providers];
    memset(p, 0, sizeof(*p));
    if (!read_file_watcher(config, config_path, p, errs))
        return;
    p->name = xlb_bootstrap_dup(instance->string);
    out->n_cert_providers++;
}

void xlb_bootstrap_read_certificate_providers(const cJSON *root, struct xlb_bootstrap *out,
                                              struct xlb_errors *errs)
{
    const cJSON *providers = xlb_json_object(root, "certificate_providers", "", XLB_OPTIONAL, errs);
    if (providers == NULL)
        return;
    int n = cJSON_GetArraySize(providers);
    if (n > XLB_MAX_CERT_PROVIDERS) {
        xlb_errors_add(errs, "certificate_providers", "at most %d instances",
                       XLB_MAX_CERT_PROVIDERS);
        return;
    }
    out->cert_providers = calloc((size_t)n + 1, sizeof(*out->cert_providers));
    if (out->cert_providers == NULL) {
        xlb_errors_add(errs, "certificate_providers", "out of memory");
        return;
    }
    const cJSON *instance;
    cJSON_ArrayForEach(instance, providers) {
        char path[XLB_PATH_MAX];
        xlb_config_member_path(path, "certificate_providers", instance->string);
        read_provider(instance, path, out, errs);
    }
}

const struct xlb_cert_provider_config *xlb_bootstrap_cert_provider(const struct xlb_bootstrap *b,
                                                                   const char *name)
{
    for (unsigned i = 0; name != NULL && i < b->n_cert_providers; i++)
        if (strcmp(b->cert_providers[i].name, name) == 0)
            return &b->cert_providers[i];
    return NULL;
}

void xlb_bootstrap_free_cert_providers(struct xlb_bootstrap *b)
{
    for (unsigned i = 0; i < b->n_cert_providers; i++) {
        free(b->cert_providers[i].name);
        free(b->cert_providers[i].certificate_file);
        free(b->cert_providers[i].private_key_file);
        free(b->cert_providers[i].ca_certificate_file);
    }
    free(b->cert_providers);
    b->cert_providers = NULL;
    b->n_cert_providers = 0;
}

/* A VIP's "tls": what the key readers share. */
struct tls_reading {
    const struct xlb_bootstrap *out;
    struct xlb_vip_tls_config *tls;
    bool ok;
};

/* A provider a VIP serves a certificate from: it must exist and hold a pair. */
static bool server_provider(const struct tls_reading *r, const char *name, const char *key_path,
                            struct xlb_errors *errs)
{
    const struct xlb_cert_provider_config *p = xlb_bootstrap_cert_provider(r->out, name);
    if (p == NULL) {
        xlb_errors_add(errs, key_path, "\"%s\" is not an instance of certificate_providers", name);
        return false;
    }
    if (p->certificate_file == NULL) {
        xlb_errors_add(errs, key_path, "\"%s\" has no certificate_file for a server", name);
        return false;
    }
    return true;
}

static void read_provider_name(const cJSON *obj, const char *path, const struct xlb_config_key *key,
                               void *ctx, struct xlb_errors *errs)
{
    struct tls_reading *r = ctx;
    const char *name = xlb_json_string(obj, key->name, path, XLB_REQUIRED, 256, errs);
    char key_path[XLB_PATH_MAX];
    xlb_path_key(key_path, path, key->name);
    if (name == NULL || !server_provider(r, name, key_path, errs))
        r->ok = false;
    /* Borrowed from the document (cJSON's mutable string, only read): see keep. */
    r->tls->certificate_provider = XLB_UNCONST(name);
}

/* More certificates, each chosen when the client's SNI is one of its names. */
static void read_sni_providers(const cJSON *obj, const char *path, const struct xlb_config_key *key,
                               void *ctx, struct xlb_errors *errs)
{
    struct tls_reading *r = ctx;
    const cJSON *list = xlb_json_array(obj, key->name, path, XLB_OPTIONAL, errs);
    if (list == NULL) {
        r->ok &= !cJSON_HasObjectItem(obj, key->name);
        return;
    }
    char key_path[XLB_PATH_MAX];
    xlb_path_key(key_path, path, key->name);
    const cJSON *item;
    cJSON_ArrayForEach(item, list) {
        if (!cJSON_IsString(item) || r->tls->n_sni == XLB_VIP_SNI_MAX) {
            xlb_errors_add(errs, key_path, "must be up to %d instance names", XLB_VIP_SNI_MAX);
            r->ok = false;
            return;
        }
        if (!server_provider(r, item->valuestring, key_path, errs)) {
            r->ok = false;
            return;
        }
        r->tls->sni_certificate_providers[r->tls->n_sni++] = item->valuestring; /* see keep */
    }
}

static void read_require_client_certificate(const cJSON *obj, const char *path,
                                            const struct xlb_config_key *key, void *ctx,
                                            struct xlb_errors *errs)
{
    struct tls_reading *r = ctx;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key->name);
    if (item == NULL)
        return;
    char key_path[XLB_PATH_MAX];
    xlb_path_key(key_path, path, key->name);
    if (!cJSON_IsBool(item)) {
        xlb_errors_add(errs, key_path, "must be a boolean");
        r->ok = false;
        return;
    }
    r->tls->require_client_certificate = cJSON_IsTrue(item);
    const struct xlb_cert_provider_config *p =
        xlb_bootstrap_cert_provider(r->out, r->tls->certificate_provider);
    if (r->tls->require_client_certificate && p != NULL && p->ca_certificate_file == NULL) {
        xlb_errors_add(errs, key_path, "needs a ca_certificate_file in \"%s\"",
                       r->tls->certificate_provider);
        r->ok = false;
    }
}

static const struct xlb_config_key vip_tls_keys[] = {
    {.name = "certificate_provider", .read = read_provider_name},
    {.name = "require_client_certificate", .read = read_require_client_certificate},
    {.name = "sni_certificate_providers", .read = read_sni_providers},
};
const struct xlb_config_object xlb_bootstrap_vip_tls_object =
    XLB_CONFIG_OBJECT("xlb.vips[].tls", vip_tls_keys);

bool xlb_bootstrap_read_vip_tls(const cJSON *vip, const char *path, const char *name,
                                const struct xlb_bootstrap *out, struct xlb_vip_tls_config *tls,
                                struct xlb_errors *errs)
{
    const cJSON *obj = xlb_json_object(vip, name, path, XLB_OPTIONAL, errs);
    if (obj == NULL)
        return !cJSON_HasObjectItem(vip, name);
    char tls_path[XLB_PATH_MAX];
    xlb_path_key(tls_path, path, name);
    struct tls_reading reading = {.out = out, .tls = tls, .ok = true};
    xlb_config_object_read(&xlb_bootstrap_vip_tls_object, obj, tls_path, &reading, errs);
    return reading.ok;
}

void xlb_bootstrap_vip_tls_keep(const struct xlb_bootstrap *out, struct xlb_vip_tls_config *tls)
{
    if (tls->certificate_provider == NULL)
        return;
    tls->index = xlb_bootstrap_tls_vips(out);
    tls->certificate_provider = xlb_bootstrap_dup(tls->certificate_provider);
    for (unsigned i = 0; i < tls->n_sni; i++)
        tls->sni_certificate_providers[i] = xlb_bootstrap_dup(tls->sni_certificate_providers[i]);
}

void xlb_bootstrap_vip_tls_free(struct xlb_vip_tls_config *tls)
{
    free(tls->certificate_provider);
    for (unsigned i = 0; i < tls->n_sni; i++)
        free(tls->sni_certificate_providers[i]);
    memset(tls, 0, sizeof(*tls));
}

unsigned xlb_bootstrap_tls_vips(const struct xlb_bootstrap *b)
{
    unsigned n = 0;
    for (unsigned v = 0; v < b->n_vips; v++)
        n += b->vips[v].tls.certificate_provider != NULL;
    return n;
}
