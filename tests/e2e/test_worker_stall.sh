#!/usr/bin/env bash
# Issue 21: a worker that stops reporting quiescent states does not hang the control plane.
# xlbd runs with XLB_TEST_STALL=0 (tests only): SIGUSR1 makes worker 0 spin without reporting,
# the next SIGUSR1 releases it. While it is stalled the control socket answers, the stall is
# reported (status, log, metrics, telemetry) and xlb-healthcheck fails; reloads still publish
# and return; once it is released the stall clears, every retired snapshot is freed and the
# host is healthy again.
. "$(dirname "$0")/lib.sh"

HEALTHCHECK="$E2E_SOURCE/tools/scale-out/xlb-healthcheck"
RELOADS=6

e2e_setup
e2e_edit_config 'c["xlb"]["worker_stall_ms"] = 300'
XLB_TEST_STALL=0 e2e_start_xlbd
healthy() { "$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/xlbd.sock" 2>/dev/null; }
wait_until 50 0.1 healthy || fail "not healthy at the start: $("$HEALTHCHECK" --xlbctl "$XLBCTL" \
    --socket "$E2E_DIR/xlbd.sock" 2>&1)"

status_field() { # PYTHON-EXPRESSION on s, the status
    xlbctl --json status | python3 -c 'import json, sys; s = json.load(sys.stdin); print('"$1"')'
}
stalled() { [ "$(status_field 's["workers"][0]["stalled"]')" = True ]; }
kill -USR1 "$XLBD_PID"
wait_until 100 0.1 stalled || fail "worker 0 not reported stalled: $(xlbctl status)"
[ "$(status_field 's["workers"][0]["stalls"]')" = 1 ] || fail "stall episodes: $(xlbctl status)"
why=$("$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/xlbd.sock" 2>&1) &&
    fail "a host with a stalled worker passed its health check"
grep -q "worker 0 stalled" <<<"$why" || fail "health check reason: $why"
grep -q "xlb.worker: worker 0 stalled" "$E2E_DIR/xlbd.log" || fail "no stall line in the log"
pass "worker 0 stalled: reported in status and the log, xlb-healthcheck fails ($why)"
metric() { # NAME: its value for worker 0 in `xlbctl metrics`
    xlbctl metrics | awk -v name="$1" '$1 == name "{worker=\"0\"}" { print $2 }'
}
telemetry_worker() { # FIELD: /xlb/workers' worker_0 FIELD through DPDK's own client
    echo /xlb/workers | dpdk-telemetry.py -f "$E2E_PREFIX" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    if line.strip().startswith("{"):
        print(json.loads(line)["/xlb/workers"]["worker_0"][sys.argv[1]])' "$1"
}
[ "$(metric xlb_worker_stalled)" = 1 ] && [ "$(metric xlb_worker_stalls_total)" = 1 ] ||
    fail "metrics while stalled: $(xlbctl metrics | grep -E '^xlb_worker_stall')"
[ "$(telemetry_worker stalled)" = 1 ] && [ "$(telemetry_worker stalls)" = 1 ] ||
    fail "telemetry while stalled: stalled=$(telemetry_worker stalled) stalls=$(telemetry_worker stalls)"
pass "xlb_worker_stalled{worker=\"0\"} 1 and xlb_worker_stalls_total 1 in xlbctl metrics; telemetry /xlb/workers says stalled 1, stalls 1"

# Reloads that change a live setting each publish a snapshot; each returns, and the control
# socket answers every time, while the stalled worker holds the retired ones.
for i in $(seq 1 $RELOADS); do
    e2e_edit_config 'c["xlb"]["tcp_mss_clamp"] = '$((1200 + i))
    kill -HUP "$XLBD_PID"
    applied() { [ "$(status_field 's["reload"]["applied"]')" = "$1" ]; }
    wait_until 50 0.1 applied "$i" || fail "reload $i not applied: $(xlbctl status)"
done
stalled || fail "the stall ended by itself"
pass "$RELOADS reloads applied and published while worker 0 was stalled; the control socket answered throughout"

kill -USR1 "$XLBD_PID"
recovered() {
    [ "$(status_field 'not s["workers"][0]["stalled"] and s["retired_snapshots"]["waiting_for_stalled"] == 0')" = True ]
}
wait_until 100 0.1 recovered || fail "no recovery: $(xlbctl --json status)"
wait_until 50 0.1 healthy || fail "not healthy after the release: $("$HEALTHCHECK" --xlbctl \
    "$XLBCTL" --socket "$E2E_DIR/xlbd.sock" 2>&1)"
grep -q "worker 0 reports quiescent states again" "$E2E_DIR/xlbd.log" || fail "no recovery line in the log"
gen=$(status_field 's["generation"]')
runs() { [ "$(status_field 's["workers"][0]["generation"]')" = "$1" ]; }
wait_until 50 0.1 runs "$gen" ||
    fail "worker 0 does not run generation $gen: $(xlbctl status)"
[ "$(metric xlb_worker_stalled)" = 0 ] && [ "$(metric xlb_worker_stalls_total)" = 1 ] ||
    fail "metrics after the release: $(xlbctl metrics | grep -E '^xlb_worker_stall')"
[ "$(telemetry_worker stalled)" = 0 ] || fail "telemetry after the release: $(telemetry_worker stalled)"
pass "released: the stall cleared, retired snapshots freed, healthy again, worker 0 runs generation $gen"

e2e_stop_xlbd
pass "xlbd stops cleanly"
