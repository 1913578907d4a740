#!/usr/bin/env bash
# `xlbctl simulate` on a live xlbd: the static resources below go through xDS validation and the
# LB compiler, and N picks with the workers' own code must give what a proxyless gRPC client
# would: weighted clusters (A28), weighted localities and round robin (A27), drop overloads,
# priorities (A56), aggregate failover (A75), DRAINING endpoints only through sessions (A55),
# cookie overrides across priorities and per cluster (A60/A75), ring-hash stickiness (A42), and
# endpoints placed on the ring by their EDS hash_key (A76), followed when their addresses move.
# Shares are checked against 5 binomial standard deviations at a fixed seed.
set -euo pipefail
SRC=${XLB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
RUN_NAME=xlb-sim
. "$SRC/tools/lib/netns_xlbd.sh"

write_config() { # DOWN_HAS_ENDPOINT (0/1) [RING_ROTATION]
    python3 - "$DIR" "$1" "$EAL_PREFIX" "${2:-0}" >"$DIR/bootstrap.json" <<'PY'
import json, sys
d, down, prefix, rotation = sys.argv[1], sys.argv[2] == "1", sys.argv[3], int(sys.argv[4])
t = "type.googleapis.com/envoy."
def ep(addr, health=None, hash_key=None):
    e = {"endpoint": {"address": {"socket_address": {"address": addr, "port_value": 8080}}}}
    if health:
        e["health_status"] = health
    if hash_key:  # A76: the endpoint's place on the ring
        e["metadata"] = {"filter_metadata": {"envoy.lb": {"hash_key": hash_key}}}
    return e
def loc(zone, weight, eps, priority=0):
    return {"locality": {"zone": zone}, "load_balancing_weight": weight, "priority": priority,
            "lb_endpoints": eps}
def eds(name, **kw):
    return {"name": name, "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}}, **kw}
session = {"name": "session", "typed_config": {
    "@type": t + "extensions.filters.http.stateful_session.v3.StatefulSession",
    "session_state": {"name": "envoy.http.stateful_session.cookie", "typed_config": {
        "@type": t + "extensions.http.stateful_session.cookie.v3.CookieBasedSessionState",
        "cookie": {"name": "xlb-session"}}}}}
router = {"name": "router", "typed_config": {"@type": t + "extensions.filters.http.router.v3.Router"}}
routes = [
    {"match": {"prefix": "/hash"},
     "route": {"cluster": "ring", "hash_policy": [{"header": {"header_name": "x-user"}}]}},
    {"match": {"prefix": "/"}, "route": {"weighted_clusters": {"clusters": [
        {"name": "web", "weight": 75}, {"name": "agg", "weight": 25}]}}}]
print(json.dumps({"xlb": {
  "eal": ["--no-huge", "--no-pci", "-m", "128", "--file-prefix=" + prefix, "--vdev=net_null0"],
  "worker_idle_sleep_us": 100, "control_socket": d + "/xlbd.sock",
  "ports": [{"name": "net_null0", "addresses": ["198.18.0.10/24"]}],
  "vips": [{"address": "198.18.0.100", "port": 8080, "target": "xds:///svc", "l7_mode": "splice"}],
  "static_resources": {
    "listeners": [{"name": "svc", "api_listener": {"api_listener": {
        "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        "route_config": {"name": "inline", "virtual_hosts": [{"name": "vh", "domains": ["*"],
                                                              "routes": routes}]},
        "http_filters": [session, router]}}}],
    "clusters": [
      eds("web"), eds("down"), eds("backup"), eds("ring", lb_policy="RING_HASH"),
      {"name": "agg", "cluster_type": {"name": "envoy.clusters.aggregate", "typed_config": {
          "@type": t + "extensions.clusters.aggregate.v3.ClusterConfig",
          "clusters": ["down", "backup"]}}}],
    "endpoints": [
      {"cluster_name": "web", "endpoints": [
          loc("a", 2, [ep("198.18.0.21"), ep("198.18.0.22")]),
          loc("b", 1, [ep("198.18.0.23"), ep("198.18.0.24", "DRAINING")]),
          loc("c", 1, [ep("198.18.0.31")], priority=1)],
       "policy": {"drop_overloads": [{"category": "lb", "drop_percentage": {
           "numerator": 10, "denominator": "HUNDRED"}}]}},
      {"cluster_name": "down", "endpoints": [loc("f", 1, [ep("198.18.0.61")])] if down else []},
      {"cluster_name": "backup", "endpoints": [loc("d", 1, [ep("198.18.0.41")])]},
      # pod-i at 198.18.0.5(i+1), or moved along by RING_ROTATION addresses.
      {"cluster_name": "ring", "endpoints": [loc("e", 1, [
          ep("198.18.0.5%d" % ((i + rotation) % 4 + 1), hash_key="pod-%d" % i)
          for i in range(4)])]}]}}}))
PY
}

# check_shares JSON 'address=share,...' : every listed address within 5 sigma of its share,
# every other address absent; "dropped=share" checks the drop outcome.
check_shares() {
    python3 - "$1" "$2" <<'PY'
import json, math, sys
r, spec = json.loads(sys.argv[1]), sys.argv[2]
n = r["n"]
seen = {e["address"].rsplit(":", 1)[0]: e["picks"] for e in r["endpoints"]}
want = dict((k, float(v)) for k, v in (item.split("=") for item in spec.split(",")))
for key, p in want.items():
    got = r["outcomes"].get("dropped", 0) if key == "dropped" else seen.pop(key, 0)
    sigma = math.sqrt(n * p * (1 - p))
    if abs(got - n * p) > 5 * sigma + 1e-9:
        sys.exit(f"{key}: {got} picks of {n}, expected {n * p:.0f} +- {5 * sigma:.0f}")
if seen:
    sys.exit(f"unexpected endpoints picked: {seen}")
PY
}
simulate() { xlbctl simulate --vip 198.18.0.100:8080 --seed 7 "$@" --json; }
cookie() { printf '%s' "$1" | base64 -w0; }

