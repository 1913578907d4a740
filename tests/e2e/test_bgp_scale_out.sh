#!/usr/bin/env bash
# Scale-out with a real BGP speaker (docs/scale-out.md): a router and two xlbd hosts in
# namespaces, each host running BIRD 2 that announces the VIP over eBGP, with xlb's data port as
# the next hop, while tools/scale-out/xlb-announce sees xlb-healthcheck pass. The router's BIRD
# merges both announcements into one ECMP kernel route; far clients' TCP connections spread over
# both hosts; stopping one xlbd withdraws its route (the time is printed, not asserted), new
# connections all go to the other host, and the ones it held are reset; restarted, it is
# announced again. A Maglev VIP picks the same backend for a connection whichever host receives
# it.
. "$(dirname "$0")/lib.sh"

if ! command -v bird >/dev/null || ! command -v birdc >/dev/null; then
    echo "SKIP: BIRD 2 is not installed (tools/setup-deps.sh installs bird2)"
    exit 77
fi

SCALE_OUT=$E2E_SOURCE/tools/scale-out
HEALTHCHECK=$SCALE_OUT/xlb-healthcheck
ROUTER="$E2E_PREFIX-sw"
FAR="$E2E_PREFIX-far"
BIRD_DIR=$E2E_DIR/bird # sockets, configurations, logs and pid files of the three BIRDs
SOURCES=32             # far clients, one address each: ECMP hashes them over the hosts
MAGLEV_PORTS=16        # client ports tried on the Maglev VIP through each host

e2e_setup
mkdir -p "$BIRD_DIR"
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

# An L4 VIP on port 80 (round robin) and a Maglev one on port 82, three backends each.
e2e_edit_config '
x = c["xlb"]
x["vips"] = [{"address": "198.18.0.100", "port": 80, "cluster": "web"},
             {"address": "198.18.0.100", "port": 82, "cluster": "maglev"}]
sr = x["static_resources"]
for name, policy in (("web", "ROUND_ROBIN"), ("maglev", "MAGLEV")):
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

# Host 1 is the topology's lb host (data port 198.18.0.10); host 2 is added at 198.18.0.30.
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

# The management link, where BGP runs over the kernel: bridge mg0 in the router (198.19.0.1),
# one veth to each host (198.19.0.10 and 198.19.0.30). xlbd owns each host's eth0.
ip -n "$ROUTER" link add mg0 type bridge
ip -n "$ROUTER" addr add 198.19.0.1/24 dev mg0
ip -n "$ROUTER" link set mg0 up
for host in "lb 198.19.0.10" "lb2 198.19.0.30"; do
    read -r name address <<<"$host"
    ip -n "$ROUTER" link add "m-$name" type veth peer name mgmt netns "$E2E_PREFIX-$name"
    ip -n "$ROUTER" link set "m-$name" master mg0 up
    ip -n "$E2E_PREFIX-$name" addr add "$address/24" dev mgmt
    ip -n "$E2E_PREFIX-$name" link set mgmt up
done

e2e_start_xlbd
RUN_DPDK_PREFIXES+=("$E2E_PREFIX-2") # host 2's DPDK runtime directory, removed at exit
ip netns exec "$E2E_PREFIX-lb2" "$XLBD" --config "$E2E_DIR/host2.json" >"$E2E_DIR/host2.log" 2>&1 &
host2=$!
RUN_PIDS+=("$host2")
wait_until 100 0.1 "$XLBCTL" --socket "$E2E_DIR/host2.sock" status || fail "host 2 did not start"
pass "two xlbd hosts serve 198.18.0.100"

# start_bird NAME NAMESPACE TEMPLATE SED-EXPRESSIONS...: BIRD in the foreground, so that $! is
# BIRD itself and cleanup kills it by PID; its files in $BIRD_DIR.
start_bird() {
    local name=$1 ns=$2 template=$3
    shift 3
    sed -e "s#@LOG@#$BIRD_DIR/$name.log#" "$@" "$template" >"$BIRD_DIR/$name.conf"
    bird -p -c "$BIRD_DIR/$name.conf" || fail "BIRD rejects $name.conf"
    ip netns exec "$ns" bird -f -c "$BIRD_DIR/$name.conf" -s "$BIRD_DIR/$name.ctl" \
        -P "$BIRD_DIR/$name.pid" >"$BIRD_DIR/$name.out" 2>&1 &
    RUN_PIDS+=($!)
    wait_until 50 0.1 birdc -s "$BIRD_DIR/$name.ctl" show status >/dev/null ||
        fail "BIRD $name did not start: $(cat "$BIRD_DIR/$name.out")"
}
start_bird router "$ROUTER" "$SCALE_OUT/bird-router.conf.in" -e "s#@ROUTER_ID@#198.19.0.1#" \
    -e "s#@ROUTER_AS@#65000#" -e "s#@HOSTS@#198.19.0.0/24#" -e "s#@VIPS@#198.18.0.0/24#"
