#!/usr/bin/env bash
# Connection capacity (issue 24): short connections at a steady rate through an L7 (HTTP/2)
# VIP and an L4 VIP, with xlbd's default pool and circuit-breaker settings. h2load (Debian's
# nghttp2-client) opens CONN_RATE new connections per second for CONN_RATE_SECONDS, each
# carrying CONN_RATE_REQUESTS requests to nghttpd on three backends, once through each VIP:
#   198.18.0.100:50052  L7 VIP, stream mode (the default: xlb ends TCP and HTTP/2 and balances
#                       each request over its subchannels; target xds:///rate -> cluster l7)
#   198.18.0.100:50051  L7 VIP, splice mode (same target; one backend per connection)
#   198.18.0.100:9002   L4 VIP (cluster l4, round robin)          -> be1..3:50051
# What a user notices is asserted: no connection refused or reset, no request failed, and
# afterwards, within the flow timeouts (a bounded wait), no flow left on any VIP, no request
# in flight in either cluster, and none of stream_pool_full, stream_heap_full,
# stream_rpcs_queue_full, l7_pool_full, l7_binding_pool_full, l7_hpack_pool_full,
# lb_circuit_open, syn_pool_full counted.
# The rates achieved are printed: h2load's connections over its run time, and the new
# connections xlb counted while h2load was scheduled to open them.
#
# Knobs (environment):
#   CONN_RATE=1000 CONN_RATE_SECONDS=20 CONN_RATE_REQUESTS=2
#     h2load -r CONN_RATE/10 --rate-period 100ms -c CONN_RATE*CONN_RATE_SECONDS -m 1 -T 10s
#     (a connection not done in 10 s counts as failed). The issue asks for 2,000/s. h2load
#     opens 2,000/s in these namespaces, but on the 2-core machine shared with xlbd's polling
#     worker, af_packet and nghttpd, h2load itself falls behind over 20 s (657-788/s on
#     average, its connections living longer), so the default is 1,000/s, the issue's own
#     grpcio rate. Raise it on a bigger machine. At CONN_RATE=2000 (2026-11-29): the stream
#     VIP took 2,014 new connections/s for 8 s with 0 refused and 40,000 in 20 s with 0
#     failed requests (up to 1,665 open at once); the splice VIP 40,000 with 0 failed; the L4
#     VIP refused SYNs as lb_circuit_open (22,375), rightly: h2load's slow connections held
#     more than max_requests (1,024) open at once. Before the stream engine waited for the
#     client's FIN after its GOAWAY and sized its heap from the EAL memory, the stream VIP
#     refused 19,647 of 40,000 (stream_pool_full: TIME-WAIT held the pool) and then 4,950
#     (stream_heap_full: 597 sessions per worker at most).
#     Again on 2026-11-29 (the watcher now one Python process, not several a second): h2load
#     opened about 1,670/s for 20 s and then slowed, 40,000 connections in 63 s; the stream
#     and splice VIPs answered all 80,000 requests; through the L4 VIP 5,064 failed, reset
#     after the SYN proxy's SYN to a backend got no answer (syn_proxy_backend_failures 2,532):
#     the backends' kernels, on the core h2load also uses, dropped SYNs. A bigger machine is
#     needed to show 2,000/s through the L4 VIP.
#     The test asserts no refusals, never timing; it prints the rate achieved.
#   CONN_RATE_L7_POOL=N        xlb.l7_connections_per_worker (default: xlbd's own)
#   CONN_RATE_MAX_REQUESTS=N   circuit_breakers max_requests of both clusters (default: none,
#                              the xDS default of 1,024)
#   Both set large show that the test passes when capacity is not the limit:
#   CONN_RATE_L7_POOL=16384 CONN_RATE_MAX_REQUESTS=200000.
#   CONN_RATE_TRACE=1          each second, the VIP's flows and xlb's TCP counters
. "$(dirname "$0")/lib.sh"

for tool in nghttpd h2load; do
    command -v "$tool" >/dev/null || fail "$tool is missing (tools/setup-deps.sh installs it)"
done

