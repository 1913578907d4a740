#!/usr/bin/env bash
# Known traffic in, the same numbers out of every window operators have: xlbctl counters,
# Prometheus metrics (xlbctl and HTTP), and DPDK telemetry; busy/idle cycles; log levels.
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_edit_config 'c["xlb"]["metrics_listen"] = "127.0.0.1:9100"'
e2e_start_xlbd

# Exactly 5 IPv4 and 3 IPv6 echo requests: 8 echo replies.
in_client ping -c 5 -i 0.2 -W 2 198.18.0.100 >/dev/null || fail "ping"
in_client ping -6 -c 3 -i 0.2 -W 2 2001:2::100 >/dev/null || fail "ping -6"
[ "$(counter events.icmp_echo_replies)" = 8 ] || fail "xlbctl counts $(counter events.icmp_echo_replies) echo replies, not 8"
pass "xlbctl counters: 8 echo replies"

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
    python3 - "$E2E_DIR/$file" <<'PY' || fail "metrics in $file"
import re, sys
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
PY
done
pass "metrics: well-formed exposition, 8 echo replies, busy and idle cycles, from xlbctl and HTTP"

# DPDK telemetry through DPDK's own client.
printf '/xlb/counters\n/xlb/workers\n/xlb/status\n/xlb/drops,0\n' |
    dpdk-telemetry.py -f "$E2E_PREFIX" >"$E2E_DIR/telemetry.txt" 2>&1 || fail "dpdk-telemetry.py"
python3 - "$E2E_DIR/telemetry.txt" <<'PY' || { cat "$E2E_DIR/telemetry.txt"; fail "telemetry"; }
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
PY
pass "dpdk-telemetry.py reads /xlb/counters, /xlb/workers, /xlb/status, /xlb/drops"

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
