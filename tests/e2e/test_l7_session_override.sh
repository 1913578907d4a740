#!/usr/bin/env bash
# A39 filter overrides on weighted cluster entries (issue 23), through a stream VIP, as a user
# sees them. The listener's stateful session filter sets cookie xlb-session (Max-Age 60); its
# one route splits RPCs 1:1:1 over three clusters, whose entries in weighted_clusters say:
#   a (b1, b2)  typed_per_filter_config: StatefulSessionPerRoute with cookie a-session, 30 s
#   b (b3)      nothing: the listener's xlb-session applies
#   c (b4)      typed_per_filter_config: StatefulSessionPerRoute disabled
# Checked: xlbctl simulate's trace shows each entry's own cookie; one grpcio channel's 60
# cookie-less RPCs each get the Set-Cookie of the entry they were routed to (a-session naming
# their backend and cluster a, xlb-session naming b3 and b, none from c); RPCs carrying an
# a-session cookie for b2 all reach b2 when routed to a, while an xlb-session cookie for b2
# steers none of a's RPCs (a's filter reads a-session only). Counts come from the client's
# per-RPC results; nothing is timed. About 6 s.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

topo_create "$E2E_PREFIX" 4
xlb_write_config
e2e_edit_config '
c["xlb"]["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///split",
                     "l7_mode": "stream"}]
def cookie(name, ttl):
    return {"session_state": {"name": "envoy.http.stateful_session.cookie", "typed_config": {
        "@type": T + "extensions.http.stateful_session.cookie.v3.CookieBasedSessionState",
        "cookie": {"name": name, "path": "/", "ttl": ttl}}}}
session = {"name": "session", "typed_config": dict(
    {"@type": T + "extensions.filters.http.stateful_session.v3.StatefulSession"},
    **cookie("xlb-session", "60s"))}
per_route = T + "extensions.filters.http.stateful_session.v3.StatefulSessionPerRoute"
entries = [{"name": "a", "weight": 1, "typed_per_filter_config": {"session": dict(
               {"@type": per_route, "stateful_session": cookie("a-session", "30s")})}},
           {"name": "b", "weight": 1},
           {"name": "c", "weight": 1, "typed_per_filter_config": {"session": {
               "@type": per_route, "disabled": True}}}]
s = static_l7([("a", {}, [locality("a", (1, 2))]), ("b", {}, [locality("b", (3,))]),
               ("c", {}, [locality("c", (4,))])])
router = s["listeners"][0]["api_listener"]["api_listener"]["http_filters"][0]
s["listeners"] = [{"name": "split", "api_listener": {"api_listener": {
    "@type": T + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
    "route_config": {"name": "split", "virtual_hosts": [{"name": "split", "domains": ["*"],
        "routes": [{"match": {"prefix": "/"},
                    "route": {"weighted_clusters": {"clusters": entries}}}]}]},
    "http_filters": [session, router]}}}]
c["xlb"]["static_resources"] = s'

for n in 1 2 3 4; do
    grpc_backend "$E2E_PREFIX-be$n" "$E2E_DIR/b$n.log" --name "b$n" --port 50051 \
        --address "198.18.0.2$n"
done
e2e_start_xlbd

# ---- xlbctl simulate: the first pick's trace names its entry and that entry's cookie ----
for seed in $(seq 1 30); do
    xlbctl simulate --vip 198.18.0.100:50051 --path /xlb.test.Echo/Who --n 1 --seed "$seed" \
        --json >"$E2E_DIR/sim$seed.json" || fail "xlbctl simulate: $(cat "$E2E_DIR/sim$seed.json")"
done
python3 - "$E2E_DIR" <<'PY' || fail "xlbctl simulate's traces do not show each entry's cookie"
import json, sys
seen = {}
for seed in range(1, 31):
    t = json.load(open("%s/sim%d.json" % (sys.argv[1], seed)))["trace"]
    seen[t["route_cluster"]] = (t.get("weighted_entry"), t.get("session_cookie"),
                                t.get("session_cookie_max_age"))
