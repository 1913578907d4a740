#!/usr/bin/env bash
# Parity with a real proxyless gRPC client. One scenario is served by the independent Node xDS
# server to two clients at once: grpc-js + grpc-js-xds (target xds:///svc, real RPCs to real
# grpc-js backends that answer with their own address) and xlbd (a VIP with the same target;
# `xlbctl simulate` runs the workers' pick code on its snapshot). For each backend and for the
# drop outcome, both histograms must be within 5 binomial standard deviations of the share the
# config implies, and within 5 standard deviations of each other (two-sample bound). Covered:
# weighted clusters (A28), weighted localities + round robin (A27), drop_overloads, priorities
# and failover when priority 0 has no healthy endpoint, aggregate failover and failback (A75),
# and ring hash with a header hash_policy (A42): every call of one user lands on the backend the
# A42 ring implies, in both, and calls without the header spread as the ring's arcs imply.
# Everything runs in a network namespace of its own; backends use 198.18.1.x on its loopback.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${XLB_BUILD_DIR:-$HERE/../../build}
XLBD=$BUILD/apps/xlbd
XLBCTL=$BUILD/apps/xlbctl
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root (a network namespace)"; exit 77; fi
N=${PARITY_N:-4000}          # calls / picks per histogram
USERS="alice,bob,carol,dave,grace,heidi,user2,user3" # their ring owners cover all 4 backends
NS="xlbp$$"
DIR=$(mktemp -d /tmp/xlb-parity-XXXXXX)
PIDS=()
cleanup() {
    local rc=$?
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [ $rc -ne 0 ]; then
        echo "--- xlbd log"; tail -n 30 "$DIR/xlbd.log" 2>/dev/null || true
        echo "--- grpc client stderr"; tail -n 30 "$DIR/client.err" 2>/dev/null || true
        echo "--- backends"; tail -n 10 "$DIR/backends.out" 2>/dev/null || true
    fi
    ip netns del "$NS" 2>/dev/null || true
    # xlbd's DPDK runtime files, under the prefix its bootstrap gave it (below).
    xlb_remove_dpdk_runtime "xlbp-${DIR: -6}"
    rm -rf "$DIR"
    exit $rc
}
trap cleanup EXIT
. "$HERE/../../tools/lib/harness.sh"
in_ns() { ip netns exec "$NS" "$@"; }

"$HERE/install.sh" >/dev/null
ip netns add "$NS"
ip -n "$NS" link set lo up
BACKENDS=()
for i in $(seq 1 10); do
    ip -n "$NS" addr add "198.18.1.$i/32" dev lo
    BACKENDS+=("198.18.1.$i:8080")
done

# ---- real gRPC backends, each answering with its own address ----
ip netns exec "$NS" node "$HERE/parity/backend.js" "${BACKENDS[@]}" >"$DIR/backends.out" 2>&1 &
PIDS+=($!)
wait_until 100 0.1 grep -q '^READY' "$DIR/backends.out" || fail "backends did not start"

# ---- the xDS management server ----
. "$HERE/xds_server.sh"
xds_server_start "$NS" "$DIR/xds.out" PIDS

