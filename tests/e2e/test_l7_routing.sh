#!/usr/bin/env bash
# L7 HTTP/2 routing (gRPC A28) through xlbd with real gRPC peers (tools/lib/grpc_backend.py and
# grpc_client.py, Debian's python3-grpcio): the VIPs 198.18.0.100:50051 and [2001:2::100]:50051
# take cleartext HTTP/2 for the listener's route configuration:
#   /xlb.test.Echo/ with header x-tier: gold  -> cluster gold
#   /xlb.test.Echo/ otherwise                 -> weighted_clusters blue 3 : green 1
#   anything else                             -> no route: xlb answers UNAVAILABLE itself
# Six backends, two per cluster (b-gold-1 on be1 ... b-green-2 on be6), each on port 50051 of
# its IPv4 and IPv6 address. Binding is per connection, so the spread is measured with a new
# connection per RPC; within one connection every RPC goes to one backend. Shares are checked
# against 5 binomial standard deviations of fixed expectations, no timing assertions.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

topo_create "$E2E_PREFIX" 6
xlb_write_config
e2e_edit_config '
t = "type.googleapis.com/envoy."
x = c["xlb"]
x["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///l7", "l7_mode": "splice"},
             {"address": "2001:2::100", "port": 50051, "target": "xds:///l7v6", "l7_mode": "splice"}]
def listener(name, suffix):
    routes = [
        {"match": {"prefix": "/xlb.test.Echo/",
                   "headers": [{"name": "x-tier", "string_match": {"exact": "gold"}}]},
         "route": {"cluster": "gold" + suffix}},
        {"match": {"prefix": "/xlb.test.Echo/"},
         "route": {"weighted_clusters": {"clusters": [{"name": "blue" + suffix, "weight": 3},
                                                      {"name": "green" + suffix, "weight": 1}]}}}]
    return {"name": name, "api_listener": {"api_listener": {
        "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        "route_config": {"name": name + "-routes", "virtual_hosts": [
            {"name": "echo", "domains": ["*"], "routes": routes}]},
        "http_filters": [{"name": "router", "typed_config": {
            "@type": t + "extensions.filters.http.router.v3.Router"}}]}}}
