#!/usr/bin/env bash
# The L7 stream mode (issue 19: `"l7_mode": "stream"`): xlb terminates the client's HTTP/2 and
# balances every RPC, as a proxyless gRPC client would, over its own backend subchannels. Real
# gRPC peers (tools/lib/grpc_backend.py and grpc_client.py, Debian's python3-grpcio), h2load, and
# tools/lib/h2_streams.py. The splice-mode tests (test_l7_routing.sh, test_l7_session.sh,
# test_l7_outlier.sh) need a connection per RPC; here everything goes over ONE connection, which
# a per-connection binding always fails. Backends (port 50051): b1..b3 on be1..be3, b-fail on be4
# (--fail), nothing on be5 (connections refused), b-p1 on be6, b-bh on be7 (SYNs dropped by
# nftables in be7). VIPs, all 198.18.0.100, each its own listener and cluster:
#   50051 rr    b1 b2 b3, one locality: round robin; /xlb.test.Echo/ only (else no route)
#   50052 w     b1 b2 b3 in three localities weighted 1:2:3
#   50053 sess  b1 b2 b3 behind the stateful session filter (cookie xlb-session)
#   50054 od    b1 b2 b-fail with failure-percentage outlier detection
#   50055 prio  priority 0: be5 (refuses), priority 1: b-p1
#   50056 bh    priority 0: b-bh (black-holed), priority 1: b-p1
# Checked, each on one channel: the round-robin spread (every backend 15..25 of 60) and the
# 1:2:3 locality spread (240 RPCs, each backend within 5 binomial sigma); h2load -c 1 -m 32
# -n 300 reaching all three backends; per-RPC cookies each reaching their endpoint and a
# cookie-less RPC getting Set-Cookie; an endpoint ejected while the channel runs getting none
# of its later RPCs; 30 RPCs with priority 0 refusing: 0 failed, all on priority 1; priority 0
# black-holed: RPCs with a 20 s deadline succeed on priority 1 (after A56's 10 s CONNECTING
# timer); streams beyond the VIP's SETTINGS_MAX_CONCURRENT_STREAMS refused with REFUSED_STREAM;
# xlb's own trailers-only UNAVAILABLE for a path without a route, on a channel whose other RPCs
# go on succeeding; SIGTERM with two RPCs in flight (a client that reads only afterwards): the
# client gets the GOAWAY shutdown notice then the final GOAWAY, both replies arrive intact, xlb
# closes the connection and xlbd exits 0 once drained; an endpoint taken out of EDS (SIGHUP)
# under a live channel: no RPC fails and xlb closes its subchannel to it; h2load to a backend
# announcing 4 concurrent streams: more subchannels; curl with grpc-timeout 500m to a 5 s method:
# DEADLINE_EXCEEDED from xlb and the call cancelled at the backend. About 45 s.
#
# XLB_STREAM_TEST_MODE=splice runs the same checks on splice VIPs (no l7_mode key), to show
# what a per-connection binding does: it fails the first spread check. XLB_STREAM_TEST_KEEP_GOING=1
# reports every failed check and goes on to the next case (for work on the engine: which
# cases pass), failing at the end if any did.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require
FAILED=0
if [ -n "${XLB_STREAM_TEST_KEEP_GOING:-}" ]; then
    fail() {
        echo "FAIL (going on): $*" | cut -c1-2000
        FAILED=$((FAILED + 1))
    }
    # A case with a failed check ends "not ok".
    FAILED_BEFORE=0
    pass() {
        if [ "$FAILED" -gt "$FAILED_BEFORE" ]; then echo "not ok - $*"; else echo "ok - $*"; fi
        FAILED_BEFORE=$FAILED
    }
fi
command -v nft >/dev/null || fail "nft is missing (tools/setup-deps.sh installs nftables)"
MODE=${XLB_STREAM_TEST_MODE:-stream}
case $MODE in stream | splice) ;; *) fail "XLB_STREAM_TEST_MODE=$MODE: stream or splice" ;; esac

topo_create "$E2E_PREFIX" 7
xlb_write_config
e2e_edit_config '
t = "type.googleapis.com/envoy."
x = c["xlb"]
mode = "'"$MODE"'"
names = ["rr", "w", "sess", "od", "prio", "bh", "retry", "rr6", "cap"]
x["vips"] = []
for i, name in enumerate(names):
    vip = {"address": "198.18.0.100", "port": 50051 + i, "target": "xds:///" + name}
    if name == "rr6":  # the same over IPv6: client, VIP, SNAT and backends
        vip["address"], vip["port"] = "2001:2::100", 50051
    vip["l7_mode"] = mode
    x["vips"].append(vip)
