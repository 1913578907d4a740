/*
 * grpc_ads_probe: xlb's gRPC channel against a real xDS server, without the rest of xlb.
 * Opens ADS, asks for one resource of one type, prints the response's version and resource
 * names as JSON, ACKs it, and exits: 0 on a response, 1 if the call or connection failed
 * (the reason on stderr). Bounded by --timeout-ms.
 *
 *   grpc_ads_probe --server URI [--ca F] [--cert F --key F] --type URL --name N [--timeout-ms T]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "event_loop.h"
#include "grpc_channel.h"
#include "xlb_const.h"

#define ADS_PATH "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"

struct probe {
    struct xlb_loop *loop;
    struct xlb_grpc_channel *ch;
    struct xlb_grpc_stream *stream;
    const char *type, *name;
    int result; /* -1 while running */
};

static int send_request(struct probe *p, const char *version, const char *nonce)
{
    Envoy__Config__Core__V3__Node node;
    envoy__config__core__v3__node__init(&node);
    node.id = XLB_STR("xlb-probe");
    node.user_agent_name = XLB_STR("xlb");
    Envoy__Service__Discovery__V3__DiscoveryRequest req;
    envoy__service__discovery__v3__discovery_request__init(&req);
    char *names[1] = {XLB_UNCONST(p->name)};
    req.node = &node;
    req.type_url = XLB_UNCONST(p->type);
    req.n_resource_names = 1;
    req.resource_names = names;
    req.version_info = XLB_UNCONST(version);
    req.response_nonce = XLB_UNCONST(nonce);
    size_t len = protobuf_c_message_get_packed_size(&req.base);
    uint8_t *buf = malloc(len ? len : 1);
    protobuf_c_message_pack(&req.base, buf);
    int rc = xlb_grpc_stream_send(p->stream, buf, len);
    free(buf);
    return rc;
}

static void on_message(struct xlb_grpc_stream *s, const uint8_t *msg, size_t len, void *arg)
{
    struct probe *p = arg;
    Envoy__Service__Discovery__V3__DiscoveryResponse *resp =
        envoy__service__discovery__v3__discovery_response__unpack(NULL, len, msg);
    if (resp == NULL) {
        fprintf(stderr, "probe: undecodable DiscoveryResponse\n");
        p->result = 1;
        xlb_loop_stop(p->loop);
        return;
    }
    printf("{\"version\": \"%s\", \"type\": \"%s\", \"resources\": [", resp->version_info,
           resp->type_url);
    for (size_t i = 0; i < resp->n_resources; i++)
        printf("%s\"%s\"", i ? ", " : "", resp->resources[i]->type_url);
    printf("]}\n");
    send_request(p, resp->version_info, resp->nonce); /* the ACK */
    envoy__service__discovery__v3__discovery_response__free_unpacked(resp, NULL);
    p->result = 0;
    /* Give the ACK a moment to leave before stopping (bounded by the loop's own timeout). */
    xlb_loop_add_timeout(p->loop, 200, (xlb_loop_timer_cb)xlb_loop_stop, p->loop);
}

static void on_close(struct xlb_grpc_stream *s, int status, const char *message, void *arg)
{
    struct probe *p = arg;
    p->stream = NULL;
    if (p->result < 0) {
        fprintf(stderr, "probe: call ended: status %d: %s\n", status, message);
        p->result = 1;
        xlb_loop_stop(p->loop);
    }
}

static void on_ready(struct xlb_grpc_channel *ch, void *arg)
{
    struct probe *p = arg;
    static const struct xlb_grpc_stream_callbacks cb = {on_message, on_close};
    p->stream = xlb_grpc_stream_open(ch, ADS_PATH, &cb, p);
    if (p->stream == NULL || send_request(p, "", "") != 0) {
        fprintf(stderr, "probe: cannot start the ADS call\n");
        p->result = 1;
        xlb_loop_stop(p->loop);
    }
}

static void on_closed(struct xlb_grpc_channel *ch, const char *reason, void *arg)
{
    struct probe *p = arg;
    if (p->result < 0) {
        fprintf(stderr, "probe: channel closed: %s\n", reason);
        p->result = 1;
    }
    xlb_loop_stop(p->loop);
}

static void on_timeout(void *arg)
{
    struct probe *p = arg;
    if (p->result < 0) {
        fprintf(stderr, "probe: timed out\n");
        p->result = 1;
    }
    xlb_loop_stop(p->loop);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"server", required_argument, NULL, 's'},     {"ca", required_argument, NULL, 'a'},
        {"cert", required_argument, NULL, 'c'},       {"key", required_argument, NULL, 'k'},
        {"type", required_argument, NULL, 't'},       {"name", required_argument, NULL, 'n'},
        {"timeout-ms", required_argument, NULL, 'T'}, {NULL, 0, NULL, 0},
    };
    const char *server = NULL;
    struct xlb_grpc_target target;
    struct probe p = {.result = -1};
    const char *ca = NULL, *cert = NULL, *key = NULL;
    unsigned long timeout_ms = 10000;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            server = optarg;
            break;
        case 'a':
            ca = optarg;
            break;
        case 'c':
            cert = optarg;
            break;
        case 'k':
            key = optarg;
            break;
        case 't':
            p.type = optarg;
            break;
        case 'n':
            p.name = optarg;
            break;
        case 'T':
            timeout_ms = strtoul(optarg, NULL, 10);
            break;
        default:
            return 2;
        }
    }
    char error[256];
    if (server == NULL || p.type == NULL || p.name == NULL) {
        fprintf(stderr, "usage: grpc_ads_probe --server URI [--ca F] [--cert F --key F] "
                        "--type URL --name N [--timeout-ms T]\n");
        return 2;
    }
    if (xlb_grpc_target_parse(server, &target, error, sizeof(error)) != 0) {
        fprintf(stderr, "probe: %s\n", error);
        return 2;
    }
    target.tls = ca != NULL;
    target.ca_file = ca;
    target.cert_file = cert;
    target.key_file = key;
    p.loop = xlb_loop_create();
    static const struct xlb_grpc_channel_callbacks cb = {on_ready, on_closed};
    p.ch = xlb_grpc_channel_connect(p.loop, &target, &cb, &p);
    if (p.ch == NULL) {
        fprintf(stderr, "probe: cannot create the channel\n");
        return 1;
    }
    xlb_loop_add_timeout(p.loop, timeout_ms, on_timeout, &p);
    xlb_loop_run(p.loop);
    xlb_grpc_channel_destroy(p.ch);
    xlb_loop_destroy(p.loop);
    return p.result == 0 ? 0 : 1;
}
