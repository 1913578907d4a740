#!/usr/bin/env bash
# CPU per RPC of xlb's L7 (HTTP/2) modes against HAProxy, side by side in one topology and one
# run, under h2load (docs/performance.md, "L7 (HTTP/2) mode"). A benchmark: it reports, it
# never passes or fails on a figure. Needs root (network namespaces); about a minute.
#
#   tools/bench/l7_vs_haproxy.sh [BUILD_DIR]      (default: $XLB_BUILD_DIR, else build-release)
#   L7B_REQUESTS=200000 L7B_CLIENTS=10 L7B_STREAMS=10 L7B_ROUNDS=3 tools/bench/l7_vs_haproxy.sh
#   (the defaults: the multiplexed workload's requests, clients and streams per client, and
#   rounds; the one-stream workload makes a quarter as many requests)
#   XLB_PORT_KIND=af_xdp tools/bench/l7_vs_haproxy.sh   (xlbd on net_af_xdp, not af_packet)
#
# Topology (tools/lib/topology.sh, namespaces of this run only, 198.18.0.0/15):
#   client 198.18.0.2     h2load
#   lb                    xlbd, DPDK af_packet on its veth; L7 VIPs 198.18.0.100:50051 (splice)
#                         and :50053 (stream: per-RPC picks over subchannels, like HAProxy)
#   hap    198.18.0.3     HAProxy (Debian's), bind 198.18.0.3:50051 proto h2
#   be1, be2 198.18.0.21-22  nghttpd --no-tls (HTTP/2 prior knowledge) on port 50051
# Both balancers reach the same two backends over the same bridge. Both balance round robin
# with cookie persistence: xlb through the listener's StatefulSession filter (A55 cookie
# "xlb-session"), HAProxy with `cookie SRV insert indirect nocache`. The requests are
# gRPC-shaped (POST, content-type application/grpc, te: trailers, a 21-byte gRPC message);
# nghttpd answers each with a small static file and a grpc-status: 0 trailer, so that every
# response ends with a trailers HEADERS frame, as a gRPC server's does.
#
# CPU: xlb's is its workers' busy cycles (loops that received packets, as OVS-DPDK's pmd
# stats count them) from `xlbctl --json status`, in seconds at the TSC rate, which is measured
# from the workers' busy + idle cycles over 2 s of wall time (every loop counts its cycles in
# one or the other). The control-plane thread is not counted. HAProxy's is its process's CPU
# time, utime + stime, read at nanosecond resolution as the scheduler's run time of its threads
# (/proc/PID/task/*/schedstat). Three workloads: multiplexed (-m 10), one stream at a time
# (-m 1), and short connections (10 calls each). Each round runs h2load once against each:
# xlb's L7 VIP, HAProxy, and as the same run's baseline xlb's L4 VIP 198.18.0.100:50052 (full
# NAT to the same backends: what forwarding alone costs through this topology's af_packet
# port, with nothing inspected and no cookie). The report gives every round and the medians,
# and for the L7 VIP its counters (Set-Cookie insertions and misses, drops), the packets it
# received per RPC and its worker thread's kernel time.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${XLB_BUILD_DIR:-$SRC/build-release}}" && pwd)
REQUESTS=${L7B_REQUESTS:-200000}
CLIENTS=${L7B_CLIENTS:-10}
STREAMS=${L7B_STREAMS:-10}
ROUNDS=${L7B_ROUNDS:-3}

[ "$(id -u)" -eq 0 ] || { echo "l7_vs_haproxy: needs root (network namespaces)"; exit 1; }
for tool in h2load nghttpd haproxy; do
    command -v "$tool" >/dev/null ||
        { echo "l7_vs_haproxy: $tool is missing (tools/setup-deps.sh installs it)"; exit 1; }
done
[ -x "$BUILD/apps/xlbd" ] || { echo "l7_vs_haproxy: no $BUILD/apps/xlbd (build first)"; exit 1; }

RUN_PREFIX="xlbb$$"
RUN_DIR=$(mktemp -d "/tmp/xlb-l7bench-$$-XXXXXX")
XLB_SOURCE=$SRC
XLB_BUILD=$BUILD
. "$SRC/tools/lib/topology.sh"
. "$SRC/tools/lib/xlbd.sh"