host_bird() { # NAME NAMESPACE MANAGEMENT-ADDRESS DATA-ADDRESS
    start_bird "$1" "$2" "$SCALE_OUT/bird-host.conf.in" -e "s#@ROUTER_ID@#$3#" \
        -e "s#@LOCAL_AS@#65010#" -e "s#@ROUTER@#198.19.0.1#" -e "s#@ROUTER_AS@#65000#" \
        -e "s#@NEXT_HOP@#$4#" -e "s#@VIP@#198.18.0.100#"
}
host_bird host1 "$E2E_PREFIX-lb" 198.19.0.10 198.18.0.10
host_bird host2 "$E2E_PREFIX-lb2" 198.19.0.30 198.18.0.30

# The health loops: each enables its BIRD's xlb_vips while xlb-healthcheck --vip passes
# (2 passes in a row), and disables it after 2 failures; 0.2 s apart, at most 1500 passes.
announce() { # NAME SOCKET
    RISE=2 FALL=2 INTERVAL=0.2 PASSES=1500 BIRDC="birdc -s $BIRD_DIR/$1.ctl" \
        HEALTHCHECK="$HEALTHCHECK" "$SCALE_OUT/xlb-announce" --xlbctl "$XLBCTL" \
        --socket "$2" --vip 198.18.0.100 &
    RUN_PIDS+=($!)
}
announce host1 "$E2E_DIR/xlbd.sock"
announce host2 "$E2E_DIR/host2.sock"

vip_route() { ip -n "$ROUTER" route show 198.18.0.100/32; }
next_hops() { vip_route | grep -Eo "via 198\.18\.0\.[0-9]+" | sort | tr '\n' ' '; }
ecmp_over_both() { [ "$(next_hops)" = "via 198.18.0.10 via 198.18.0.30 " ]; }
only_host1() { [ "$(next_hops)" = "via 198.18.0.10 " ]; }
wait_until 300 0.2 ecmp_over_both ||
    fail "the router has no ECMP route over both hosts: $(vip_route); $(birdc -s "$BIRD_DIR/router.ctl" show protocols)"
echo "router: $(vip_route | tr -s ' \n' ' ')"
pass "BGP: both hosts announce 198.18.0.100, the router installs one route with two next hops"

# One TCP connection from each far client, held open: each answered by a backend's name.
flows() { # SOCKET
    "$XLBCTL" --socket "$1" --json counters |
        python3 -c 'import json,sys; print(int(json.load(sys.stdin)["total"]["events"].get("flows_created", 0)))'
}
mkdir -p "$E2E_DIR/held"
ip netns exec "$FAR" python3 "$E2E_SOURCE/tools/lib/hold_connections.py" "$E2E_DIR/held" \
    198.18.0.100 80 "$SOURCES" 198.18.1.2 >"$E2E_DIR/held/held.json" 2>&1 &
holder=$!
RUN_PIDS+=("$holder")
wait_until 200 0.2 test -f "$E2E_DIR/held/ready" || fail "the far clients did not connect"
answered=$(python3 -c 'import json,sys; print(sum(n.startswith("be") for n in json.load(open(sys.argv[1]))))' "$E2E_DIR/held/ready")
[ "$answered" = "$SOURCES" ] || fail "only $answered of $SOURCES TCP connections were answered: $(cat "$E2E_DIR/held/ready")"
tcp_one=$(flows "$E2E_DIR/xlbd.sock")
tcp_two=$(flows "$E2E_DIR/host2.sock")
[ "$tcp_one" -gt 0 ] && [ "$tcp_two" -gt 0 ] || fail "TCP did not spread over both hosts: $tcp_one and $tcp_two"
[ $((tcp_one + tcp_two)) -eq "$SOURCES" ] || fail "flows $tcp_one + $tcp_two, not $SOURCES"
pass "ECMP spreads $SOURCES TCP connections over both hosts ($tcp_one and $tcp_two), all answered by backends"

# Maglev: the same client address and port get the same backend from either host. The client
# (on the data link) reaches each host in turn through a host route, and resets each connection
# on close so that the next host can be offered the very same connection.
maglev_backends() { # HOST-ADDRESS
    ip -n "$E2E_PREFIX-client" route replace 198.18.0.100/32 via "$1"
    ip netns exec "$E2E_PREFIX-client" python3 - "$MAGLEV_PORTS" <<'PY'
import socket, struct, sys, time
names = []
for port in range(41000, 41000 + int(sys.argv[1])):
    name = "none"
    for _ in range(5):  # bounded: a lost SYN is retried a few times
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.settimeout(3)
        try:
            s.bind(("198.18.0.2", port))
            s.connect(("198.18.0.100", 82))
            name = s.recv(16).decode()
            break
        except OSError:
            time.sleep(0.2)
        finally:
            s.close()
    names.append(name)
print(" ".join(names))
PY
}
via_one=$(maglev_backends 198.18.0.10)
via_two=$(maglev_backends 198.18.0.30)
ip -n "$E2E_PREFIX-client" route del 198.18.0.100/32
echo "maglev via host 1: $via_one"
echo "maglev via host 2: $via_two"
grep -q none <<<"$via_one $via_two" && fail "a Maglev connection was not answered"
[ "$via_one" = "$via_two" ] || fail "the hosts picked different Maglev backends"
spread=$(tr ' ' '\n' <<<"$via_one" | sort -u | wc -l)
[ "$spread" -ge 2 ] || fail "Maglev sent all $MAGLEV_PORTS connections to one backend"
pass "Maglev: $MAGLEV_PORTS connections get the same backend from either host ($spread backends)"

