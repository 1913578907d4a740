#!/usr/bin/env bash
# Self-check of the gRPC test peers without xlb: tools/lib/grpc_backend.py and grpc_client.py
# (Debian's python3-grpcio) talk directly over a veth pair between two network namespaces of
# this script's own (198.18.1.1 / 2001:2:0:1::1 client, 198.18.1.2 / 2001:2:0:1::2 servers).
# Checked: replies name their backend over IPv4 and IPv6; --per-connection makes one TCP
# connection per RPC and the default one for all (as the backends see their peers); header
# metadata reaches the backend; the cookie jar keeps a set-cookie across runs and sends it
# back; a --fail backend gives UNAVAILABLE; an unknown method UNIMPLEMENTED; nothing listening
# UNAVAILABLE in bounded time; curl --http2-prior-knowledge and h2load with a gRPC POST get
# answers from the real handler (the command lines the L7 e2e tests use through xlb); per-RPC
# paths and cookies on one channel (--path-each, --cookie-each); Bulk RPCs
# of 256 KiB each way arrive intact; tools/lib/h2_streams.py opening 10 streams at once against
# nghttpd's limit of 4 sees streams 9..19 refused (REFUSED_STREAM); every backend exits 0 on
# SIGTERM. Cleanup kills what it started by PID and deletes the namespaces.
# Helpers: tools/lib/grpc_peers.sh.
# meson test: e2e grpc_peers.
set -euo pipefail
SRC=${XLB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tools/lib/harness.sh"
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root (network namespaces)"; exit 77; fi
. "$SRC/tools/lib/grpc_peers.sh"
grpc_require

NSC="xlbgrpc$$-c"
NSS="xlbgrpc$$-s"
DIR=$(mktemp -d "/tmp/xlb-grpc-peers-XXXXXX")
cleanup() {
    local rc=$?
    if [ $rc -ne 0 ]; then
        for log in "$DIR"/*.log; do [ -f "$log" ] && { echo "--- $log"; tail -n 5 "$log"; }; done
    fi
    local pid
    for pid in "${RUN_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for pid in "${RUN_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    ip netns del "$NSC" 2>/dev/null || true
    ip netns del "$NSS" 2>/dev/null || true
    rm -rf "$DIR"
    exit $rc
}
trap cleanup EXIT

ip netns add "$NSC"
ip netns add "$NSS"
ip -n "$NSC" link add eth0 type veth peer name eth0 netns "$NSS"
for ns in "$NSC" "$NSS"; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
done
ip -n "$NSC" addr add 198.18.1.1/24 dev eth0
ip -n "$NSS" addr add 198.18.1.2/24 dev eth0
ip -n "$NSC" -6 addr add 2001:2:0:1::1/64 dev eth0 nodad
ip -n "$NSS" -6 addr add 2001:2:0:1::2/64 dev eth0 nodad

COOKIE='xlb-session=MTk4LjE4LjEuMjo1MDA1MTtibHVl'
# backend NAME ARGS...: one backend in the server namespace, its log $DIR/NAME.log.
backend() {
    local name=$1
    shift
    grpc_backend "$NSS" "$DIR/$name.log" --lifetime 300 "$@"
    eval "PID_$name=$GRPC_BACKEND_PID"
}
backend b1 --name b1 --port 50051 --address 198.18.1.2 --address 2001:2:0:1::2 \
    --echo-header x-tier --echo-header cookie --set-cookie "$COOKIE; HttpOnly; Path=/; Max-Age=60"
backend b2 --name b2 --port 50052 --address 198.18.1.2
backend bfail --name bfail --port 50053 --address 198.18.1.2 --fail
pass "three gRPC backends serve in their namespace (one on IPv4 and IPv6)"

client() { grpc_client "$NSC" "$@"; }
expect() { grpc_expect "$@"; }
# The distinct client connections (peer addresses) a backend's log shows.
peers() { grep '^rpc /xlb.test.Echo/Who ' "$DIR/$1.log" | awk '{print $3}' | sort -u | wc -l; }

out=$(client --target 198.18.1.2:50052 --count 12 --per-connection)
expect "$out" 'r["backends"] == {"b2": 12} and r["status"] == {"OK": 12} and r["rpcs"] == 12'
[ "$(peers b2)" -eq 12 ] || fail "--per-connection: b2 saw $(peers b2) connections for 12 RPCs"
out=$(client --target 198.18.1.2:50052 --count 12)
expect "$out" 'r["backends"] == {"b2": 12} and r["sequence"] == ["b2"] * 12'
[ "$(peers b2)" -eq 13 ] || fail "one channel: b2 saw $(($(peers b2) - 12)) connections for 12 RPCs"
pass "--per-connection opens one connection per RPC (12), the default one for all (1)"

out=$(client --target '[2001:2:0:1::2]:50051' --count 5 --header x-tier=gold)
expect "$out" 'r["backends"] == {"b1": 5} and r["echo"]["x-tier"] == {"gold": 5}'
expect "$out" 'r["echo"]["cookie"] == {"(absent)": 5} and r["set_cookie"] == 5'
grep -q '^rpc /xlb.test.Echo/Who ipv6:' "$DIR/b1.log" || fail "b1 saw no IPv6 peer"
pass "IPv6 target; header metadata x-tier=gold reaches the backend on each of 5 RPCs"

jar=$DIR/jar.json
out=$(client --target 198.18.1.2:50051 --count 1 --cookie-jar "$jar")
expect "$out" 'r["set_cookie"] == 1 and r["cookie"] == "'"$COOKIE"'"'
expect "$out" 'r["set_cookie_header"] == "'"$COOKIE"'; HttpOnly; Path=/; Max-Age=60"'
out=$(client --target 198.18.1.2:50051 --count 5 --per-connection --cookie-jar "$jar")
expect "$out" 'r["set_cookie"] == 0 and r["echo"]["cookie"] == {"'"$COOKIE"'": 5}'
# A cookie the backend does not know brings a set-cookie again, which replaces it in the jar.
out=$(client --target 198.18.1.2:50051 --count 3 --cookie xlb-session=c3RhbGU= --cookie-jar "$jar")
expect "$out" 'r["set_cookie"] == 1 and r["echo"]["cookie"] == {"xlb-session=c3RhbGU=": 1, "'"$COOKIE"'": 2}'
pass "the cookie jar keeps a set-cookie across runs and sends NAME=VALUE back as cookie metadata"

# Per-RPC paths and cookies on one channel.
out=$(client --target 198.18.1.2:50051 --count 6 --path-each /xlb.test.Echo/Who --path-each /other.Svc/X \
    --cookie-each a=1 --cookie-each '' --cookie-each b=2 --interval 0.01)
expect "$out" 'r["sequence"] == ["b1", "UNIMPLEMENTED"] * 3'
expect "$out" 'r["echo"]["cookie"] == {"a=1": 1, "b=2": 1, "(absent)": 1}'
pass "--path-each and --cookie-each: RPC i takes the i-th path and cookie (\"\" none) on one channel"

out=$(client --target 198.18.1.2:50053 --count 6 --per-connection)
expect "$out" 'r["backends"] == {} and r["status"] == {"UNAVAILABLE": 6}'
expect "$out" 'r["details"] == {"UNAVAILABLE: backend bfail fails on purpose": 6}'
pass "a --fail backend answers UNAVAILABLE: $(grpc_field "$out" 'r["status"]')"

out=$(client --target 198.18.1.2:50052 --count 3 --path /other.Svc/X)
expect "$out" 'r["status"] == {"UNIMPLEMENTED": 3}'
[ "$(grpc_rpcs "$DIR/b2.log" /other.Svc/X)" -eq 3 ] || fail "b2 did not log the unknown method"
out=$(client --target 198.18.1.2:50059 --count 3 --deadline 2)
expect "$out" 'r["status"] == {"UNAVAILABLE": 3} and r["elapsed_s"] < 10'
pass "an unknown method is UNIMPLEMENTED (and logged); nothing listening is UNAVAILABLE at once"

# A gRPC request by hand (see grpc_frame).
grpc_frame "$DIR/frame.bin"
in_c() { ip netns exec "$NSC" "$@"; }
in_c curl -sS --max-time 5 --http2-prior-knowledge -D "$DIR/curl.headers" -o "$DIR/curl.body" \
    -H 'content-type: application/grpc' -H 'te: trailers' --data-binary @"$DIR/frame.bin" \
    http://198.18.1.2:50051/xlb.test.Echo/Who || fail "curl failed"
head -n 1 "$DIR/curl.headers" | grep -q '^HTTP/2 200' || fail "curl: $(cat "$DIR/curl.headers")"
grep -q '^grpc-status: 0' "$DIR/curl.headers" || fail "curl got no grpc-status 0: $(cat "$DIR/curl.headers")"
grep -q 'b1' "$DIR/curl.body" || fail "curl body: $(od -c "$DIR/curl.body")"
before=$(grpc_rpcs "$DIR/b2.log")
out=$(in_c timeout 60 h2load -n 200 -c 4 -d "$DIR/frame.bin" -H 'content-type: application/grpc' \
    -H 'te: trailers' http://198.18.1.2:50052/xlb.test.Echo/Who 2>&1) || fail "h2load: $out"
grep -q "requests: 200 total, 200 started, 200 done, 200 succeeded, 0 failed, 0 errored" <<<"$out" ||
    fail "h2load: $(grep -E '^requests|^status' <<<"$out")"
after=$(grpc_rpcs "$DIR/b2.log")
[ $((after - before)) -eq 200 ] || fail "h2load's 200 requests reached the handler $((after - before)) times"
pass "curl --http2-prior-knowledge gets 200, grpc-status 0 and b1's reply; h2load: 200 of 200 reach the handler"

# Bulk RPCs: 256 KiB each way, checked byte for byte by the client against the backend's hash.
out=$(client --target 198.18.1.2:50052 --count 4 --bulk-up 262144 --bulk-down 262144)
expect "$out" 'r["status"] == {"OK": 4} and r["bulk_intact"] == 4 and r["bulk_corrupt"] == 0'
[ "$(grep -c '^rpc /xlb.test.Echo/Bulk .* bytes=262152$' "$DIR/b2.log")" -eq 4 ] ||
    fail "b2 did not log 4 Bulk calls of 262152 bytes: $(grep Bulk "$DIR/b2.log")"
pass "4 Bulk RPCs of 256 KiB each way arrive intact (hashes checked)"

# h2_streams.py ignores the server's stream limit: nghttpd announcing 4 refuses the rest
# (grpc-core closes the connection instead, so nghttpd, with nghttp2's behaviour, is the peer).
# Started without timeout(1): $! must be nghttpd itself, for cleanup's kill to reach it (a
# killed timeout leaves its child running).
mkdir -p "$DIR/www"
ip netns exec "$NSS" nghttpd --no-tls -m 4 -d "$DIR/www" --address 198.18.1.2 50054 \
    >"$DIR/nghttpd.log" 2>&1 &
RUN_PIDS+=("$!")
nghttpd_up() { ip netns exec "$NSS" ss -Hltn 'sport = :50054' | grep -q LISTEN; }
xlb_wait_until 50 0.1 nghttpd_up || fail "nghttpd did not listen: $(cat "$DIR/nghttpd.log")"
out=$(in_c timeout 20 "$GRPC_PY" "$GRPC_PEERS_DIR/h2_streams.py" --target 198.18.1.2:50054 --streams 10 --path /x)
expect "$out" 'r["max_concurrent_streams"] == 4 and r["rst"].get("REFUSED_STREAM") == 6'
expect "$out" 'r["refused_streams"] == [9, 11, 13, 15, 17, 19]'
pass "h2_streams.py: 10 streams at once against nghttpd's limit of 4: streams 9..19 get REFUSED_STREAM"

for name in b1 b2 bfail; do
    pid_var=PID_$name
    kill -TERM "${!pid_var}"
    rc=0
    wait "${!pid_var}" || rc=$?
    [ $rc -eq 0 ] || fail "backend $name exited with $rc after SIGTERM"
done
pass "every backend exits 0 on SIGTERM"