router = {"name": "router", "typed_config": {"@type": t + "extensions.filters.http.router.v3.Router"}}
session = {"name": "session", "typed_config": {
    "@type": t + "extensions.filters.http.stateful_session.v3.StatefulSession",
    "session_state": {"name": "envoy.http.stateful_session.cookie", "typed_config": {
        "@type": t + "extensions.http.stateful_session.cookie.v3.CookieBasedSessionState",
        "cookie": {"name": "xlb-session", "path": "/", "ttl": "60s"}}}}}
def listener(name):
    filters = [session, router] if name == "sess" else [router]
    return {"name": name, "api_listener": {"api_listener": {
        "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        "route_config": {"name": name + "-routes", "virtual_hosts": [{"name": "echo",
            "domains": ["*"], "routes": [{"match": {"prefix": "/xlb.test.Echo/"},
                                          "route": {"cluster": name}}]}]},
        "http_filters": filters}}}
def ep(n):
    return {"endpoint": {"address": {"socket_address": {"address": "198.18.0.2%d" % n,
                                                        "port_value": 50051}}}}
def locality(zone, hosts, weight=1, priority=0):
    return {"locality": {"zone": zone}, "load_balancing_weight": weight, "priority": priority,
            "lb_endpoints": [ep(n) for n in hosts]}
eds = {"rr": [locality("a", [1, 2, 3])],
       "w": [locality("a", [1], 1), locality("b", [2], 2), locality("c", [3], 3)],
       "sess": [locality("a", [1, 2, 3])],
       "od": [locality("a", [1, 2, 4])],
       "prio": [locality("a", [5]), locality("b", [6], priority=1)],
       "bh": [locality("a", [7]), locality("b", [6], priority=1)],
       "rr6": [{"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
           {"endpoint": {"address": {"socket_address": {"address": "2001:2::2%d" % n,
                                                        "port_value": 50051}}}}
           for n in (1, 2, 3)]}],
       "cap": [{"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
           {"endpoint": {"address": {"socket_address": {"address": "198.18.0.21",
                                                        "port_value": 50052}}}}]}],
       "retry": [{"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
           {"endpoint": {"address": {"socket_address": {"address": "198.18.0.25",
                                                        "port_value": 50061}}}}, ep(1)]}]}
def cluster(name):
    cl = {"name": name, "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}}}
    if name == "od":
        cl["outlier_detection"] = {"interval": "1s", "base_ejection_time": "60s",
            "max_ejection_time": "300s", "max_ejection_percent": 50,
            "enforcing_success_rate": 0, "enforcing_failure_percentage": 100,
            "failure_percentage_threshold": 50, "failure_percentage_minimum_hosts": 3,
            "failure_percentage_request_volume": 2}
    return cl
x["static_resources"] = {"listeners": [listener(n) for n in names],
                         "clusters": [cluster(n) for n in names],
                         "endpoints": [{"cluster_name": n, "endpoints": eds[n]} for n in names]}'
check=$("$XLBD" --check --config "$E2E_DIR/bootstrap.json" 2>&1) ||
    fail "xlbd --check rejected the $MODE-mode bootstrap: $check"

# be7 drops every SYN to port 50051: connections to b-bh never complete (black hole).
ip netns exec "$E2E_PREFIX-be7" nft -f - <<'NFT' || fail "nftables rule in be7"
table inet xlbt_blackhole {
    chain input {
        type filter hook input priority 0; policy accept;
        tcp dport 50051 tcp flags & (syn | ack) == syn drop
    }
}
NFT
declare -A HOST=([b1]=1 [b2]=2 [b3]=3 [b-fail]=4 [b-p1]=6 [b-bh]=7)
declare -A BACKEND_PID=()
for name in b1 b2 b3 b-fail b-p1 b-bh; do
    flags=()
    [ "$name" != b-fail ] || flags=(--fail)
    case $name in b1 | b2 | b3) flags+=(--address "2001:2::2${HOST[$name]}") ;; esac
    grpc_backend "$E2E_PREFIX-be${HOST[$name]}" "$E2E_DIR/$name.log" --name "$name" --port 50051 \
        --address "198.18.0.2${HOST[$name]}" --echo-header cookie "${flags[@]}"
    BACKEND_PID[$name]=$GRPC_BACKEND_PID
