#!/usr/bin/env bash
# TLS handshakes, resumptions and CPU per RPC over TLS, xlb's TLS stream VIP against HAProxy,
# side by side in one topology and one run (issue 20, docs/performance.md "TLS against
# HAProxy"). A benchmark: it reports figures and ratios, it never passes or fails on one. Needs
# root (network namespaces); about 3 minutes with the defaults.
#
#   tools/bench/tls_vs_haproxy.sh [BUILD_DIR]      (default: $XLB_BUILD_DIR, else build-release)
#   TLSB_SECONDS=5     length of a handshake run
#   TLSB_CLIENTS=2     handshake client processes in parallel (one is slower than a server)
#   TLSB_RATE=0        paces each handshake client at this many connections a second (0: as
#                      fast as they go); below what both sides serve, it measures CPU per
#                      handshake without refusals in it
#   TLSB_ROUNDS=3      rounds; each runs every workload once against each side
#   TLSB_REQUESTS=20000 TLSB_CONNECTIONS=4 TLSB_STREAMS=32   the RPC workload (h2load -n -c -m)
#   XLB_PORT_KIND=af_xdp tools/bench/tls_vs_haproxy.sh     (xlbd on net_af_xdp, not af_packet)
#
# Topology: as tools/bench/l7_vs_haproxy.sh (tools/lib/topology.sh, namespaces of this run only):
#   client 198.18.0.2     tls_handshakes (this directory's handshake client) and h2load
#   lb                    xlbd, 1 worker, DPDK af_packet on its veth: stream VIPs
#                         198.18.0.100:443 (TLS) and :50053 (cleartext, the baseline)
#   hap    198.18.0.3     HAProxy (Debian's, nbthread 1): bind :443 ssl alpn h2, bind :50051
#                         proto h2 (cleartext)
#   be1, be2 198.18.0.21-22  nghttpd --no-tls on port 50051, answering gRPC-shaped requests
# Both balance every RPC round robin over the same two cleartext backends, without cookies.
# Both serve the same certificate, made here with openssl: ECDSA P-256, signed by a CA of this
# run. The client fixes what is negotiated, so that both sides do the same work: TLS 1.3 with
# TLS_AES_128_GCM_SHA256, TLS 1.2 with ECDHE-ECDSA-AES128-GCM-SHA256, key exchange X25519
# (P-256 offered too: in TLS 1.2 the certificate's curve must be among the client's groups),
# ALPN h2; the negotiated values are printed. HAProxy keeps its defaults otherwise (its session
# cache and tickets); xlb resumes by tickets only.
#
# Workloads, each run against xlb then HAProxy in every round:
#   full TLS 1.3    new connections one after the other, TLSB_CLIENTS processes, TLSB_SECONDS
#   full TLS 1.2    the same in TLS 1.2
#   resumed TLS 1.2 the same, each process offering the ticket of its first handshake
#                   (what `openssl s_time -reuse` does; s_time itself cannot offer ALPN, and
#                   xlb refuses a client that offers none)
#   RPCs over TLS   h2load -n 20000 -c 4 -m 32 https://VIP:443 (TLS 1.3, POST, a 21-byte
#                   gRPC message, content-type application/grpc, te: trailers), and the same
#                   on the cleartext VIPs as the run's baseline
# Each handshake is closed by close_notify and a reset (tls_handshakes.c says why). What a
# handshake costs a side includes its TCP open and close and the HTTP/2 SETTINGS it sends.
#
# CPU (tools/bench/cpu_accounting.sh): xlb's is its worker's busy cycles at the TSC rate (loops
# that received packets; xlbd busy-polls, so its thread time is no measure), shown with, in
# brackets, its worker thread's run time (schedstat: the CPU it got, in busy and idle loops, the
# idle ones sleeping worker_idle_sleep_us). Busy cycles miss handshake steps run in loops that
# received nothing (over the budget of 8 steps a poll: `stream_tls_handshakes_deferred`,
# printed) and count the time the thread was preempted in a busy loop (TSC time: on a shared
# machine they can exceed the thread's run time). HAProxy's is its process's run time
# (schedstat). "Per CPU s" (per core) is handshakes or RPCs per second of that CPU. The report
# gives every round and the medians, and the ratios HAProxy / xlb.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${XLB_BUILD_DIR:-$SRC/build-release}}" && pwd)
SECONDS_PER_RUN=${TLSB_SECONDS:-5}
CLIENTS=${TLSB_CLIENTS:-2}
RATE=${TLSB_RATE:-0}
ROUNDS=${TLSB_ROUNDS:-3}
REQUESTS=${TLSB_REQUESTS:-20000}
CONNECTIONS=${TLSB_CONNECTIONS:-4}
STREAMS=${TLSB_STREAMS:-32}
HANDSHAKE_CLIENT=$BUILD/tools/bench/tls_handshakes

