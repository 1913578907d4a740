#!/usr/bin/env bash
# The demo: xlb's main job on its embedded default configuration (tools/demo/bootstrap.json).
# Builds what is missing, creates a client, three backends and a switch in network namespaces,
# starts xlbd on its own host with DPDK's af_packet driver, drives real traffic from the
# client, prints what xlb saw, and removes everything again:
#   - ARP, ND and ICMP echo for the VIPs;
#   - 60 TCP connections through the full NAT of the L4 VIP 198.18.0.100:9000;
#   - gRPC through the L7 VIP 198.18.0.100:8080 with real gRPC peers (Debian's python3-grpcio:
#     tools/lib/grpc_backend.py and grpc_client.py): load balancing over three backends,
#     per-RPC balancing of one channel through the stream-mode VIP 198.18.0.100:8081 and
#     per-RPC session cookies on such a channel,
#     cookie-based session affinity, and the outlier ejection of the backend that fails;
#   - xlbctl endpoints, simulate, status, config dump and counters.
# Each step that does not behave ends the demo with "FAIL: ..." and exit status 1.
set -euo pipefail

XLB_SOURCE=$(cd "$(dirname "$0")/.." && pwd)
XLB_BUILD=${XLB_BUILD:-$XLB_SOURCE/build}
. "$XLB_SOURCE/tools/lib/topology.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "demo: run as root (it creates network namespaces)" >&2
    exit 1
fi
"$XLB_SOURCE/tools/setup-deps.sh"
[ -f "$XLB_BUILD/build.ninja" ] || meson setup "$XLB_BUILD" "$XLB_SOURCE" >/dev/null
ninja -C "$XLB_BUILD" >/dev/null

RUN_PREFIX="xlbdemo$$"
RUN_DIR=$(mktemp -d "/tmp/xlb-demo-$$-XXXXXX")
. "$XLB_SOURCE/tools/lib/xlbd.sh"
. "$XLB_SOURCE/tools/lib/grpc_peers.sh"
trap xlb_cleanup_run EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
client() { ip netns exec "$RUN_PREFIX-client" "$@"; }
# die MESSAGE: the step did not behave; show the end of xlbd's log and stop (cleanup follows).
die() {
    echo "FAIL: $*" >&2
    [ ! -s "$RUN_DIR/xlbd.log" ] || { echo "--- last lines of xlbd's log:" >&2; tail -n 15 "$RUN_DIR/xlbd.log" >&2; }
    exit 1
}
"$GRPC_PY" -c 'import grpc' 2>/dev/null || die "$GRPC_PY has no grpc module (python3-grpcio)"

say "topology: client $TOPO_CLIENT4, backends 198.18.0.21-23, gateway $TOPO_GATEWAY4, xlb port 198.18.0.10"
topo_create "$RUN_PREFIX" 3
xlb_write_config
xlb_start || { tail -n 20 "$RUN_DIR/xlbd.log"; exit 1; }
echo "xlbd is running (pid $XLBD_PID) and has resolved its gateways:"
xlb_ctl neighbours

say "client -> VIP 198.18.0.100: ARP and ICMP echo"
client arping -c 3 -w 5 -I eth0 198.18.0.100 || true
client ping -c 5 -i 0.2 -W 2 198.18.0.100

say "client -> VIP 2001:2::100: neighbour discovery and ICMPv6 echo"
client ping -6 -c 5 -i 0.2 -W 2 2001:2::100

say "backends: a TCP server on port 9000 of each, answering with its name"
for b in 1 2 3; do
    # $! is the server itself (cleanup kills it by PID); it ends by itself after 120 s.
    ip netns exec "$RUN_PREFIX-be$b" python3 "$XLB_SOURCE/tools/lib/name_server.py" 9000 \
        "backend-$b" --lifetime 120 >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
listening() { ip netns exec "$RUN_PREFIX-be$1" ss -Hltn 'sport = :9000' | grep -q .; }
for b in 1 2 3; do xlb_wait_until 50 0.1 listening "$b" || die "backend-$b is not listening"; done

say "client -> L4 VIP 198.18.0.100:9000 (cluster demo-tcp, ring hash): 60 TCP connections through xlb's full NAT"
client timeout 60 python3 -c '
import collections, socket, sys
seen = collections.Counter()
for _ in range(60):
    for attempt in range(3):
        try:
            with socket.create_connection(("198.18.0.100", 9000), timeout=3) as s:
                seen[s.recv(32).decode()] += 1
            break
        except OSError:
            pass
for name, n in sorted(seen.items()):
    print(f"  {name}: {n} connections")
print(f"  total: {sum(seen.values())} of 60")
sys.exit(0 if sum(seen.values()) == 60 else 1)' || die "not every TCP connection through the L4 VIP succeeded"
say "xlbctl endpoints demo-tcp (connect outcomes counted per endpoint)"
xlb_ctl endpoints demo-tcp

