/*
 * Fuzz target for the ADS client's handling of what a management server sends: the input is
 * up to eight messages (a 16-bit big-endian length, then that many bytes) delivered in turn on
 * an open ADS call, each taken as a gRPC message holding a DiscoveryResponse, with the virtual
 * clock moved on between them. The client runs on the unit tests' fake transport (no network)
 * and watches clusters, listeners and endpoints, so envelopes, type URLs, Resource wrappers,
 * versions, nonces, deletions and NACKs are all reached. Sanitizers catch the rest; a leak is
 * a finding too (the fixture frees everything).
 *
 * XLB_FUZZ_WRITE_SEEDS=DIR makes the target write its seed responses into DIR and exit: real
 * DiscoveryResponses built from proto3 JSON, so that the corpus starts from valid envelopes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ads_test.h"
#include "xlb_const.h"

#define MAX_MESSAGES 8
#define RESOURCE_URL "type.googleapis.com/envoy.service.discovery.v3.Resource"

static struct ads_fixture *watching(void)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_CDS, "c1");
    ads_watch(f, XLB_XDS_CDS, "c2");
    ads_watch(f, XLB_XDS_EDS, "c1");
    ads_watch(f, XLB_XDS_LDS, "l1");
    ads_start(f, 1);
    fake_ready(fake_channel(0));
    return f;
}

/* One seed: a DiscoveryResponse packed, behind its 16-bit length. */
static void write_seed(const char *dir, const char *name, const char *type_url,
                       Google__Protobuf__Any **resources, size_t n)
{
    Envoy__Service__Discovery__V3__DiscoveryResponse resp;
    envoy__service__discovery__v3__discovery_response__init(&resp);
    static char version[] = "1", nonce[] = "n1";
    resp.type_url = XLB_UNCONST(type_url);
    resp.version_info = version;
    resp.nonce = nonce;
    resp.resources = resources;
    resp.n_resources = n;
    size_t len = envoy__service__discovery__v3__discovery_response__get_packed_size(&resp);
    uint8_t *buf = malloc(len + 2);
    if (buf == NULL || len > 0xffff)
        abort();
    buf[0] = (uint8_t)(len >> 8);
    buf[1] = (uint8_t)len;
    envoy__service__discovery__v3__discovery_response__pack(&resp, buf + 2);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *out = fopen(path, "wb");
    if (out == NULL || fwrite(buf, 1, len + 2, out) != len + 2)
        abort();
    fclose(out);
    free(buf);
    for (size_t i = 0; i < n; i++) {
        free(resources[i]->type_url);
        free(resources[i]->value.data);
        free(resources[i]);
    }
}

static void write_seeds(const char *dir)
{
    struct ads_fixture *f = ads_fixture_new(); /* ads_any needs the fixture's clock only */
    Google__Protobuf__Any *cds[] = {ads_any(CDS_URL, CLUSTER("c1")),
                                    ads_any(CDS_URL, CLUSTER("c2"))};
    write_seed(dir, "cds_two_clusters", CDS_URL, cds, 2);
    Google__Protobuf__Any *eds[] = {ads_any(
        EDS_URL, "{\"cluster_name\":\"c1\",\"endpoints\":[{\"lb_endpoints\":[{\"endpoint\":"
                 "{\"address\":{\"socket_address\":{\"address\":\"198.18.1.1\",\"port_value\":"
                 "8080}}}}]}]}")};
    write_seed(dir, "eds_one_endpoint", EDS_URL, eds, 1);
    Google__Protobuf__Any *wrapped[] = {ads_any(
        RESOURCE_URL, "{\"name\":\"c1\",\"resource\":{\"@type\":\"" CDS_URL "\",\"name\":\"c1\","
                      "\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}}}}")};
    write_seed(dir, "cds_wrapped", CDS_URL, wrapped, 1);
    Google__Protobuf__Any *bad[] = {ads_raw_any(CDS_URL, "\x0a\x05", 2)};
    write_seed(dir, "cds_undecodable", CDS_URL, bad, 1);
    write_seed(dir, "cds_empty", CDS_URL, NULL, 0);
    ads_fixture_free(f);
}

/* The client's open call, reconnecting when the last message made it end one: the clock moves
 * past the backoff (up to twice; the A57 timers may fire meanwhile, which is more coverage). */
static struct xlb_grpc_stream *live_stream(void)
{
    for (int tries = 0; tries < 3; tries++) {
        struct xlb_grpc_channel *ch = fake_n_channels() ? fake_last_channel() : NULL;
        if (ch != NULL && !ch->closed && !ch->destroyed) {
            if (!ch->ready)
                fake_ready(ch);
            struct xlb_grpc_stream *s = ch->stream;
            if (s != NULL && !s->closed && !s->cancelled)
                return s;
        }
        fake_advance(30000);
    }
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("XLB_FUZZ_WRITE_SEEDS");
    if (dir != NULL) {
        write_seeds(dir);
        exit(0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ads_fixture *f = watching();
    for (unsigned i = 0; i < MAX_MESSAGES && size >= 2; i++) {
        size_t len = (size_t)data[0] << 8 | data[1];
        data += 2;
        size -= 2;
        if (len > size)
            len = size;
        struct xlb_grpc_stream *s = live_stream();
        if (s == NULL)
            break;
        fake_deliver_bytes(s, data, len);
        data += len;
        size -= len;
        fake_advance(100);
    }
    ads_fixture_free(f);
    return 0;
}