want = {"a": (0, "a-session", 30), "b": (1, "xlb-session", 60), "c": (2, None, None)}
if seen != want:
    print("traces show %s, want %s" % (seen, want))
    sys.exit(1)
PY
pass "xlbctl simulate: entry a's cookie a-session (Max-Age 30), b the listener's xlb-session (60), c none"

answers() {
    grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 1 --deadline 2 |
        grep -q '"status": {"OK": 1}'
}
wait_until 50 0.2 answers || fail "no RPC through the weighted VIP succeeded"

# ---- Set-Cookie per RPC: the cookie of the entry the RPC was routed to ----
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 60)
grpc_expect "$out" 'r["status"] == {"OK": 60}'
python3 - "$out" <<'PY' || fail "Set-Cookie does not follow the weighted entry: $out"
import base64, json, sys
r = json.loads(sys.argv[1])
cluster_of = {"b1": "a", "b2": "a", "b3": "b", "b4": "c"}
seen = set()
for backend, headers in zip(r["sequence"], r["set_cookies"]):
    cluster = cluster_of[backend]
    seen.add(cluster)
    if cluster == "c":
        assert headers == [], (backend, headers)
        continue
    name, ttl = ("a-session", 30) if cluster == "a" else ("xlb-session", 60)
    assert len(headers) == 1, (backend, headers)
    pair, attrs = headers[0].split(";", 1)
    key, value = pair.split("=", 1)
    assert key == name and attrs.endswith("Path=/; Max-Age=%d" % ttl), (backend, headers)
    want = "198.18.0.2%s:50051;%s" % (backend[1:], cluster)
    assert base64.b64decode(value).decode() == want, (backend, headers, want)
assert seen == {"a", "b", "c"}, seen
PY
pass "60 cookie-less RPCs: a's get a-session (30 s) naming their backend, b's xlb-session (60 s), c's none"

# ---- the cookie an RPC reads is its entry's ----
cookie_of() { printf '%s' "$1" | base64 -w0; }
a_b2="a-session=$(cookie_of '198.18.0.22:50051;a')"
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 60 \
    --cookie-each "$a_b2")
grpc_expect "$out" 'r["status"] == {"OK": 60}'
# Routed to a: all on b2, with no Set-Cookie (the cookie's endpoint took them); to b and c:
# their own picks (b reads xlb-session, c has no filter).
grpc_expect "$out" 'r["backends"].get("b2", 0) > 0 and "b1" not in r["backends"]'
grpc_expect "$out" 'all(h == [] for b, h in zip(r["sequence"], r["set_cookies"]) if b == "b2")'
pass "an a-session cookie for b2: every RPC routed to a reaches b2 ($(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["backends"])' "$out"))"

# The listener's cookie for b2 (no cluster named) steers nothing routed to a: its filter reads
# a-session, which the RPCs lack, so round robin spreads them over b1 and b2 and each gets one.
x_b2="xlb-session=$(cookie_of '198.18.0.22:50051')"
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 60 \
    --cookie-each "$x_b2")
grpc_expect "$out" 'r["status"] == {"OK": 60}'
grpc_expect "$out" 'r["backends"].get("b1", 0) > 0'
grpc_expect "$out" 'all(len(h) == 1 and h[0].startswith("a-session=")
    for b, h in zip(r["sequence"], r["set_cookies"]) if b in ("b1", "b2"))'
pass "an xlb-session cookie for b2: RPCs routed to a ignore it ($(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["backends"])' "$out")) and get a-session"

# A60: the listener's cookie naming b2 and cluster a, read by the RPCs drawn to b, takes them
# to cluster a (b2) instead of b3: the cookie's cluster overrides the weighted draw.
x_b2_a="xlb-session=$(cookie_of '198.18.0.22:50051;a')"
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 60 \
    --cookie-each "$x_b2_a")
grpc_expect "$out" 'r["status"] == {"OK": 60}'
grpc_expect "$out" '"b3" not in r["backends"] and r["backends"].get("b2", 0) > 0'
pass "an xlb-session cookie for b2 in cluster a: no RPC reaches b3, those drawn to b go to b2 (A60: $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["backends"])' "$out"))"
e2e_stop_xlbd