done
# b-cap on be1:50052 announces SETTINGS_MAX_CONCURRENT_STREAMS 4 (cap's only endpoint).
grpc_backend "$E2E_PREFIX-be1" "$E2E_DIR/b-cap.log" --name b-cap --port 50052 \
    --address 198.18.0.21 --max-streams 4
# be5 refuses connections on 50051 (prio's priority 0); on 50061 an HTTP/2 server refuses
# every stream (retry's first endpoint, beside b1).
ip netns exec "$E2E_PREFIX-be5" "$GRPC_PY" "$GRPC_PEERS_DIR/h2_refuser.py" --address 198.18.0.25 \
    --port 50061 --lifetime 300 >"$E2E_DIR/refuser.log" 2>&1 &
RUN_PIDS+=("$!")
wait_until 100 0.1 grep -qx ready "$E2E_DIR/refuser.log" || fail "h2_refuser did not start"
e2e_start_xlbd

vip() { echo "198.18.0.100:$((50051 + $1))"; } # 0 rr, 1 w, 2 sess, 3 od, 4 prio, 5 bh, 6 retry, 8 cap
VIP6="[2001:2::100]:50051"                          # rr6: b1..b3 over IPv6
client() { grpc_client "$E2E_PREFIX-client" "$@"; }
logged() { grpc_rpcs "$E2E_DIR/$1.log"; }

# The first SYNs may meet backends xlb is still resolving: retried, bounded.
answers() { client --target "$(vip 0)" --count 1 --deadline 2 | grep -q '"status": {"OK": 1}'; }
wait_until 50 0.2 answers || fail "no RPC through the $MODE VIP succeeded"
# Every subchannel of rr connected (a stream VIP connects every endpoint of the priority its
# first RPC needs): a few RPCs on a channel of their own first.
client --target "$(vip 0)" --count 6 >/dev/null
pass "an RPC through the $MODE VIP reaches a backend"

# ---- round robin: one channel, 60 RPCs ----
out=$(client --target "$(vip 0)" --count 60)
grpc_expect "$out" 'r["status"] == {"OK": 60}'
# Round robin over three READY endpoints gives 20 each; 15..25 leaves room for the pick's
# starting point and nothing else. A per-connection binding gives 60, 0, 0.
grpc_expect "$out" 'all(15 <= r["backends"].get(b, 0) <= 25 for b in ("b1", "b2", "b3"))'
pass "one channel, 60 RPCs: round robin over three backends $(grpc_field "$out" 'r["backends"]')"

# ---- the stream engine's TCP in xlbctl tcp and counters ----
if [ "$MODE" = stream ]; then
    xlbctl --json tcp | python3 -c '
import json, sys
r = json.load(sys.stdin)
est = {c["remote"] for c in r["connections"] if c["state"] == "ESTABLISHED"}
assert {"198.18.0.2%d:50051" % n for n in (1, 2, 3)} <= est, r' ||
        fail "xlbctl tcp does not list the subchannels to b1..b3: $(xlbctl tcp)"
    [ "$(counter tcp.active_opens)" -ge 3 ] && [ "$(counter tcp.passive_opens)" -ge 1 ] ||
        fail "the stream engine's TCP opens are not counted: $(xlbctl counters)"
    pass "xlbctl tcp lists the subchannels to b1..b3 and xlbctl counters counts the engine's opens"
fi

# ---- weighted localities 1:2:3: one channel, 240 RPCs ----
out=$(client --target "$(vip 1)" --count 240)
check=$( (python3 - "$out" <<'PY'
import json, math, sys
r = json.loads(sys.argv[1])
n, b = 240, r["backends"]
if r["status"] != {"OK": n}:
    sys.exit(f"statuses: {r['status']} {r['details']}")
for name, p in (("b1", 1 / 6), ("b2", 2 / 6), ("b3", 3 / 6)):
    sigma = math.sqrt(n * p * (1 - p))
    low, high = math.ceil(n * p - 5 * sigma), math.floor(n * p + 5 * sigma)
    if not max(low, 1) <= b.get(name, 0) <= high:
        sys.exit(f"{name} {b.get(name, 0)} of {n}, expected {max(low, 1)}..{high}: {b}")
print(b)
PY
) 2>&1) || fail "one channel over localities 1:2:3: $check"
pass "one channel, 240 RPCs over localities weighted 1:2:3: $check"