def cluster(name):
    return {"name": name, "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}}}
def eds(name, addrs):
    return {"cluster_name": name, "endpoints": [{"locality": {"zone": "a"},
        "load_balancing_weight": 1, "lb_endpoints": [
            {"endpoint": {"address": {"socket_address": {"address": a, "port_value": 50051}}}}
            for a in addrs]}]}
clusters, endpoints = [], []
for suffix, fmt in (("", "198.18.0.2%d"), ("6", "2001:2::2%d")):
    for i, name in enumerate(("gold", "blue", "green")):
        clusters.append(cluster(name + suffix))
        endpoints.append(eds(name + suffix, [fmt % (2 * i + 1), fmt % (2 * i + 2)]))
x["static_resources"] = {"listeners": [listener("l7", ""), listener("l7v6", "6")],
                         "clusters": clusters, "endpoints": endpoints}'
"$XLBD" --check --config "$E2E_DIR/bootstrap.json" >/dev/null || fail "xlbd --check rejected the L7 bootstrap"

# be1..be6 run b-gold-1, b-gold-2, b-blue-1, b-blue-2, b-green-1, b-green-2 (logs in $E2E_DIR).
BACKENDS=(b-gold-1 b-gold-2 b-blue-1 b-blue-2 b-green-1 b-green-2)
for i in 1 2 3 4 5 6; do
    name=${BACKENDS[$((i - 1))]}
    grpc_backend "$E2E_PREFIX-be$i" "$E2E_DIR/$name.log" --name "$name" --port 50051 \
        --address "198.18.0.2$i" --address "2001:2::2$i" --echo-header x-tier
done
e2e_start_xlbd

client() { grpc_client "$E2E_PREFIX-client" "$@"; }
# All Who calls the backends logged so far.
all_rpcs() {
    local name total=0
    for name in "${BACKENDS[@]}"; do total=$((total + $(grpc_rpcs "$E2E_DIR/$name.log"))); done
    echo "$total"
}
# check_split JSON N: N RPCs all OK, blue (both endpoints) against green (both endpoints) within
# 5 binomial sigma of 3:1, gold never.
check_split() {
    python3 - "$1" "$2" <<'PY'
import json, math, sys
r, n = json.loads(sys.argv[1]), int(sys.argv[2])
b = r["backends"]
if r["status"] != {"OK": n}:
    sys.exit(f"statuses: {r['status']} {r['details']}")
blue = b.get("b-blue-1", 0) + b.get("b-blue-2", 0)
green = b.get("b-green-1", 0) + b.get("b-green-2", 0)
p = 0.75
sigma = math.sqrt(n * p * (1 - p))
low, high = math.ceil(n * p - 5 * sigma), math.floor(n * p + 5 * sigma)
if blue + green != n:
    sys.exit(f"RPCs outside blue and green: {b}")
if not low <= blue <= high:
    sys.exit(f"blue {blue} of {n}, expected {low}..{high} (3:1 within 5 sigma)")
for name in ("b-blue-1", "b-blue-2", "b-green-1", "b-green-2"):
    if b.get(name, 0) == 0:
        sys.exit(f"{name} got no RPC: {b}")
print(f"blue {blue} (bounds {low}..{high}), green {green}: {b}")
PY
}

# What the control plane expects, before any traffic: simulate runs the workers' pick code on
# the live snapshot (a failure here is the configuration's, not the data plane's).
sim() { xlbctl simulate --vip 198.18.0.100:50051 --seed 3 --json "$@"; }
python3 - "$(sim --path /xlb.test.Echo/Who --n 4000)" "$(sim --path /xlb.test.Echo/Who --header x-tier=gold --n 100)" \
    "$(sim --path /other.Svc/X --n 10)" <<'PY' || fail "xlbctl simulate disagrees with the routes"
import json, sys
split, gold, other = (json.loads(a) for a in sys.argv[1:])
by_cluster = {}
for e in split["endpoints"]:
    by_cluster[e["cluster"]] = by_cluster.get(e["cluster"], 0) + e["picks"]
assert set(by_cluster) == {"blue", "green"} and abs(by_cluster["blue"] - 3000) < 200, split
assert {e["cluster"] for e in gold["endpoints"]} == {"gold"}, gold
assert other["outcomes"] == {"no_route": 10}, other
PY
pass "xlbctl simulate: 3:1 blue:green, x-tier gold to gold, /other.Svc/X no_route"

# The first SYNs may meet backends xlb is still resolving: TCP retries them.
answers() { client --target "$1" --count 1 --deadline 2 | grep -q '"status": {"OK": 1}'; }
wait_until 50 0.2 answers 198.18.0.100:50051 || fail "no RPC through the IPv4 VIP succeeded"
wait_until 50 0.2 answers '[2001:2::100]:50051' || fail "no RPC through the IPv6 VIP succeeded"
pass "an RPC through each L7 VIP reaches a backend"

out=$(client --target 198.18.0.100:50051 --count 200 --per-connection)
split=$(check_split "$out" 200) || fail "200 RPCs without x-tier: $split"
pass "200 connections without x-tier: weighted clusters 3:1, both endpoints of each used; $split"

out=$(client --target 198.18.0.100:50051 --count 40 --per-connection --header x-tier=gold)
grpc_expect "$out" 'r["status"] == {"OK": 40} and set(r["backends"]) == {"b-gold-1", "b-gold-2"}'
grpc_expect "$out" 'r["echo"]["x-tier"] == {"gold": 40}'
pass "40 connections with x-tier: gold all reach cluster gold (both endpoints), the header intact"

# Per-connection binding: one channel, many RPCs, one backend.
out=$(client --target 198.18.0.100:50051 --count 30)
grpc_expect "$out" 'r["status"] == {"OK": 30} and len(r["backends"]) == 1'
only=$(grpc_field "$out" 'list(r["backends"])[0]')
grpc_expect "$out" 'r["sequence"] == [r["sequence"][0]] * 30'
pass "30 RPCs on one connection all went to one backend ($only)"

# Full NAT: the backends see xlb's source-NAT address, not the client's.
grep -q '^rpc /xlb.test.Echo/Who ipv4:198.18.0.11:' "$E2E_DIR/$only.log" ||
    fail "$only saw no connection from 198.18.0.11: $(tail -n 3 "$E2E_DIR/$only.log")"
! grep -q " ipv4:$TOPO_CLIENT4:" "$E2E_DIR/$only.log" || fail "$only saw the client's own address"
pass "backends see xlb's source-NAT address 198.18.0.11"

before=$(all_rpcs)
out=$(client --target 198.18.0.100:50051 --count 20 --per-connection --path /other.Svc/X)
grpc_expect "$out" 'r["status"] == {"UNAVAILABLE": 20} and r["backends"] == {}'
# xlb's own answer (a grpc-message naming the reason), not a transport failure of the client.
grpc_expect "$out" 'all(k.startswith("UNAVAILABLE: ") and len(k) > len("UNAVAILABLE: ") for k in r["details"])'
grpc_expect "$out" 'not any(w in k for k in r["details"] for w in ("failed to connect", "Socket closed", "Connection reset"))'
for name in "${BACKENDS[@]}"; do
    [ "$(grpc_rpcs "$E2E_DIR/$name.log" /other.Svc/X)" -eq 0 ] || fail "/other.Svc/X reached $name"
done
[ "$(all_rpcs)" -eq "$before" ] || fail "RPCs reached backends while only /other.Svc/X was asked"
pass "/other.Svc/X has no route: 20 x UNAVAILABLE from xlb, no backend reached: $(grpc_field "$out" 'r["details"]')"

# Stock HTTP/2 clients with a gRPC request made by hand (tools/lib/grpc_peers.sh: grpc_frame).
grpc_frame "$E2E_DIR/frame.bin"
in_client curl -sS --max-time 5 --http2-prior-knowledge -D "$E2E_DIR/curl.headers" \
    -o "$E2E_DIR/curl.body" -H 'content-type: application/grpc' -H 'te: trailers' \
    --data-binary @"$E2E_DIR/frame.bin" http://198.18.0.100:50051/xlb.test.Echo/Who ||
    fail "curl through the VIP failed"
head -n 1 "$E2E_DIR/curl.headers" | grep -q '^HTTP/2 200' || fail "curl: $(cat "$E2E_DIR/curl.headers")"
grep -q '^content-type: application/grpc' "$E2E_DIR/curl.headers" || fail "curl: $(cat "$E2E_DIR/curl.headers")"
grep -q '^grpc-status: 0' "$E2E_DIR/curl.headers" || fail "curl: no grpc-status 0 trailer: $(cat "$E2E_DIR/curl.headers")"
grep -Eq 'b-(blue|green)-[12]' "$E2E_DIR/curl.body" || fail "curl body: $(od -c "$E2E_DIR/curl.body" | head)"
pass "curl --http2-prior-knowledge POST: HTTP/2 200, grpc-status 0, $(grep -Eao 'b-[a-z]+-[12]' "$E2E_DIR/curl.body")"

before=$(all_rpcs)
out=$(in_client timeout 120 h2load -n 200 -c 4 -d "$E2E_DIR/frame.bin" \
    -H 'content-type: application/grpc' -H 'te: trailers' \
    http://198.18.0.100:50051/xlb.test.Echo/Who 2>&1) || fail "h2load: $out"
grep -q "requests: 200 total, 200 started, 200 done, 200 succeeded, 0 failed, 0 errored" <<<"$out" ||
    fail "h2load did not complete 200 requests: $(grep -E '^requests|^status' <<<"$out")"
[ $(($(all_rpcs) - before)) -eq 200 ] || fail "h2load's 200 requests made $(($(all_rpcs) - before)) calls"
pass "h2load -n 200 -c 4: $(grep -Eo '[0-9]+ succeeded, [0-9]+ failed' <<<"$out"); each request reached a handler"

# IPv6: the same routes through the listener l7v6 to the clusters' IPv6 endpoints.
out=$(client --target '[2001:2::100]:50051' --count 120 --per-connection)
split=$(check_split "$out" 120) || fail "IPv6, 120 RPCs without x-tier: $split"
out=$(client --target '[2001:2::100]:50051' --count 20 --per-connection --header x-tier=gold)
grpc_expect "$out" 'r["status"] == {"OK": 20} and set(r["backends"]) <= {"b-gold-1", "b-gold-2"}'
out=$(client --target '[2001:2::100]:50051' --count 10 --per-connection --path /other.Svc/X)
grpc_expect "$out" 'r["status"] == {"UNAVAILABLE": 10} and r["backends"] == {}'
grep -q '^rpc /xlb.test.Echo/Who ipv6:%5B2001:2::11%5D:' "$E2E_DIR/b-gold-1.log" "$E2E_DIR/b-gold-2.log" ||
    fail "no gold backend saw xlb's IPv6 source-NAT address"
pass "IPv6 VIP: 3:1 split ($split), x-tier gold to gold, no route UNAVAILABLE"

# Robustness: mutated HTTP/2 streams (flipped bytes, truncation, garbage, oversized frames, a
# PING storm, a header block over the buffer, CONTINUATION misuse, bad HPACK, early FINs).
# xlbd must keep serving, count the protocol errors, and free every connection it took.
out=$(in_client timeout 300 "$GRPC_PY" "$E2E_SOURCE/tools/lib/h2_mutate.py" \
    --target 198.18.0.100:50051 --count 200 --seed 7) || fail "h2_mutate: $out"
errors=$(counter events.l7_protocol_errors)
[ "${errors:-0}" -gt 0 ] || fail "no l7_protocol_errors after mutated streams: $out"
out2=$(client --target 198.18.0.100:50051 --count 5 --per-connection)
grpc_expect "$out2" 'r["status"] == {"OK": 5}'
no_flows() { xlbctl flows | grep -q '^0 flows match'; }
# Closed connections keep their flow for the closing timeout (30 s) before it is freed.
wait_until 180 0.5 no_flows || fail "connections left after the mutated streams: $(xlbctl flows | tail -n 3)"
pass "200 mutated HTTP/2 streams: $errors protocol errors counted, RPCs still served, every connection freed"

e2e_stop_xlbd
pass "clean exit"
