#!/usr/bin/env bash
# New connections per second and CPU per connection (issue 24) through xlb's L4 VIP, xlb's L7
# (HTTP/2) VIPs in the stream mode (the default) and the splice mode, and HAProxy, side by side in one topology and one run, with the same h2load
# client and the same nghttpd backends. A benchmark: it reports, it never passes or fails on a
# figure. Needs root (network namespaces); about 3 minutes with the defaults.
#
#   tools/bench/conn_rate.sh [BUILD_DIR]      (default: $XLB_BUILD_DIR, else build-release)
#   CRB_RATES="500 1000 2000 3000 4000"  target rates (new connections/s), one step each
#   CRB_SECONDS=5                        length of a step
#   CRB_REQUESTS=2                       requests per connection (h2load -m 1)
#   CRB_L7_POOL=16384 CRB_MAX_REQUESTS=1000000
#     xlb.l7_connections_per_worker and the clusters' circuit_breakers max_requests: large,
#     so that what is measured is the engine's cost per connection, not its default sizing
#     (tests/e2e/test_conn_rate.sh runs the defaults).
#
# Topology (tools/lib/topology.sh, namespaces of this run only, 198.18.0.0/15):
#   client 198.18.0.2          h2load -r RATE/10 --rate-period 100ms (a new connection per
#                              CRB_REQUESTS requests)
#   lb                         xlbd, 1 worker, DPDK af_packet on its veth:
#                              L7 VIPs 198.18.0.100:50052 (stream) and :50051 (splice),
#                              L4 VIP 198.18.0.100:9002
#   hap    198.18.0.3          HAProxy (Debian's, nbthread 1), bind :50051 proto h2
#   be1..3 198.18.0.21-23      nghttpd --no-tls on port 50051
# All balance round robin over the same three backends, without session cookies.
#
# Each step runs h2load once against each of the four at the same target rate. A step's
# refusals are h2load's failed + errored + timed-out requests (a connection refused or reset
# fails its requests). "At 0 refusals" is the highest rate h2load achieved (connections over
# its run time) in a step without refusals. CPU per connection (tools/bench/cpu_accounting.sh):
# xlb's worker busy cycles at the TSC rate, xlb's worker thread's run time (schedstat: user +
# kernel, which includes af_packet's sends), the whole xlbd process's run time, and HAProxy's
# process run time. The summary gives, per side, the highest rate without refusals and the CPU
# per connection of that step (at low rates the thread times include idle polling), and the
# ratios HAProxy / xlb L7 (stream and splice) and xlb L7 / L4 at the highest target all four
# served without refusals.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${XLB_BUILD_DIR:-$SRC/build-release}}" && pwd)
RATES=${CRB_RATES:-500 1000 2000 3000 4000}
SECS=${CRB_SECONDS:-5}
PER_CONN=${CRB_REQUESTS:-2}
POOL=${CRB_L7_POOL:-16384}
MAX_REQUESTS=${CRB_MAX_REQUESTS:-1000000}

[ "$(id -u)" -eq 0 ] || { echo "conn_rate: needs root (network namespaces)"; exit 1; }
for tool in h2load nghttpd haproxy; do
    command -v "$tool" >/dev/null ||
        { echo "conn_rate: $tool is missing (tools/setup-deps.sh installs it)"; exit 1; }
done
[ -x "$BUILD/apps/xlbd" ] || { echo "conn_rate: no $BUILD/apps/xlbd (build first)"; exit 1; }
for v in $RATES "$SECS" "$PER_CONN" "$POOL" "$MAX_REQUESTS"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "conn_rate: knobs take positive integers, not '$v'"; exit 1; }
done
for r in $RATES; do
    [ "$r" -ge 10 ] && [ $((r * SECS)) -le 100000 ] ||
        { echo "conn_rate: a rate >= 10 and at most 100,000 connections per step"; exit 1; }
done

RUN_PREFIX="xlbc$$"
RUN_DIR=$(mktemp -d "/tmp/xlb-connrate-$$-XXXXXX")
XLB_SOURCE=$SRC
XLB_BUILD=$BUILD
. "$SRC/tools/lib/topology.sh"
. "$SRC/tools/lib/xlbd.sh"
. "$SRC/tools/bench/cpu_accounting.sh"

