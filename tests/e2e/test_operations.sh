#!/usr/bin/env bash
# Known traffic in, the same numbers out of every window operators have: xlbctl counters,
# Prometheus metrics (xlbctl and HTTP), and DPDK telemetry, for packets and for clusters,
# localities and endpoints after a known number of TCP connections through the L4 VIP;
# busy/idle cycles; log levels; xlbctl help without a daemon.
. "$(dirname "$0")/lib.sh"

# Help comes from xlbctl itself: no daemon, no socket.
out=$("$XLBCTL" --socket "$E2E_DIR/nobody.sock" help flows) || fail "help flows without a daemon"
grep -q "^usage: xlbctl flows \[--vip ADDR\[:PORT\]\]" <<<"$out" || fail "help flows: $out"
out=$("$XLBCTL" --socket "$E2E_DIR/nobody.sock" help flows flush) || fail "help flows flush"
grep -q "^usage: xlbctl flows flush --endpoint ADDR\[:PORT\]" <<<"$out" || fail "help flows flush: $out"
out=$("$XLBCTL" --socket "$E2E_DIR/nobody.sock" help) || fail "help without a daemon"
grep -q "endpoints CLUSTER" <<<"$out" || fail "help lists no endpoints command: $out"
out=$("$XLBCTL" --socket "$E2E_DIR/nobody.sock" help reboot 2>&1) && fail "help of an unknown command succeeded"
grep -q 'no command "reboot"' <<<"$out" || fail "help reboot: $out"
pass "xlbctl help and help COMMAND work without a running xlbd"

e2e_setup
e2e_edit_config 'c["xlb"]["metrics_listen"] = "127.0.0.1:9100"'
# The demo's L4 VIP 198.18.0.100:9000 (cluster demo-tcp: .21 and .22 in demo-a, .23 in
# demo-b) gets backends that answer each connection with their name.
for b in be1 be2 be3; do
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9000 "$b" \
        >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
e2e_start_xlbd

# Exactly 5 IPv4 and 3 IPv6 echo requests: 8 echo replies.
in_client ping -c 5 -i 0.2 -W 2 198.18.0.100 >/dev/null || fail "ping"
in_client ping -6 -c 3 -i 0.2 -W 2 2001:2::100 >/dev/null || fail "ping -6"
[ "$(counter events.icmp_echo_replies)" = 8 ] || fail "xlbctl counts $(counter events.icmp_echo_replies) echo replies, not 8"
pass "xlbctl counters: 8 echo replies"

# Exactly 30 TCP connections through the L4 VIP, once every backend's MAC is known (a SYN
# dropped while a next hop resolves would be retried, and its pick counted twice).
all_resolved() {
    [ "$(xlbctl --json neighbours | python3 -c 'import json,sys; n=json.load(sys.stdin); print(sum(1 for x in n if x["state"] == "reachable"))')" -ge 5 ]
}
wait_until 100 0.1 all_resolved || fail "backends not resolved: $(xlbctl neighbours)"
in_client timeout 120 python3 - >"$E2E_DIR/answers.json" <<'PY' || fail "L4 connections: $(cat "$E2E_DIR/answers.json")"
import json, socket, sys
answers = {}
for _ in range(30):
    with socket.create_connection(("198.18.0.100", 9000), timeout=5) as s:
        name = s.recv(16).decode()
    answers[name] = answers.get(name, 0) + 1
print(json.dumps(answers))
sys.exit(0 if sum(answers.values()) == 30 and set(answers) <= {"be1", "be2", "be3"} else 1)
PY
pass "30 TCP connections through the L4 VIP: $(cat "$E2E_DIR/answers.json")"

# Prometheus exposition, from xlbctl and from the HTTP listener in xlbd's namespace.
xlbctl metrics >"$E2E_DIR/metrics.txt"
ip netns exec "$E2E_PREFIX-lb" python3 -c '
import urllib.request, urllib.error, sys
print(urllib.request.urlopen("http://127.0.0.1:9100/metrics", timeout=5).read().decode(), end="")
try:
    urllib.request.urlopen("http://127.0.0.1:9100/nothing", timeout=5)
    sys.exit("a path other than /metrics was served")