# ---- h2load: one connection, 32 streams at a time, 300 requests ----
grpc_frame "$E2E_DIR/frame.bin"
declare -A before=()
for name in b1 b2 b3; do before[$name]=$(logged "$name"); done
out=$(in_client timeout 120 h2load -n 300 -c 1 -m 32 -d "$E2E_DIR/frame.bin" \
    -H 'content-type: application/grpc' -H 'te: trailers' \
    "http://$(vip 0)/xlb.test.Echo/Who" 2>&1) || fail "h2load: $out"
grep -q "requests: 300 total, 300 started, 300 done, 300 succeeded, 0 failed, 0 errored" <<<"$out" ||
    fail "h2load did not complete 300 requests: $(grep -E '^requests|^status' <<<"$out")"
spread=""
for name in b1 b2 b3; do
    got=$(($(logged "$name") - before[$name]))
    spread+="$name $got "
    # Round robin gives each about 100; 50 is far from both that and a binding's 0.
    [ "$got" -ge 50 ] || fail "h2load -c 1 -m 32: $name got $got of 300 ($spread)"
done
pass "h2load -c 1 -m 32 -n 300: all succeeded, spread $spread"

# ---- a backend's SETTINGS_MAX_CONCURRENT_STREAMS: more subchannels, not a queue ----
# h2load keeps 32 streams open on one connection to cap, whose only endpoint takes 4 at a
# time per connection: xlb opens more subchannels to it (up to 8 per worker) rather than hold
# RPCs back in nghttp2's queue. The backend logs each RPC with its peer's address and port.
if [ "$MODE" = stream ]; then
    extra_before=$(counter events.stream_subchannels_extra)
    out=$(in_client timeout 120 h2load -n 200 -c 1 -m 32 -d "$E2E_DIR/frame.bin" \
        -H 'content-type: application/grpc' -H 'te: trailers' \
        "http://$(vip 8)/xlb.test.Echo/Who" 2>&1) || fail "h2load to cap: $out"
    grep -q "requests: 200 total, 200 started, 200 done, 200 succeeded, 0 failed, 0 errored" <<<"$out" ||
        fail "h2load to cap did not complete 200 requests: $(grep -E '^requests|^status' <<<"$out")"
    conns=$(grep -oE '^rpc /xlb.test.Echo/Who ipv4:198\.18\.[0-9.]+:[0-9]+' "$E2E_DIR/b-cap.log" | sort -u | wc -l)
    [ "$conns" -ge 2 ] || fail "b-cap saw its 200 RPCs over $conns connection(s)"
    [ "$(counter events.stream_subchannels_extra)" -gt "$extra_before" ] ||
        fail "xlb counted no extra subchannel"
    pass "h2load -c 1 -m 32 -n 200 to a backend announcing 4 concurrent streams: all succeeded, over $conns subchannels"
fi

# ---- grpc-timeout on a forwarded RPC ----
# curl does not end a call at its grpc-timeout; xlb does, as a gRPC client would: the
# backend's Slow method (5 s) sees its call end, and curl gets DEADLINE_EXCEEDED.
if [ "$MODE" = stream ]; then
    slow_cancels() { cat "$E2E_DIR/b1.log" "$E2E_DIR/b2.log" "$E2E_DIR/b3.log" | grep -c '^cancel /xlb.test.Echo/Slow ' || true; }
    cancels_before=$(slow_cancels)
    deadline_before=$(counter events.stream_rpcs_deadline_exceeded)
    out=$(in_client timeout 30 curl -s -i --http2-prior-knowledge --max-time 20 \
        -H 'content-type: application/grpc' -H 'te: trailers' -H 'grpc-timeout: 500m' \
        --data-binary @"$E2E_DIR/frame.bin" "http://$(vip 0)/xlb.test.Echo/Slow" 2>&1) || true
    grep -qi '^grpc-status: 4' <<<"$out" || fail "curl got no DEADLINE_EXCEEDED: $out"
    cancelled() { [ "$(slow_cancels)" -gt "$cancels_before" ]; }
    wait_until 50 0.1 cancelled || fail "the backend's Slow call was not cancelled"
    # The backend gets what is left of the deadline and may end the call itself a little
    # earlier (gRPC C-core reads its clock in steps): DEADLINE_EXCEEDED either way, as a gRPC
    # client sees it. Which one ended it is printed; xlb's own path is the packet test's
    # (forwarded_rpc_gets_deadline_exceeded).
    if grep -q 'xlb: deadline exceeded' <<<"$out"; then
        [ "$(counter events.stream_rpcs_deadline_exceeded)" -gt "$deadline_before" ] ||
            fail "xlb counted no deadline exceeded"
        who="xlb"
    else
        who="the backend, its copy of the deadline first"
    fi
    pass "curl, grpc-timeout 500m, a 5 s method: DEADLINE_EXCEEDED (from $who), the backend's call over"