# resources PHASE: the scenario. Phase 1: route "/" splits 75/25 between "web" (priority 0:
# localities a (weight 2, one endpoint) and b (weight 1, two endpoints); priority 1: locality c;
# 10% drop_overloads) and the aggregate "agg" = [down (no endpoints), backup]. Route
# "/parity.Hash/" goes to "ring" (RING_HASH, hash_policy on header x-user, four endpoints).
# Phase 2: web's priority-0 endpoints are UNHEALTHY (failover to priority 1) and "down" has an
# endpoint (agg fails back to its first leaf).
resources() {
    python3 - "$1" <<'PY'
import json, sys
phase = int(sys.argv[1])
t = "type.googleapis.com/envoy."
def ep(i, health=None):
    e = {"endpoint": {"address": {"socket_address": {"address": "198.18.1.%d" % i, "port_value": 8080}}}}
    if health:
        e["health_status"] = health
    return e
def loc(zone, weight, eps, priority=0):
    return {"locality": {"region": "r", "zone": zone}, "load_balancing_weight": weight,
            "priority": priority, "lb_endpoints": eps}
def eds(name, **kw):
    return {"@type": t + "config.cluster.v3.Cluster", "name": name, "type": "EDS",
            "eds_cluster_config": {"eds_config": {"ads": {}, "resource_api_version": "V3"}}, **kw}
def cla(name, localities, **kw):
    return {"@type": t + "config.endpoint.v3.ClusterLoadAssignment", "cluster_name": name,
            "endpoints": localities, **kw}
p0 = "UNHEALTHY" if phase == 2 else None
hcm = {"@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
       "rds": {"route_config_name": "svc-routes", "config_source": {"ads": {}, "resource_api_version": "V3"}},
       "http_filters": [{"name": "router", "typed_config":
                         {"@type": t + "extensions.filters.http.router.v3.Router"}}]}
routes = {"@type": t + "config.route.v3.RouteConfiguration", "name": "svc-routes",
          "virtual_hosts": [{"name": "vh", "domains": ["*"], "routes": [
              {"match": {"prefix": "/parity.Hash/"},
               "route": {"cluster": "ring", "hash_policy": [{"header": {"header_name": "x-user"}}]}},
              {"match": {"prefix": "/"}, "route": {"weighted_clusters": {"clusters": [
                  {"name": "web", "weight": 75}, {"name": "agg", "weight": 25}]}}}]}]}
res = [
    {"@type": t + "config.listener.v3.Listener", "name": "svc", "api_listener": {"api_listener": hcm}},
    routes,
    eds("web"), eds("down"), eds("backup"), eds("ring", lb_policy="RING_HASH"),
    {"@type": t + "config.cluster.v3.Cluster", "name": "agg",
     "cluster_type": {"name": "envoy.clusters.aggregate", "typed_config": {
         "@type": t + "extensions.clusters.aggregate.v3.ClusterConfig", "clusters": ["down", "backup"]}}},
    cla("web", [loc("a", 2, [ep(1, p0)]), loc("b", 1, [ep(2, p0), ep(3, p0)]),
                loc("c", 1, [ep(4)], priority=1)],
        policy={"drop_overloads": [{"category": "lb", "drop_percentage":
                                    {"numerator": 10, "denominator": "HUNDRED"}}]}),
    cla("down", [loc("f", 1, [ep(10)])] if phase == 2 else []),
    cla("backup", [loc("d", 1, [ep(5)])]),
    cla("ring", [loc("e", 1, [ep(6), ep(7), ep(8), ep(9)])]),
]
print(json.dumps({"resources": res}))
PY
}
control PUT /resources "$(resources 1)" >/dev/null

# ---- xlbd, on the same xDS server ----
python3 - "$DIR" "$XDS_PORT" >"$DIR/xlbd.json" <<'PY'
import json, sys
d, port = sys.argv[1:3]
print(json.dumps({
  "xds_servers": [{"server_uri": "127.0.0.1:%s" % port, "channel_creds": [{"type": "insecure"}]}],
  "node": {"id": "xlb-parity", "locality": {"zone": "z1"}},
  "xlb": {"eal": ["--no-huge", "--no-pci", "-m", "128", "--file-prefix=xlbp-%s" % d[-6:], "--vdev=net_null0"],
          "worker_idle_sleep_us": 100, "control_socket": d + "/xlbd.sock",
          "ports": [{"name": "net_null0", "addresses": ["198.18.0.10/24"]}],
          "vips": [{"address": "198.18.0.100", "port": 8080, "target": "xds:///svc", "l7_mode": "splice"}]}}))
