#!/usr/bin/env bash
# Connection churn through an L7 VIP (issue 24): two gRPC clients (Debian's python3-grpcio,
# tools/lib/grpc_client.py) each open a new channel, so a new TCP and HTTP/2 connection, for
# every RPC, through a VIP whose worker pool holds only 16 connections. A connection's pool entry
# goes back as soon as both FINs have gone by (docs/l7.md, "A connection's life" 5), so the pool
# bounds connections open at once, not connections closed within the last 2 s: every RPC must
# succeed and no connection may be refused for want of an entry (events.l7_pool_full), although
# far more than 16 connections close within any 2 s of the run. No timing assertions.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

POOL=16
RPCS=300
topo_create "$E2E_PREFIX" 1
xlb_write_config
e2e_edit_config '
t = "type.googleapis.com/envoy."
x = c["xlb"]
x["l7_connections_per_worker"] = '$POOL'
x["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///l7", "l7_mode": "splice"}]
routes = [{"match": {"prefix": "/"}, "route": {"cluster": "echo"}}]
listener = {"name": "l7", "api_listener": {"api_listener": {
    "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
    "route_config": {"name": "l7-routes", "virtual_hosts": [
        {"name": "echo", "domains": ["*"], "routes": routes}]},
    "http_filters": [{"name": "router", "typed_config": {
        "@type": t + "extensions.filters.http.router.v3.Router"}}]}}}
x["static_resources"] = {"listeners": [listener],
    "clusters": [{"name": "echo", "type": "EDS",
                  "eds_cluster_config": {"eds_config": {"ads": {}}}}],
    "endpoints": [{"cluster_name": "echo", "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 1,
        "lb_endpoints": [{"endpoint": {"address": {"socket_address": {
            "address": "198.18.0.21", "port_value": 50051}}}}]}]}]}'
"$XLBD" --check --config "$E2E_DIR/bootstrap.json" >/dev/null || fail "xlbd --check rejected the bootstrap"

grpc_backend "$E2E_PREFIX-be1" "$E2E_DIR/b-echo.log" --name b-echo --port 50051 \
    --address 198.18.0.21
e2e_start_xlbd

client() { grpc_client "$E2E_PREFIX-client" "$@"; }
answers() { client --target 198.18.0.100:50051 --count 1 --deadline 2 | grep -q '"status": {"OK": 1}'; }
xlb_wait_until 100 0.2 answers || fail "no RPC through the L7 VIP succeeded"

start=$(date +%s.%N)
client --target 198.18.0.100:50051 --count $RPCS --per-connection --max-seconds 60 \
    >"$E2E_DIR/client1.json" &
c1=$!
RUN_PIDS+=("$c1")
client --target 198.18.0.100:50051 --count $RPCS --per-connection --max-seconds 60 \
    >"$E2E_DIR/client2.json" &
c2=$!
RUN_PIDS+=("$c2")
wait "$c1" || fail "client 1 failed"
wait "$c2" || fail "client 2 failed"
secs=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
for i in 1 2; do
    out=$(cat "$E2E_DIR/client$i.json")
    grpc_expect "$out" 'r["status"] == {"OK": '$RPCS'}'
done
full=$(counter events.l7_pool_full)
[ "$full" -eq 0 ] || fail "$full connections refused for want of a pool entry"
conns=$(counter events.l7_connections)
[ "$conns" -ge $((2 * RPCS)) ] || fail "only $conns L7 connections counted"
pass "2 x $RPCS RPCs, a new connection each, in ${secs} s through a pool of $POOL: all OK, events.l7_pool_full 0 ($conns connections)"
