/* See ads_test.h. */
#include "ads_test.h"

#include <stdlib.h>
#include <string.h>

#include "proto_json.h"
#include "xlb_const.h"

/* The fixture's node id, in the char * protobuf-c holds; packing only reads it. */
static char node_id[] = "xlb-test";

static const char *const server_names[] = {"primary", "fallback", "third"};

static void on_changed(void *arg)
{
    struct ads_fixture *f = arg;
    f->changes++;
}

struct ads_fixture *ads_fixture_new(void)
{
    struct ads_fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fake_reset(1000);
    xlb_xds_cache_init(&f->cache);
    envoy__config__core__v3__node__init(&f->node);
    f->node.id = node_id;
    return f;
}

void ads_start(struct ads_fixture *f, unsigned n_servers)
{
    struct xlb_ads_config config = {.n_servers = n_servers, .node = &f->node, .backoff_seed = 7};
    assert_true(n_servers <= 3);
    for (unsigned i = 0; i < n_servers; i++) {
        struct xlb_ads_server *s = &config.servers[i];
        strcpy(s->target.host, server_names[i]);
        s->target.port = 18000;
        strcpy(s->uri, server_names[i]);
        s->ignore_resource_deletion = f->ignore_resource_deletion;
    }
    f->client = xlb_ads_client_create(NULL, &f->cache, &config, on_changed, f);
    assert_non_null(f->client);
}

void ads_fixture_free(struct ads_fixture *f)
{
    xlb_ads_client_destroy(f->client);
    xlb_xds_cache_free(&f->cache);
    fake_reset(0);
    free(f);
}

void ads_watch(struct ads_fixture *f, enum xlb_xds_type type, const char *name)
{
    struct xlb_xds_resource *r = xlb_xds_cache_get(&f->cache, type, name);
    assert_non_null(r);
    r->watched = true;
    if (f->client != NULL)
        xlb_ads_client_update_watches(f->client);
}

struct xlb_xds_resource *ads_resource(struct ads_fixture *f, enum xlb_xds_type type,
                                      const char *name)
{
    struct xlb_xds_resource *r = xlb_xds_cache_find(&f->cache, type, name);
    assert_non_null(r);
    return r;
}

struct xlb_grpc_stream *ads_stream(void)
{
    struct xlb_grpc_stream *s = fake_last_channel()->stream;
    assert_non_null(s);
    return s;
}

Google__Protobuf__Any *ads_raw_any(const char *type_url, const void *value, size_t len)
{
    Google__Protobuf__Any *any = malloc(sizeof(*any));
    assert_non_null(any);
    google__protobuf__any__init(any);
    any->type_url = strdup(type_url);
    any->value.data = malloc(len ? len : 1);
    assert_non_null(any->value.data);
    memcpy(any->value.data, value, len);
    any->value.len = len;
    return any;
}

Google__Protobuf__Any *ads_any(const char *type_url, const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    struct xlb_errors errs = {0};
    ProtobufCMessage *m = xlb_proto_json_read(xlb_proto_type_by_url(type_url), doc, "r", &errs);
    cJSON_Delete(doc);
    xlb_errors_free(&errs);
    assert_non_null(m);
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    protobuf_c_message_pack(m, buf);
    protobuf_c_message_free_unpacked(m, NULL);
    Google__Protobuf__Any *any = ads_raw_any(type_url, buf, len);
    free(buf);
    return any;
}

void ads_respond(struct xlb_grpc_stream *s, const char *type_url, const char *version,
                 const char *nonce, Google__Protobuf__Any **resources, size_t n)
{
    Envoy__Service__Discovery__V3__DiscoveryResponse resp;
    envoy__service__discovery__v3__discovery_response__init(&resp);
    resp.type_url = XLB_UNCONST(type_url);
    resp.version_info = XLB_UNCONST(version);
    resp.nonce = XLB_UNCONST(nonce);
    resp.resources = resources;
    resp.n_resources = n;
    fake_deliver(s, &resp.base);
    for (size_t i = 0; i < n; i++) {
        free(resources[i]->type_url);
        free(resources[i]->value.data);
        free(resources[i]);
    }
}

const char *ads_error_detail(const DiscoveryRequest *req)
{
    return req->error_detail != NULL ? req->error_detail->message : NULL;
}