PY
ip netns exec "$NS" "$XLBD" --config "$DIR/xlbd.json" >"$DIR/xlbd.log" 2>&1 &
XLBD_INDEX=${#PIDS[@]}
PIDS+=($!)
wait_until 100 0.1 xlbctl status || fail "xlbd did not start"
vip_ready() {
    [ "$(xlbctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["vips"][0]["state"])')" = ready ]
}
wait_until 100 0.1 vip_ready || fail "VIP not ready: $(xlbctl --json status)"
pass "xlbd got LDS/RDS/CDS/EDS from the Node xDS server: VIP ready"

# ---- the gRPC client's bootstrap ----
python3 - "$XDS_PORT" >"$DIR/grpc-bootstrap.json" <<'PY'
import json, sys
print(json.dumps({
  "xds_servers": [{"server_uri": "127.0.0.1:%s" % sys.argv[1], "channel_creds": [{"type": "insecure"}],
                   "server_features": ["xds_v3"]}],
  "node": {"id": "grpc-parity", "locality": {"zone": "z1"}}}))
PY
# grpc_client ARGS...: a fresh grpc-js channel to xds:///svc in the namespace; JSON on stdout.
grpc_client() {
    GRPC_XDS_BOOTSTRAP="$DIR/grpc-bootstrap.json" ip netns exec "$NS" timeout -k 5 180 \
        node "$HERE/parity/client.js" --target xds:///svc --time-limit-s 150 "$@" 2>>"$DIR/client.err"
}
simulate() { xlbctl simulate --vip 198.18.0.100:8080 --seed 1 --json "$@"; }

# compare TITLE GRPC_JSON SIM_JSON EXPECTED_JSON: the side-by-side table and the two checks.
# EXPECTED_JSON maps "ADDR:PORT" (and "dropped") to the share the config implies; any other
# backend must get nothing in either.
compare() {
    python3 - "$@" <<'PY'
import json, math, sys
title, g, s, want = sys.argv[1], *(json.loads(a) for a in sys.argv[2:5])
errors = []
if g["failed"]:
    errors.append("gRPC client: %d calls failed other than by a drop: %s" % (g["failed"], g["errors"]))
sim_out = s["outcomes"]
other = {k: v for k, v in sim_out.items() if k not in ("picked", "dropped") and v}
if other:
    errors.append("simulate: outcomes other than picked/dropped: %s" % other)
n1, n2 = g["n"], s["n"]
gc = dict(g["endpoints"]); gc["dropped"] = g["dropped"]
sc = {e["address"]: e["picks"] for e in s["endpoints"]}; sc["dropped"] = sim_out.get("dropped", 0)
keys = sorted(set(want) | set(gc) | set(sc), key=lambda k: (k == "dropped", k))
print("  %s (gRPC client n=%d, xlbctl simulate n=%d)" % (title, n1, n2))
print("  %-16s %8s %16s %16s %8s %8s" % ("backend", "config", "grpc-js", "xlb simulate", "|diff|", "5sd(2s)"))
for k in keys:
    p = want.get(k, 0.0)
    k1, k2 = gc.get(k, 0), sc.get(k, 0)
    for who, cnt, n in (("gRPC client", k1, n1), ("simulate", k2, n2)):
        sd = math.sqrt(n * p * (1 - p))
        if abs(cnt - n * p) > 5 * sd + 1e-9:
            errors.append("%s: %s got %d of %d, the config implies %.1f +- %.1f" % (who, k, cnt, n, n * p, 5 * sd))
    pool = (k1 + k2) / (n1 + n2)
    bound = 5 * math.sqrt(pool * (1 - pool) * (1 / n1 + 1 / n2))
    diff = abs(k1 / n1 - k2 / n2)
    if diff > bound + 1e-12:
        errors.append("%s: gRPC client %.4f vs simulate %.4f differ by more than %.4f" % (k, k1 / n1, k2 / n2, bound))
    print("  %-16s %8.4f %7.4f (%5d) %7.4f (%5d) %8.4f %8.4f" % (k, p, k1 / n1, k1, k2 / n2, k2, diff, bound))
if errors:
    print("\n".join("  MISMATCH " + e for e in errors))
    sys.exit(1)
PY
}

# ---- phase 1: weighted clusters, localities, drops, priorities, aggregate failover ----
# web gets 75% of the calls, drops 10% of those; the rest goes 2:1 to localities a and b (b's
# two endpoints round robin); priority 1 gets nothing. agg's first leaf has no endpoint, so its
# 25% go to backup.
EXPECT1='{"198.18.1.1:8080": 0.45, "198.18.1.2:8080": 0.1125, "198.18.1.3:8080": 0.1125,
          "198.18.1.5:8080": 0.25, "dropped": 0.075}'
g=$(grpc_client --n "$N") || fail "gRPC client (phase 1)"
s=$(simulate --n "$N") || fail "simulate: $s"
compare "weights, drops, priority 0, aggregate failover" "$g" "$s" "$EXPECT1" ||
    fail "phase 1 histograms"
pass "75/25 weighted clusters, 2:1 localities with round robin, 10% drops, priority 1 idle, aggregate failover to its second leaf: gRPC client and simulate agree"

# ---- phase 2: priority failover and aggregate failback ----
control PUT /resources "$(resources 2)" >/dev/null
phase2_applied() {
    simulate --n 400 | python3 -c '
import json, sys
seen = {e["address"] for e in json.load(sys.stdin)["endpoints"]}
sys.exit(0 if seen == {"198.18.1.4:8080", "198.18.1.10:8080"} else 1)'
}
wait_until 100 0.1 phase2_applied || fail "xlbd did not apply phase 2: $(simulate --n 400)"
EXPECT2='{"198.18.1.4:8080": 0.675, "198.18.1.10:8080": 0.25, "dropped": 0.075}'
g=$(grpc_client --n "$N") || fail "gRPC client (phase 2)"
s=$(simulate --n "$N") || fail "simulate: $s"
compare "priority failover, aggregate failback" "$g" "$s" "$EXPECT2" || fail "phase 2 histograms"
pass "priority 0 all UNHEALTHY: web fails over to priority 1; agg fails back to its first leaf: gRPC client and simulate agree"

