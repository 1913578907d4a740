#!/usr/bin/env bash
# The TCP endpoint's operator surfaces (docs/operations.md): `xlbctl tcp` lists its connections
# like `ss -ti`, and its counters are in `xlbctl counters` (group tcp), DPDK telemetry (/xlb/tcp)
# and Prometheus (xlb_tcp_*), per worker. With no terminated VIP, every surface is there and
# idle: an empty listing, zero counters.
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_edit_config '
c["xlb"]["workers"] = 2
c["xlb"]["eal"] = [a.replace("qpairs=1", "qpairs=2") for a in c["xlb"]["eal"]]'
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

e2e_stop_xlbd
pass "clean exit"
