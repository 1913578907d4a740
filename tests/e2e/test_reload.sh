#!/usr/bin/env bash
# SIGHUP under traffic: VIP changes apply live; SNAT changes and other restart-only changes
# are reported and not applied (the started SNAT addresses stay owned, so TCP connections held
# through the L4 VIP keep working); an invalid file changes nothing, nor does one with misspelt
# keys; an unchanged VIP never stops answering. Then each remaining restart-only setting alone
# (eal, control_socket, metrics_listen, xds_servers, node) is reported, and metrics_max_series
# applies live.
. "$(dirname "$0")/lib.sh"

e2e_setup
# Backends of the demo's L4 VIP 198.18.0.100:9000: their name, then an echo until closed.
for b in be1 be2 be3; do
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9000 "$b" \
        --echo >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
e2e_start_xlbd

# Steady traffic to a VIP that every reload keeps: 250 echoes over about 12 s.
in_client ping -c 250 -i 0.05 -W 2 198.18.0.100 >"$E2E_DIR/steady.txt" 2>&1 &
steady=$!
RUN_PIDS+=("$steady")

# A client holding 8 connections open through the L4 VIP (source-NATed to 198.18.0.11): it
# reports their backends, then, once released, checks that every one still echoes.
e2e_hold_connections 8 9000
python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))) == 8' "$E2E_DIR/ready" ||
    fail "held connections: $(cat "$E2E_DIR/ready")"