cleanup() {
    xlb_stop_all
    xlb_remove_run
}
trap cleanup EXIT

# ---- topology and peers ----
topo_create "$RUN_PREFIX" 3
topo_add_host "$RUN_PREFIX" hap 198.18.0.3 2001:2::3
# h2load closes each connection first (TIME-WAIT on the client): all ports.
ip netns exec "$RUN_PREFIX-client" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
ip netns exec "$RUN_PREFIX-hap" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"

mkdir -p "$RUN_DIR/www"
printf 'ok\n' >"$RUN_DIR/www/who"
for i in 1 2 3; do
    ip netns exec "$RUN_PREFIX-be$i" sysctl -qw net.core.somaxconn=4096
    # $! is nghttpd itself (ip netns exec execs it): cleanup kills it by PID.
    ip netns exec "$RUN_PREFIX-be$i" nghttpd --no-tls -a "198.18.0.2$i" -d "$RUN_DIR/www" 50051 \
        >"$RUN_DIR/nghttpd$i.log" 2>&1 &
    RUN_PIDS+=("$!")
done

cat >"$RUN_DIR/haproxy.cfg" <<EOF
global
    nbthread 1
    maxconn 8000
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend h2
    bind 198.18.0.3:50051 proto h2
    maxconn 8000
    default_backend be
backend be
    balance roundrobin
    server be1 198.18.0.21:50051 proto h2
    server be2 198.18.0.22:50051 proto h2
    server be3 198.18.0.23:50051 proto h2
EOF
haproxy -c -f "$RUN_DIR/haproxy.cfg" >/dev/null
ip netns exec "$RUN_PREFIX-hap" haproxy -db -f "$RUN_DIR/haproxy.cfg" >"$RUN_DIR/haproxy.log" 2>&1 &
HAPROXY_PID=$!
RUN_PIDS+=("$HAPROXY_PID")

xlb_write_config
python3 - "$RUN_DIR/bootstrap.json" "$POOL" "$MAX_REQUESTS" <<'PY'
import json, sys
path, pool, max_requests = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c = json.load(open(path))
t = "type.googleapis.com/envoy."
x = c["xlb"]
x["workers"] = 1
x["l7_connections_per_worker"] = pool
# An entry is about 75 KB (docs/l7.md): room for the pool on top of the default 256 MB.
m = x["eal"].index("-m")
x["eal"][m + 1] = str(256 + pool * 75 // 1000)
x["vips"] = [{"address": "198.18.0.100", "port": 50052, "target": "xds:///rate"},
             {"address": "198.18.0.100", "port": 50051, "target": "xds:///rate", "l7_mode": "splice"},
             {"address": "198.18.0.100", "port": 9002, "cluster": "l4"}]
router = {"name": "router", "typed_config": {"@type": t + "extensions.filters.http.router.v3.Router"}}
listener = {"name": "rate", "api_listener": {"api_listener": {
    "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
    "route_config": {"name": "rate-routes", "virtual_hosts": [
        {"name": "all", "domains": ["*"],
         "routes": [{"match": {"prefix": "/"}, "route": {"cluster": "l7"}}]}]},
    "http_filters": [router]}}}
def cluster(name):
    return {"name": name, "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}},
            "circuit_breakers": {"thresholds": [{"max_requests": max_requests}]}}
def eds(name):
    return {"cluster_name": name, "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 1,
        "lb_endpoints": [{"endpoint": {"address": {"socket_address": {"address": a, "port_value": 50051}}}}
                         for a in ("198.18.0.21", "198.18.0.22", "198.18.0.23")]}]}
x["static_resources"] = {"listeners": [listener], "clusters": [cluster("l7"), cluster("l4")],
                         "endpoints": [eds("l7"), eds("l4")]}
json.dump(c, open(path, "w"), indent=1)
PY
xlb_start >/dev/null || { echo "conn_rate: xlbd did not start"; tail -n 20 "$RUN_DIR/xlbd.log"; exit 1; }

