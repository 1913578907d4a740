#!/usr/bin/env bash
# Cookie-based stateful session affinity (gRPC A55, A60) through an L7 VIP with real gRPC peers
# (tools/lib/grpc_backend.py and grpc_client.py with its cookie jar, Debian's python3-grpcio).
# The listener 198.18.0.100:50051 has the stateful session filter (cookie xlb-session, path /,
# ttl 60 s) before the router; its one route sends /xlb.test.Echo/ to cluster sess, three
# endpoints b-sess-1..3 in priority 0 and b-sess-4 in priority 1 (be1..be4, port 50051), whose
# override_host_status admits DRAINING
# endpoints (A60: without it a DRAINING endpoint is reached by no cookie either). Checked:
#   - a request without a cookie gets Set-Cookie: xlb-session=base64("ADDR:PORT;sess");
#     HttpOnly; Path=/; Max-Age=60, naming the backend that answered;
#   - 20 more connections carrying the cookie all reach that backend, with no new Set-Cookie;
#   - once that endpoint is DRAINING in EDS (static_resources edited, SIGHUP), the cookie still
#     reaches it while connections without a cookie never do (and each gets a Set-Cookie);
#   - once it is removed from EDS, the cookie is re-picked to another endpoint and a new
#     Set-Cookie for that one arrives, which the following connections then follow;
#   - once every endpoint of priority 0 is DRAINING, new connections fail over to priority 1
#     (b-sess-4) while the cookie still reaches its endpoint in the failed-over priority.
# Each RPC is its own connection (--per-connection): xlb binds per connection.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

topo_create "$E2E_PREFIX" 4
xlb_write_config
e2e_edit_config '
t = "type.googleapis.com/envoy."
x = c["xlb"]
x["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///l7", "l7_mode": "splice"}]
session = {"name": "session", "typed_config": {
    "@type": t + "extensions.filters.http.stateful_session.v3.StatefulSession",
    "session_state": {"name": "envoy.http.stateful_session.cookie", "typed_config": {
        "@type": t + "extensions.http.stateful_session.cookie.v3.CookieBasedSessionState",
        "cookie": {"name": "xlb-session", "path": "/", "ttl": "60s"}}}}}
router = {"name": "router", "typed_config": {"@type": t + "extensions.filters.http.router.v3.Router"}}
x["static_resources"] = {
  "listeners": [{"name": "l7", "api_listener": {"api_listener": {
      "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
      "route_config": {"name": "l7-routes", "virtual_hosts": [{"name": "echo", "domains": ["*"],
          "routes": [{"match": {"prefix": "/xlb.test.Echo/"}, "route": {"cluster": "sess"}}]}]},
      "http_filters": [session, router]}}}],
  "clusters": [{"name": "sess", "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}},
                "common_lb_config": {"override_host_status": {
                    "statuses": ["UNKNOWN", "HEALTHY", "DRAINING"]}}}],
  "endpoints": [{"cluster_name": "sess", "endpoints": [{"locality": {"zone": "a"},
      "load_balancing_weight": 1, "lb_endpoints": [
          {"endpoint": {"address": {"socket_address": {"address": "198.18.0.2%d" % i,
                                                       "port_value": 50051}}}}
          for i in (1, 2, 3)]},
      {"locality": {"zone": "b"}, "priority": 1, "load_balancing_weight": 1, "lb_endpoints": [
          {"endpoint": {"address": {"socket_address": {"address": "198.18.0.24",
                                                       "port_value": 50051}}}}]}]}]}'
"$XLBD" --check --config "$E2E_DIR/bootstrap.json" >/dev/null || fail "xlbd --check rejected the L7 bootstrap"

for i in 1 2 3 4; do
    grpc_backend "$E2E_PREFIX-be$i" "$E2E_DIR/b-sess-$i.log" --name "b-sess-$i" --port 50051 \
        --address "198.18.0.2$i" --echo-header cookie
done
e2e_start_xlbd

client() { grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 "$@"; }
address_of() { echo "198.18.0.2${1##*-}"; } # b-sess-N -> 198.18.0.2N
JAR=$E2E_DIR/jar.json