RATE=${CONN_RATE:-1000}
SECONDS_RUN=${CONN_RATE_SECONDS:-20}
PER_CONN=${CONN_RATE_REQUESTS:-2}
POOL=${CONN_RATE_L7_POOL:-}
MAX_REQUESTS=${CONN_RATE_MAX_REQUESTS:-}
for v in "$RATE" "$SECONDS_RUN" "$PER_CONN" ${POOL:+"$POOL"} ${MAX_REQUESTS:+"$MAX_REQUESTS"}; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || fail "CONN_RATE* knobs take positive integers, not '$v'"
done
[ "$RATE" -ge 10 ] && [ "$SECONDS_RUN" -le 120 ] && [ $((RATE * SECONDS_RUN)) -le 200000 ] ||
    fail "CONN_RATE >= 10, CONN_RATE_SECONDS <= 120 and at most 200,000 connections"
CONNECTIONS=$((RATE * SECONDS_RUN))

e2e_setup
e2e_edit_config '
import os
t = "type.googleapis.com/envoy."
x = c["xlb"]
pool, max_requests = os.environ.get("CONN_RATE_L7_POOL"), os.environ.get("CONN_RATE_MAX_REQUESTS")
if pool:
    x["l7_connections_per_worker"] = int(pool)
    # A connection takes about 36 KB of the heap with its binding entry and its share of the
    # HPACK heap (docs/l7.md, bench_l7): room for the pool on top of the default 512 MB.
    m = x["eal"].index("-m")
    x["eal"][m + 1] = str(512 + int(pool) * 36 // 1000)
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
    cl = {"name": name, "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}}}
    if max_requests:
        cl["circuit_breakers"] = {"thresholds": [{"max_requests": int(max_requests)}]}
    return cl
def eds(name):
    return {"cluster_name": name, "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 1,
        "lb_endpoints": [{"endpoint": {"address": {"socket_address": {"address": a, "port_value": 50051}}}}
                         for a in ("198.18.0.21", "198.18.0.22", "198.18.0.23")]}]}
x["static_resources"] = {"listeners": [listener], "clusters": [cluster("l7"), cluster("l4")],
                         "endpoints": [eds("l7"), eds("l4")]}'
"$XLBD" --check --config "$E2E_DIR/bootstrap.json" >/dev/null || fail "xlbd --check rejected the bootstrap"

# The client makes up to 200,000 connections and closes each first (TIME-WAIT on its side):
# all ports, not the default 28,232.
ip netns exec "$E2E_PREFIX-client" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
# A SYN xlb drops is retried twice (1 s, 3 s), then the connect fails: h2load's -T does not
# cover connecting, and the kernel's default six retries would keep it waiting two minutes.
ip netns exec "$E2E_PREFIX-client" sysctl -qw net.ipv4.tcp_syn_retries=2
mkdir -p "$E2E_DIR/www"
printf 'ok\n' >"$E2E_DIR/www/who"
for b in be1 be2 be3; do
    ip netns exec "$E2E_PREFIX-$b" sysctl -qw net.core.somaxconn=4096
    # $! is nghttpd itself (ip netns exec execs it), so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$b" nghttpd --no-tls -d "$E2E_DIR/www" 50051 \
        >"$E2E_DIR/nghttpd-$b.log" 2>&1 &
    RUN_PIDS+=($!)
done
e2e_start_xlbd

STREAM_URL=http://198.18.0.100:50052/who
L7_URL=http://198.18.0.100:50051/who
L4_URL=http://198.18.0.100:9002/who
# The first SYNs may meet backends xlb is still resolving: TCP retries them.
answers() { in_client h2load -n 6 -c 3 "$1" 2>&1 | grep -q ' 6 succeeded, 0 failed, 0 errored'; }
wait_until 50 0.2 answers "$STREAM_URL" || fail "no answer through the stream-mode L7 VIP"
wait_until 50 0.2 answers "$L7_URL" || fail "no answer through the L7 VIP"
wait_until 50 0.2 answers "$L4_URL" || fail "no answer through the L4 VIP"
pass "both VIPs answer"