write_config 0
"$XLBD" --check --config "$DIR/bootstrap.json" >/dev/null || fail "valid config rejected"
netns_xlbd_start || fail "xlbd did not start"

out=$(simulate --n 40000) || fail "simulate: $out"
check_shares "$out" "198.18.0.21=0.225,198.18.0.22=0.225,198.18.0.23=0.225,198.18.0.41=0.25,dropped=0.075" ||
    fail "weighted clusters, localities, drops"
pass "75/25 weighted clusters, 2:1 localities, 10% drops; the DRAINING endpoint and priority 1 untouched"

clusters=$(xlbctl clusters)
grep -Eq "^agg +aggregate " <<<"$clusters" || fail "clusters: $clusters"
grep -Eq "^down +eds +round_robin +READY +0 +0 +0 +0 +0 +0 +none" <<<"$clusters" || fail "down: $clusters"
grep -Eq "^web +eds +round_robin +READY +2 +3 +5 +4 +0 +0 +0 " <<<"$clusters" || fail "web: $clusters"
pass "xlbctl clusters: usable, ejected and READY (no subchannels: 0) counts, the chosen priority ('none' for an empty cluster)"

out=$(simulate --n 40000 --cookie "xlb-session=$(cookie "198.18.0.31:8080;web")")
# A60: the cookie names web, one of the route's weighted clusters: every RPC goes to web (its
# drops still apply), none to agg, whatever the 75/25 draw.
check_shares "$out" "198.18.0.31=0.9,dropped=0.1" ||
    fail "session to a priority-1 endpoint"
pass "a session cookie for web takes every RPC to web (A60, over the weighted draw) and to its priority-1 endpoint"

out=$(simulate --n 20000 --cookie "xlb-session=$(cookie "198.18.0.24:8080;web")")
check_shares "$out" "198.18.0.21=0.3,198.18.0.22=0.3,198.18.0.23=0.3,dropped=0.1" ||
    fail "session to a DRAINING endpoint"
pass "a session to a DRAINING endpoint of web stays in web and falls back (not in the default override_host_status)"

out=$(simulate --n 2000 --path /hash/a --header x-user=alice)
[ "$(python3 -c 'import json,sys; r=json.load(sys.stdin); print(len(r["endpoints"]), r["trace"]["hash_source"])' <<<"$out")" = "1 hash policy" ] ||
    fail "ring hash stickiness: $out"
out=$(simulate --n 4000 --path /hash/a)
check_shares "$out" "198.18.0.51=0.25,198.18.0.52=0.25,198.18.0.53=0.25,198.18.0.54=0.25" ||
    fail "ring hash without a hash"
pass "ring hash: one user's picks all land on one endpoint; without the header picks spread evenly"

alice_before=$(simulate --n 10 --path /hash/a --header x-user=alice |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["endpoints"][0]["address"])')

# The pods move: each one's address is now the next one's. Placed by their EDS hash_key
# (A76), they keep their places on the ring, so alice follows her pod to its new address.
write_config 1 1
kill -HUP "$XLBD_PID"
moved() { simulate --n 2000 | python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if any(e["address"].startswith("198.18.0.61") for e in r["endpoints"]) else 1)'; }
wait_until 50 0.1 moved || fail "aggregate did not fail back"
out=$(simulate --n 40000)
check_shares "$out" "198.18.0.21=0.225,198.18.0.22=0.225,198.18.0.23=0.225,198.18.0.61=0.25,dropped=0.075" ||
    fail "aggregate failback"
pass "aggregate: the first leaf takes agg's picks back once it has an endpoint (A75)"

last=${alice_before%:*}
last=${last##*.}
want="198.18.0.5$(((last - 51 + 1) % 4 + 1)):8080"
out=$(simulate --n 2000 --path /hash/a --header x-user=alice)
got=$(python3 -c 'import json,sys; r=json.load(sys.stdin); print(" ".join(e["address"] for e in r["endpoints"]))' <<<"$out")
[ "$got" = "$want" ] || fail "alice was on $alice_before; her pod moved to $want, but she went to $got"
pass "ring hash with EDS hash keys (A76): alice's pod moved from $alice_before to $want, and so did she"

out=$(xlbctl simulate --vip 198.18.0.200:8080 2>&1) && fail "simulate on an unknown VIP succeeded"
grep -q "no VIP 198.18.0.200:8080" <<<"$out" || fail "unknown VIP error: $out"
out=$(xlbctl simulate --vip 198.18.0.100:8080 --n 0 2>&1) && fail "--n 0 accepted"
grep -q "n must be a number in 1..1000000" <<<"$out" || fail "--n error: $out"
rc=0
xlbctl simulate --bogus 1 >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "unknown option: exit $rc"
pass "bad simulate requests get a clear error"

rc=0
netns_xlbd_stop || rc=$?
[ $rc -eq 0 ] || fail "xlbd exited with $rc"
pass "clean exit"