fi

# ---- session cookies per RPC (A55) on one channel ----
cookie_of() { echo "xlb-session=$(printf '198.18.0.2%s:50051;sess' "$1" | base64 -w0)"; }
out=$(client --target "$(vip 2)" --count 24 --cookie-each "$(cookie_of 1)" \
    --cookie-each "$(cookie_of 2)" --cookie-each "$(cookie_of 3)" --cookie-each '')
grpc_expect "$out" 'r["status"] == {"OK": 24}'
# RPC i carries b1's, b2's, b3's cookie or none, in turn: the first three reach their backend.
grpc_expect "$out" 'all(r["sequence"][i] == "b%d" % (i % 4 + 1) for i in range(24) if i % 4 != 3)'
grpc_expect "$out" 'r["echo"]["cookie"]["(absent)"] == 6'
# Each cookie-less RPC gets a Set-Cookie (and only those: the others named a usable endpoint).
grpc_expect "$out" 'r["set_cookie"] == 6'
# The last one (RPC 23) names the backend that served it, with the filter's path and ttl.
grpc_expect "$out" '(r["set_cookie_header"].endswith("; HttpOnly; Path=/; Max-Age=60") and
    __import__("base64").b64decode(r["cookie"].split("=", 1)[1]).decode() ==
    "198.18.0.2%s:50051;sess" % r["sequence"][23][1:])'
pass "one channel, 24 RPCs with b1's, b2's, b3's or no cookie in turn: each reaches its cookie's backend, each cookie-less one gets a Set-Cookie naming its own"

# ---- outlier ejection on a live channel ----
ejected() {
    xlbctl --json endpoints od | python3 -c '
import json, sys
sys.exit(0 if any(e["address"] == "198.18.0.24:50051" and e.get("ejected") for e in json.load(sys.stdin)) else 1)'
}
! ejected || fail "b-fail ejected before any traffic: $(xlbctl endpoints od)"
# One channel, 200 RPCs 0.02 s apart (about 5 s; 13 RPCs per endpoint and second, 2 needed
# in a 1 s interval, so a machine 6 times slower still ejects): b-fail fails a third of them
# until a sweep ejects it (for 60 s, longer than the run), then gets none.
out=$(client --target "$(vip 3)" --count 200 --interval 0.02 --deadline 3)
ejected || fail "b-fail not ejected during the channel's 200 RPCs ($out): $(xlbctl endpoints od)"
grpc_expect "$out" 'set(r["details"]) <= {"UNAVAILABLE: backend b-fail fails on purpose"}'
grpc_expect "$out" 'r["status"].get("UNAVAILABLE", 0) >= 1'
grpc_expect "$out" 'r["sequence"][-40:] == [s for s in r["sequence"][-40:] if s in ("b1", "b2")]'
pass "one channel opened before b-fail's ejection: $(grpc_field "$out" 'r["status"]') before, its last 40 RPCs only on b1 and b2 $(grpc_field "$out" 'r["backends"]')"

# ---- priorities (A56) ----
out=$(client --target "$(vip 4)" --count 30)
grpc_expect "$out" 'r["status"] == {"OK": 30} and r["backends"] == {"b-p1": 30}'
pass "priority 0 refusing connections: one channel, 30 RPCs, 0 failed, all on priority 1 (b-p1)"
# Black-holed: the pick waits while priority 0 is CONNECTING; A56's 10 s timer fails over.
out=$(client --target "$(vip 5)" --count 5 --deadline 20)
grpc_expect "$out" 'r["status"] == {"OK": 5} and r["backends"] == {"b-p1": 5}'
[ "$(logged b-bh)" -eq 0 ] || fail "b-bh, behind dropped SYNs, logged RPCs"
pass "priority 0 black-holed: 5 RPCs with a 20 s deadline all succeed on priority 1 (b-p1)"