except urllib.error.HTTPError as e:
    assert e.code == 404, e.code
' >"$E2E_DIR/metrics-http.txt" || fail "HTTP /metrics"
for file in metrics.txt metrics-http.txt; do
    python3 - "$E2E_DIR/$file" "$E2E_DIR/answers.json" <<'PY' || fail "metrics in $file"
import json, re, sys
families, typed, values = set(), {}, {}
sample = re.compile(r'^([a-z_:][a-z0-9_:]*)(\{([a-z_]+="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+]+|NaN)$')
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# HELP "):
        families.add(line.split()[2])
    elif line.startswith("# TYPE "):
        _, _, name, kind = line.split()
        typed[name] = kind
    else:
        m = sample.match(line)
        assert m, "not an exposition line: %r" % line
        name = m.group(1)
        assert name in typed and name in families, "sample before HELP/TYPE: " + name
        if typed[name] == "counter":
            assert name.endswith("_total"), name
        values[line.rsplit(" ", 1)[0]] = float(line.rsplit(" ", 1)[1])
echo = sum(v for k, v in values.items()
           if k.startswith("xlb_worker_events_total{") and 'event="icmp_echo_replies"' in k)
assert echo == 8, echo
assert values['xlb_port_link_up{port="net_af_packet0"}'] == 1
assert values["xlb_snapshot_generation"] >= 2
busy = values['xlb_worker_busy_cycles_total{worker="0"}']
idle = values['xlb_worker_idle_cycles_total{worker="0"}']
assert busy > 0 and idle > 0, (busy, idle)
assert sum(1 for k in values if k.startswith("xlb_vip_info{")) == 3
assert sum(1 for k in values if k.startswith("xlb_neighbour_resolved{")) >= 2  # + on-link backends

# The 30 connections, counted alike by the cluster, its localities and its endpoints; each
# endpoint's successes are the connections its backend answered.
answers = json.load(open(sys.argv[2]))
def series(family, **labels):
    want = ['%s="%s"' % kv for kv in labels.items()]
    return {k: v for k, v in values.items()
            if k.startswith(family + "{") and all(w in k for w in want)}
assert values['xlb_cluster_requests_started_total{cluster="demo-tcp"}'] == 30, values
assert values['xlb_cluster_circuit_breaker_drops_total{cluster="demo-tcp"}'] == 0
assert values['xlb_cluster_endpoints{cluster="demo-tcp"}'] == 3
assert values['xlb_cluster_endpoints_usable{cluster="demo-tcp"}'] == 3
assert values['xlb_cluster_endpoints_ejected{cluster="demo-tcp"}'] == 0
assert values['xlb_cluster_chosen_priority{cluster="demo-tcp"}'] == 0
assert values['xlb_cluster_requests_started_total{cluster="demo-grpc"}'] == 0
assert sum(series("xlb_locality_requests_started_total", cluster="demo-tcp").values()) == 30
assert values['xlb_locality_weight{cluster="demo-tcp",priority="0",locality="demo/demo-a/"}'] == 2
ok = series("xlb_endpoint_requests_total", cluster="demo-tcp", result="success")
assert sum(ok.values()) == 30, ok
assert sum(series("xlb_endpoint_requests_total", cluster="demo-tcp", result="failure").values()) == 0
for backend, address in (("be1", "198.18.0.21:9000"), ("be2", "198.18.0.22:9000"),
                         ("be3", "198.18.0.23:9000")):
    got = [v for k, v in ok.items() if 'endpoint="%s"' % address in k]
    assert got == [answers.get(backend, 0)], (backend, got, answers)