# check_set_cookie JSON: the last Set-Cookie is xlb-session=base64("ADDR:50051;sess") for the
# backend that answered the RPC that carried it, with HttpOnly, Path=/ and Max-Age=60.
check_set_cookie() {
    python3 - "$1" <<'PY'
import base64, json, sys
r = json.loads(sys.argv[1])
header = r["set_cookie_header"]
if header is None:
    sys.exit("no set-cookie")
parts = [p.strip() for p in header.split(";")]
name, _, value = parts[0].partition("=")
if name != "xlb-session":
    sys.exit(f"cookie name {name!r}: {header}")
attrs = {p.split("=", 1)[0].lower(): p.partition("=")[2] for p in parts[1:]}
if "httponly" not in attrs or attrs.get("path") != "/" or attrs.get("max-age") != "60":
    sys.exit(f"attributes: {header}")
decoded = base64.b64decode(value, validate=True).decode()
# The RPC that carried the cookie is the first one the jar changed on: the sequence's first
# entry after a cookie-less start, or after a re-pick.
backend = [s for s in r["sequence"] if s.startswith("b-sess-")][0]
want = "198.18.0.2%s:50051;sess" % backend.rsplit("-", 1)[1]
if decoded != want:
    sys.exit(f"cookie value decodes to {decoded!r}, expected {want!r} for {backend}")
print(decoded)
PY
}
# set_health ADDR (DRAINING|remove): edit ADDR's entry in sess's EDS and reload with SIGHUP.
set_health() {
    e2e_edit_config "
mine = [(loc['lb_endpoints'], l) for e in c['xlb']['static_resources']['endpoints']
        for loc in e['endpoints'] for l in loc['lb_endpoints']
        if l['endpoint']['address']['socket_address']['address'] == '$1']
assert len(mine) == 1, mine
eps, ep = mine[0]
if '$2' == 'remove':
    eps.remove(ep)
else:
    ep['health_status'] = '$2'"
    kill -HUP "$XLBD_PID"
}
# endpoint_state ADDR: draining, removed, or the endpoint's health as xlbctl shows it.
endpoint_state() {
    xlbctl --json endpoints sess | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e["address"].rsplit(":", 1)[0] == sys.argv[1]:
        print(e.get("health", "?"))
        break
else:
    print("removed")' "$1"
}

# The first SYNs may meet backends xlb is still resolving: TCP retries them.
answers() { client --count 1 --deadline 2 | grep -q '"status": {"OK": 1}'; }
wait_until 50 0.2 answers || fail "no RPC through the L7 VIP succeeded"

out=$(client --count 1 --per-connection --cookie-jar "$JAR")
grpc_expect "$out" 'r["status"] == {"OK": 1} and r["set_cookie"] == 1'
grpc_expect "$out" 'r["echo"]["cookie"] == {"(absent)": 1}'
pinned=$(grpc_field "$out" 'r["sequence"][0]')
decoded=$(check_set_cookie "$out") || fail "first response's Set-Cookie: $decoded"
cookie=$(grpc_field "$out" 'r["cookie"]')
# The control plane reads the data plane's cookie alike: simulate pins it to the same endpoint.
sim=$(xlbctl simulate --vip 198.18.0.100:50051 --path /xlb.test.Echo/Who --cookie "$cookie" --n 20 --json)
grpc_expect "$sim" '[(e["address"], e["picks"]) for e in r["endpoints"]] == [("'"$(address_of "$pinned")"':50051", 20)]'
pass "the first RPC, without a cookie, gets Set-Cookie naming $pinned ($decoded): $(grpc_field "$out" 'r["set_cookie_header"]')"

out=$(client --count 20 --per-connection --cookie-jar "$JAR")
grpc_expect "$out" 'r["status"] == {"OK": 20} and r["backends"] == {"'"$pinned"'": 20}'
grpc_expect "$out" 'r["set_cookie"] == 0 and r["echo"]["cookie"] == {"'"$cookie"'": 20}'
pass "20 more connections with the cookie all reach $pinned, no new Set-Cookie; the backend sees the cookie"

