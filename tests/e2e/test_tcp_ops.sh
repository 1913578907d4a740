#!/usr/bin/env bash
# The TCP endpoint's operator surfaces (docs/operations.md): `xlbctl tcp` lists its connections
# like `ss -ti`, and its counters are in `xlbctl counters` (group tcp), DPDK telemetry (/xlb/tcp)
# and Prometheus (xlb_tcp_*), per worker. Before any connection, every surface is there and
# idle (an empty listing, zero counters); with connections held open through a terminate VIP,
# the listing shows both sides of each ESTABLISHED and the counters move.
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_edit_config '
x = c["xlb"]
x["workers"] = 2
x["eal"] = [a.replace("qpairs=1", "qpairs=2") for a in x["eal"]]
x["vips"] += [{"address": "198.18.0.100", "port": 9002, "cluster": "relayed",
               "l4_mode": "terminate"}]
sr = x["static_resources"]
sr["clusters"].append({"name": "relayed", "type": "EDS",
                       "eds_cluster_config": {"eds_config": {"ads": {}}}})
sr["endpoints"].append({"cluster_name": "relayed", "endpoints": [
    {"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": "198.18.0.2%d" % n,
                                                      "port_value": 9002}}}}
        for n in (1, 2, 3)]}]})'
for b in be1 be2 be3; do
    # $! is the server itself, so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9002 "$b" \
        --echo >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
e2e_start_xlbd

# xlbctl tcp, with the endpoint idle: an empty list from both workers, in table and JSON.
out=$(xlbctl tcp) || fail "xlbctl tcp: $out"
grep -q "^WORKER  *LOCAL  *REMOTE  *STATE  *CWND" <<<"$out" || fail "xlbctl tcp header: $out"
grep -q "^0 connections, 0 shown$" <<<"$out" || fail "xlbctl tcp idle: $out"
xlbctl --json tcp --limit 5 | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r == {"connections": [], "total": 0, "shown": 0}, r' || fail "xlbctl --json tcp idle"
pass "xlbctl tcp answers from both workers with no connection"

# Bad arguments: a clear error and a failing exit status, from the client or the daemon.
rc=0; out=$(xlbctl tcp --limit 0 2>&1) || rc=$?
[ $rc -eq 1 ] && grep -q -- "--limit must be in 1..10000" <<<"$out" || fail "tcp --limit 0 ($rc): $out"
rc=0; out=$(xlbctl tcp --verbose 2>&1) || rc=$?
[ $rc -eq 2 ] && grep -q 'tcp: unexpected "--verbose"' <<<"$out" || fail "tcp --verbose ($rc): $out"
xlbctl help tcp | grep -q "^usage: xlbctl tcp \[--limit N\]" || fail "xlbctl help tcp"
pass "xlbctl tcp refuses a bad limit and an unknown option"

# Counters: the tcp group in total and per worker, all zero.
xlbctl --json counters | python3 -c '
import json, sys
r = json.load(sys.stdin)
for part in [r["total"]] + r["workers"]:
    tcp = part["tcp"]
    for name in ("passive_opens", "active_opens", "bytes_in", "bytes_out", "retransmits",
                 "rst_in_exact", "rst_out_abort", "ooo_dropped_worker", "connections"):
        assert tcp[name] == 0, (name, tcp)
assert len(r["workers"]) == 2 and len(r["total"]["tcp"]) > 60, r["total"]["tcp"]' ||
    fail "xlbctl counters: tcp group"
pass "xlbctl counters has the tcp group, zero, in total and per worker"

# Prometheus: the families with a HELP and TYPE, one sample per worker (and per reason).
xlbctl metrics >"$E2E_DIR/metrics.txt"
python3 - "$E2E_DIR/metrics.txt" <<'PY' || fail "metrics: xlb_tcp_*"
import re, sys
typed, samples = set(), {}
for line in open(sys.argv[1]):
    m = re.match(r"# TYPE (\S+) (\S+)", line)
    if m:
        typed.add(m.group(1))
    elif line.startswith("xlb_tcp_"):
        name, value = line.rsplit(" ", 1)
        assert re.sub(r"\{.*", "", name) in typed, "sample before its TYPE: " + line
        samples[name] = float(value)
for w in ("0", "1"):
    for key in ('xlb_tcp_passive_opens_total{worker="%s"}',
                'xlb_tcp_resets_sent_total{worker="%s",reason="abort"}',
                'xlb_tcp_resets_received_total{worker="%s",reason="challenged"}',
                'xlb_tcp_ooo_dropped_total{worker="%s",budget="worker"}',
                'xlb_tcp_connections{worker="%s"}'):
        assert samples[key % w] == 0, (key % w, samples.get(key % w))
assert all(v == 0 for v in samples.values()), samples
PY
pass "metrics: xlb_tcp_* families per worker, resets and out-of-order drops by reason, zero"

# DPDK telemetry: /xlb/tcp in total and per worker; a worker that does not exist is refused.
printf '/xlb/tcp\n/xlb/tcp,1\n/xlb/tcp,7\n' |
    dpdk-telemetry.py -f "$E2E_PREFIX" >"$E2E_DIR/telemetry.txt" 2>&1 || fail "dpdk-telemetry.py"