# ---- stream limit: REFUSED_STREAM beyond SETTINGS_MAX_CONCURRENT_STREAMS ----
h2s() { in_client timeout 40 "$GRPC_PY" "$E2E_SOURCE/tools/lib/h2_streams.py" --target "$(vip 0)" "$@"; }
out=$(h2s --streams 1 --seconds 1) || fail "h2_streams: $out"
limit=$(grpc_field "$out" 'r["max_concurrent_streams"]')
if [[ $limit =~ ^[0-9]+$ ]] && [ "$limit" -le 995 ]; then
    refused_before=$(counter events.stream_streams_refused)
    out=$(h2s --streams $((limit + 5)) --seconds 5) || fail "h2_streams: $out"
    grpc_expect "$out" 'r["rst"].get("REFUSED_STREAM") == 5 and r["refused_streams"] == [2 * i + 1 for i in range('"$limit"', '"$limit"' + 5)]'
    grpc_expect "$out" 'r["goaway"] is None'
    if [ "$MODE" = stream ]; then
        [ $(($(counter events.stream_streams_refused) - refused_before)) -eq 5 ] ||
            fail "xlb did not count the 5 refused streams"
    fi
    pass "$((limit + 5)) streams opened at once against a limit of $limit: the last 5 get REFUSED_STREAM, no GOAWAY"
else
    fail "xlb announces no usable SETTINGS_MAX_CONCURRENT_STREAMS: $out"
fi

# ---- IPv6: client, VIP, subchannels from the IPv6 SNAT address ----
# (grpcio percent-encodes the brackets of an IPv6 peer.)
v6_peers() { grep -cE "^rpc /xlb.test.Echo/Who ipv6:(\[|%5B)2001:2::11(\]|%5D)" "$E2E_DIR/$1.log" || true; }
v6_before=$(($(v6_peers b1) + $(v6_peers b2) + $(v6_peers b3)))
out=$(client --target "$VIP6" --count 30)
grpc_expect "$out" 'r["status"] == {"OK": 30} and sorted(r["backends"].values()) == [10, 10, 10]'
[ $(($(v6_peers b1) + $(v6_peers b2) + $(v6_peers b3) - v6_before)) -eq 30 ] ||
    fail "the backends did not log 30 RPCs from xlb's IPv6 SNAT address 2001:2::11"
pass "one IPv6 channel, 30 RPCs: round robin over b1..b3, each reached over IPv6 from the SNAT address"

# ---- transparent retry: a refused stream is sent again (A6) ----
# retry's endpoints: h2_refuser (every stream REFUSED_STREAM) and b1, round robin. Each RPC the
# refuser turns down goes to b1 instead: none fails.
if [ "$MODE" = stream ]; then
    retried_before=$(counter events.stream_rpcs_retried)
    b1_before=$(logged b1)
    out=$(client --target "$(vip 6)" --count 20)
    grpc_expect "$out" 'r["status"] == {"OK": 20} and r["backends"] == {"b1": 20}'
    refused=$(grep -c '^refused ' "$E2E_DIR/refuser.log" || true)
    [ "$refused" -ge 5 ] || fail "the refuser turned down $refused streams, expected about 10"
    retried=$(($(counter events.stream_rpcs_retried) - retried_before))
    [ "$retried" -eq "$refused" ] || fail "$refused streams refused, $retried RPCs retried"
    [ $(($(logged b1) - b1_before)) -eq 20 ] || fail "b1 did not log the channel's 20 RPCs"
    pass "one channel, 20 RPCs over a refusing server and b1: all OK on b1, the $refused refused ones retried"
fi

