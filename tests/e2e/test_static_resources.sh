#!/usr/bin/env bash
# A VIP configured by static_resources alone (no management server): the resources go
# through xDS validation, the VIP is served, `xlbd --check` names a bad resource by its JSON
# path and rule, and SIGHUP replaces the resources.
set -euo pipefail
SRC=${XLB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
RUN_NAME=xlb-static
. "$SRC/tools/lib/netns_xlbd.sh"

write_config() { # MIN_RING_SIZE ENDPOINT_PORT
    python3 - "$DIR" "$1" "$2" "$EAL_PREFIX" >"$DIR/bootstrap.json" <<'PY'
import json, sys
d, ring, port, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t = "type.googleapis.com/envoy."
print(json.dumps({"xlb": {
  "eal": ["--no-huge", "--no-pci", "-m", "128", "--file-prefix=" + prefix, "--vdev=net_null0"],
  "worker_idle_sleep_us": 100, "control_socket": d + "/xlbd.sock",
  "ports": [{"name": "net_null0", "addresses": ["198.18.0.10/24"]}],
  "vips": [{"address": "198.18.0.100", "port": 8080, "target": "xds:///svc", "l7_mode": "splice"}],
  "static_resources": {
    "listeners": [{"name": "svc", "api_listener": {"api_listener": {
        "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        "route_config": {"name": "inline", "virtual_hosts": [{"name": "vh", "domains": ["*"],
            "routes": [{"match": {"prefix": "/"}, "route": {"cluster": "web"}}]}]},
        "http_filters": [{"name": "router", "typed_config": {"@type": t + "extensions.filters.http.router.v3.Router"}}]}}}],
    "clusters": [{"name": "web", "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}},
                  "lb_policy": "RING_HASH", "ring_hash_lb_config": {"minimum_ring_size": ring}}],
    "endpoints": [{"cluster_name": "web", "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 1,
        "lb_endpoints": [{"endpoint": {"address": {"socket_address": {"address": "198.18.0.21", "port_value": port}}}}]}]}]}}}))
PY
}

write_config 0 8080
rc=0
out=$("$XLBD" --check --config "$DIR/bootstrap.json" 2>&1) || rc=$?
[ $rc -ne 0 ] || fail "--check accepted an invalid static cluster"
grep -q '^xlb.static_resources.clusters\[0\]: cluster "web": ring_hash_lb_config.minimum_ring_size: 0 is not in 1..8388608$' <<<"$out" ||
    fail "--check output: $out"
pass "xlbd --check names an invalid static resource by path and rule"

write_config 1024 8080
"$XLBD" --check --config "$DIR/bootstrap.json" >/dev/null || fail "valid static resources rejected"
netns_xlbd_start || fail "xlbd did not start: $(cat "$DIR/xlbd.log")"
summary() { xlbctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["vips"][0]["summary"])'; }
[ "$(summary)" = "serving gen 1" ] || fail "VIP: $(summary)"
dump=$(xlbctl config dump)
grep -Eq "^cluster +web +static" <<<"$dump" || fail "config dump: $dump"
pass "a VIP served from static resources alone: $(summary); config dump shows them static"
clusters=$(xlbctl clusters)
grep -Eq "^web +eds +ring_hash +READY +1 +1 +1 " <<<"$clusters" || fail "clusters: $clusters"
endpoints=$(xlbctl endpoints web)
grep -Eq "^0 +/a/ +1 +198\.18\.0\.21:8080 +1 +unknown +yes +no " <<<"$endpoints" || fail "endpoints: $endpoints"
out=$(xlbctl endpoints nope 2>&1) && fail "endpoints of an unknown cluster succeeded"
grep -q 'no VIP reaches a cluster "nope"' <<<"$out" || fail "endpoints error: $out"
pass "xlbctl clusters and endpoints show the validated cluster and its endpoint"

write_config 2048 9090
kill -HUP "$XLBD_PID"
serving_gen_2() { [ "$(summary)" = "serving gen 2" ]; }
wait_until 50 0.1 serving_gen_2 || fail "after SIGHUP: $(summary)"
port=$(xlbctl --json config dump | python3 -c '
import json, sys
for r in json.load(sys.stdin):
    if r["type"] == "cluster_load_assignment":
        print(r["resource"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]["address"]["socket_address"]["port_value"])')
[ "$port" = 9090 ] || fail "the reloaded endpoint has port $port"
pass "SIGHUP replaced the static resources: serving gen 2 with the new endpoint"

write_config 0 9090
kill -HUP "$XLBD_PID"
rejected() { xlbctl --json status | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["reload"]["rejected"] == 1'; }
wait_until 50 0.1 rejected || fail "an invalid static resource was not rejected on reload"
[ "$(summary)" = "serving gen 2" ] || fail "a rejected reload changed the VIP: $(summary)"
pass "an invalid static resource on reload is rejected; gen 2 keeps serving"

netns_xlbd_stop || fail "xlbd did not exit cleanly"
pass "clean exit"