snats=$(xlbctl --json flows --vip 198.18.0.100:9000 | python3 -c '
import json, sys
print(" ".join(sorted({f["snat"].rsplit(":", 1)[0] for f in json.load(sys.stdin)["flows"]})))')
[ "$snats" = "198.18.0.11" ] || fail "held flows use SNAT $snats"
pass "8 TCP connections held open through the L4 VIP, source-NATed to 198.18.0.11"

reloads() { # OUTCOME COUNT: true once COUNT reloads have had OUTCOME (applied or rejected)
    [ "$(xlbctl --json status | python3 -c '
import json, sys
print(int(json.load(sys.stdin)["reload"][sys.argv[1]]))' "$1")" = "$2" ]
}

e2e_edit_config '
c["xlb"]["vips"] = [v for v in c["xlb"]["vips"] if v["address"] != "2001:2::100"]
c["xlb"]["vips"].append({"address": "198.18.0.101", "port": 80, "cluster": "extra"})
c["xlb"]["snat"] = ["198.18.0.12"]'
kill -HUP "$XLBD_PID"
wait_until 50 0.1 reloads applied 1 ||
    fail "first reload not applied"
xlbctl --json status | python3 -c '
import json, sys
last = json.load(sys.stdin)["reload"]["last"]
assert last["needs_restart"] == ["xlb.snat"], last
assert last["applied"] == ["xlb.vips"], last
' || fail "first reload report: $(xlbctl status)"
in_client ping -c 2 -i 0.2 -W 2 198.18.0.101 >/dev/null || fail "added VIP does not answer"
if in_client ping -6 -c 2 -i 0.2 -W 1 2001:2::100 >/dev/null 2>&1; then
    fail "removed VIP still answers"
fi
in_client ping -c 1 -W 2 198.18.0.11 >/dev/null || fail "the started SNAT address no longer answers"
in_client ping -6 -c 1 -W 2 2001:2::11 >/dev/null || fail "the started IPv6 SNAT address no longer answers"
if in_client ping -c 1 -W 1 198.18.0.12 >/dev/null 2>&1; then
    fail "the new SNAT address answers before a restart"
fi
pass "SIGHUP applied the VIPs (one added, one removed) and reported xlb.snat as needing a restart"

e2e_release_held
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
oks = [ok for per_backend in r.values() for ok in per_backend]
assert len(oks) == 8 and all(oks), r' "$E2E_DIR/held.json" ||
    fail "held connections after the reload: $(cat "$E2E_DIR/held.json")"
new=$(in_client timeout 60 python3 -c '
import socket
n = 0
for _ in range(10):
    with socket.create_connection(("198.18.0.100", 9000), timeout=3) as s:
        n += len(s.recv(16)) > 0
print(n)')
[ "$new" = 10 ] || fail "new connections after the reload: $new of 10"
pass "after the reload every held connection still echoes, and 10 new ones connect"

# The new file may not hand a running SNAT address to a VIP: rejected, nothing changes.
cp "$E2E_DIR/bootstrap.json" "$E2E_DIR/before-clash.json"
e2e_edit_config 'c["xlb"]["vips"].append({"address": "198.18.0.11", "port": 80, "cluster": "extra"})'
kill -HUP "$XLBD_PID"
wait_until 50 0.1 reloads rejected 1 ||
    fail "a VIP on a running SNAT address was not rejected"
out=$(xlbctl status)
grep -q "is a running snat address (snat changes need a restart)" <<<"$out" || fail "clash reason: $out"
cp "$E2E_DIR/before-clash.json" "$E2E_DIR/bootstrap.json"
pass "a VIP on a running SNAT address is rejected"

e2e_edit_config 'c["xlb"]["workers"] = 2; c["xlb"]["mbuf_pool_size"] = 4095'
kill -HUP "$XLBD_PID"
wait_until 50 0.1 reloads applied 2 ||
    fail "second reload not applied"
xlbctl --json status | python3 -c '
import json, sys
s = json.load(sys.stdin)
last = s["reload"]["last"]
assert sorted(last["needs_restart"]) == ["xlb.mbuf_pool_size", "xlb.snat", "xlb.workers"], last
assert len(s["workers"]) == 1, "workers changed without a restart"
' || fail "restart-only settings"
pass "restart-only settings are reported, not applied"

cp "$E2E_DIR/bootstrap.json" "$E2E_DIR/good.json"
e2e_edit_config 'c["xlb"]["vips"][0]["port"] = 0'
kill -HUP "$XLBD_PID"
wait_until 50 0.1 reloads rejected 2 ||
    fail "invalid file not rejected"
out=$(xlbctl status)
grep -q "error: xlb.vips\[0\].port: must be 1..65535" <<<"$out" || fail "rejection reason not shown"
in_client ping -c 1 -W 2 198.18.0.101 >/dev/null || fail "invalid reload changed the running configuration"
pass "an invalid file is rejected with its reason and changes nothing"

# Misspelt keys (issue 25): the file also drops VIP 198.18.0.101, which a reload that ignored
# them would apply. It is rejected as a whole: every unknown key is named, with the nearest
# known key, in the log and in xlbctl status, and the running VIPs keep answering.
cp "$E2E_DIR/good.json" "$E2E_DIR/bootstrap.json"
e2e_edit_config '
c["xlb"]["vips"] = [v for v in c["xlb"]["vips"] if v["address"] != "198.18.0.101"]
c["xlb"]["wrokers_typo"] = 2
c["xlb"]["vips"][0]["l7mode"] = "stream"'
kill -HUP "$XLBD_PID"
wait_until 50 0.1 reloads rejected 3 ||
    fail "a file with unknown keys was not rejected"
out=$(xlbctl status)
grep -qF 'error: xlb.wrokers_typo: unknown key; did you mean "workers"?' <<<"$out" &&
    grep -qF 'error: xlb.vips[0].l7mode: unknown key' <<<"$out" ||
    fail "unknown keys not shown by xlbctl status: $out"
grep -qF 'reload rejected: xlb.wrokers_typo: unknown key; did you mean "workers"?' \
    "$E2E_DIR/xlbd.log" || fail "unknown key not logged: $(tail -n 5 "$E2E_DIR/xlbd.log")"
xlbctl --json status | python3 -c '
import json, sys
r = json.load(sys.stdin)["reload"]
assert r["applied"] == 2 and r["last"]["result"] == "rejected", r
' || fail "reload counts after the unknown keys: $(xlbctl status)"
in_client ping -c 1 -W 2 198.18.0.101 >/dev/null || fail "a file with unknown keys changed the running VIPs"
cp "$E2E_DIR/good.json" "$E2E_DIR/bootstrap.json"
pass "a file with unknown keys is rejected, each key named in the log and status, and the running configuration keeps serving"

wait "$steady" || true
grep -q " 0% packet loss" "$E2E_DIR/steady.txt" || { cat "$E2E_DIR/steady.txt"; fail "the unchanged VIP lost echoes during reloads"; }
pass "the unchanged VIP answered all 250 echoes across five reloads"

# Each other restart-only setting, changed alone on top of the last applied file, is reported
# by its name (with the three still pending from above) and keeps its running value.
applied=2
restart_only() { # NAME PYTHON-EDIT
    cp "$E2E_DIR/good.json" "$E2E_DIR/bootstrap.json"
    e2e_edit_config "$2"
    applied=$((applied + 1))
    kill -HUP "$XLBD_PID"
    wait_until 50 0.1 reloads applied "$applied" || fail "$1: reload not applied"
    xlbctl --json status | python3 -c '
import json, sys
last = json.load(sys.stdin)["reload"]["last"]
want = sorted(["xlb.mbuf_pool_size", "xlb.snat", "xlb.workers", sys.argv[1]])
assert sorted(last["needs_restart"]) == want and last["applied"] == [], last
' "$1" || fail "$1 is not reported as needing a restart: $(xlbctl status)"
}
restart_only xlb.eal 'c["xlb"]["eal"].append("--log-level=lib.eal:notice")'
restart_only xlb.control_socket 'c["xlb"]["control_socket"] += ".new"'
[ ! -e "$E2E_DIR/xlbd.sock.new" ] || fail "a new control socket was opened without a restart"
restart_only xlb.metrics_listen 'c["xlb"]["metrics_listen"] = "127.0.0.1:9101"'
out=$(ip netns exec "$E2E_PREFIX-lb" ss -Hltn 'sport = :9101')
[ -z "$out" ] || fail "a metrics listener was opened without a restart: $out"
restart_only "xds_servers and node" \
    'c["xds_servers"] = [{"server_uri": "198.18.0.2:18000", "channel_creds": [{"type": "insecure"}]}]'
restart_only "xds_servers and node" 'c["node"]["id"] = "xlb-renamed"'
pass "xlb.eal, xlb.control_socket, xlb.metrics_listen, xds_servers and node each need a restart"

# metrics_max_series applies live: with 150 more endpoints (cluster "many" behind a new VIP)
# and the cap at its minimum of 100, all but 100 endpoints are folded into endpoint="other".
endpoint_series() { # prints: endpoints shown, endpoints folded
    xlbctl metrics | python3 -c '
import sys
lines = sys.stdin.read().splitlines()
shown = sum(1 for l in lines if l.startswith("xlb_endpoint_health{"))
folded = [l.split()[1] for l in lines if l.startswith("xlb_metrics_endpoints_folded ")]
print(shown, folded[0])'
}
cp "$E2E_DIR/good.json" "$E2E_DIR/bootstrap.json"
e2e_edit_config '
sr = c["xlb"]["static_resources"]
sr["clusters"].append({"name": "many", "type": "EDS",
                       "eds_cluster_config": {"eds_config": {"ads": {}}}})
sr["endpoints"].append({"cluster_name": "many", "endpoints": [{
    "locality": {"zone": "m"}, "load_balancing_weight": 1, "lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": "198.18.2.%d" % i,
                                                     "port_value": 80}}}}
        for i in range(1, 151)]}]})