# Stop host 2: its health check fails, its loop disables xlb_vips, BGP withdraws the route.
before_one=$(flows "$E2E_DIR/xlbd.sock")
stopped=$(date +%s%N)
kill -TERM "$host2"
wait "$host2" || fail "host 2 did not stop cleanly"
wait_until 300 0.05 only_host1 || fail "host 2's route was not withdrawn: $(vip_route)"
withdrawn_ms=$((($(date +%s%N) - stopped) / 1000000))
echo "withdrawal: host 2's next hop left the router's route ${withdrawn_ms} ms after SIGTERM (FALL=2, INTERVAL=0.2 s)"
pass "host 2 stopped: its route is withdrawn, the router keeps host 1 only"

# New connections from every far client all go to host 1 and are answered.
mkdir -p "$E2E_DIR/new"
ip netns exec "$FAR" python3 "$E2E_SOURCE/tools/lib/hold_connections.py" "$E2E_DIR/new" \
    198.18.0.100 80 "$SOURCES" 198.18.1.2 >"$E2E_DIR/new/held.json" 2>&1 &
newer=$!
RUN_PIDS+=("$newer")
wait_until 200 0.2 test -f "$E2E_DIR/new/ready" || fail "the far clients did not connect again"
answered=$(python3 -c 'import json,sys; print(sum(n.startswith("be") for n in json.load(open(sys.argv[1]))))' "$E2E_DIR/new/ready")
[ "$answered" = "$SOURCES" ] || fail "after the withdrawal only $answered of $SOURCES new connections were answered"
[ $(($(flows "$E2E_DIR/xlbd.sock") - before_one)) -eq "$SOURCES" ] || fail "new connections did not all go to host 1"
touch "$E2E_DIR/new/go"
wait "$newer" || true
pass "all $SOURCES new connections go to host 1 and are answered"

# The connections held through host 2 now reach host 1, which has no flow for them: reset.
touch "$E2E_DIR/held/go"
wait "$holder" || true
read -r held echoed < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))  # each backend: one echoed-or-not per held connection
print(sum(len(v) for v in r.values()), sum(sum(v) for v in r.values()))' "$E2E_DIR/held/held.json")
[ "$held" = "$SOURCES" ] || fail "held $held connections, not $SOURCES"
[ "$echoed" = "$tcp_one" ] || fail "$echoed held connections still echo, not host 1's $tcp_one"
pass "established: host 1's $tcp_one connections carry on, host 2's $tcp_two are reset"

# Host 2 comes back: once its health check passes RISE times, BIRD announces it again.
ip netns exec "$E2E_PREFIX-lb2" "$XLBD" --config "$E2E_DIR/host2.json" >"$E2E_DIR/host2.log" 2>&1 &
host2=$!
RUN_PIDS+=("$host2")
wait_until 300 0.2 ecmp_over_both || fail "host 2 was not announced again: $(vip_route)"
pass "host 2 restarted: announced again, the router is back to two next hops"

# Host 2's data link goes down (its switch port, the veth peer of the eth0 xlbd drives through
# af_packet): DPDK still reports the link up, xlb reads the kernel interface's carrier, the
# health check fails and the route is withdrawn; back up, the host is announced again.
ip -n "$E2E_PREFIX-sw" link set v-lb2 down
down_at=$(date +%s%N)
wait_until 300 0.05 only_host1 || fail "host 2's route stayed with its data link down: $(vip_route)"
echo "withdrawal: host 2's next hop left the router's route $((($(date +%s%N) - down_at) / 1000000)) ms after its link went down"
why=$("$HEALTHCHECK" --xlbctl "$XLBCTL" --socket "$E2E_DIR/host2.sock" 2>&1) &&
    fail "xlb-healthcheck passed with host 2's link down"
echo "$why" | grep -q "link down (interface eth0: no carrier)" ||
    fail "xlb-healthcheck did not name the link: $why"
metrics=$("$XLBCTL" --socket "$E2E_DIR/host2.sock" metrics) # whole, then grep: no SIGPIPE
grep -Eq '^xlb_port_link_up\{port="net_af_[a-z]+0"\} 0' <<<"$metrics" ||
    fail "the link-up metric does not show host 2's link down"
ip -n "$E2E_PREFIX-sw" link set v-lb2 up
wait_until 300 0.2 ecmp_over_both || fail "host 2 was not announced again after its link came back: $(vip_route)"
pass "host 2's data link down: withdrawn ($why); link up: announced again"

kill -TERM "$host2"
wait "$host2" || fail "host 2 did not stop cleanly"
e2e_stop_xlbd
pass "clean exit"
