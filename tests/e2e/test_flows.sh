#!/usr/bin/env bash
# Established flows through an L4 VIP survive a configuration change that removes their
# backend (draining: new connections avoid it, open ones go on until they close); `xlbctl flows`
# lists them; `xlbctl flows flush --endpoint` ends them.
. "$(dirname "$0")/lib.sh"

write_cluster() { # ENDPOINTS... (last octets)
    e2e_edit_config "
x = c['xlb']
x['vips'] = [v for v in x['vips'] if v.get('cluster') != 'hold'] + \
    [{'address': '198.18.0.100', 'port': 9002, 'cluster': 'hold'}]
sr = x['static_resources']
sr['clusters'] = [k for k in sr['clusters'] if k['name'] != 'hold'] + [
    {'name': 'hold', 'type': 'EDS', 'eds_cluster_config': {'eds_config': {'ads': {}}}}]
sr['endpoints'] = [k for k in sr['endpoints'] if k['cluster_name'] != 'hold'] + [
    {'cluster_name': 'hold', 'endpoints': [{'locality': {'zone': 'a'}, 'load_balancing_weight': 1,
     'lb_endpoints': [{'endpoint': {'address': {'socket_address': {
         'address': '198.18.0.2' + o, 'port_value': 9002}}}} for o in '$*'.split()]}]}]"
}

e2e_setup
write_cluster 1 2 3
# Backends: threaded servers that send their name, then echo until the client closes.
for b in be1 be2 be3; do
    # $! is the server itself, so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9002 "$b" \
        --echo >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
e2e_start_xlbd

# A client holding 12 connections open: it reports their backends, then, once released, checks
# every one still echoes.
e2e_hold_connections 12 9002
held=$(cat "$E2E_DIR/ready")
python3 -c 'import json,sys; n=json.loads(sys.argv[1]); assert len(n) == 12 and "be1" in n, n' "$held" ||
    fail "held connections: $held"
listed=$(xlbctl --json flows --vip 198.18.0.100:9002 | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(sum(1 for f in r["flows"] if f["state"] == "established" and f["backend"].endswith(":9002")))')
[ "$listed" -eq 12 ] || fail "xlbctl flows lists $listed established flows: $(xlbctl flows)"
pass "12 connections held open through the VIP; xlbctl flows lists them established"

# The configuration drops be1: new connections avoid it, the open ones keep working.
write_cluster 2 3
kill -HUP "$XLBD_PID"
gone() { ! xlbctl --json endpoints hold | grep -q '198.18.0.21'; }
wait_until 50 0.1 gone || fail "be1 still in the cluster"
new=$(in_client timeout 60 python3 -c '
import socket
names = set()
for _ in range(20):
    with socket.create_connection(("198.18.0.100", 9002), timeout=3) as s:
        names.add(s.recv(16).decode())
print(" ".join(sorted(names)))')
[ "$new" = "be2 be3" ] || fail "new connections after removing be1 went to: $new"
e2e_release_held
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert all(all(v) for v in r.values()) and "be1" in r, r' "$E2E_DIR/held.json" ||
    fail "held connections after the change: $(cat "$E2E_DIR/held.json")"
pass "after a reload that removes be1, new connections avoid it and every open connection still echoes"

# Flush: end every flow to be2.
before=$(xlbctl --json flows --endpoint 198.18.0.22:9002 | python3 -c 'import json,sys; print(json.load(sys.stdin)["matching"])')
[ "$before" -gt 0 ] || fail "no flow to be2 to flush"
xlbctl flows flush --endpoint 198.18.0.22:9002 >/dev/null || fail "flows flush"
flushed() { [ "$(xlbctl --json flows --endpoint 198.18.0.22 | python3 -c 'import json,sys; print(json.load(sys.stdin)["matching"])')" -eq 0 ]; }
wait_until 50 0.1 flushed || fail "flows to be2 remain"
[ "$(counter events.flows_flushed)" -eq "$before" ] || fail "flows_flushed $(counter events.flows_flushed), expected $before"
out=$(xlbctl flows flush 2>&1) && fail "flush without --endpoint succeeded"
grep -q "flows flush takes --endpoint" <<<"$out" || fail "flush error: $out"
pass "xlbctl flows flush --endpoint ended the $before flows to be2"

e2e_stop_xlbd
pass "clean exit"
