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
assert values['xlb_worker_l7_connections_capacity{worker="0"}'] >= 1024
assert values['xlb_worker_flows_capacity{worker="0"}'] == 65536
assert values['xlb_worker_flows_high_water{worker="0"}'] >= values['xlb_worker_flows{worker="0"}']
assert sum(1 for k in values if k.startswith("xlb_vip_info{")) == 4
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
# An L4 VIP has no subchannels: its endpoints stay IDLE.
assert len(series("xlb_endpoint_connectivity", cluster="demo-tcp", state="IDLE")) == 3
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
out=$(xlbctl --json endpoints demo-tcp | python3 -c 'import json,sys; print(" ".join(e["connectivity"] for e in json.load(sys.stdin)))')
[ "$out" = "IDLE IDLE IDLE" ] || fail "xlbctl endpoints shows connectivity '$out', not IDLE for an L4 VIP"

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
assert worker["l7_connections_capacity"] >= 1024 and worker["flows_capacity"] == 65536, worker
assert worker["flows_high_water"] >= worker["flows_in_use"], worker
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
    assert e["connectivity"] == "IDLE", e
xds = replies["/xlb/xds"]
assert xds["stream_connected"] == 0 and xds["cluster"]["static"] == 2, xds
PY
pass "dpdk-telemetry.py reads /xlb/counters, /xlb/workers, /xlb/status, /xlb/drops, /xlb/clusters, /xlb/endpoints,CLUSTER, /xlb/xds"

# Telemetry of ports, VIPs, neighbours and worker 0's counters, against known values: the
# configured VIPs, the gateways and backends at their kernels' MACs, 8 echo replies, and rx
# counts that fall between two `xlbctl --json` readings (the kernels on the link keep talking,
# so the same count at two instants would be a race).
xlbctl --json status >"$E2E_DIR/status-before.json"
xlbctl --json counters >"$E2E_DIR/counters-before.json"
printf '/xlb/ports\n/xlb/vips\n/xlb/neighbours\n/xlb/counters,0\n' |
    dpdk-telemetry.py -f "$E2E_PREFIX" >"$E2E_DIR/telemetry-state.txt" 2>&1 || fail "dpdk-telemetry.py"
xlbctl --json status >"$E2E_DIR/status-after.json"
xlbctl --json counters >"$E2E_DIR/counters-after.json"
mac_of() { # NAMESPACE LINK
    ip -n "$1" -j link show "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])'
}
macs="198.18.0.1=$(mac_of "$E2E_PREFIX-sw" br0) 2001:2::1=$(mac_of "$E2E_PREFIX-sw" br0)"
for b in 1 2 3; do macs="$macs 198.18.0.2$b=$(mac_of "$E2E_PREFIX-be$b" eth0)"; done
python3 - "$E2E_DIR" $macs <<'PY' || { cat "$E2E_DIR/telemetry-state.txt"; fail "telemetry of ports, VIPs, neighbours and counters"; }
import json, sys
d = sys.argv[1]
macs = dict(a.split("=", 1) for a in sys.argv[2:])
def load(name):
    return json.load(open(d + "/" + name))
replies = {}
for line in open(d + "/telemetry-state.txt"):
    if line.strip().startswith("{"):
        replies.update(json.loads(line))
before, after = load("status-before.json"), load("status-after.json")

ports = list(replies["/xlb/ports"].values())
assert len(ports) == 1, ports
port = ports[0]
assert port["name"] == "net_af_packet0" and port["link_up"] == 1, port
# The port sits on the lb host's eth0: status names it and reads its carrier.
assert after["ports"][0]["kernel_interface"] == {"name": "eth0", "state": "up"}, after["ports"][0]
low, high = before["ports"][0]["rx_packets"], after["ports"][0]["rx_packets"]
assert 0 < low <= port["rx_packets"] <= high, ("port rx", low, port, high)

configured = load("bootstrap.json")["xlb"]["vips"]
vips = replies["/xlb/vips"]
assert len(vips) == len(configured) == 4, vips
for i, want in enumerate(configured):
    got = vips["vip_%d" % i]
    assert got["address"] == want["address"] and got["port"] == want["port"], (got, want)
    if "cluster" in want:
        assert got["mode"] == "l4" and got["cluster"] == want["cluster"], (got, want)
    else:
        assert got["mode"] == "l7" and got["target"] == want["target"], (got, want)
    assert got["state"] == after["vips"][i]["state"], (got, after["vips"][i])

neighbours = {n["address"]: n for n in replies["/xlb/neighbours"].values()}
for address, mac in macs.items():
    n = neighbours[address]
    assert n["state"] == "reachable" and n["mac"].lower() == mac.lower(), (n, mac)
    assert n["port"] == "net_af_packet0", n

worker = replies["/xlb/counters"]
w0, w1 = load("counters-before.json")["workers"][0], load("counters-after.json")["workers"][0]
assert 0 < w0["rx_packets"] <= worker["rx_packets"] <= w1["rx_packets"], ("rx", w0, worker, w1)
assert worker["icmp_echo_replies"] == 8, worker
assert worker["flows_created"] == w0["events"]["flows_created"] == w1["events"]["flows_created"]
print("port rx %d <= %d <= %d" % (low, port["rx_packets"], high))
PY
pass "dpdk-telemetry.py reads /xlb/ports, /xlb/vips, /xlb/neighbours and /xlb/counters,0: the configured VIPs, neighbours at their MACs, rx within xlbctl's readings"