# ---- phase 3: ring hash with a header hash_policy ----
RING_EPS="198.18.1.6:8080,198.18.1.7:8080,198.18.1.8:8080,198.18.1.9:8080"
ring=$(node "$HERE/parity/ring.js" --endpoints "$RING_EPS" --users "$USERS") || fail "ring.js"
PER_USER=50
g=$(grpc_client --method /parity.Hash/Echo --n "$PER_USER" --warmup 0 --header x-user --users "$USERS") ||
    fail "gRPC client (ring hash, users)"
sims='{}'
IFS=, read -r -a users <<<"$USERS"
for u in "${users[@]}"; do
    s=$(simulate --n "$PER_USER" --path /parity.Hash/Echo --header "x-user=$u") || fail "simulate: $s"
    sims=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d[sys.argv[2]]=json.loads(sys.argv[3]); print(json.dumps(d))' \
        "$sims" "$u" "$s")
done
python3 - "$g" "$sims" "$ring" <<'PY' || fail "ring hash stickiness"
import json, sys
g, sims, ring = (json.loads(a) for a in sys.argv[1:4])
errors = []
print("  %-8s %-18s %-24s %-24s" % ("x-user", "A42 ring owner", "grpc-js", "xlb simulate"))
for user, owner in ring["users"].items():
    gh = g["users"].get(user, {})
    s = sims[user]
    sh = {e["address"]: e["picks"] for e in s["endpoints"]}
    src = s.get("trace", {}).get("hash_source")
    fmt = lambda h: ",".join("%s x%d" % kv for kv in sorted(h.items())) or "-"
    print("  %-8s %-18s %-24s %-24s" % (user, owner, fmt(gh), fmt(sh)))
    if gh != {owner: sum(gh.values())} or sum(gh.values()) != g["n"] // len(ring["users"]):
        errors.append("gRPC client: %s went to %s, the ring owner is %s" % (user, gh, owner))
    if sh != {owner: s["n"]}:
        errors.append("simulate: %s went to %s, the ring owner is %s" % (user, sh, owner))
    if src != "hash policy":
        errors.append("simulate: %s hashed from %r, not the hash policy" % (user, src))
if set(ring["users"].values()) != set(ring["share"]):
    errors.append("test set-up: the users do not cover every ring backend: %s" % ring["users"])
if g["failed"] or g["dropped"]:
    errors.append("gRPC client failures: %s" % g["errors"])
if errors:
    print("\n".join("  MISMATCH " + e for e in errors))
    sys.exit(1)
PY
pass "ring hash: each x-user value sticks to one backend, the same in grpc-js and xlb, the one A42's ring implies"

# Without the header both hash randomly: each backend's share is its arc of the ring.
EXPECT3=$(python3 -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1])["share"]))' "$ring")
g=$(grpc_client --method /parity.Hash/Echo --n "$N" --warmup 50) || fail "gRPC client (ring hash, no header)"
s=$(simulate --n "$N" --path /parity.Hash/Echo) || fail "simulate: $s"
compare "ring hash without the header (config = arc of the A42 ring)" "$g" "$s" "$EXPECT3" ||
    fail "ring hash spread"
pass "ring hash without a hash header: picks spread by the ring's arcs in both"

nacks=$(control GET "/requests?kind=nack")
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(1 if r["requests"] else 0)' "$nacks" ||
    fail "a client NACKed the scenario: $nacks"
streams=$(control GET "/streams?all=1&kind=ads" | python3 -c '
import json, sys
print(" ".join(sorted({s["node_id"] for s in json.load(sys.stdin)["streams"]})))')
[ "$streams" = "grpc-parity xlb-parity" ] || fail "ADS clients seen by the server: $streams"
pass "both xlbd and grpc-js ACKed every resource of the scenario (no NACK on the server)"

XLBD_PID=${PIDS[$XLBD_INDEX]}
kill -TERM "$XLBD_PID"
rc=0
wait "$XLBD_PID" || rc=$?
unset "PIDS[$XLBD_INDEX]"
[ $rc -eq 0 ] || fail "xlbd exited with $rc"
pass "clean exit"