cleanup() {
    xlb_stop_all
    xlb_remove_run
}
trap cleanup EXIT

# ---- topology and peers ----
topo_create "$RUN_PREFIX" 2
topo_add_host "$RUN_PREFIX" hap 198.18.0.3 2001:2::3

mkdir -p "$RUN_DIR/htdocs/xlb.test.Echo"
printf 'xlb-bench-answer\n' >"$RUN_DIR/htdocs/xlb.test.Echo/Who"
# A gRPC message: no compression, 16 bytes.
printf '\x00\x00\x00\x00\x10xlb-bench-req-16' >"$RUN_DIR/request.bin"

for i in 1 2; do
    # $! is nghttpd itself (ip netns exec execs it): cleanup kills it by PID.
    ip netns exec "$RUN_PREFIX-be$i" nghttpd --no-tls -a "198.18.0.2$i" -d "$RUN_DIR/htdocs" \
        --no-content-length --trailer 'grpc-status: 0' 50051 \
        >"$RUN_DIR/nghttpd$i.log" 2>&1 &
    RUN_PIDS+=("$!")
done

cat >"$RUN_DIR/haproxy.cfg" <<EOF
global
    nbthread 1
    maxconn 4000
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend grpc
    bind 198.18.0.3:50051 proto h2
    default_backend echo
backend echo
    balance roundrobin
    cookie SRV insert indirect nocache
    server be1 198.18.0.21:50051 proto h2 cookie be1
    server be2 198.18.0.22:50051 proto h2 cookie be2
EOF
haproxy -c -f "$RUN_DIR/haproxy.cfg" >/dev/null
ip netns exec "$RUN_PREFIX-hap" haproxy -db -f "$RUN_DIR/haproxy.cfg" >"$RUN_DIR/haproxy.log" 2>&1 &
HAPROXY_PID=$!
RUN_PIDS+=("$HAPROXY_PID")

xlb_write_config
python3 - "$RUN_DIR/bootstrap.json" <<'PY'
import json, sys
path = sys.argv[1]
c = json.load(open(path))
t = "type.googleapis.com/envoy."
x = c["xlb"]
x["workers"] = 1
x["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///bench", "l7_mode": "splice"},
             {"address": "198.18.0.100", "port": 50052, "cluster": "echo"},
             {"address": "198.18.0.100", "port": 50053, "target": "xds:///bench",
              "l7_mode": "stream"}]
session = {"name": "session", "typed_config": {
    "@type": t + "extensions.filters.http.stateful_session.v3.StatefulSession",
    "session_state": {"name": "cookie", "typed_config": {
        "@type": t + "extensions.http.stateful_session.cookie.v3.CookieBasedSessionState",
        "cookie": {"name": "xlb-session", "ttl": "3600s", "path": "/"}}}}}
router = {"name": "router", "typed_config": {"@type": t + "extensions.filters.http.router.v3.Router"}}
listener = {"name": "bench", "api_listener": {"api_listener": {
    "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
    "route_config": {"name": "bench-routes", "virtual_hosts": [
        {"name": "all", "domains": ["*"],
         "routes": [{"match": {"prefix": "/"}, "route": {"cluster": "echo"}}]}]},
    "http_filters": [session, router]}}}
cluster = {"name": "echo", "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}},
           "common_lb_config": {"override_host_status": {"statuses": ["UNKNOWN", "HEALTHY", "DRAINING"]}}}
eds = {"cluster_name": "echo", "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
    {"endpoint": {"address": {"socket_address": {"address": a, "port_value": 50051}}}}
    for a in ("198.18.0.21", "198.18.0.22")]}]}
x["static_resources"] = {"listeners": [listener], "clusters": [cluster], "endpoints": [eds]}
json.dump(c, open(path, "w"), indent=1)
PY
xlb_start >/dev/null || { echo "l7_vs_haproxy: xlbd did not start"; tail -n 20 "$RUN_DIR/xlbd.log"; exit 1; }

# ---- measurement ----
h2load_run() { # URL N CLIENTS STREAMS -> h2load's output
    ip netns exec "$RUN_PREFIX-client" timeout 120 h2load -n "$2" -c "$3" -m "$4" \
        -d "$RUN_DIR/request.bin" -H 'content-type: application/grpc' -H 'te: trailers' \
        "$1" 2>&1 || true
}
succeeded() { sed -nE 's/^requests: .* ([0-9]+) succeeded.*/\1/p' <<<"$1"; }
rate() { sed -nE 's/^finished in [^,]+, ([0-9.]+) req\/s.*/\1/p' <<<"$1"; }