[ "$(id -u)" -eq 0 ] || { echo "tls_vs_haproxy: needs root (network namespaces)"; exit 1; }
for tool in h2load nghttpd haproxy openssl; do
    command -v "$tool" >/dev/null ||
        { echo "tls_vs_haproxy: $tool is missing (tools/setup-deps.sh installs it)"; exit 1; }
done
[ -x "$BUILD/apps/xlbd" ] && [ -x "$HANDSHAKE_CLIENT" ] ||
    { echo "tls_vs_haproxy: no $BUILD/apps/xlbd or $HANDSHAKE_CLIENT (build first)"; exit 1; }

RUN_PREFIX="xlbt$$"
RUN_DIR=$(mktemp -d "/tmp/xlb-tlsbench-$$-XXXXXX")
XLB_SOURCE=$SRC
XLB_BUILD=$BUILD
. "$SRC/tools/lib/topology.sh"
. "$SRC/tools/lib/xlbd.sh"

cleanup() {
    xlb_stop_all
    xlb_remove_run
}
trap cleanup EXIT

# ---- the certificate: ECDSA P-256, signed by this run's CA ----
PKI=$RUN_DIR/pki
mkdir -p "$PKI"
(
    cd "$PKI"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key 2>/dev/null
    openssl req -x509 -new -key ca.key -subj "/CN=xlb bench CA" -days 2 -out ca.pem 2>/dev/null
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out vip.key 2>/dev/null
    openssl req -new -key vip.key -subj "/CN=api.xlb.test" -out vip.csr 2>/dev/null
    printf 'subjectAltName=DNS:api.xlb.test\n' >vip.ext
    openssl x509 -req -in vip.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -extfile vip.ext -out vip.pem 2>/dev/null
    cat vip.pem vip.key >haproxy.pem
) || { echo "tls_vs_haproxy: openssl could not make the certificate"; exit 1; }

# ---- topology and peers ----
topo_create "$RUN_PREFIX" 2
topo_add_host "$RUN_PREFIX" hap 198.18.0.3 2001:2::3
# The handshake clients open connections by the ten thousand: all the ports there are.
ip netns exec "$RUN_PREFIX-client" sysctl -qw net.ipv4.ip_local_port_range="10000 65000"

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
frontend tls
    bind 198.18.0.3:443 ssl crt $PKI/haproxy.pem alpn h2
    default_backend echo
frontend clear
    bind 198.18.0.3:50051 proto h2
    default_backend echo
backend echo
    balance roundrobin
    server be1 198.18.0.21:50051 proto h2
    server be2 198.18.0.22:50051 proto h2
EOF
haproxy -c -f "$RUN_DIR/haproxy.cfg" >/dev/null
ip netns exec "$RUN_PREFIX-hap" haproxy -db -f "$RUN_DIR/haproxy.cfg" >"$RUN_DIR/haproxy.log" 2>&1 &
HAPROXY_PID=$!
RUN_PIDS+=("$HAPROXY_PID")