# Known bad traffic: 7 TCP SYNs to the port address, which serves nothing over TCP. They are
# written on a raw socket so that each goes out exactly once (a connect() would retransmit).
no_service=$(counter drops.tcp_no_service)
in_client python3 - <<'PY' || fail "raw SYNs"
import socket, struct
src, dst = socket.inet_aton("198.18.0.2"), socket.inet_aton("198.18.0.10")
def checksum(data):
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
for i in range(7):
    syn = struct.pack("!HHIIBBHHH", 40000 + i, 81, i, 0, 5 << 4, 0x02, 64240, 0, 0)
    pseudo = src + dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(syn))
    syn = syn[:16] + struct.pack("!H", checksum(pseudo + syn)) + syn[18:]
    s.sendto(syn, ("198.18.0.10", 0))
PY
no_service_drops() { [ "$(counter drops.tcp_no_service)" -ge "$1" ]; }
wait_until 50 0.1 no_service_drops $((no_service + 7)) || fail "the SYNs were not dropped as tcp_no_service"
no_service=$((no_service + 7))
[ "$(counter drops.tcp_no_service)" = "$no_service" ] || fail "tcp_no_service: $(counter drops.tcp_no_service), not $no_service"

# A reload of the unchanged file, counted as applied.
kill -HUP "$XLBD_PID"
reloads_applied() {
    [ "$(xlbctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["reload"]["applied"])')" = 1 ]
}
wait_until 50 0.1 reloads_applied || fail "SIGHUP was not applied"

ip netns exec "$E2E_PREFIX-lb" python3 - "$no_service" <<'PY' || fail "metrics after known drops and a reload"
import re, sys, urllib.error, urllib.request
url = "http://127.0.0.1:9100/metrics"
text = urllib.request.urlopen(url, timeout=5).read().decode()
values = dict(line.rsplit(" ", 1) for line in text.splitlines() if not line.startswith("#"))
drops = [float(v) for k, v in values.items()
         if k.startswith("xlb_worker_drops_total{") and 'reason="tcp_no_service"' in k]
assert sum(drops) == int(sys.argv[1]), (drops, sys.argv[1])
assert float(values['xlb_config_reloads_total{result="applied"}']) == 1, values
assert float(values['xlb_config_reloads_total{result="rejected"}']) == 0, values
try:
    urllib.request.urlopen(urllib.request.Request(url, data=b"x", method="POST"), timeout=5)
    sys.exit("POST /metrics was served")
except urllib.error.HTTPError as e:
    assert e.code == 405, e.code
PY
out=$(xlbctl counters)
grep -Eq "^drops\.tcp_no_service +$no_service +$no_service *$" <<<"$out" || fail "xlbctl counters: $out"
grep -Eq "^events\.icmp_echo_replies +8 +8 *$" <<<"$out" || fail "xlbctl counters: $out"
pass "7 SYNs to the port address: tcp_no_service $no_service in xlbctl, metrics and the counters table; 1 reload counted; POST /metrics gets 405"

# (Output goes through variables: with pipefail, grep -q closing the pipe early would fail it.)
out=$(xlbctl status)
grep -q "BUSY %" <<<"$out" || fail "status shows no worker load: $out"
grep -q "L7 POOL" <<<"$out" || fail "status shows no L7 pool: $out"

# Issue 24: each worker's flow table and L7 pool, in use, high-water mark and capacity. A
# client connection held open on the L7 VIP (the SYN cookie handshake is xlb's own) takes one
# pool entry; the 30 connections above left a high-water mark in the flow table.
in_client python3 -c '
import socket, time
s = socket.create_connection(("198.18.0.100", 8080), timeout=5)
time.sleep(3)
' &
holder=$!
sleep 1.5
l7_pool=$("$XLBD" --check --config "$E2E_DIR/bootstrap.json" |
    sed -n 's/^capacity: l7 connections \([0-9]*\) per worker.*/\1/p')
xlbctl --json status >"$E2E_DIR/status-pools.json"
wait "$holder" || fail "no connection to the L7 VIP"
python3 - "$E2E_DIR/status-pools.json" "$l7_pool" <<'PY' || fail "status pool figures"
import json, sys
workers = json.load(open(sys.argv[1]))["workers"]
pool = int(sys.argv[2])
assert sum(w["l7_connections_in_use"] for w in workers) == 1, workers
for w in workers:
    assert w["l7_connections_capacity"] == pool, (w, pool)
    assert w["l7_connections_in_use"] <= w["l7_connections_high_water"] <= pool, w
    assert w["flows_capacity"] == 65536 and w["flows_in_use"] <= w["flows_high_water"], w
    assert 0 < w["l7_hpack_bytes_capacity"], w
    assert w["l7_hpack_bytes_in_use"] <= w["l7_hpack_bytes_high_water"] <= w["l7_hpack_bytes_capacity"], w
assert sum(w["flows_high_water"] for w in workers) >= 1, workers
# The held connection's decoders hold their reserved floor of the HPACK heap.
assert sum(w["l7_hpack_bytes_in_use"] for w in workers) > 0, workers
PY
pass "status shows each worker's flow table, L7 pool and HPACK heap: in use, high-water mark, capacity ($l7_pool connections, as --check says)"
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
