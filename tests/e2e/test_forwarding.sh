#!/usr/bin/env bash
# Full-NAT forwarding of L4 VIPs through xlbd with real kernel TCP stacks: clients connect to
# a VIP, xlb picks a backend with the LB core, rewrites to SNAT -> backend and back, and the
# connections' spread follows the configured weights (IPv4 and IPv6). A backend that refuses
# connections (its server killed: the kernel answers RST) is ejected by outlier detection from
# those connect outcomes, and new connections avoid it. The IPv4 cluster's circuit breaker
# allows 20 connections in flight: its 150 connections one after the other all get through,
# as a connection stops counting when it closes, not when its flow entry expires (issue 24).
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_edit_config '
x = c["xlb"]
x["vips"] += [{"address": "198.18.0.100", "port": 9001, "cluster": "fwd"},
              {"address": "2001:2::100", "port": 9001, "cluster": "fwd6"}]
sr = x["static_resources"]
def cluster(name):
    return {"name": name, "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}},
            "outlier_detection": {"interval": "1s", "base_ejection_time": "30s",
                                  "max_ejection_percent": 50,
                                  "enforcing_failure_percentage": 100,
                                  "failure_percentage_minimum_hosts": 1,
                                  "failure_percentage_request_volume": 3,
                                  "failure_percentage_threshold": 50,
                                  "enforcing_success_rate": 0}}
def ep(a):
    return {"endpoint": {"address": {"socket_address": {"address": a, "port_value": 9001}}}}
def eds(name, a, b, c3):
    return {"cluster_name": name, "endpoints": [
        {"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [ep(a), ep(b)]},
        {"locality": {"zone": "b"}, "load_balancing_weight": 2, "lb_endpoints": [ep(c3)]}]}
fwd = cluster("fwd")
fwd["circuit_breakers"] = {"thresholds": [{"max_requests": 20}]}
sr["clusters"] += [fwd, cluster("fwd6")]
sr["endpoints"] += [eds("fwd", "198.18.0.21", "198.18.0.22", "198.18.0.23"),
                    eds("fwd6", "2001:2::21", "2001:2::22", "2001:2::23")]'

# One TCP server per backend, answering each connection with its name (bounded lifetime).
server() { # BACKEND
    # $! is the server itself, so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$1" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9001 "$1" \
        >/dev/null 2>&1 &
    RUN_PIDS+=($!)
    eval "SERVER_$1=$!"
}
for b in be1 be2 be3; do server "$b"; done

e2e_start_xlbd
# connect VIP N: N connections from the client; prints the JSON count per answering backend.
connect() {
    in_client timeout 120 python3 - "$1" "$2" <<'PY'
import json, socket, sys
vip, n, counts = sys.argv[1], int(sys.argv[2]), {}
for _ in range(n):
    name = "error"
    for attempt in range(3):  # a SYN lost while a next hop resolves is retried by TCP itself
        try:
            with socket.create_connection((vip, 9001), timeout=3) as s:
                name = s.recv(16).decode() or "empty"
            break
        except OSError as e:
            name = type(e).__name__
    counts[name] = counts.get(name, 0) + 1
print(json.dumps(counts))
PY
}
# check COUNTS_JSON N be1=p,be2=p,...: each within 5 binomial sigma, nothing else.
check() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, math, sys
counts, n = json.loads(sys.argv[1]), int(sys.argv[2])
want = dict((k, float(v)) for k, v in (i.split("=") for i in sys.argv[3].split(",")))
for name, p in want.items():
    got, sigma = counts.pop(name, 0), math.sqrt(n * p * (1 - p))
    if abs(got - n * p) > 5 * sigma:
        sys.exit(f"{name}: {got} of {n}, expected {n * p:.0f} +- {5 * sigma:.0f}")
if counts:
    sys.exit(f"unexpected answers: {counts}")
PY
}

