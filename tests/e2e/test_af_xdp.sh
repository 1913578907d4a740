#!/usr/bin/env bash
# AF_XDP as a port kind: xlbd on DPDK's net_af_xdp (one queue, libxdp's fallback when there is
# no bpffs) instead of af_packet, in the usual topology, forwards kernel TCP through an L4 VIP
# to three backends over IPv4 and IPv6, and stops cleanly. The other e2e tests run on af_xdp
# with XLB_E2E_PORT=af_xdp; this one always does.
XLB_E2E_PORT=af_xdp
. "$(dirname "$0")/lib.sh"

CONNECTIONS=30 # per address family

e2e_setup
e2e_edit_config '
x = c["xlb"]
x["vips"] += [{"address": "198.18.0.100", "port": 9001, "cluster": "fwd"},
              {"address": "2001:2::100", "port": 9001, "cluster": "fwd6"}]
sr = x["static_resources"]
def ep(a):
    return {"endpoint": {"address": {"socket_address": {"address": a, "port_value": 9001}}}}
for name, prefix in (("fwd", "198.18.0.2"), ("fwd6", "2001:2::2")):
    sr["clusters"].append({"name": name, "type": "EDS",
                           "eds_cluster_config": {"eds_config": {"ads": {}}}})
    sr["endpoints"].append({"cluster_name": name, "endpoints": [{
        "locality": {"zone": "a"}, "load_balancing_weight": 1,
        "lb_endpoints": [ep(prefix + str(i)) for i in (1, 2, 3)]}]})'
grep -q '"--vdev=net_af_xdp0,iface=eth0,start_queue=0,queue_count=1"' "$E2E_DIR/bootstrap.json" ||
    fail "the bootstrap does not attach net_af_xdp: $(grep vdev "$E2E_DIR/bootstrap.json")"
for b in be1 be2 be3; do
    # $! is the server itself, so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9001 "$b" \
        >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done

e2e_start_xlbd
port=$(xlbctl --json status | python3 -c 'import json,sys; p = json.load(sys.stdin)["ports"][0]; print(p["name"], p["link"])')
[ "$port" = "net_af_xdp0 up" ] || fail "port: $port"
pass "xlbd runs on net_af_xdp0, link up, gateways resolved"

# connect VIP: CONNECTIONS connections from the client; prints the answering backends' names.
connect() {
    in_client timeout 120 python3 - "$1" "$CONNECTIONS" <<'PY'
import socket, sys
names = []
for _ in range(int(sys.argv[2])):
    name = "none"
    for _attempt in range(3):  # a SYN lost while a next hop resolves is retried
        try:
            with socket.create_connection((sys.argv[1], 9001), timeout=3) as s:
                name = s.recv(16).decode() or "empty"
            break
        except OSError as e:
            name = type(e).__name__
    names.append(name)
print(" ".join(sorted(names)))
PY
}
for vip in 198.18.0.100 2001:2::100; do
    names=$(connect "$vip")
    answered=$(tr ' ' '\n' <<<"$names" | grep -c '^be[123]$' || true)
    [ "$answered" = "$CONNECTIONS" ] || fail "$vip: $answered of $CONNECTIONS answered: $names"
    spread=$(tr ' ' '\n' <<<"$names" | sort -u | wc -l)
    [ "$spread" = 3 ] || fail "$vip: not spread over the three backends: $names"
    pass "$vip: $CONNECTIONS kernel TCP connections through the L4 VIP on af_xdp, all answered, on 3 backends"
done
[ "$(counter events.flows_created)" -eq $((2 * CONNECTIONS)) ] ||
    fail "flows created: $(counter events.flows_created), not $((2 * CONNECTIONS))"
pass "one flow per connection ($((2 * CONNECTIONS)))"

e2e_stop_xlbd
pass "clean exit"