python3 - "$E2E_DIR/telemetry.txt" <<'PY' || { cat "$E2E_DIR/telemetry.txt"; fail "telemetry /xlb/tcp"; }
import json, sys
replies = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        replies.append(json.loads(line)["/xlb/tcp"])
total, one, bad = replies
for r in (total, one):
    assert r["connections"] == 0 and r["passive_opens"] == 0 and r["rst_out_abort"] == 0, r
assert bad is None, bad
PY
pass "dpdk-telemetry.py reads /xlb/tcp and /xlb/tcp,1; /xlb/tcp,7 is refused"

# Six connections held open through the terminate VIP: each is two endpoint connections, the
# client's (passive: local is the VIP) and the backend's (active: remote is a backend).
e2e_hold_connections 6 9002
listing() { # the established connections, as "client backend" counts
    xlbctl --json tcp | python3 -c '
import json, sys
r = json.load(sys.stdin)
est = [c for c in r["connections"] if c["state"] == "ESTABLISHED"]
client = [c for c in est if c["local"] == "198.18.0.100:9002"]
backend = [c for c in est if c["remote"].startswith("198.18.0.2") and c["remote"].endswith(":9002")]
for c in est:  # what ss -ti shows, filled in
    assert c["mss"] > 0 and c["cwnd"] > 0 and c["rto_ms"] >= 200 and c["memory"] > 0, c
    assert c["rcv_wnd"] > 0 and c["snd_wnd"] > 0 and c["worker"] in (0, 1), c
assert r["total"] == r["shown"] == len(r["connections"]), r
print(len(client), len(backend))'
}
six_each() { [ "$(listing)" = "6 6" ]; }
wait_until 50 0.1 six_each || fail "xlbctl tcp lists (client, backend) established: $(listing)"
out=$(xlbctl tcp)
[ "$(grep -c " ESTABLISHED " <<<"$out")" -ge 12 ] || fail "xlbctl tcp table: $out"
pass "xlbctl tcp lists the 6 client and 6 backend connections ESTABLISHED, with mss, cwnd, rto, windows"

for name in passive_opens active_opens established bytes_in bytes_out segs_in segs_out; do
    [ "$(counter tcp.$name)" -ge 6 ] || fail "counter tcp.$name: $(counter tcp.$name)"
done
[ "$(counter tcp.connections)" -ge 12 ] || fail "tcp.connections $(counter tcp.connections)"
xlbctl metrics | python3 -c '
import re, sys
total = 0
for line in sys.stdin:
    m = re.match(r"xlb_tcp_passive_opens_total\{worker=\"\d\"\} (\d+)", line)
    total += int(m.group(1)) if m else 0
assert total >= 6, total' || fail "metrics: xlb_tcp_passive_opens_total"
printf '/xlb/tcp\n' | dpdk-telemetry.py -f "$E2E_PREFIX" >"$E2E_DIR/telemetry-busy.txt" 2>&1 ||
    fail "dpdk-telemetry.py"
python3 - "$E2E_DIR/telemetry-busy.txt" <<'PY' || { cat "$E2E_DIR/telemetry-busy.txt"; fail "telemetry busy"; }
import json, sys
r = [json.loads(l)["/xlb/tcp"] for l in open(sys.argv[1]) if l.strip().startswith("{")][0]
assert r["connections"] >= 12 and r["passive_opens"] >= 6 and r["active_opens"] >= 6, r
PY
pass "counters moved: passive and active opens, bytes and segments, in xlbctl, metrics, telemetry"

# Released: each connection echoes once more and closes; none stays ESTABLISHED.
e2e_release_held
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert sum(len(v) for v in r.values()) == 6 and all(all(v) for v in r.values()), r' \
    "$E2E_DIR/held.json" || fail "held connections: $(cat "$E2E_DIR/held.json")"
none_established() { [ "$(listing)" = "0 0" ]; }
wait_until 100 0.1 none_established || fail "still established after the close: $(listing)"
pass "after the clients close, no connection is listed ESTABLISHED"

# A client that resets its connection: xlb counts the RST received by reason and resets the
# backend side, counted as sent by reason, in the counters and in the labelled metrics.
in_client timeout 30 python3 -c '
import socket, struct
s = socket.create_connection(("198.18.0.100", 9002), timeout=10)
s.settimeout(10)
s.recv(3)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()' || fail "a client that resets"
reset_counted() { [ "$(counter tcp.rst_in_exact)" -ge 1 ] && [ "$(counter tcp.rst_out_abort)" -ge 1 ]; }
wait_until 50 0.1 reset_counted ||
    fail "resets: rst_in_exact $(counter tcp.rst_in_exact), rst_out_abort $(counter tcp.rst_out_abort)"
xlbctl metrics | python3 -c '
import re, sys
got = {}
for line in sys.stdin:
    m = re.match(r"xlb_tcp_resets_(received|sent)_total\{worker=\"\d\",reason=\"(\w+)\"\} (\d+)", line)
    if m:
        got[m.group(1), m.group(2)] = got.get((m.group(1), m.group(2)), 0) + int(m.group(3))
assert got["received", "exact"] >= 1 and got["sent", "abort"] >= 1, got' ||
    fail "metrics: resets by reason"
pass "a client's RST counts rst_in_exact, the backend side's reset rst_out_abort, by reason in the metrics"

e2e_stop_xlbd
pass "clean exit"