STREAM_URL=http://198.18.0.100:50052/who
L7_URL=http://198.18.0.100:50051/who
L4_URL=http://198.18.0.100:9002/who
HAP_URL=http://198.18.0.3:50051/who
answers() {
    ip netns exec "$RUN_PREFIX-client" timeout 10 h2load -n 6 -c 3 "$1" 2>&1 |
        grep -q ' 6 succeeded, 0 failed, 0 errored'
}
for url in "$STREAM_URL" "$L7_URL" "$L4_URL" "$HAP_URL"; do
    xlb_wait_until 50 0.2 answers "$url" ||
        { echo "conn_rate: no answer from $url"; tail -n 5 "$RUN_DIR/haproxy.log"; exit 1; }
done
TSC_HZ=$(bench_tsc_hz)

drop_words() { # the drops counted so far, as "name=value" words
    xlb_ctl --json counters | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]
print(" ".join(f"{k}={v}" for k, v in sorted(t.get("drops", {}).items()) if v))'
}
drops_delta() { # BEFORE AFTER
    python3 - "$1" "$2" <<'PY'
import sys
a = dict(w.split("=") for w in sys.argv[1].split())
b = dict(w.split("=") for w in sys.argv[2].split())
print(", ".join(f"{k} {int(v) - int(a.get(k, 0))}" for k, v in b.items() if int(v) != int(a.get(k, 0))) or "none")
PY
}

echo "conn_rate: new connections/s and CPU per connection, xlb (1 worker) L4, L7 stream and L7 splice VIPs and HAProxy $(haproxy -v | sed -nE '1s/HAProxy version ([^ ]+).*/\1/p') (nbthread 1)"
echo "  same topology, same run; h2load -m 1, $PER_CONN requests per connection, ${SECS} s steps;" \
    "xlb l7_connections_per_worker $POOL, max_requests $MAX_REQUESTS; TSC $(python3 -c "print(round($TSC_HZ / 1e9, 3))") GHz"
printf '  %-7s %-6s %8s %8s %8s %9s %10s %10s %10s\n' target side conns refused "conn/s" \
    "busy us" "worker us" "process us" "xlb drops"
echo "  (us: CPU microseconds per connection; busy: xlb's worker busy cycles; worker: its thread's run time;" \
    "process: the whole xlbd, or HAProxy)"

ROWS="$RUN_DIR/rows"
: >"$ROWS"
# step SIDE URL RATE: one h2load run; a row on stdout and in $ROWS.
step() {
    local side=$1 url=$2 rate=$3 conns out secs refused achieved b0 b1 w0 w1 p0 p1 d0 d1
    conns=$((rate * SECS))
    d0=$(drop_words) b0=$(bench_xlb_busy) w0=$(bench_cpu_ns "$XLBD_PID" '^(rte|lcore)-worker')
    if [ "$side" = haproxy ]; then p0=$(bench_cpu_ns "$HAPROXY_PID"); else p0=$(bench_cpu_ns "$XLBD_PID"); fi
    out=$(ip netns exec "$RUN_PREFIX-client" timeout $((SECS * 3 + 30)) h2load -r $((rate / 10)) \
        --rate-period 100ms -c "$conns" -n $((conns * PER_CONN)) -m 1 -T 10s "$url" 2>&1 || true)
    if [ "$side" = haproxy ]; then p1=$(bench_cpu_ns "$HAPROXY_PID"); else p1=$(bench_cpu_ns "$XLBD_PID"); fi
    b1=$(bench_xlb_busy) w1=$(bench_cpu_ns "$XLBD_PID" '^(rte|lcore)-worker') d1=$(drop_words)
    secs=$(sed -nE 's/^finished in ([0-9.]+)(m?s),.*/\1 \2/p' <<<"$out" |
        awk '{print ($2 == "ms") ? $1 / 1000 : $1}')
    refused=$(sed -nE 's/^requests: ([0-9]+) total, .* ([0-9]+) succeeded.*/\1 \2/p' <<<"$out" |
        awk '{print $1 - $2}')
    [ -n "$refused" ] || refused=$((conns * PER_CONN)) # h2load did not finish
    achieved=$(python3 -c "print(round($conns / ${secs:-0}) if ${secs:-0} else 0)")
    python3 - "$side" "$rate" "$conns" "$refused" "$achieved" "$((b1 - b0))" "$TSC_HZ" \
        "$((w1 - w0))" "$((p1 - p0))" "$(drops_delta "$d0" "$d1")" <<'PY' | tee -a "$ROWS"
import sys
side, rate, conns, refused, achieved, busy, hz, worker, proc, drops = sys.argv[1:]
conns, busy, hz, worker, proc = int(conns), int(busy), int(hz), int(worker), int(proc)
busy_us = busy / hz / conns * 1e6 if side != "haproxy" else float("nan")
print(f"  {rate:<7} {side:<6} {conns:>8} {refused:>8} {achieved:>8} {busy_us:>9.2f} "
      f"{worker / conns / 1e3 if side != 'haproxy' else float('nan'):>10.2f} {proc / conns / 1e3:>10.2f} "
      f"{drops if side != 'haproxy' else '-':>10}")
PY
    sleep 2
}

