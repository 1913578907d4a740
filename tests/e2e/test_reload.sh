#!/usr/bin/env bash
# SIGHUP under traffic: VIP and SNAT changes apply live, restart-only changes are reported and
# not applied, an invalid file changes nothing, and an unchanged VIP never stops answering.
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_start_xlbd

# Steady traffic to a VIP that every reload keeps: 150 echoes over about 7 s.
in_client ping -c 150 -i 0.05 -W 2 198.18.0.100 >"$E2E_DIR/steady.txt" 2>&1 &
steady=$!
RUN_PIDS+=("$steady")

reloads_applied() {
    xlbctl --json status | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["reload"]["applied"]))'
}
reloads_rejected() {
    xlbctl --json status | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["reload"]["rejected"]))'
}

e2e_edit_config '
c["xlb"]["vips"] = [v for v in c["xlb"]["vips"] if v["address"] != "2001:2::100"]
c["xlb"]["vips"].append({"address": "198.18.0.101", "port": 80, "cluster": "extra"})
c["xlb"]["snat"] = ["198.18.0.12"]'
kill -HUP "$XLBD_PID"
wait_until 50 0.1 bash -c "[ \$('$XLBCTL' --socket '$E2E_DIR/xlbd.sock' --json status | python3 -c 'import json,sys; print(int(json.load(sys.stdin)[\"reload\"][\"applied\"]))') = 1 ]" ||
    fail "first reload not applied"
in_client ping -c 2 -i 0.2 -W 2 198.18.0.101 >/dev/null || fail "added VIP does not answer"
in_client ping -c 1 -W 2 198.18.0.12 >/dev/null || fail "new SNAT address does not answer"
if in_client ping -6 -c 2 -i 0.2 -W 1 2001:2::100 >/dev/null 2>&1; then
    fail "removed VIP still answers"
fi
if in_client ping -c 1 -W 1 198.18.0.11 >/dev/null 2>&1; then
    fail "removed SNAT address still answers"
fi
pass "SIGHUP applied: VIP added and removed, SNAT replaced"

e2e_edit_config 'c["xlb"]["workers"] = 2; c["xlb"]["mbuf_pool_size"] = 4095'
kill -HUP "$XLBD_PID"
wait_until 50 0.1 bash -c "[ \$('$XLBCTL' --socket '$E2E_DIR/xlbd.sock' --json status | python3 -c 'import json,sys; print(int(json.load(sys.stdin)[\"reload\"][\"applied\"]))') = 2 ]" ||
    fail "second reload not applied"
xlbctl --json status | python3 -c '
import json, sys
s = json.load(sys.stdin)
last = s["reload"]["last"]
assert sorted(last["needs_restart"]) == ["xlb.mbuf_pool_size", "xlb.workers"], last
assert len(s["workers"]) == 1, "workers changed without a restart"
' || fail "restart-only settings"
pass "restart-only settings are reported, not applied"

cp "$E2E_DIR/bootstrap.json" "$E2E_DIR/good.json"
e2e_edit_config 'c["xlb"]["vips"][0]["port"] = 0'
kill -HUP "$XLBD_PID"
wait_until 50 0.1 bash -c "[ \$('$XLBCTL' --socket '$E2E_DIR/xlbd.sock' --json status | python3 -c 'import json,sys; print(int(json.load(sys.stdin)[\"reload\"][\"rejected\"]))') = 1 ]" ||
    fail "invalid file not rejected"
out=$(xlbctl status)
grep -q "error: xlb.vips\[0\].port: must be 1..65535" <<<"$out" || fail "rejection reason not shown"
in_client ping -c 1 -W 2 198.18.0.101 >/dev/null || fail "invalid reload changed the running configuration"
pass "an invalid file is rejected with its reason and changes nothing"

wait "$steady" || true
grep -q " 0% packet loss" "$E2E_DIR/steady.txt" || { cat "$E2E_DIR/steady.txt"; fail "the unchanged VIP lost echoes during reloads"; }
pass "the unchanged VIP answered all 150 echoes across three reloads"

e2e_stop_xlbd
pass "clean exit"