# ---- a backend stopping gracefully under a live channel ----
# b2 gets SIGTERM while one channel sends an RPC every 0.02 s over b1..b3: gRPC's server says
# GOAWAY and finishes what it took; xlb sends it nothing more, so no RPC fails.
if [ "$MODE" = stream ]; then
    goaways_before=$(counter events.stream_subchannel_goaways)
    client --target "$(vip 0)" --count 150 --interval 0.02 --deadline 3 >"$E2E_DIR/goaway.out" &
    channel=$!
    RUN_PIDS+=("$channel")
    b2_seen() { [ "$(logged b2)" -ge "$1" ]; }
    b2_before=$(logged b2)
    wait_until 100 0.1 b2_seen $((b2_before + 10)) || fail "b2 got no RPC of the channel"
    kill -TERM "${BACKEND_PID[b2]}"
    wait "${BACKEND_PID[b2]}" || fail "b2 did not stop cleanly"
    wait "$channel" || fail "the channel's client failed: $(cat "$E2E_DIR/goaway.out")"
    out=$(cat "$E2E_DIR/goaway.out")
    grpc_expect "$out" 'r["status"] == {"OK": 150}'
    grpc_expect "$out" 'set(r["sequence"][-30:]) <= {"b1", "b3"}'
    [ "$(counter events.stream_subchannel_goaways)" -gt "$goaways_before" ] ||
        fail "xlb counted no GOAWAY from b2"
    pass "b2 stopped gracefully under a live channel: all 150 RPCs OK, the last 30 on b1 and b3"
fi

# ---- xlb's own trailers-only UNAVAILABLE (no route) on a working channel ----
out=$(client --target "$(vip 0)" --count 12 --path-each /xlb.test.Echo/Who --path-each /other.Svc/X)
grpc_expect "$out" 'r["status"] == {"OK": 6, "UNAVAILABLE": 6}'
grpc_expect "$out" 'r["sequence"][1::2] == ["UNAVAILABLE"] * 6 and all(s.startswith("b") for s in r["sequence"][0::2])'
grpc_expect "$out" 'len(r["details"]) == 1 and all(k.startswith("UNAVAILABLE: ") and len(k) > len("UNAVAILABLE: ") for k in r["details"])'
grpc_expect "$out" 'not any(w in k for k in r["details"] for w in ("failed to connect", "Socket closed", "Connection reset"))'
for name in b1 b2 b3; do
    [ "$(grpc_rpcs "$E2E_DIR/$name.log" /other.Svc/X)" -eq 0 ] || fail "/other.Svc/X reached $name"
done
pass "one channel alternating routed and unrouted RPCs: 6 x xlb's UNAVAILABLE ($(grpc_field "$out" 'list(r["details"])[0]')), the 6 others OK"

# ---- an endpoint leaving EDS under a live channel ----
# b3 is taken out of every cluster that lists it (rr, w, sess) by a SIGHUP while one channel
# sends an RPC every 0.02 s over rr: as gRPC drops the subchannel of an address it no longer
# has, xlb says GOAWAY on its subchannel to b3 and closes it once its RPCs are done. No RPC
# fails, the last ones go to b1 only (b2 stopped above), and b3 is left with no connection.
if [ "$MODE" = stream ]; then
    # (grpcio's sockets are dual-stack: IPv4 peers show as ::ffff:198.18.x.y)
    b3_conns() { ip netns exec "$E2E_PREFIX-be3" ss -Htn state established '( sport = :50051 )' | grep -c '198\.18\.' || true; }
    no_b3_conns() { [ "$(b3_conns)" -eq 0 ]; }
    applied() { xlbctl --json status | python3 -c 'import json, sys; print(json.load(sys.stdin)["reload"]["applied"])'; }
    [ "$(b3_conns)" -ge 1 ] || fail "xlb has no subchannel to b3 before it leaves"
    retired_before=$(counter events.stream_subchannels_retired)
    applied_before=$(applied)
    client --target "$(vip 0)" --count 150 --interval 0.02 --deadline 3 >"$E2E_DIR/leave.out" &
    channel=$!
    RUN_PIDS+=("$channel")
    b3_seen() { [ "$(logged b3)" -ge "$1" ]; }
    wait_until 100 0.1 b3_seen $(($(logged b3) + 10)) || fail "b3 got no RPC of the channel"
    e2e_edit_config '
