#!/usr/bin/env bash
# Scale-out: two xlbd hosts serve the same VIP behind a router doing ECMP, and the router's
# route to the VIP is gated on each host's health check (what a BGP speaker does with
# xlb-healthcheck, docs/scale-out.md). Traffic spreads over both; when one host stops, its
# next hop is withdrawn and every client is served by the other.
. "$(dirname "$0")/lib.sh"

HEALTHCHECK="$E2E_SOURCE/tools/scale-out/xlb-healthcheck"
ROUTER="$E2E_PREFIX-sw"
FAR="$E2E_PREFIX-far"
SOURCES=32 # far clients, one address each: ECMP hashes them over the hosts

e2e_setup
# Far clients on 198.18.1.0/24, one routed hop away from the hosts.
ip netns add "$FAR"
ip -n "$ROUTER" link add v-far type veth peer name eth0 netns "$FAR"
topo_offloads_off "$ROUTER" v-far
topo_offloads_off "$FAR" eth0
ip -n "$ROUTER" addr add 198.18.1.1/24 dev v-far
ip -n "$ROUTER" link set v-far up
ip -n "$FAR" link set lo up
ip -n "$FAR" link set eth0 up
for i in $(seq 2 $((SOURCES + 1))); do
    ip -n "$FAR" addr add "198.18.1.$i/24" dev eth0
done
ip -n "$FAR" route add default via 198.18.1.1
ip netns exec "$ROUTER" sysctl -qw net.ipv4.ip_forward=1

# Host 1 is the topology's lb host (198.18.0.10); host 2 is added at 198.18.0.30.
e2e_edit_config 'c["xlb"]["vips"] = [{"address": "198.18.0.100", "port": 80, "cluster": "web"}]'
topo_add_host "$E2E_PREFIX" lb2
ip netns exec "$E2E_PREFIX-lb2" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
python3 - "$E2E_DIR/bootstrap.json" "$E2E_DIR/host2.json" "$E2E_DIR" "$E2E_PREFIX" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
x = c["xlb"]
x["control_socket"] = sys.argv[3] + "/host2.sock"
x["eal"] = [a.replace("--file-prefix=" + sys.argv[4], "--file-prefix=" + sys.argv[4] + "-2") for a in x["eal"]]
x["ports"][0]["addresses"] = ["198.18.0.30/24", "2001:2::30/64"]
x["snat"] = ["198.18.0.31", "2001:2::31"]
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
e2e_start_xlbd
ip netns exec "$E2E_PREFIX-lb2" "$XLBD" --config "$E2E_DIR/host2.json" >"$E2E_DIR/host2.log" 2>&1 &
host2=$!
RUN_PIDS+=("$host2")
wait_until 100 0.1 "$XLBCTL" --socket "$E2E_DIR/host2.sock" status || fail "host 2 did not start"
pass "two xlbd hosts serve 198.18.0.100"

# The announcer: one ECMP route to the VIP over the hosts whose health check passes.
announce() {
    local hops=() healthy=0 socket address
    for host in "xlbd.sock 198.18.0.10" "host2.sock 198.18.0.30"; do
        read -r socket address <<<"$host"
        if "$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/$socket" 2>/dev/null; then
            hops+=(nexthop via "$address")
            healthy=$((healthy + 1))
        fi
    done
    if [ "$healthy" -eq 0 ]; then
        ip -n "$ROUTER" route del 198.18.0.100/32 2>/dev/null || true
    else
        ip -n "$ROUTER" route replace 198.18.0.100/32 "${hops[@]}"
    fi
    echo "$healthy"
}
echo_replies() { # SOCKET
    "$XLBCTL" --socket "$1" --json counters |
        python3 -c 'import json,sys; print(int(json.load(sys.stdin)["total"]["events"]["icmp_echo_replies"]))'
}
ping_from_all_sources() {
    local ok=0
    for i in $(seq 2 $((SOURCES + 1))); do
        ip netns exec "$FAR" ping -c 1 -W 2 -I "198.18.1.$i" 198.18.0.100 >/dev/null 2>&1 && ok=$((ok + 1))
    done
    echo "$ok"
}

wait_until 50 0.1 "$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/host2.sock" ||
    fail "host 2 is not healthy: $("$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/host2.sock" 2>&1)"
[ "$(announce)" = 2 ] || fail "both hosts should pass the health check"
[ "$(ping_from_all_sources)" = "$SOURCES" ] || fail "not every far client got an answer"
one=$(echo_replies "$E2E_DIR/xlbd.sock")
two=$(echo_replies "$E2E_DIR/host2.sock")
echo "echo replies: host 1 $one, host 2 $two"
[ "$one" -gt 0 ] && [ "$two" -gt 0 ] || fail "ECMP did not spread clients over both hosts"
[ $((one + two)) -eq "$SOURCES" ] || fail "replies do not add up"
pass "ECMP spreads $SOURCES clients over both hosts ($one and $two)"

kill -TERM "$host2"
wait "$host2" || fail "host 2 did not stop cleanly"
"$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/host2.sock" 2>/dev/null && fail "a stopped host passed its health check"
[ "$(announce)" = 1 ] || fail "the announcer should keep one next hop"
ip -n "$ROUTER" route show 198.18.0.100 | grep -q "198.18.0.30" && fail "host 2's next hop was not withdrawn"
[ "$(ping_from_all_sources)" = "$SOURCES" ] || fail "clients lost service after host 2 left"
pass "host 2 left: withdrawn, and all $SOURCES clients are served by host 1"

e2e_stop_xlbd
pass "clean exit"