assert len(series("xlb_endpoint_health", cluster="demo-tcp", status="unknown")) == 3
assert sum(series("xlb_endpoint_ejected", cluster="demo-tcp").values()) == 0
assert values["xlb_metrics_endpoints_folded"] == 0
# No xds_servers: no stream; the demo's static resources by type.
assert not series("xlb_xds_stream_connected")
assert values['xlb_xds_resources{type="cluster",state="static"}'] == 2
assert values['xlb_xds_resources{type="cluster_load_assignment",state="static"}'] == 2
assert values['xlb_xds_resources{type="listener",state="static"}'] == 1
PY
done
pass "metrics: well-formed exposition, 8 echo replies, busy and idle cycles, and the 30 connections per cluster, locality and endpoint, from xlbctl and HTTP"
out=$(xlbctl --json endpoints demo-tcp | python3 -c 'import json,sys; print(sum(e["succeeded"] for e in json.load(sys.stdin)))')
[ "$out" -eq 30 ] || fail "xlbctl endpoints counts $out successes, not 30"

# DPDK telemetry through DPDK's own client.
printf '/xlb/counters\n/xlb/workers\n/xlb/status\n/xlb/drops,0\n/xlb/clusters\n/xlb/endpoints,demo-tcp\n/xlb/xds\n' |
    dpdk-telemetry.py -f "$E2E_PREFIX" >"$E2E_DIR/telemetry.txt" 2>&1 || fail "dpdk-telemetry.py"
python3 - "$E2E_DIR/telemetry.txt" "$E2E_DIR/answers.json" <<'PY' || { cat "$E2E_DIR/telemetry.txt"; fail "telemetry"; }
import json, sys
replies = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        replies.update(json.loads(line))
assert replies["/xlb/counters"]["icmp_echo_replies"] == 8, replies["/xlb/counters"]
worker = replies["/xlb/workers"]["worker_0"]
assert worker["busy_cycles"] > 0 and worker["idle_cycles"] > 0, worker
assert replies["/xlb/status"]["neighbours_resolved"] >= 2  # gateways, then on-link backends
assert "not_our_address" in replies["/xlb/drops"]
clusters = {c["name"]: c for c in replies["/xlb/clusters"].values()}
tcp = clusters["demo-tcp"]
assert tcp["requests_started"] == 30 and tcp["endpoints"] == 3 and tcp["endpoints_usable"] == 3, tcp
assert tcp["circuit_breaker_drops"] == 0 and tcp["chosen_priority"] == 0, tcp
endpoints = {e["address"]: e for e in replies["/xlb/endpoints"].values()}
answers = json.load(open(sys.argv[2]))
for backend, address in (("be1", "198.18.0.21:9000"), ("be2", "198.18.0.22:9000"),
                         ("be3", "198.18.0.23:9000")):
    e = endpoints[address]
    assert e["cluster"] == "demo-tcp" and e["health"] == "unknown" and e["ejected"] == 0, e
    assert e["succeeded"] == answers.get(backend, 0) and e["failed"] == 0, (e, answers)
xds = replies["/xlb/xds"]
assert xds["stream_connected"] == 0 and xds["cluster"]["static"] == 2, xds
PY
pass "dpdk-telemetry.py reads /xlb/counters, /xlb/workers, /xlb/status, /xlb/drops, /xlb/clusters, /xlb/endpoints,CLUSTER, /xlb/xds"

# (Output goes through variables: with pipefail, grep -q closing the pipe early would fail it.)
out=$(xlbctl status)
grep -q "BUSY %" <<<"$out" || fail "status shows no worker load: $out"
out=$(xlbctl log level worker debug)
grep -Eq "xlb.worker +debug" <<<"$out" || fail "log level not set"
out=$(xlbctl log)
grep -Eq "xlb.worker +debug" <<<"$out" || fail "log level not kept"
out=$(xlbctl log level worker loud 2>&1) && fail "a bad level was accepted"
grep -q 'no log level "loud"' <<<"$out" || fail "bad level message: $out"
out=$(xlbctl log level nobody info 2>&1) && fail "a bad component was accepted"
out=$(xlbctl log level all notice)
grep -Eq "xlb.app +notice" <<<"$out" || fail "log level all: $out"
pass "log levels per component at run time"

e2e_stop_xlbd
pass "clean exit"