xlb_write_config
python3 - "$RUN_DIR/bootstrap.json" "$PKI" <<'PY'
import json, sys
path, pki = sys.argv[1], sys.argv[2]
c = json.load(open(path))
t = "type.googleapis.com/envoy."
c["certificate_providers"] = {"web": {"plugin_name": "file_watcher", "config": {
    "certificate_file": pki + "/vip.pem", "private_key_file": pki + "/vip.key",
    "refresh_interval": "60s"}}}
x = c["xlb"]
x["workers"] = 1
x["vips"] = [{"address": "198.18.0.100", "port": 443, "target": "xds:///bench",
              "l7_mode": "stream", "tls": {"certificate_provider": "web"}},
             {"address": "198.18.0.100", "port": 50053, "target": "xds:///bench",
              "l7_mode": "stream"}]
router = {"name": "router", "typed_config": {"@type": t + "extensions.filters.http.router.v3.Router"}}
listener = {"name": "bench", "api_listener": {"api_listener": {
    "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
    "route_config": {"name": "bench-routes", "virtual_hosts": [
        {"name": "all", "domains": ["*"],
         "routes": [{"match": {"prefix": "/"}, "route": {"cluster": "echo"}}]}]},
    "http_filters": [router]}}}
cluster = {"name": "echo", "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}}}
eds = {"cluster_name": "echo", "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
    {"endpoint": {"address": {"socket_address": {"address": a, "port_value": 50051}}}}
    for a in ("198.18.0.21", "198.18.0.22")]}]}
x["static_resources"] = {"listeners": [listener], "clusters": [cluster], "endpoints": [eds]}
json.dump(c, open(path, "w"), indent=1)
PY
xlb_start >/dev/null || { echo "tls_vs_haproxy: xlbd did not start"; tail -n 20 "$RUN_DIR/xlbd.log"; exit 1; }

# ---- measurement ----
. "$SRC/tools/bench/cpu_accounting.sh"
TSC_HZ=$(bench_tsc_hz)
XLB=198.18.0.100
HAP=198.18.0.3
TLS12_CIPHER=ECDHE-ECDSA-AES128-GCM-SHA256
TLS13_CIPHER=TLS_AES_128_GCM_SHA256