# CPU accounting shared with conn_rate.sh: bench_xlb_busy, bench_tsc_hz, bench_cpu_ns.
. "$SRC/tools/bench/cpu_accounting.sh"
xlb_busy() { bench_xlb_busy; }
# xlb's worker thread(s): utime + stime and stime, in clock ticks (kernel time: the af_packet
# PMD's sends, which on a veth also run the receiving side's stack in the sender's context).
worker_ticks() {
    local t u=0 k=0 a b
    for t in /proc/"$XLBD_PID"/task/*; do
        grep -Eq '^(rte|lcore)-worker' "$t/comm" 2>/dev/null || continue
        read -r a b < <(awk '{print $14, $15}' "$t/stat")
        u=$((u + a)) k=$((k + b))
    done
    echo "$((u + k)) $k"
}
# xlb's counters of interest, as "name=value" words (events and drops over all workers).
xlb_counts() {
    xlb_ctl --json counters | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]
words = ["rx_packets=" + str(t["rx_packets"])]
words += [f"{k}={v}" for k, v in t.get("events", {}).items() if k in ("l7_connections", "l7_set_cookies", "l7_set_cookie_missed", "l7_rejected", "l7_streams_untracked")]
words += [f"drops.{k}={v}" for k, v in t.get("drops", {}).items() if v]
print(" ".join(words))'
}
counts_delta() { # BEFORE AFTER -> the words that changed, as deltas
    python3 - "$1" "$2" <<'PY'
import sys
a = dict(w.split("=") for w in sys.argv[1].split())
b = dict(w.split("=") for w in sys.argv[2].split())
print(", ".join(f"{k} {int(v) - int(a.get(k, 0))}" for k, v in b.items() if int(v) != int(a.get(k, 0))) or "none")
PY
}
# HAProxy's CPU time in ns: the scheduler's run time of all its threads (what utime + stime add
# up to, without their 10 ms ticks).
haproxy_ns() { bench_cpu_ns "$HAPROXY_PID"; }
CLK_TCK=$(getconf CLK_TCK)

TSC_HZ=$(bench_tsc_hz)

XLB_URL=http://198.18.0.100:50051/xlb.test.Echo/Who
L4_URL=http://198.18.0.100:50052/xlb.test.Echo/Who
STREAM_URL=http://198.18.0.100:50053/xlb.test.Echo/Who
HAP_URL=http://198.18.0.3:50051/xlb.test.Echo/Who

# Warm-up: neighbours resolved, both paths answering.
answers() { [ "$(succeeded "$(h2load_run "$1" 20 2 1)")" = 20 ]; }
xlb_wait_until 50 0.2 answers "$XLB_URL" || {
    echo "l7_vs_haproxy: no answer through xlb's VIP:"
    ip netns exec "$RUN_PREFIX-client" timeout 5 nghttp -nv "$XLB_URL" 2>&1 | grep -E 'recv|error' | head -n 12
    xlb_ctl counters | head -n 40
    exit 1
}
xlb_wait_until 50 0.2 answers "$L4_URL" || { echo "l7_vs_haproxy: no answer through xlb's L4 VIP"; exit 1; }
xlb_wait_until 50 0.2 answers "$STREAM_URL" || { echo "l7_vs_haproxy: no answer through xlb's stream VIP"; exit 1; }
xlb_wait_until 50 0.2 answers "$HAP_URL" || { echo "l7_vs_haproxy: no answer through HAProxy"; exit 1; }
set_cookie=$(ip netns exec "$RUN_PREFIX-client" timeout 5 nghttp -nv -d "$RUN_DIR/request.bin" "$XLB_URL" 2>&1 |
    sed -nE 's/.*recv \(stream_id=[0-9]+\) set-cookie: (.*)/\1/p' | head -n 1)
hap_cookie=$(ip netns exec "$RUN_PREFIX-client" timeout 5 nghttp -nv -d "$RUN_DIR/request.bin" "$HAP_URL" 2>&1 |
    sed -nE 's/.*recv \(stream_id=[0-9]+\) set-cookie: (.*)/\1/p' | head -n 1)

echo "l7_vs_haproxy: CPU per RPC, xlb's L7 VIP (1 worker) and HAProxy $(haproxy -v | sed -nE '1s/HAProxy version ([^ ]+).*/\1/p') (nbthread 1), same topology, same run"
echo "  POST with a $((5 + 16))-byte gRPC message; responses carry Set-Cookie: xlb '${set_cookie:-none}', HAProxy '${hap_cookie:-none}'"
echo "  xlb: worker busy cycles at $(python3 -c "print(round($TSC_HZ / 1e9, 3))") GHz (TSC); HAProxy: process CPU time (schedstat); $ROUNDS rounds, xlb then HAProxy in each"

# One scenario: h2load -n N -c C -m M against each, ROUNDS times; the rows and the medians.
scenario() { # NAME N C M
    local name=$1 n=$2 c=$3 m=$4 round out ok b0 b1 h0 h1 xlb_per hap_per xrate hrate
    local w0 w1 k0 k1 c0 c1 s0 s1 kernel=0 xlb_ok=0 ok_x busy_x l4_per stream_per
    h2load_run "$XLB_URL" "$((n / 10))" "$c" "$m" >/dev/null # warm-up
    h2load_run "$STREAM_URL" "$((n / 10))" "$c" "$m" >/dev/null
    h2load_run "$L4_URL" "$((n / 10))" "$c" "$m" >/dev/null
    h2load_run "$HAP_URL" "$((n / 10))" "$c" "$m" >/dev/null
    echo
    echo "  $name: h2load -n $n -c $c -m $m"
    printf '  %-5s %-8s %10s %10s %10s %12s\n' round side "RPCs ok" "req/s" "CPU s" "CPU us/RPC"
    local rows=()
    for round in $(seq 1 "$ROUNDS"); do
        c0=$(xlb_counts)
        read -r w0 k0 < <(worker_ticks)
        b0=$(xlb_busy)
        out=$(h2load_run "$XLB_URL" "$n" "$c" "$m")
        b1=$(xlb_busy)
        read -r w1 k1 < <(worker_ticks)
        c1=$(xlb_counts)
        ok=$(succeeded "$out")
        ok_x=${ok:-0} busy_x=$((b1 - b0))
        kernel=$((kernel + k1 - k0)) xlb_ok=$((xlb_ok + ${ok:-0}))
        xrate=$(rate "$out")
        xlb_per=$(python3 -c "print(($b1 - $b0) / $TSC_HZ / max(${ok:-0}, 1) * 1e6)")
        printf '  %-5s %-8s %10s %10s %10.3f %12.2f\n' "$round" xlb "${ok:-0}" "$xrate" \
            "$(python3 -c "print(($b1 - $b0) / $TSC_HZ)")" "$xlb_per"
        h0=$(haproxy_ns)
        out=$(h2load_run "$HAP_URL" "$n" "$c" "$m")
        h1=$(haproxy_ns)
        ok=$(succeeded "$out")
        hrate=$(rate "$out")
        hap_per=$(python3 -c "print(($h1 - $h0) / 1e9 / max(${ok:-0}, 1) * 1e6)")
        printf '  %-5s %-8s %10s %10s %10.3f %12.2f\n' "$round" haproxy "${ok:-0}" "$hrate" \
            "$(python3 -c "print(($h1 - $h0) / 1e9)")" "$hap_per"
        b0=$(xlb_busy)
        out=$(h2load_run "$L4_URL" "$n" "$c" "$m")
        b1=$(xlb_busy)
        ok=$(succeeded "$out")
        l4_per=$(python3 -c "print(($b1 - $b0) / $TSC_HZ / max(${ok:-0}, 1) * 1e6)")
        printf '  %-5s %-8s %10s %10s %10.3f %12.2f\n' "$round" "xlb L4" "${ok:-0}" "$(rate "$out")" \
            "$(python3 -c "print(($b1 - $b0) / $TSC_HZ)")" "$l4_per"
        s0=$(xlb_counts)
        b0=$(xlb_busy)
        out=$(h2load_run "$STREAM_URL" "$n" "$c" "$m")
        b1=$(xlb_busy)
        s1=$(xlb_counts)
        ok=$(succeeded "$out")
        stream_per=$(python3 -c "print(($b1 - $b0) / $TSC_HZ / max(${ok:-0}, 1) * 1e6)")
        printf '  %-5s %-8s %10s %10s %10.3f %12.2f\n' "$round" "xlb strm" "${ok:-0}" "$(rate "$out")" \
            "$(python3 -c "print(($b1 - $b0) / $TSC_HZ)")" "$stream_per"
        python3 - "$s0" "$s1" "$((b1 - b0))" "${ok:-0}" <<'PY'
import sys
a = dict(w.split("=") for w in sys.argv[1].split())
b = dict(w.split("=") for w in sys.argv[2].split())
rx, busy, ok = int(b["rx_packets"]) - int(a["rx_packets"]), int(sys.argv[3]), int(sys.argv[4])
if rx and ok:
    print(f"        xlb stream: {rx / ok:.2f} packets received per RPC, {busy / rx:.0f} busy cycles per packet")
PY
        rows+=("$xlb_per $hap_per $xrate $hrate $l4_per $stream_per")
        echo "        xlb's counters in this round: $(counts_delta "$c0" "$c1")"
        python3 - "$c0" "$c1" "$busy_x" "${xlb_ok:-0}" "${ok_x:-0}" <<'PY'
import sys
a = dict(w.split("=") for w in sys.argv[1].split())
b = dict(w.split("=") for w in sys.argv[2].split())
rx, busy, ok = int(b["rx_packets"]) - int(a["rx_packets"]), int(sys.argv[3]), int(sys.argv[5])
if rx and ok:
    print(f"        xlb: {rx / ok:.2f} packets received per RPC, {busy / rx:.0f} busy cycles per packet")
PY
    done
    echo "  xlb's worker thread spent $(python3 -c "print(round($kernel / $CLK_TCK / max($xlb_ok, 1) * 1e6, 2))") us per RPC in the kernel (stime, all rounds)"
    python3 - "$name" "${rows[@]}" <<'PY'
import statistics, sys
name, rows = sys.argv[1], [tuple(map(float, r.split())) for r in sys.argv[2:]]
xlb = statistics.median(r[0] for r in rows)
hap = statistics.median(r[1] for r in rows)
ratios = ", ".join(f"{r[1] / r[0]:.1f}" for r in rows if r[0] > 0)
print(f"  {name}, median of {len(rows)}: xlb {xlb:.2f} us CPU per RPC "
      f"({statistics.median(r[2] for r in rows):.0f} req/s), HAProxy {hap:.2f} us "
      f"({statistics.median(r[3] for r in rows):.0f} req/s): HAProxy / xlb = {hap / xlb:.1f} "
      f"(per round: {ratios}); target >= 10")
l4 = statistics.median(r[4] for r in rows)
print(f"  baseline, xlb's L4 VIP (full NAT, nothing inspected, no cookie) on the same traffic: "
      f"{l4:.2f} us per RPC; xlb L7 / L4 = {xlb / l4:.2f}, HAProxy / L4 = {hap / l4:.1f}")
stream = statistics.median(r[5] for r in rows)
print(f"  stream mode (per-RPC picks, like HAProxy): {stream:.2f} us per RPC; "
      f"HAProxy / stream = {hap / stream:.1f}, stream / splice = {stream / xlb:.2f}, "
      f"stream / L4 = {stream / l4:.2f}")
PY
}

scenario "multiplexed" "$REQUESTS" "$CLIENTS" "$STREAMS"
scenario "one stream per connection at a time" "$((REQUESTS / 4))" "$CLIENTS" 1
# 200 connections of 10 calls each per round, well within xlb's pool (1,024 per worker).
scenario "short connections (10 RPCs each)" 2000 200 1

echo
xlb_ctl --json counters | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]
ev = t.get("events", {})
print("  xlb over the run: " + ", ".join(f"{k} {v}" for k, v in ev.items() if k.startswith("l7_") and v))
print("  xlb drops: " + (", ".join(f"{k} {v}" for k, v in sorted(t.get("drops", {}).items()) if v) or "none"))'
xlb_stop >/dev/null || echo "l7_vs_haproxy: xlbd did not stop cleanly"