for rate in $RATES; do
    step L4 "$L4_URL" "$rate"
    step stream "$STREAM_URL" "$rate"
    step splice "$L7_URL" "$rate"
    step haproxy "$HAP_URL" "$rate"
done

echo
python3 - "$ROWS" <<'PY'
import math, sys
rows = []
for line in open(sys.argv[1]):
    f = line.split()
    rows.append({"target": int(f[0]), "side": f[1], "refused": int(f[3]), "rate": int(f[4]),
                 "busy": float(f[5]), "worker": float(f[6]), "proc": float(f[7])})
summary = {}
SIDES = ("L4", "stream", "splice", "haproxy")
for side in SIDES:
    ok = [r for r in rows if r["side"] == side and r["refused"] == 0]
    # The step with the highest achieved rate without refusals: at low rates the thread times
    # also hold the idle loops of a polling worker (and of HAProxy's event loop).
    top = max(ok, key=lambda r: r["rate"], default=None)
    best = top["rate"] if top else 0
    summary[side] = {k: top[k] if top else float("nan") for k in ("busy", "worker", "proc")}
    summary[side]["best"] = best
    first_refusal = min((r["target"] for r in rows if r["side"] == side and r["refused"]), default=None)
    s = summary[side]
    what = "xlb " + side if side != "haproxy" else "HAProxy"
    cpu = (f"busy {s['busy']:.2f} us, worker thread {s['worker']:.2f} us, xlbd {s['proc']:.2f} us"
           if side != "haproxy" else f"process {s['proc']:.2f} us")
    print(f"  {what:<8} highest rate at 0 refusals {best}/s"
          f"{'' if first_refusal is None else f' (refusals from target {first_refusal}/s)'}; "
          f"CPU per connection at that rate: {cpu}")
# Ratios on equal terms: the highest target rate that all three served without refusals.
def ratio(a, b):
    return f"{a / b:.2f}" if b and not math.isnan(a) and not math.isnan(b) else "n/a"
by = {(r["target"], r["side"]): r for r in rows}
common = [t for t in sorted({r["target"] for r in rows})
          if all((t, s) in by and by[(t, s)]["refused"] == 0 for s in SIDES)]
if common:
    t = common[-1]
    l4, hap = by[(t, "L4")], by[(t, "haproxy")]
    print(f"  ratios at target {t}/s (the highest all four served without refusals):")
    for mode in ("stream", "splice"):
        l7 = by[(t, mode)]
        print(f"    {mode}: HAProxy process / xlbd process {ratio(hap['proc'], l7['proc'])}, "
              f"HAProxy process / xlb worker thread {ratio(hap['proc'], l7['worker'])}; "
              f"xlb {mode} / L4: busy {ratio(l7['busy'], l4['busy'])}, "
              f"worker thread {ratio(l7['worker'], l4['worker'])}")
else:
    print("  ratios: no target rate was served without refusals by all four")
PY
xlb_ctl --json counters | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]
print("  xlb drops over the run: " + (", ".join(f"{k} {v}" for k, v in sorted(t.get("drops", {}).items()) if v) or "none"))'
xlb_stop >/dev/null || echo "conn_rate: xlbd did not stop cleanly"