# CPU of each side, in ns: xlb's worker busy cycles, xlb's worker thread run time, HAProxy's
# process run time.
cpu_sample() {
    echo "$(python3 -c "print(int($(bench_xlb_busy) / $TSC_HZ * 1e9))") $(bench_cpu_ns "$XLBD_PID" '^(rte|lcore)-worker') $(bench_cpu_ns "$HAPROXY_PID")"
}
# xlb's TLS and stream counters, as name=value words: the TLS VIP's handshakes, resumptions
# and failures (xlbctl status), the stream_tls_* events and every drop (xlbctl counters).
xlb_counts() {
    {
        xlb_ctl --json status
        echo
        xlb_ctl --json counters
    } | python3 -c '
import json, sys
text = sys.stdin.read()
dec = json.JSONDecoder()
status, end = dec.raw_decode(text)
counters = dec.raw_decode(text[end:].lstrip())[0]["total"]
tls = status["vips"][0]["tls"]
words = ["tls_handshakes=" + str(tls["handshakes"]), "tls_resumptions=" + str(tls["resumptions"])]
words += [f"tls_failures.{k}={v}" for k, v in tls.get("failures", {}).items()]
words += [f"{k}={v}" for k, v in counters.get("events", {}).items() if k.startswith("stream_tls") or k in ("stream_connections", "stream_session_errors", "stream_pool_full")]
words += [f"drops.{k}={v}" for k, v in counters.get("drops", {}).items()]
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

# TLSB_CLIENTS handshake clients in parallel: "handshakes resumed failures seconds negotiated".
handshakes_run() { # ADDRESS ARGS...
    local address=$1 i
    shift
    for i in $(seq 1 "$CLIENTS"); do
        ip netns exec "$RUN_PREFIX-client" timeout $((SECONDS_PER_RUN + 30)) "$HANDSHAKE_CLIENT" \
            "$address" 443 "$SECONDS_PER_RUN" --servername api.xlb.test --rate "$RATE" "$@" \
            >"$RUN_DIR/hs.$i.out" 2>"$RUN_DIR/hs.$i.err" &
    done
    wait
    python3 - "$RUN_DIR" "$CLIENTS" <<'PY'
import sys
runs = []
for i in range(1, int(sys.argv[2]) + 1):
    line = open(f"{sys.argv[1]}/hs.{i}.out").read().split()
    runs.append(dict(w.split("=", 1) for w in line))
hs = sum(int(r["handshakes"]) for r in runs)
print(hs, sum(int(r["resumed"]) for r in runs), sum(int(r["failures"]) for r in runs),
      max(float(r["seconds"]) for r in runs),
      "/".join(sorted({f'{r["protocol"]},{r["cipher"]},{r["group"]}' for r in runs})))
PY
    cat "$RUN_DIR"/hs.*.err >>"$RUN_DIR/handshake-failures.log"
}

h2load_run() { # URL -> h2load's output
    local tls=()
    [[ $1 != https* ]] || tls=(--tls13-ciphers "$TLS13_CIPHER" --ciphers "$TLS12_CIPHER")
    ip netns exec "$RUN_PREFIX-client" timeout 120 h2load -n "$REQUESTS" -c "$CONNECTIONS" \
        -m "$STREAMS" "${tls[@]}" -d "$RUN_DIR/request.bin" -H 'content-type: application/grpc' \
        -H 'te: trailers' "$1" 2>&1 || true
}
succeeded() { sed -nE 's/^requests: .* ([0-9]+) succeeded.*/\1/p' <<<"$1"; }
rpc_run() { # URL -> "succeeded seconds negotiated"
    local out ok secs cipher
    out=$(h2load_run "$1")
    ok=$(succeeded "$out")
    secs=$(sed -nE 's/^finished in ([0-9.]+)(m?s),.*/\1 \2/p' <<<"$out" |
        awk '{print ($2 == "ms") ? $1 / 1000 : $1}')
    cipher=$(sed -nE 's/^Cipher: (.*)/\1/p' <<<"$out" | head -n 1)
    echo "${ok:-0} ${secs:-0} ${cipher:-cleartext}"
}

# Warm-up: neighbours resolved, both sides answering over TLS and in cleartext.
probe() { # URL -> h2load's output for 20 requests
    ip netns exec "$RUN_PREFIX-client" timeout 10 h2load -n 20 -c 2 -d "$RUN_DIR/request.bin" \
        -H 'content-type: application/grpc' "$1" 2>&1 || true
}
answers() { [ "$(succeeded "$(probe "$1")")" = 20 ]; }
for url in "https://$XLB:443/xlb.test.Echo/Who" "http://$XLB:50053/xlb.test.Echo/Who" \
    "https://$HAP:443/xlb.test.Echo/Who" "http://$HAP:50051/xlb.test.Echo/Who"; do
    xlb_wait_until 50 0.2 answers "$url" || {
        echo "tls_vs_haproxy: no answer from $url"
        probe "$url" | grep -E '^(requests|status|Cipher|Application)|rror' | head -n 8
        tail -n 8 "$RUN_DIR/haproxy.log"
        xlb_ctl counters | grep -E 'stream|tls|drops' | head -n 30
        exit 1
    }
done

echo "tls_vs_haproxy: xlb's TLS stream VIP (1 worker) and HAProxy $(haproxy -v | sed -nE '1s/HAProxy version ([^ ]+).*/\1/p') (nbthread 1), same topology, same run"
echo "  certificate ECDSA P-256; $(openssl version | cut -d' ' -f1-2) on both (HAProxy: $(haproxy -vv | sed -nE 's/^Running on OpenSSL version : (.*)/\1/p'))"
echo "  xlb: worker busy cycles at $(python3 -c "print(round($TSC_HZ / 1e9, 3))") GHz (TSC), [worker thread run time]; HAProxy: process run time (schedstat)"
echo "  $ROUNDS rounds; handshakes: $CLIENTS client processes x $SECONDS_PER_RUN s$( [ "$RATE" = 0 ] || echo ", each paced at $RATE/s"); RPCs: h2load -n $REQUESTS -c $CONNECTIONS -m $STREAMS"

ROWS=$RUN_DIR/rows
: >"$ROWS"
# One measurement against one side: prints a row and appends "workload side count cpu_us
# thread_us rate" to ROWS (cpu_us and thread_us per handshake or RPC; thread_us only for xlb).
measure() { # WORKLOAD SIDE KIND(handshakes|rpcs) ARGS...
    local workload=$1 side=$2 kind=$3 c0 c1 x0 t0 h0 x1 t1 h1 out count extra secs what cpu thread
    shift 3
    c0=$(xlb_counts)
    read -r x0 t0 h0 < <(cpu_sample)
    if [ "$kind" = handshakes ]; then
        read -r count resumed failures secs what < <(handshakes_run "$@")
        extra="resumed $resumed, failed $failures"
    else
        read -r count secs what < <(rpc_run "$@")
        extra=""
    fi
    read -r x1 t1 h1 < <(cpu_sample)
    c1=$(xlb_counts)
    if [ "$side" = xlb ]; then
        cpu=$((x1 - x0)) thread=$((t1 - t0))
    else
        cpu=$((h1 - h0)) thread=$((h1 - h0))
    fi
    python3 - "$workload" "$side" "$count" "$cpu" "$thread" "$secs" "$ROWS" <<'PY'
import sys
workload, side, count, cpu, thread, secs, rows = sys.argv[1:]
count, cpu, thread, secs = int(count), int(cpu), int(thread), float(secs)
per = cpu / 1e3 / max(count, 1)
per_thread = thread / 1e3 / max(count, 1)
rate = count / secs if secs > 0 else 0
per_core = count / (cpu / 1e9) if cpu > 0 else 0
shown = f"{per:9.2f}" + (f" [{per_thread:7.2f}]" if side == "xlb" else " " * 10)
print(f"    {side:8s} {count:8d} {rate:9.0f}/s  CPU {cpu / 1e9:6.3f} s  {shown} us each  {per_core:8.0f} per CPU s", end="")
with open(rows, "a") as f:
    f.write(f"{workload.replace(' ', '_')} {side} {count} {per} {per_thread} {rate}\n")
PY
    echo "  ${extra:+($extra) }$what"
    [ "$side" = haproxy ] || echo "             xlb's counters: $(counts_delta "$c0" "$c1")"
}

TLS13=(--tls 1.3 --ciphersuites "$TLS13_CIPHER")
TLS12=(--tls 1.2 --ciphers "$TLS12_CIPHER")
for round in $(seq 1 "$ROUNDS"); do
    echo
    echo "  round $round"
    echo "   full handshakes, TLS 1.3"
    measure full_tls13 xlb handshakes "$XLB" "${TLS13[@]}"
    measure full_tls13 haproxy handshakes "$HAP" "${TLS13[@]}"
    echo "   full handshakes, TLS 1.2"
    measure full_tls12 xlb handshakes "$XLB" "${TLS12[@]}"
    measure full_tls12 haproxy handshakes "$HAP" "${TLS12[@]}"
    echo "   resumptions, TLS 1.2 tickets"
    measure resumed_tls12 xlb handshakes "$XLB" "${TLS12[@]}" --reuse
    measure resumed_tls12 haproxy handshakes "$HAP" "${TLS12[@]}" --reuse
    echo "   RPCs over TLS (h2load -n $REQUESTS -c $CONNECTIONS -m $STREAMS)"
    measure rpcs_tls xlb rpcs "https://$XLB:443/xlb.test.Echo/Who"
    measure rpcs_tls haproxy rpcs "https://$HAP:443/xlb.test.Echo/Who"
    echo "   RPCs in cleartext, the baseline (same h2load)"
    measure rpcs_clear xlb rpcs "http://$XLB:50053/xlb.test.Echo/Who"
    measure rpcs_clear haproxy rpcs "http://$HAP:50051/xlb.test.Echo/Who"
done

echo
echo "  medians of $ROUNDS rounds (xlb: busy cycles [worker thread run time])"
python3 - "$ROWS" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def median(workload, side, col):
    v = [float(r[col]) for r in rows if r[0] == workload and r[1] == side]
    return statistics.median(v) if v else 0.0
names = {"full_tls13": ("full handshakes, TLS 1.3", "handshake", "target >= 2 per core"),
         "full_tls12": ("full handshakes, TLS 1.2", "handshake", "target >= 2 per core"),
         "resumed_tls12": ("resumptions, TLS 1.2 tickets", "resumption", ""),
         "rpcs_tls": ("RPCs over TLS, multiplexed", "RPC", "target >= 5"),
         "rpcs_clear": ("RPCs in cleartext, multiplexed (baseline)", "RPC", "")}
for w, (title, unit, target) in names.items():
    xlb, xthr, hap = median(w, "xlb", 3), median(w, "xlb", 4), median(w, "haproxy", 3)
    xrate, hrate = median(w, "xlb", 5), median(w, "haproxy", 5)
    if not xlb or not hap:
        print(f"  {title}: no figure (nothing succeeded on one side)")
        continue
    per_round = [float(h[3]) / float(x[3]) for x, h in zip(
        [r for r in rows if r[0] == w and r[1] == "xlb"],
        [r for r in rows if r[0] == w and r[1] == "haproxy"]) if float(x[3]) > 0]
    print(f"  {title}: xlb {xlb:.2f} us CPU per {unit} [{xthr:.2f}], {1e6 / xlb:.0f} per CPU s "
          f"({xrate:.0f}/s); HAProxy {hap:.2f} us, {1e6 / hap:.0f} per CPU s ({hrate:.0f}/s): "
          f"HAProxy / xlb = {hap / xlb:.2f} [{hap / xthr:.2f}] "
          f"(rounds: {', '.join(f'{r:.2f}' for r in per_round)}){'; ' + target if target else ''}")
tls, clear = median("rpcs_tls", "xlb", 3), median("rpcs_clear", "xlb", 3)
htls, hclear = median("rpcs_tls", "haproxy", 3), median("rpcs_clear", "haproxy", 3)
if tls and clear and htls and hclear:
    print(f"  TLS's cost per RPC, multiplexed: xlb +{tls - clear:.2f} us ({tls / clear:.2f}x cleartext), "
          f"HAProxy +{htls - hclear:.2f} us ({htls / hclear:.2f}x)")
PY
if [ -s "$RUN_DIR/handshake-failures.log" ]; then
    echo "  handshake client failures (first of each process):"
    sort "$RUN_DIR/handshake-failures.log" | uniq -c | head -n 8 | sed 's/^/    /'
fi
echo
xlb_ctl --json counters | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]
ev = t.get("events", {})
print("  xlb over the run: " + ", ".join(f"{k} {v}" for k, v in ev.items() if k.startswith("stream") and v))
print("  xlb drops: " + (", ".join(f"{k} {v}" for k, v in sorted(t.get("drops", {}).items()) if v) or "none"))'
xlb_stop >/dev/null || echo "tls_vs_haproxy: xlbd did not stop cleanly"