c["xlb"]["vips"].append({"address": "198.18.0.102", "port": 80, "cluster": "many"})'
cp "$E2E_DIR/bootstrap.json" "$E2E_DIR/many.json"
kill -HUP "$XLBD_PID"
applied=$((applied + 1))
wait_until 50 0.1 reloads applied "$applied" || fail "reload with 150 endpoints not applied"
read -r shown folded < <(endpoint_series)
[ "$shown" -ge 150 ] && [ "$folded" = 0 ] || fail "uncapped: $shown endpoints shown, $folded folded"
total=$shown
e2e_edit_config 'c["xlb"]["metrics_max_series"] = 100'
kill -HUP "$XLBD_PID"
applied=$((applied + 1))
wait_until 50 0.1 reloads applied "$applied" || fail "metrics_max_series reload not applied"
xlbctl --json status | python3 -c '
import json, sys
last = json.load(sys.stdin)["reload"]["last"]
assert last["applied"] == ["xlb.metrics_max_series"], last
assert sorted(last["needs_restart"]) == ["xlb.mbuf_pool_size", "xlb.snat", "xlb.workers"], last
' || fail "metrics_max_series reload report: $(xlbctl status)"
read -r shown folded < <(endpoint_series)
[ "$shown" = 100 ] && [ "$folded" = $((total - 100)) ] ||
    fail "metrics_max_series 100 of $total endpoints: $shown shown, $folded folded"
pass "metrics_max_series applies live: $total endpoints, 100 shown and $folded folded after the reload"

e2e_stop_xlbd
pass "clean exit"
