#!/usr/bin/env bash
# Load reports of an L7 VIP to the independent Node management server (xds-server/), with real
# gRPC peers (tools/lib/grpc_backend.py and grpc_client.py, Debian's python3-grpcio) in the
# end-to-end topology (tests/e2e/lib.sh: namespaces, xlbd on DPDK's af_packet). The server runs
# on the lb namespace's loopback, next to xlbd, and serves the whole configuration over ADS:
#   Listener l7 (api_listener: HttpConnectionManager, RDS l7-routes, router)
#   RouteConfiguration l7-routes: /xlb.test.Echo/ -> cluster lrs
#   Cluster lrs: EDS over ADS, lrs_server self
#   ClusterLoadAssignment lrs: locality r1/za b-ok (be1), locality r1/zb b-fail (be2, --fail:
#   every RPC ends UNAVAILABLE)
# and asks for load reports of every cluster every 500 ms. Clients send 10 RPCs on each of
# several connections to the splice VIP :50051 (binding is per connection) until both backends
# have had some, then one channel sends 40 RPCs to the stream VIP :50052 (same target, every
# RPC picked on its own: both backends get some). Checked,
# from the reports the server recorded (summed over every report of cluster lrs):
#   - total_issued_requests = N, the RPCs the clients sent, = the RPCs the backends logged;
#   - per locality: issued = the RPCs its backend logged, successful = those b-ok answered,
#     errors = those b-fail answered (grpc-status 14), in progress 0 at the end; no drops.
. "$(dirname "$0")/../e2e/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require
HERE=$E2E_SOURCE/tests/interop
"$HERE/install.sh" >/dev/null

topo_create "$E2E_PREFIX" 2
LB_NS=$E2E_PREFIX-lb

# The server on the lb namespace's loopback, where xlbd's control plane runs.
. "$HERE/xds_server.sh"
xds_server_start "$LB_NS" "$E2E_DIR/xds.out" RUN_PIDS

resources=$(python3 <<'PY'
import json
t = "type.googleapis.com/envoy."
hcm = {"@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
       "rds": {"route_config_name": "l7-routes", "config_source": {"ads": {}}},
       "http_filters": [{"name": "router", "typed_config":
                         {"@type": t + "extensions.filters.http.router.v3.Router"}}]}
def locality(zone, address):
    return {"locality": {"region": "r1", "zone": zone}, "load_balancing_weight": 1,
            "lb_endpoints": [{"endpoint": {"address": {"socket_address":
                {"address": address, "port_value": 50051}}}}]}
res = [{"@type": t + "config.listener.v3.Listener", "name": "l7",
        "api_listener": {"api_listener": hcm}},
       {"@type": t + "config.route.v3.RouteConfiguration", "name": "l7-routes",
        "virtual_hosts": [{"name": "echo", "domains": ["*"], "routes": [
            {"match": {"prefix": "/xlb.test.Echo/"}, "route": {"cluster": "lrs"}}]}]},
       {"@type": t + "config.cluster.v3.Cluster", "name": "lrs", "type": "EDS",
        "eds_cluster_config": {"eds_config": {"ads": {}}}, "lrs_server": {"self": {}}},
       {"@type": t + "config.endpoint.v3.ClusterLoadAssignment", "cluster_name": "lrs",
        "endpoints": [locality("za", "198.18.0.21"), locality("zb", "198.18.0.22")]}]
print(json.dumps({"resources": res}))
PY
)
control PUT /resources "$resources" >/dev/null || fail "the server refused the resources"
control PUT /lrs-config '{"send_all_clusters": true, "interval_ms": 500}' >/dev/null

# The e2e bootstrap with the server instead of static resources.
xlb_write_config
e2e_edit_config '
c["xds_servers"] = [{"server_uri": "127.0.0.1:'"$XDS_PORT"'", "channel_creds": [{"type": "insecure"}]}]
c["node"]["id"] = "xlb-l7-lrs"
x = c["xlb"]
del x["static_resources"]
x["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///l7", "l7_mode": "splice"},
             {"address": "198.18.0.100", "port": 50052, "target": "xds:///l7", "l7_mode": "stream"}]'

grpc_backend "$E2E_PREFIX-be1" "$E2E_DIR/b-ok.log" --name b-ok --port 50051 --address 198.18.0.21
grpc_backend "$E2E_PREFIX-be2" "$E2E_DIR/b-fail.log" --name b-fail --port 50051 --address 198.18.0.22 --fail
e2e_start_xlbd
vip_ready() {
    [ "$(xlbctl --json status | python3 -c 'import json,sys; print(all(v["state"] == "ready" for v in json.load(sys.stdin)["vips"]))')" = True ]
}
wait_until 100 0.2 vip_ready || fail "the L7 VIP is not ready: $(xlbctl xds; xlbctl status)"
lrs_stream() { control GET '/streams?kind=lrs' | grep -q '"node_id": *"xlb-l7-lrs"'; }
wait_until 100 0.2 lrs_stream || fail "xlbd opened no LRS stream: $(control GET '/streams?all=1')"
pass "the Node server delivered LDS -> RDS -> CDS -> EDS: the L7 VIP is ready; xlbd reports load on an LRS stream"