for e in c["xlb"]["static_resources"]["endpoints"]:
    for loc in e["endpoints"]:
        loc["lb_endpoints"] = [x for x in loc["lb_endpoints"]
                               if x["endpoint"]["address"]["socket_address"]["address"] != "198.18.0.23"]
    e["endpoints"] = [loc for loc in e["endpoints"] if loc["lb_endpoints"]]'
    kill -HUP "$XLBD_PID"
    reloaded() { [ "$(applied)" -gt "$applied_before" ]; }
    wait_until 50 0.1 reloaded || fail "the reload without b3 was not applied: $(xlbctl status)"
    wait "$channel" || fail "the channel's client failed: $(cat "$E2E_DIR/leave.out")"
    out=$(cat "$E2E_DIR/leave.out")
    grpc_expect "$out" 'r["status"] == {"OK": 150}'
    grpc_expect "$out" 'set(r["sequence"][-30:]) == {"b1"}'
    wait_until 100 0.1 no_b3_conns ||
        fail "b3 still has $(b3_conns) connection(s) from xlb after leaving the configuration"
    [ "$(counter events.stream_subchannels_retired)" -gt "$retired_before" ] ||
        fail "xlb counted no retired subchannel"
    pass "b3 left EDS under a live channel: all 150 RPCs OK, the last 30 on b1, xlb closed its subchannel to b3"
fi

if [ "$MODE" = stream ]; then
    # ---- SIGTERM: GOAWAY, the RPCs in flight finish, then xlbd exits by itself ----
    # A client asks two 1 MiB replies and reads nothing (they wait in xlb's TCP and HTTP/2
    # buffers), xlbd gets SIGTERM, then the client reads to the end of the connection.
    bulk_before=$(($(grpc_rpcs "$E2E_DIR/b1.log" /xlb.test.Echo/Bulk) + $(grpc_rpcs "$E2E_DIR/b2.log" /xlb.test.Echo/Bulk) + $(grpc_rpcs "$E2E_DIR/b3.log" /xlb.test.Echo/Bulk)))
    bulk_seen() {
        [ $(($(grpc_rpcs "$E2E_DIR/b1.log" /xlb.test.Echo/Bulk) + $(grpc_rpcs "$E2E_DIR/b2.log" /xlb.test.Echo/Bulk) + $(grpc_rpcs "$E2E_DIR/b3.log" /xlb.test.Echo/Bulk) - bulk_before)) -ge 2 ]
    }
    in_client "$GRPC_PY" "$GRPC_PEERS_DIR/h2_slow_reader.py" --target "$(vip 0)" --streams 2 \
        --bulk-down $((1 << 20)) --go "$E2E_DIR/drain.go" --stalled "$E2E_DIR/drain.stalled" \
        --seconds 40 --until-close >"$E2E_DIR/drain.out" 2>&1 &
    reader=$!
    RUN_PIDS+=("$reader")
    wait_until 100 0.2 test -f "$E2E_DIR/drain.stalled" || fail "the reader sent nothing: $(cat "$E2E_DIR/drain.out")"
    wait_until 100 0.2 bulk_seen || fail "the reader's 2 RPCs did not reach the backends"
    kill -TERM "$XLBD_PID"
    wait_until 50 0.2 grep -Eq "draining [0-9]+ stream client connections" "$E2E_DIR/xlbd.log" ||
        fail "xlbd did not drain on SIGTERM: $(tail -n 3 "$E2E_DIR/xlbd.log")"
    touch "$E2E_DIR/drain.go"
    wait "$reader" || fail "reader: $(cat "$E2E_DIR/drain.out")"
    out=$(cat "$E2E_DIR/drain.out")
    # The shutdown notice (2^31-1), then the GOAWAY naming stream 3, the last the session took.
    grpc_expect "$out" 'r["intact"] == 2 and r["ended"] == 2 and r["rst"] == {} and r["goaway"] == "NO_ERROR" and r["goaways"] == [2147483647, 3] and r["closed"]'
    rc=0
    wait "$XLBD_PID" || rc=$?
    [ $rc -eq 0 ] || fail "xlbd exited with $rc after draining"
    [ ! -e "$E2E_DIR/xlbd.sock" ] || fail "xlbd left its control socket behind"
    grep -q "drained: no stream client connection left" "$E2E_DIR/xlbd.log" ||
        fail "xlbd did not say it drained: $(tail -n 3 "$E2E_DIR/xlbd.log")"
    pass "SIGTERM with 2 RPCs in flight: GOAWAY (notice, then last stream 3), both replies intact, the connection closed, xlbd exited 0 once drained"
else
    e2e_stop_xlbd
    pass "clean exit"
fi
[ "$FAILED" -eq 0 ] || { echo "FAIL: $FAILED check(s) failed (XLB_STREAM_TEST_KEEP_GOING)"; exit 1; }