# ---- L7: gRPC through the VIP 198.18.0.100:8080 (listener demo-grpc, cluster demo-grpc) ----

say "gRPC backends: grpc_backend.py serves /xlb.test.Echo/Who on port 50051 of each, answering with its name"
echo "  echo-1 on 198.18.0.21 and echo-2 on 198.18.0.22 (locality demo-a), echo-3 on 198.18.0.23"
echo "  (demo-b); echo-3 is started with --fail: every RPC it gets ends with UNAVAILABLE"
for b in 1 2 3; do
    fail_flag=()
    [ "$b" -ne 3 ] || fail_flag=(--fail)
    grpc_backend "$RUN_PREFIX-be$b" "$RUN_DIR/echo-$b.log" --name "echo-$b" --port 50051 \
        --address "198.18.0.2$b" --lifetime 300 "${fail_flag[@]}"
done

say "xlbctl simulate on the L7 VIP 198.18.0.100:8080: the pick the workers run, on the live snapshot"
xlb_ctl simulate --vip 198.18.0.100:8080 --path /xlb.test.Echo/Who --n 10000

# grpc ARGS...: grpc_client.py in the client's namespace against the L7 VIP; prints its JSON.
grpc() { grpc_client "$RUN_PREFIX-client" --target 198.18.0.100:8080 "$@"; }
# holds JSON CONDITION: whether the Python CONDITION holds for r, the client's summary.
holds() {
    python3 -c 'import json, sys; r = json.loads(sys.argv[1]); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
# check JSON CONDITION WHAT: stop the demo unless CONDITION holds.
check() {
    holds "$1" "$2" || die "$3: no; the client saw $1"
}
field() { grpc_field "$@"; }
# spread JSON: RPCs per backend; failures are put on the backend whose message names it.
spread() {
    python3 -c '
import collections, json, re, sys
r = json.loads(sys.argv[1])
rows = collections.Counter({name + ": OK": n for name, n in r["backends"].items()})
for text, n in r["details"].items():
    m = re.search(r"backend (\S+) fails on purpose", text)
    rows[m.group(1) + ": UNAVAILABLE (fails on purpose)" if m else text] += n
for row, n in sorted(rows.items()):
    print(f"  {n:3d}  {row}")' "$1"
}

# The first SYNs may meet backends xlb is still resolving: TCP retries them.
answers() { grpc --count 1 --deadline 2 | grep -Eq '"OK": 1|fails on purpose'; }
xlb_wait_until 50 0.2 answers || die "no RPC through the L7 VIP 198.18.0.100:8080 reached a backend"

say "gRPC load balancing: 30 RPCs, each on a new HTTP/2 connection (xlb binds a connection at its first request)"
out=$(grpc --count 30 --per-connection)
spread "$out"
check "$out" 'r["rpcs"] == 30 and sum(r["backends"].values()) + sum(r["details"].values()) == 30' \
    "30 RPCs, each answered by a backend"
check "$out" 'all(k.endswith("fails on purpose") for k in r["details"])' \
    "no failure but echo-3's own"
check "$out" 'set(r["backends"]) == {"echo-1", "echo-2"} and r["status"].get("UNAVAILABLE", 0) > 0' \
    "every backend reached"

say "per-RPC balancing: the same target on 198.18.0.100:8081, \"l7_mode\": \"stream\""
echo "  xlb terminates the client's HTTP/2 and picks every RPC, forwarding it over its own"
echo "  connections to the backends: one channel, 30 RPCs"
out=$(grpc_client "$RUN_PREFIX-client" --target 198.18.0.100:8081 --count 30)
spread "$out"
check "$out" 'r["rpcs"] == 30 and sum(r["backends"].values()) + sum(r["details"].values()) == 30' \
    "30 RPCs on one channel, each answered by a backend"
check "$out" 'set(r["backends"]) == {"echo-1", "echo-2"} and all(k.endswith("fails on purpose") for k in r["details"])' \
    "one channel's RPCs spread over every backend"
echo "  one HTTP/2 connection, its RPCs spread over the backends (splice mode binds it to one)"

say "per-RPC session affinity (stream mode): on one channel, each RPC's cookie picks its backend"
# xlb's session cookie is base64("endpoint;cluster"); RPC i carries echo-1's, echo-2's or no
# cookie in turn, all on one HTTP/2 connection.
cookie_of() { echo "xlb-session=$(printf '198.18.0.2%s:50051;demo-grpc' "$1" | base64 -w0)"; }
out=$(grpc_client "$RUN_PREFIX-client" --target 198.18.0.100:8081 --count 9 \
    --cookie-each "$(cookie_of 1)" --cookie-each "$(cookie_of 2)" --cookie-each '')
echo "  one channel, 9 RPCs with echo-1's, echo-2's or no cookie in turn, answered by:"
echo "    $(field "$out" '" ".join(r["sequence"])')"
check "$out" 'all(r["sequence"][i] == "echo-%d" % (i % 3 + 1) for i in range(9) if i % 3 != 2)' \
    "each RPC with a cookie reaches its cookie's backend"
check "$out" 'r["set_cookie"] >= 1' "a cookie-less RPC gets a Set-Cookie"
echo "  each cookie reached its backend on the shared connection; the cookie-less ones got a"
echo "  Set-Cookie of their own ($(field "$out" 'r["set_cookie"]') of 3)"

say "session affinity (A55/A60): a client with a cookie jar, each RPC on a new connection"
JAR=$RUN_DIR/jar.json
# A cookie naming echo-3 would only pin the client to failures: start again with an empty jar
# when the first RPC landed there (bounded).
for _ in 1 2 3 4 5 6 7 8; do
    rm -f "$JAR"
    first=$(grpc --count 1 --per-connection --cookie-jar "$JAR")
    ! holds "$first" 'r["status"] == {"OK": 1}' || break
done
check "$first" 'r["status"] == {"OK": 1} and r["set_cookie"] == 1' \
    "the first RPC, without a cookie, gets xlb's Set-Cookie"
pinned=$(field "$first" 'r["sequence"][0]')
echo "  first RPC, no cookie: answered by $pinned, and the response carries xlb's"
echo "    set-cookie: $(field "$first" 'r["set_cookie_header"]')"
decoded=$(field "$first" '__import__("base64").b64decode(r["cookie"].split("=", 1)[1]).decode()')
echo "    whose value is base64(\"$decoded\"): endpoint;cluster"
out=$(grpc --count 10 --per-connection --cookie-jar "$JAR")
echo "  10 more RPCs, each on a new connection, sending the cookie:"
echo "    $(field "$out" '" ".join(r["sequence"])')"
check "$out" 'r["status"] == {"OK": 10} and r["backends"] == {"'"$pinned"'": 10} and r["set_cookie"] == 0' \
    "10 RPCs with the cookie all reach $pinned, with no new Set-Cookie"
echo "  all 10 reached $pinned; no new Set-Cookie (the cookie already names it)"

say "outlier detection (A50, failure percentage): xlb reads every RPC's grpc-status"
echo "  each second it ejects an endpoint whose RPCs failed more than 50% (at least 4 RPCs)"
# Detection runs every interval (1 s) on what that interval saw: traffic keeps coming until it
# acts (it may well have acted already, during the steps above).
# ejection: how many more ms echo-3 stays ejected, 0 when it is not ejected.
ejection() {
    xlb_ctl --json endpoints demo-grpc | python3 -c '
import json, sys
e = [e for e in json.load(sys.stdin) if e["address"] == "198.18.0.23:50051"][0]
print(int(e.get("ejected_for_ms") or 1) if e["ejected"] else 0)'
}
ejected() { [ "$(ejection)" -gt 0 ]; }
covered=""
for attempt in 1 2 3; do
    for _ in $(seq 1 20); do
        ! ejected || break
        grpc --count 10 --per-connection >/dev/null
    done
    ejected || die "echo-3 was not ejected: $(xlb_ctl endpoints demo-grpc)"
    # New connections while it is ejected: the check holds only if the ejection lasted the whole
    # run (otherwise echo-3 is back, fails again, is ejected for longer, and the run is redone).
    start_ms=$(date +%s%3N)
    left_ms=$(ejection)
    out=$(grpc --count 30 --per-connection)
    table=$(xlb_ctl endpoints demo-grpc)
    if [ $(($(date +%s%3N) - start_ms)) -lt "$left_ms" ]; then
        covered=yes
        break
    fi
    echo "  (echo-3's ejection ended during the run: once more)"
done
[ -n "$covered" ] || die "echo-3's ejection never lasted 30 connections"
echo "  echo-3 is ejected (EJECTED yes, USABLE no): xlbctl endpoints demo-grpc"
echo "$table"
echo "  30 new connections while it is ejected:"
spread "$out"
check "$out" 'r["status"] == {"OK": 30} and "echo-3" not in r["backends"]' \
    "30 RPCs after the ejection all succeed and none reaches echo-3"
echo "  none reached echo-3: it is out of the pick for base_ejection_time (10 s) x its MULTIPLIER"

say "xlbctl status"
xlb_ctl status
say "xlbctl config dump (static resources, validated as xDS resources are)"
xlb_ctl config dump
say "xlbctl counters"
xlb_ctl counters

say "stopping xlbd (SIGTERM)"
xlb_stop
echo "xlbd exited cleanly; removing the topology"