# answers VIP: one new connection through VIP reaches a backend (tried afresh on each poll; the
# first SYNs may meet next hops xlb is still resolving).
answers() {
    local out
    out=$(connect "$1" 1)
    [ "$out" != '{"error": 1}' ] && [ "$out" != '{}' ]
}
wait_until 50 0.2 answers 198.18.0.100 || fail "no connection through the VIP: $(connect 198.18.0.100 1)"
out=$(connect 198.18.0.100 150)
check "$out" 150 "be1=0.1667,be2=0.1667,be3=0.6667" || fail "IPv4 spread: $out"
pass "IPv4: 150 connections through the VIP, spread 1:1:4 as the locality weights say: $out"
[ "$(counter drops.lb_circuit_open)" -eq 0 ] || fail "circuit breaker: $(counter drops.lb_circuit_open) SYNs refused"
# The connections are closed, their flows still in the table: none is in flight.
in_flight=$(xlbctl metrics | sed -n 's/^xlb_cluster_requests_in_flight{cluster="fwd"} //p')
[ "$in_flight" = 0 ] || fail "fwd has ${in_flight:-no figure} requests in flight after its connections closed"
pass "150 connections one after another with max_requests 20: none refused by the circuit breaker, none left in flight"

out=$(connect 2001:2::100 90)
check "$out" 90 "be1=0.1667,be2=0.1667,be3=0.6667" || fail "IPv6 spread: $out"
pass "IPv6: 90 connections through the VIP: $out"

[ "$(counter events.flows_created)" -ge 240 ] || fail "flows_created: $(counter events.flows_created)"
pass "every connection made a flow entry ($(counter events.flows_created))"

# be3's server goes away: its kernel answers RST, connect failures feed outlier detection.
kill -TERM "$SERVER_be3"
wait "$SERVER_be3" 2>/dev/null || true
# Detection works on what each interval saw, so connections keep coming until it acts (an
# interval holding be3's earlier successes as well may not cross the threshold).
ejected() {
    connect 198.18.0.100 10 >/dev/null
    xlbctl --json endpoints fwd | python3 -c '
import json, sys
sys.exit(0 if any(e["address"].startswith("198.18.0.23") and e["ejected"] for e in json.load(sys.stdin)) else 1)'
}
wait_until 30 0.5 ejected || fail "be3 not ejected: $(xlbctl endpoints fwd)"
out=$(connect 198.18.0.100 40)
check "$out" 40 "be1=0.5,be2=0.5" || fail "after ejection: $out"
pass "a backend refusing connections is ejected and new connections avoid it: $out"

e2e_stop_xlbd
pass "clean exit"

# Two workers on two af_packet queues: the kernel's fanout hashes each direction of a NATed
# flow on its own, so many replies land on the worker that does not own their SNAT port and
# must cross a redirect ring to the owner.
server be3
e2e_edit_config '
c["xlb"]["workers"] = 2
c["xlb"]["eal"] = [a.replace("qpairs=1", "qpairs=2") for a in c["xlb"]["eal"]]'
e2e_start_xlbd
wait_until 50 0.2 answers 198.18.0.100 ||
    fail "two workers: no connection through the VIP: $(connect 198.18.0.100 1)"
out=$(connect 198.18.0.100 120)
check "$out" 120 "be1=0.1667,be2=0.1667,be3=0.6667" || fail "two workers: $out"
redirected=$(counter events.redirected_to_owner)
[ "$redirected" -gt 0 ] || fail "no reply crossed a redirect ring"
[ "$(counter drops.flow_other_worker)" -eq 0 ] || fail "replies dropped on the wrong worker"
pass "two workers: 120 connections, $redirected replies steered to their flow's owner"
rx=$(counter rx_packets); tx=$(counter tx_packets)
python3 - "$(xlbctl --json counters)" <<'PY' || fail "accounting"
import json, sys
t = json.loads(sys.argv[1])["total"]
disposed = t["tx_packets"] + sum(t["drops"].values()) + t["events"]["handled_without_reply"]
assert t["rx_packets"] <= disposed + 64, t  # the last burst may still be in flight
PY
e2e_stop_xlbd
pass "clean exit with two workers"