# ---- traffic: 10 RPCs per connection, until both backends got some (4..20 connections) ----
N=0 conns=0
logged() { grpc_rpcs "$E2E_DIR/$1.log"; }
for conns in $(seq 1 20); do
    out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 10 --deadline 5)
    N=$((N + $(grpc_field "$out" 'r["rpcs"]')))
    # Every RPC reached a backend: OK from b-ok, or b-fail's own UNAVAILABLE.
    grpc_expect "$out" 'r["rpcs"] == 10 and set(r["backends"]) <= {"b-ok"}'
    grpc_expect "$out" 'set(r["details"]) <= {"UNAVAILABLE: backend b-fail fails on purpose"}'
    # One connection, one backend.
    grpc_expect "$out" 'r["status"] in ({"OK": 10}, {"UNAVAILABLE": 10})'
    [ "$conns" -lt 4 ] || [ "$(logged b-ok)" -eq 0 ] || [ "$(logged b-fail)" -eq 0 ] || break
done
# One channel to the stream VIP: its RPCs go to both localities (round robin: 20 and 20).
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50052 --count 40 --deadline 5)
grpc_expect "$out" 'r["rpcs"] == 40 and r["backends"].get("b-ok", 0) >= 10 and r["status"].get("UNAVAILABLE", 0) >= 10'
grpc_expect "$out" 'set(r["details"]) <= {"UNAVAILABLE: backend b-fail fails on purpose"}'
N=$((N + 40))
OK=$(logged b-ok) FAILED=$(logged b-fail)
# (1/2)^19 is the chance that 20 connections all bind to one of two usable endpoints.
[ "$OK" -gt 0 ] && [ "$FAILED" -gt 0 ] || fail "one backend got nothing in $conns connections: b-ok $OK, b-fail $FAILED"
[ $((OK + FAILED)) -eq "$N" ] || fail "the backends logged $((OK + FAILED)) RPCs, the clients sent $N"
pass "$N RPCs on $conns connections and one stream-mode channel: b-ok answered $OK, b-fail failed $FAILED"

# ---- the reports ----
# sums: cluster lrs over every report recorded: "issued ok errors inprogress(last) dropped"
# and per locality.
sums() {
    control GET /lrs | python3 -c '
import json, sys
reports = json.load(sys.stdin)["reports"]
def num(d, k):
    return int(d.get(k, 0))
tot = {"issued": 0, "ok": 0, "errors": 0, "dropped": 0, "reports": 0}
loc = {}
for r in reports:
    for cs in r["cluster_stats"]:
        if cs["clusterName"] != "lrs":
            continue
        tot["reports"] += 1
        tot["dropped"] += num(cs, "totalDroppedRequests") + sum(num(d, "droppedCount") for d in cs.get("droppedRequests", []))
        for u in cs.get("upstreamLocalityStats", []):
            l = u.get("locality", {})
            key = "%s/%s/%s/p%d" % (l.get("region", ""), l.get("zone", ""), l.get("subZone", ""), u.get("priority", 0))
            s = loc.setdefault(key, {"issued": 0, "ok": 0, "errors": 0, "in_progress": None})
            s["issued"] += num(u, "totalIssuedRequests")
            s["ok"] += num(u, "totalSuccessfulRequests")
            s["errors"] += num(u, "totalErrorRequests")
            s["in_progress"] = num(u, "totalRequestsInProgress")
            tot["issued"] += num(u, "totalIssuedRequests")
            tot["ok"] += num(u, "totalSuccessfulRequests")
            tot["errors"] += num(u, "totalErrorRequests")
print(json.dumps({"total": tot, "localities": loc}, sort_keys=True))'
}
# Reports are deltas; the last RPCs arrive within an interval or two (bounded wait).
all_reported() {
    SUMS=$(sums)
    [ "$(grpc_field "$SUMS" 'r["total"]["issued"]')" -ge "$N" ] &&
        [ "$(grpc_field "$SUMS" 'r["total"]["ok"] + r["total"]["errors"]')" -ge "$N" ]
}
wait_until 120 0.25 all_reported || fail "the reports never added up to $N issued and finished RPCs: $(sums)"
# One more interval: nothing may be reported twice.
sleep 1.2
SUMS=$(sums)
grpc_expect "$SUMS" 'r["total"]["issued"] == '"$N"' and r["total"]["ok"] == '"$OK"' and r["total"]["errors"] == '"$FAILED"
grpc_expect "$SUMS" 'r["total"]["dropped"] == 0'
grpc_expect "$SUMS" 'set(r["localities"]) == {"r1/za//p0", "r1/zb//p0"}'
grpc_expect "$SUMS" 'r["localities"]["r1/za//p0"] == {"issued": '"$OK"', "ok": '"$OK"', "errors": 0, "in_progress": 0}'
grpc_expect "$SUMS" 'r["localities"]["r1/zb//p0"] == {"issued": '"$FAILED"', "ok": 0, "errors": '"$FAILED"', "in_progress": 0}'
pass "$(grpc_field "$SUMS" 'r["total"]["reports"]') reports of cluster lrs add up: issued $N, successful $OK, errors $FAILED; r1/za (b-ok) $OK/$OK/0, r1/zb (b-fail) $FAILED/0/$FAILED, nothing in progress, no drops"

e2e_stop_xlbd
pass "clean exit"
