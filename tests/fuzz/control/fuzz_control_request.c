/*
 * Fuzz target for the control socket's requests: any bytes, as one client would send them,
 * through the socket's own framing and the daemon's command dispatcher
 * (xlb_control_socket_take_request -> xlb_commands_execute) against a small live control
 * plane (one worker that never runs, one port, an L4 and an L7 VIP served from
 * static_resources), without a client connection. Every complete line gets exactly one reply,
 * a JSON object with a boolean "ok" and, when false, an "error" string; nothing that changes
 * state is allowed to an unknown peer. The control plane is built once and reused: requests
 * must leave it answering.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "control_plane.h"
#include "control_socket.h"
#include "fuzz_eal.h"
#include "xlb_shared.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

/* At most this many lines of one input are answered (the socket answers them all, but the
 * fuzzer learns nothing from the hundredth "{}"). */
#define LINES_MAX 16

static const char bootstrap_text[] =
    "{\"xlb\": {\"workers\": 1, \"control_socket\": \"%s\","
    " \"ports\": [{\"name\": \"p0\", \"addresses\": [\"198.18.0.10/24\", \"2001:2::10/64\"],"
    "   \"gateway\": [\"198.18.0.1\"]}],"
    " \"vips\": [{\"address\": \"198.18.0.100\", \"port\": 8080, \"target\": \"xds:///svc\"},"
    "   {\"address\": \"2001:2::100\", \"port\": 443, \"cluster\": \"web\"}],"
    " \"static_resources\": {"
    "  \"listeners\": [{\"name\": \"svc\", \"api_listener\": {\"api_listener\": {"
    "   \"@type\": \"type.googleapis.com/envoy.extensions.filters.network."
    "http_connection_manager.v3.HttpConnectionManager\","
    "   \"route_config\": {\"name\": \"inline\", \"virtual_hosts\": [{\"name\": \"vh\","
    "     \"domains\": [\"*\"], \"routes\": [{\"match\": {\"prefix\": \"/\"},"
    "     \"route\": {\"cluster\": \"web\"}}]}]},"
    "   \"http_filters\": [{\"name\": \"router\", \"typed_config\": {\"@type\":"
    "     \"type.googleapis.com/envoy.extensions.filters.http.router.v3.Router\"}}]}}}],"
    "  \"clusters\": [{\"name\": \"web\", \"type\": \"EDS\","
    "   \"eds_cluster_config\": {\"eds_config\": {\"ads\": {}}}, \"lb_policy\": \"RING_HASH\","
    "   \"ring_hash_lb_config\": {\"minimum_ring_size\": 64}}],"
    "  \"endpoints\": [{\"cluster_name\": \"web\", \"endpoints\": [{\"locality\": {\"zone\": "
    "\"a\"},"
    "   \"lb_endpoints\": [{\"endpoint\": {\"address\": {\"socket_address\":"
    "     {\"address\": \"198.18.0.21\", \"port_value\": 9000}}}}]}]}]}}}";

static struct xlb_control_plane *control_plane(void)
{
    static struct xlb_control_plane *cp;
    if (cp != NULL)
        return cp;
    fuzz_eal_init("fuzz-control");
    char path[64], text[sizeof(bootstrap_text) + 64];
    snprintf(path, sizeof(path), "/tmp/xlb-fuzz-control-%d.sock", (int)getpid());
    snprintf(text, sizeof(text), bootstrap_text, path);
    struct xlb_bootstrap bootstrap;
    struct xlb_errors errs = {0};
    if (xlb_bootstrap_parse(text, &bootstrap, &errs) != 0) {
        fprintf(stderr, "fuzz_control_request: bootstrap: %s\n", errs.n ? errs.lines[0] : "?");
        abort();
    }
    struct xlb_shared *shared = xlb_shared_create(1);
    CHECK(shared != NULL);
    struct xlb_port_view port = {.port_id = 0, .mtu = 1500};
    port.n_prefixes = 1;
    port.prefixes[0] = bootstrap.ports[0].addresses[0];
    port.n_gateways = 1;
    port.gateways[0] = bootstrap.ports[0].gateways[0];
    const unsigned worker_lcores[1] = {rte_get_main_lcore()};
    cp = xlb_control_plane_create(&bootstrap, "/nonexistent.json", shared, &port, 1, worker_lcores);
    CHECK(cp != NULL);
    /* Nothing connects: the listening socket's file is not needed. */
    unlink(path);
    return cp;
}

static void check_reply(const cJSON *reply)
{
    CHECK(reply != NULL && reply != XLB_REPLY_LATER);
    CHECK(cJSON_IsObject(reply));
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(reply, "ok");
    CHECK(cJSON_IsBool(ok));
    if (cJSON_IsFalse(ok)) {
        const cJSON *error = cJSON_GetObjectItemCaseSensitive(reply, "error");
        CHECK(cJSON_IsString(error) && error->valuestring[0] != '\0');
        /* A command that changes state is refused here: the peer is unknown. */
    }
    char *text = cJSON_PrintUnformatted(reply);
    CHECK(text != NULL);
    cJSON *again = cJSON_Parse(text);
    CHECK(again != NULL);
    cJSON_Delete(again);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= XLB_REQUEST_MAX)
        return 0; /* the socket refuses it whole (on_overflow) */
    struct xlb_control_plane *cp = control_plane();
    /* As the stream server holds input: len bytes and a NUL after them. */
    char *in = malloc(size + 1);
    CHECK(in != NULL);
    memcpy(in, data, size);
    in[size] = '\0';
    size_t off = 0;
    for (unsigned lines = 0; lines < LINES_MAX && off < size; lines++) {
        cJSON *reply;
        size_t used = xlb_control_socket_take_request(cp->socket, in + off, size - off, &reply);
        if (used == 0) {
            CHECK(reply == NULL);
            CHECK(memchr(in + off, '\n', size - off) == NULL);
            break;
        }
        CHECK(used <= size - off && in[off + used - 1] == '\0');
        check_reply(reply);
        cJSON_Delete(reply);
        off += used;
    }
    free(in);
    return 0;
}