# Flows on a VIP (for the L7 VIP: its connections, one pool entry each) and a cluster's
# requests in flight (what circuit breaking compares with max_requests).
vip_flows() { xlbctl --json flows --vip "$1" --limit 1 | python3 -c 'import json, sys; print(int(json.load(sys.stdin)["matching"]))'; }
in_flight() {
    xlbctl metrics | sed -nE "s/^xlb_cluster_requests_in_flight\{cluster=\"$1\"\} ([0-9]+).*/\1/p"
}
# Connections xlb's own TCP holds (the stream mode's client and subchannel connections).
tcp_connections() { xlbctl --json counters | python3 -c 'import json, sys; print(json.load(sys.stdin)["total"]["tcp"]["connections"])'; }
settled() { [ "$(vip_flows "$1")" -eq 0 ] && [ "$(in_flight "$2")" = 0 ]; }
# The warm-up's flows end within the flow timeouts (closing: 30 s) like any others.
wait_until 45 1 settled 198.18.0.100:50052 l7 || fail "warm-up flows stayed: $(vip_flows 198.18.0.100:50052)"
wait_until 45 1 settled 198.18.0.100:50051 l7 || fail "warm-up flows stayed: $(vip_flows 198.18.0.100:50051)"
wait_until 45 1 settled 198.18.0.100:9002 l4 || fail "warm-up flows stayed: $(vip_flows 198.18.0.100:9002)"

# (The l7_*_pool_full are events: the refused connection gets a RST, nothing is dropped.)
REFUSALS="events.stream_pool_full events.stream_heap_full events.stream_rpcs_queue_full events.l7_pool_full events.l7_binding_pool_full events.l7_hpack_pool_full
drops.lb_circuit_open drops.syn_pool_full"
drops() { local d; for d in $REFUSALS; do printf '%s=%s ' "${d#*.}" "$(counter "$d")"; done; }
# Every nonzero event and drop, as "name=value" words, and what changed between two.
all_counts() {
    xlbctl --json counters | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]
words = [f"{k}={v}" for k, v in t["events"].items() if v]
print(" ".join(words + [f"drops.{k}={v}" for k, v in t["drops"].items() if v]))'
}
counts_delta() { # BEFORE AFTER
    python3 - "$1" "$2" <<'PY'
import sys
a = dict(w.split("=") for w in sys.argv[1].split())
b = dict(w.split("=") for w in sys.argv[2].split())
print(", ".join(f"{k} {int(v) - int(a.get(k, 0))}" for k, v in b.items() if int(v) != int(a.get(k, 0))) or "none")
PY
}
echo "# $CONNECTIONS connections at $RATE/s for ${SECONDS_RUN} s, $PER_CONN requests each, per VIP;" \
    "l7_connections_per_worker ${POOL:-default}, max_requests ${MAX_REQUESTS:-default}"

