#!/usr/bin/env bash
# xlbd restarts under held connections: TCP connections through L4 VIPs whose cluster picks
# by hash (ring hash, Maglev) go on after the restart (the new process picks each one up on its
# next segment, to the same backend from the same SNAT port, docs/forwarding.md), while those
# through a round-robin VIP are reset, as a full NAT must when it has lost a connection.
. "$(dirname "$0")/lib.sh"

HASHED=12 # connections held through the ring-hash VIP
MAGLEV=8  # through the Maglev one
ROUND=6   # and through the round-robin one

e2e_setup
# Two workers on two af_packet queues: each owns a slice of the SNAT ports, and the kernel's
# fanout hands a connection's client segments to the same worker after the restart.
e2e_edit_config '
x = c["xlb"]
x["connection_hash_key"] = "5eed0fc0ffee5eed0fc0ffee5eed0fc0"  # the same on both processes
x["workers"] = 2
x["eal"] = [a.replace("qpairs=1", "qpairs=2") for a in x["eal"]]
x["vips"] = [{"address": "198.18.0.100", "port": 80, "cluster": "hashed"},
             {"address": "198.18.0.100", "port": 81, "cluster": "round"},
             {"address": "198.18.0.100", "port": 82, "cluster": "maglev"}]
sr = x["static_resources"]
for name, policy in (("hashed", "RING_HASH"), ("round", "ROUND_ROBIN"), ("maglev", "MAGLEV")):
    sr["clusters"].append({"name": name, "type": "EDS", "lb_policy": policy,
                           "eds_cluster_config": {"eds_config": {"ads": {}}}})
    sr["endpoints"].append({"cluster_name": name, "endpoints": [{
        "locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
            {"endpoint": {"address": {"socket_address": {"address": a, "port_value": 9001}}}}
            for a in ("198.18.0.21", "198.18.0.22", "198.18.0.23")]}]})'
for b in be1 be2 be3; do
    # $! is the server itself, so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9001 "$b" \
        --echo >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
e2e_start_xlbd
clusters=$(xlbctl clusters)
grep -Eq "^maglev +eds +maglev +READY " <<<"$clusters" || fail "clusters: $clusters"

# hold PORT COUNT: a client holding COUNT connections to the VIP's PORT, in its own folder.
hold() {
    mkdir -p "$E2E_DIR/$1"
    ip netns exec "$E2E_PREFIX-client" python3 "$E2E_SOURCE/tools/lib/hold_connections.py" \
        "$E2E_DIR/$1" 198.18.0.100 "$1" "$2" >"$E2E_DIR/$1/held.json" 2>&1 &
    RUN_PIDS+=($!)
    HOLDERS+=($!)
    wait_until 150 0.2 test -f "$E2E_DIR/$1/ready" || fail "the client did not connect to port $1"
    python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))) == int(sys.argv[2])' \
        "$E2E_DIR/$1/ready" "$2" || fail "port $1: $(cat "$E2E_DIR/$1/ready")"
}
HOLDERS=()
hold 80 "$HASHED"
hold 81 "$ROUND"
hold 82 "$MAGLEV"
backends=$(python3 -c 'import json,sys; print(len(set(json.load(open(sys.argv[1])))))' \
    "$E2E_DIR/80/ready")
[ "$backends" -ge 2 ] || fail "the ring hash sent all $HASHED connections to one backend"
pass "$HASHED connections held through the ring-hash VIP (on $backends backends), $MAGLEV through the Maglev one, $ROUND through the round-robin one"

e2e_stop_xlbd
e2e_start_xlbd
[ "$(counter events.flows_created)" = 0 ] || fail "the new xlbd has flows already"
pass "xlbd restarted with no flows"

# Every held connection sends once more.
touch "$E2E_DIR/80/go" "$E2E_DIR/81/go" "$E2E_DIR/82/go"
for pid in "${HOLDERS[@]}"; do
    wait "$pid" || true
done
outcome() { # PORT: "echoed failed" over the port's held connections
    python3 -c '
import json, sys
held = json.load(open(sys.argv[1]))
oks = [ok for per_backend in held.values() for ok in per_backend]
print(sum(oks), len(oks) - sum(oks))' "$E2E_DIR/$1/held.json"
}
read -r echoed failed <<<"$(outcome 80)"
[ "$echoed" = "$HASHED" ] && [ "$failed" = 0 ] ||
    fail "ring-hash VIP: $echoed connections echoed after the restart, $failed did not ($(cat "$E2E_DIR/80/held.json"))"
read -r echoed failed <<<"$(outcome 82)"
[ "$echoed" = "$MAGLEV" ] && [ "$failed" = 0 ] ||
    fail "Maglev VIP: $echoed connections echoed after the restart, $failed did not ($(cat "$E2E_DIR/82/held.json"))"
read -r echoed failed <<<"$(outcome 81)"
[ "$echoed" = 0 ] && [ "$failed" = "$ROUND" ] ||
    fail "round-robin VIP: $echoed connections echoed after the restart, $failed did not"
resumed=$(counter events.flows_resumed)
[ "$resumed" = $((HASHED + MAGLEV)) ] || fail "flows_resumed is $resumed, not $((HASHED + MAGLEV))"
[ "$(counter events.tcp_resets_sent)" -ge "$ROUND" ] || fail "the round-robin VIP's connections got no RST"
pass "after the restart all $HASHED ring-hash and $MAGLEV Maglev connections echo (picked up: flows_resumed $resumed), all $ROUND round-robin ones were reset"

# Their backends answered, so no picked-up flow is left waiting (the clients have closed
# their connections since: closing).
read -r states workers <<<"$(xlbctl --json flows --vip 198.18.0.100:80 | python3 -c '
import json, sys
flows = json.load(sys.stdin)["flows"]
print(",".join(sorted({f["state"] for f in flows})), len({f["worker"] for f in flows}))')"
[ -n "$states" ] && [[ ",$states," != *",resuming,"* ]] || fail "picked-up flows are in states: $states"
[ "$workers" = 2 ] || fail "the picked-up flows are on $workers worker(s), not both"
pass "xlbctl flows lists them past resuming ($states), on both workers"
e2e_stop_xlbd