pinned_addr=$(address_of "$pinned")
set_health "$pinned_addr" DRAINING
is_draining() { [ "$(endpoint_state "$pinned_addr")" = draining ]; }
wait_until 50 0.1 is_draining || fail "$pinned not DRAINING after the reload: $(xlbctl endpoints sess)"
out=$(client --count 10 --per-connection --cookie-jar "$JAR")
grpc_expect "$out" 'r["status"] == {"OK": 10} and r["backends"] == {"'"$pinned"'": 10} and r["set_cookie"] == 0'
# Without a cookie: (2/3)^30 < 1e-5 is the chance that a DRAINING endpoint still in the picks
# would go unnoticed.
out=$(client --count 30 --per-connection)
grpc_expect "$out" 'r["status"] == {"OK": 30} and "'"$pinned"'" not in r["backends"]'
grpc_expect "$out" 'r["set_cookie"] == 30'
pass "$pinned DRAINING: the cookie still reaches it (10 of 10); 30 cookie-less connections avoid it: $(grpc_field "$out" 'r["backends"]')"

set_health "$pinned_addr" remove
is_removed() { [ "$(endpoint_state "$pinned_addr")" = removed ]; }
wait_until 50 0.1 is_removed || fail "$pinned still in sess after the reload: $(xlbctl endpoints sess)"
out=$(client --count 6 --per-connection --cookie-jar "$JAR")
grpc_expect "$out" 'r["status"] == {"OK": 6} and r["set_cookie"] == 1 and len(r["backends"]) == 1'
grpc_expect "$out" '"'"$pinned"'" not in r["backends"] and r["cookie"] != "'"$cookie"'"'
# The first RPC carried the stale cookie and got the new one; the other five carried the new one.
new_cookie=$(grpc_field "$out" 'r["cookie"]')
grpc_expect "$out" 'r["echo"]["cookie"] == {"'"$cookie"'": 1, "'"$new_cookie"'": 5}'
repinned=$(grpc_field "$out" 'list(r["backends"])[0]')
# The control plane reads the new cookie alike: simulate pins it to the re-picked endpoint.
sim=$(xlbctl simulate --vip 198.18.0.100:50051 --path /xlb.test.Echo/Who --cookie "$new_cookie" --n 20 --json)
grpc_expect "$sim" '[(e["address"], e["picks"]) for e in r["endpoints"]] == [("'"$(address_of "$repinned")"':50051", 20)]'
decoded=$(check_set_cookie "$out") || fail "re-picked Set-Cookie: $decoded"
pass "$pinned removed: the cookie is re-picked to $repinned with a new Set-Cookie ($decoded), which the next 5 connections follow"

# Every endpoint of priority 0 DRAINING: new connections go to priority 1 (A56), the session
# stays on its endpoint in the priority that was failed over (A55 override host, DRAINING
# admitted by override_host_status).
for n in 1 2 3; do
    [ "b-sess-$n" = "$pinned" ] || set_health "198.18.0.2$n" DRAINING
done
repinned_addr=$(address_of "$repinned")
all_draining() {
    for n in 1 2 3; do
        [ "b-sess-$n" = "$pinned" ] || [ "$(endpoint_state "198.18.0.2$n")" = draining ] || return 1
    done
}
wait_until 50 0.1 all_draining || fail "priority 0 not all DRAINING: $(xlbctl endpoints sess)"
out=$(client --count 20 --per-connection)
grpc_expect "$out" 'r["status"] == {"OK": 20} and r["backends"] == {"b-sess-4": 20} and r["set_cookie"] == 20'
out=$(client --count 10 --per-connection --cookie-jar "$JAR")
grpc_expect "$out" 'r["status"] == {"OK": 10} and r["backends"] == {"'"$repinned"'": 10} and r["set_cookie"] == 0'
pass "priority 0 all DRAINING: 20 new connections fail over to b-sess-4 (priority 1); the cookie still reaches $repinned (10 of 10)"

e2e_stop_xlbd
pass "clean exit"