problems=()
# run NAME URL VIP CLUSTER: one paced h2load run through a VIP, its checks, and the wait for the
# VIP's flows and the cluster's requests in flight to go back to 0.
run() {
    local name=$1 url=$2 vip=$3 cluster=$4 out before after peak peak_tcp secs known=${#problems[@]}
    local all0 t0 c0 t1 c1 created=flows_created
    case $name in L7-stream) created=stream_connections ;; L7-splice) created=l7_connections ;; esac
    before=$(drops) all0=$(all_counts)
    t0=$(date +%s.%N) c0=$(counter "events.$created")
    # Not through in_client: $! must be h2load itself, so that cleanup's kill reaches it.
    ip netns exec "$E2E_PREFIX-client" timeout $((SECONDS_RUN * 3 + 30)) \
        h2load -r $((RATE / 10)) --rate-period 100ms -c "$CONNECTIONS" -n $((CONNECTIONS * PER_CONN)) \
        -m 1 -T 10s "$url" >"$E2E_DIR/h2load-$name.out" 2>&1 &
    local load=$!
    RUN_PIDS+=("$load")
    # While the load runs, one Python process samples xlb each second (bounded): the peaks of
    # the VIP's flows and of xlb's TCP connections, and the new connections xlb took in while
    # h2load was scheduled to open them. One interpreter for the run: a few new ones a second
    # took a good part of the core h2load shares with the backends on a 2-core machine.
    read -r peak peak_tcp t1 c1 < <(python3 - "$XLB_BUILD/apps/xlbctl" "$RUN_DIR/xlbd.sock" "$vip" \
        "$created" "$SECONDS_RUN" "$load" "$t0" "$c0" "${CONN_RATE_TRACE:-}" <<'PY'
import json, os, subprocess, sys, time
xlbctl, sock, vip, created, seconds, pid, t0, c0, trace = sys.argv[1:10]
seconds, t0, c0 = int(seconds), float(t0), int(c0)
def ask(*args):
    return json.loads(subprocess.run([xlbctl, "--socket", sock, "--json", *args],
                                     capture_output=True, timeout=10).stdout)
peak = peak_tcp = 0
t1, c1 = t0, c0
for _ in range(seconds * 3 + 30):
    if not os.path.exists("/proc/" + pid):
        break
    try:
        flows = int(ask("flows", "--vip", vip, "--limit", "1")["matching"])
        total = ask("counters")["total"]
    except (ValueError, KeyError, subprocess.TimeoutExpired):
        time.sleep(1)
        continue
    peak, peak_tcp = max(peak, flows), max(peak_tcp, total["tcp"]["connections"])
    if trace:
        print("# trace: flows %d, xlb TCP %s" % (flows, {k: v for k, v in total["tcp"].items() if v}),
              file=sys.stderr)
    if time.time() - t0 <= seconds:
        t1, c1 = time.time(), total["events"][created]
    time.sleep(1)
print(peak, peak_tcp, t1, c1)
PY
)
    wait "$load" || true
    out=$(cat "$E2E_DIR/h2load-$name.out")
    secs=$(sed -nE 's/^finished in ([0-9.]+)(m?s),.*/\1 \2/p' <<<"$out" |
        awk '{print ($2 == "ms") ? $1 / 1000 : $1}')
    local req clients
    req=$(grep -E '^requests:' <<<"$out" || echo "requests: (none: h2load did not finish)")
    clients=$(python3 -c "print(round($CONNECTIONS / ${secs:-0}) if ${secs:-0} else 0)")
    echo "# $name: $req"
    echo "# $name: h2load made $CONNECTIONS connections in ${secs:-?} s: $clients/s on average (target $RATE);" \
        "peak flows on the VIP $peak, peak TCP connections of xlb $peak_tcp, in flight now $(in_flight "$cluster")"
    echo "# $name: in the first $(python3 -c "print(round($t1 - $t0, 1))") s xlb took" \
        "$(python3 -c "print(round(($c1 - $c0) / max($t1 - $t0, 0.001)))") new connections/s ($created)"
    after=$(drops)
    echo "# $name: counters over the run: $(counts_delta "$all0" "$(all_counts)")"
    grep -q "requests: $((CONNECTIONS * PER_CONN)) total, $((CONNECTIONS * PER_CONN)) started, $((CONNECTIONS * PER_CONN)) done, $((CONNECTIONS * PER_CONN)) succeeded, 0 failed, 0 errored, 0 timeout" <<<"$out" ||
        problems+=("$name: not every request succeeded: $req")
    [ "$before" = "$after" ] || problems+=("$name: drops counted: before $before, after $after")
    if wait_until 45 1 settled "$vip" "$cluster"; then
        echo "# $name: flows on $vip and requests in flight of $cluster back to 0"
    else
        problems+=("$name: after 45 s, $(vip_flows "$vip") flows on $vip, $(in_flight "$cluster") in flight in $cluster")
    fi
    [ ${#problems[@]} -gt "$known" ] || pass "$name: $CONNECTIONS new connections at $clients/s, every request answered, no drop, back to 0"
}

run L7-stream "$STREAM_URL" 198.18.0.100:50052 l7
run L7-splice "$L7_URL" 198.18.0.100:50051 l7
run L4 "$L4_URL" 198.18.0.100:9002 l4
[ ${#problems[@]} -eq 0 ] || fail "$(printf '%s; ' "${problems[@]}")"

e2e_stop_xlbd
pass "clean exit"
