#!/usr/bin/env bash
# Scale-out: two xlbd hosts serve the same VIP behind a router doing ECMP, and the router's
# route to the VIP is gated on each host's health check (what a BGP speaker does with
# xlb-healthcheck, docs/scale-out.md). Pings and TCP connections (full NAT to three backends)
# spread over both; when one host stops, its next hop is withdrawn, every client is served by
# the other, and the TCP connections that went through the stopped host are reset (a full NAT
# cannot carry them to another host, docs/forwarding.md) while the others carry on.
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
e2e_edit_config '
x = c["xlb"]
x["vips"] = [{"address": "198.18.0.100", "port": 80, "cluster": "web"}]
sr = x["static_resources"]
sr["clusters"] += [{"name": "web", "type": "EDS",
                    "eds_cluster_config": {"eds_config": {"ads": {}}}}]
sr["endpoints"] += [{"cluster_name": "web", "endpoints": [{
    "locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": a, "port_value": 9001}}}}
        for a in ("198.18.0.21", "198.18.0.22", "198.18.0.23")]}]}]'
for b in be1 be2 be3; do
    # $! is the server itself, so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9001 "$b" \
        --echo >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
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
RUN_DPDK_PREFIXES+=("$E2E_PREFIX-2") # host 2's DPDK runtime directory, removed at exit
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
        if "$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/$socket" --vip 198.18.0.100 \
            2>/dev/null; then
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
why=$("$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/host2.sock" --vip 198.18.0.200 2>&1) &&
    fail "the health check passed for a VIP the host does not have"
[ "$why" = "unhealthy: no VIP at 198.18.0.200" ] || fail "health check said: $why"
[ "$(ping_from_all_sources)" = "$SOURCES" ] || fail "not every far client got an answer"
one=$(echo_replies "$E2E_DIR/xlbd.sock")
two=$(echo_replies "$E2E_DIR/host2.sock")
echo "echo replies: host 1 $one, host 2 $two"
[ "$one" -gt 0 ] && [ "$two" -gt 0 ] || fail "ECMP did not spread clients over both hosts"
[ $((one + two)) -eq "$SOURCES" ] || fail "replies do not add up"
pass "ECMP spreads $SOURCES clients over both hosts ($one and $two)"

# One TCP connection from each far client, held open: each answered by a backend's name.
ip netns exec "$FAR" python3 "$E2E_SOURCE/tools/lib/hold_connections.py" "$E2E_DIR" \
    198.18.0.100 80 "$SOURCES" 198.18.1.2 >"$E2E_DIR/held.json" 2>&1 &
holder=$!
RUN_PIDS+=("$holder")
wait_until 200 0.2 test -f "$E2E_DIR/ready" || fail "the far clients did not connect: $(xlbctl status; xlbctl neighbours)"
answered=$(python3 -c 'import json,sys; print(sum(n.startswith("be") for n in json.load(open(sys.argv[1]))))' "$E2E_DIR/ready")
[ "$answered" = "$SOURCES" ] || fail "only $answered of $SOURCES TCP connections were answered: $(cat "$E2E_DIR/ready")"
flows() { # SOCKET
    "$XLBCTL" --socket "$1" --json counters |
        python3 -c 'import json,sys; print(int(json.load(sys.stdin)["total"]["events"].get("flows_created", 0)))'
}
tcp_one=$(flows "$E2E_DIR/xlbd.sock")
tcp_two=$(flows "$E2E_DIR/host2.sock")
[ "$tcp_one" -gt 0 ] && [ "$tcp_two" -gt 0 ] || fail "TCP did not spread over both hosts: $tcp_one and $tcp_two"
[ $((tcp_one + tcp_two)) -eq "$SOURCES" ] || fail "flows $tcp_one + $tcp_two, not $SOURCES"
pass "ECMP spreads $SOURCES TCP connections over both hosts' full NAT ($tcp_one and $tcp_two), all answered by backends"

kill -TERM "$host2"
wait "$host2" || fail "host 2 did not stop cleanly"
"$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/host2.sock" 2>/dev/null && fail "a stopped host passed its health check"
[ "$(announce)" = 1 ] || fail "the announcer should keep one next hop"
ip -n "$ROUTER" route show 198.18.0.100 | grep -q "198.18.0.30" && fail "host 2's next hop was not withdrawn"
[ "$(ping_from_all_sources)" = "$SOURCES" ] || fail "clients lost service after host 2 left"
pass "host 2 left: withdrawn, and all $SOURCES clients are served by host 1"

touch "$E2E_DIR/go"
wait "$holder" || true
read -r held echoed < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))  # each backend: one echoed-or-not per held connection
print(sum(len(v) for v in r.values()), sum(sum(v) for v in r.values()))' "$E2E_DIR/held.json")
[ "$held" = "$SOURCES" ] || fail "held $held connections, not $SOURCES"
[ "$echoed" = "$tcp_one" ] || fail "$echoed held connections still echo, not host 1's $tcp_one"
[ "$(counter events.tcp_resets_sent)" -ge "$tcp_two" ] || fail "host 1 did not reset host 2's connections"
pass "host 1's $tcp_one TCP connections carry on; host 2's $tcp_two were reset by host 1"

e2e_stop_xlbd
pass "clean exit"
