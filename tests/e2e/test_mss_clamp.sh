#!/usr/bin/env bash
# MSS clamping through the L4 full NAT with real kernel TCP stacks: with xlb.tcp_mss_clamp
# set to 1200, the backend's kernel sees the client's SYN offer at most 1200 and the client's
# kernel sees the same of the backend's SYN-ACK over IPv4 (1180 over IPv6: the same packet
# size). A SIGHUP back to "auto" (what xlbd's 1500-byte port carries) applies live: new
# connections keep the kernels' own 1460 and 1440, which fit, and nothing more is clamped.
# Restarted with the port's mtu set to 1400, "auto" clamps to 1360 and 1340.
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_edit_config '
x = c["xlb"]
x["tcp_mss_clamp"] = 1200
x["vips"] += [{"address": "198.18.0.100", "port": 9001, "cluster": "mss"},
              {"address": "2001:2::100", "port": 9001, "cluster": "mss6"}]
sr = x["static_resources"]
def cluster(name):
    return {"name": name, "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}}}
def eds(name, a):
    endpoint = {"address": {"socket_address": {"address": a, "port_value": 9001}}}
    return {"cluster_name": name, "endpoints": [{"locality": {"zone": "a"},
        "load_balancing_weight": 1, "lb_endpoints": [{"endpoint": endpoint}]}]}
sr["clusters"] += [cluster("mss"), cluster("mss6")]
sr["endpoints"] += [eds("mss", "198.18.0.21"), eds("mss6", "2001:2::21")]'

# $! is the server itself, so cleanup's kill by PID reaches it.
ip netns exec "$E2E_PREFIX-be1" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9001 be1 --mss \
    >/dev/null 2>&1 &
RUN_PIDS+=($!)
e2e_start_xlbd

# mss VIP: one connection; prints "BACKEND_SEES CLIENT_SEES" (each kernel's TCP_MAXSEG).
mss() {
    in_client timeout 30 python3 - "$1" <<'PY'
import socket, sys
for attempt in range(5):  # a SYN lost while a next hop resolves is retried here
    try:
        with socket.create_connection((sys.argv[1], 9001), timeout=3) as s:
            name, backend_sees = s.recv(64).decode().split()
            print(backend_sees, s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG))
            break
    except OSError as e:
        print(e, file=sys.stderr)
PY
}
reachable() { [ -n "$(mss "$1")" ]; }
# within LIMIT "A B": both numbers at most LIMIT, and above LIMIT - 40 (the options' room).
within() {
    python3 -c 'import sys; l = int(sys.argv[1]); v = [int(x) for x in sys.argv[2].split()]
sys.exit(0 if len(v) == 2 and all(l - 40 < x <= l for x in v) else 1)' "$1" "$2"
}

wait_until 10 0.2 reachable 198.18.0.100 || fail "no connection through the IPv4 VIP"
wait_until 10 0.2 reachable 2001:2::100 || fail "no connection through the IPv6 VIP"
before=$(counter events.tcp_mss_clamped)
got=$(mss 198.18.0.100)
within 1200 "$got" || fail "IPv4 with tcp_mss_clamp 1200: backend and client see $got"
got6=$(mss 2001:2::100)
within 1180 "$got6" || fail "IPv6 with tcp_mss_clamp 1200: backend and client see $got6"
# A SYN or SYN-ACK sent again is clamped again, so at least 4.
[ $(($(counter events.tcp_mss_clamped) - before)) -ge 4 ] ||
    fail "tcp_mss_clamped grew by $(($(counter events.tcp_mss_clamped) - before)), not 4"
pass "tcp_mss_clamp 1200: the kernels see MSS '$got' (IPv4) and '$got6' (IPv6), offers clamped"

xlbctl --json status | python3 -c '
import json, sys
port = json.load(sys.stdin)["ports"][0]
assert port["mtu"] == 1500 and port["tcp_mss_max_ipv4"] == 1200, port' ||
    fail "status: $(xlbctl status)"

e2e_edit_config 'c["xlb"]["tcp_mss_clamp"] = "auto"'
kill -HUP "$XLBD_PID"
applied() { xlbctl --json status | python3 -c '
import json, sys
r = json.load(sys.stdin)["reload"]
sys.exit(0 if r["applied"] == 1 and "xlb.tcp_mss_clamp" in r["last"]["applied"] else 1)'; }
wait_until 50 0.1 applied || fail "reload: $(xlbctl status)"
before=$(counter events.tcp_mss_clamped)
got=$(mss 198.18.0.100)
within 1460 "$got" || fail "IPv4 after the reload to auto: $got"
got6=$(mss 2001:2::100)
within 1440 "$got6" || fail "IPv6 after the reload to auto: $got6"
[ "$(counter events.tcp_mss_clamped)" -eq "$before" ] || fail "auto clamped a 1500-byte path"
pass "SIGHUP to \"auto\": the kernels' own offers pass ('$got', '$got6'), none clamped"

e2e_stop_xlbd
pass "clean exit"

# The port's MTU: restart-only, and "auto" follows it.
e2e_edit_config 'c["xlb"]["ports"][0]["mtu"] = 1400'
e2e_start_xlbd
wait_until 10 0.2 reachable 198.18.0.100 || fail "no connection after the restart"
got=$(mss 198.18.0.100)
within 1360 "$got" || fail "IPv4 on a 1400-byte port: $got"
got6=$(mss 2001:2::100)
within 1340 "$got6" || fail "IPv6 on a 1400-byte port: $got6"
xlbctl --json status | python3 -c '
import json, sys
port = json.load(sys.stdin)["ports"][0]
assert port["mtu"] == 1400 and port["tcp_mss_max_ipv4"] == 1360, port' ||
    fail "status: $(xlbctl status)"
pass "a 1400-byte port: the kernels see MSS '$got' (IPv4) and '$got6' (IPv6)"

# A reload cannot change a started device's MTU: reported as needing a restart, kept.
e2e_edit_config 'c["xlb"]["ports"][0]["mtu"] = 1300'
kill -HUP "$XLBD_PID"
mtu_kept() { xlbctl --json status | python3 -c '
import json, sys
s = json.load(sys.stdin)
r = s["reload"]
sys.exit(0 if r["applied"] == 1 and "xlb.ports[].mtu" in r["last"]["needs_restart"]
         and s["ports"][0]["mtu"] == 1400 else 1)'; }
wait_until 50 0.1 mtu_kept || fail "reload of mtu: $(xlbctl --json status)"
pass "a SIGHUP changing the port's mtu reports it as needing a restart and keeps 1400"
e2e_stop_xlbd
pass "clean exit"
