#!/usr/bin/env bash
# The SYN proxy of L4 VIPs (docs/forwarding.md "SYN proxy"): 200,000 spoofed SYNs from
# 198.18.128.0/17 at the VIP while real kernel clients open 100 connections through it and
# exchange data: every connection succeeds, the spoofed SYNs are answered with cookies and hold
# no flow (the flow count never exceeds the real connections'), and the flow count goes back to
# its baseline. Then backends that speak first (and close first, so they keep TIME-WAIT): after
# an xlbd restart the same SNAT ports go to the same backends while those still hold them in
# TIME-WAIT, which answers the proxy's SYN with an ACK of the old connection; xlb resets it as
# the client's TCP would, sends the SYN again, and every client gets its greeting.
#
# SYN_PROXY_MODE ("auto", xlbd's default, or "true") for the flood: with "auto" the worker makes
# flows for the flood's first SYNs until its half-open pool is l4_syn_proxy_percent (50) full,
# or its cluster has that share of max_requests in flight, then answers with cookies; those
# flows expire on the SYN timeout. With "true" no spoofed SYN holds a flow at all. Either way
# no SYN is refused by the circuit breaker (lb_circuit_open). The TIME-WAIT part proxies every
# connection ("true") in both: "auto" sends these few connections' SYNs to the backend as they
# come, and the client's own TCP answers a TIME-WAIT's ACK.
. "$(dirname "$0")/lib.sh"

MODE=${SYN_PROXY_MODE:-auto}
case $MODE in auto | true) ;; *) fail "SYN_PROXY_MODE is auto or true, not '$MODE'" ;; esac
e2e_setup
SYN_PROXY_MODE=$MODE e2e_edit_config '
import os
x = c["xlb"]
x["l4_syn_proxy"] = True if os.environ["SYN_PROXY_MODE"] == "true" else "auto"
x["vips"] += [{"address": "198.18.0.100", "port": 9001, "cluster": "proxied"},
              {"address": "198.18.0.100", "port": 9002, "cluster": "greeting"}]
sr = x["static_resources"]
# The greeting cluster has one backend, so that a SNAT port goes to the same one again.
for name, port, backends in (("proxied", 9001, ("198.18.0.21", "198.18.0.22", "198.18.0.23")),
                             ("greeting", 9002, ("198.18.0.21",))):
    sr["clusters"] += [{"name": name, "type": "EDS",
                        "eds_cluster_config": {"eds_config": {"ads": {}}}}]
    sr["endpoints"] += [{"cluster_name": name, "endpoints": [
        {"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
            {"endpoint": {"address": {"socket_address": {"address": a, "port_value": port}}}}
            for a in backends]}]}]'
for b in be1 be2 be3; do
    # $! is the server itself, so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9001 "$b" \
        --echo >/dev/null 2>&1 &
    RUN_PIDS+=($!)
    # Speaks first and closes first: the backend keeps each connection in TIME-WAIT.
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9002 "$b" \
        >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
e2e_start_xlbd

flows() { xlbctl --json flows | python3 -c 'import json,sys; print(json.load(sys.stdin)["matching"])'; }
# One connection first: the client learns xlbd's MAC (the flood needs it) and the backends
# are resolved.
# The first may be refused (RST) while xlbd resolves the backends: retried, bounded.
in_client timeout 60 python3 -c '
import socket, time
for attempt in range(10):
    try:
        with socket.create_connection(("198.18.0.100", 9001), timeout=5) as s:
            if s.recv(16):
                break
    except OSError:
        time.sleep(0.5)
else:
    raise SystemExit("no connection")' || fail "first connection through the VIP"
mac=$(ip -n "$E2E_PREFIX-client" neigh show 198.18.0.100 | awk '{for (i = 1; i < NF; i++) if ($i == "lladdr") {print $(i + 1); exit}}')
[ -n "$mac" ] || mac=$(ip -n "$E2E_PREFIX-client" neigh show 198.18.0.1 | awk '{for (i = 1; i < NF; i++) if ($i == "lladdr") {print $(i + 1); exit}}')
[ -n "$mac" ] || fail "no MAC for the VIP in the client's neighbour table"
# A closed connection's entry lingers (closing: 30 s); it counts in the baseline.
baseline=$(flows)
cookies_before=$(counter events.syn_proxy_cookies_sent)

# The flood: raw frames from the client's interface, sources spread over 198.18.128.0/17,
# bounded in count (200,000) and time (30 s).
in_client timeout 60 python3 - "$mac" >"$E2E_DIR/flood.out" 2>&1 <<'PY' &
import socket, struct, sys, time
dst_mac = bytes(int(x, 16) for x in sys.argv[1].split(":"))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
src_mac = s.getsockname()[4]
vip = socket.inet_aton("198.18.0.100")

def csum(data):
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF

N, start, sent = 200000, time.monotonic(), 0
eth = dst_mac + src_mac + b"\x08\x00"
for i in range(N):
    if time.monotonic() - start > 30:
        break
    src = struct.pack("!I", (198 << 24) | (18 << 16) | 0x8000 | (i * 2654435761 % 0x8000))
    sport = 1024 + i % 60000
    tcp = struct.pack("!HHIIBBHHH", sport, 9001, i * 7919, 0, 0x50, 0x02, 29200, 0, 0)
    pseudo = src + vip + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40, i & 0xFFFF, 0, 64, 6, 0, src, vip)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    s.send(eth + ip + tcp)
    sent += 1
print("sent %d in %.1f s" % (sent, time.monotonic() - start))
PY
FLOOD_PID=$!
RUN_PIDS+=($FLOOD_PID)

# Meanwhile, 100 real connections, each exchanging data with its backend's echo.
result=$(in_client timeout 200 python3 - <<'PY'
import socket
ok, errors = 0, {}
for i in range(100):
    for attempt in range(3):  # bounded: TCP itself retries within each attempt
        try:
            with socket.create_connection(("198.18.0.100", 9001), timeout=10) as s:
                s.settimeout(10)
                name = s.recv(16)
                msg = b"ping %d" % i
                s.sendall(msg)
                got = b""
                while len(got) < len(msg):
                    chunk = s.recv(64)
                    if not chunk:
                        break
                    got += chunk
                assert name and got == msg, (name, got)
                ok += 1
                break
        except (OSError, AssertionError) as e:
            errors[type(e).__name__] = errors.get(type(e).__name__, 0) + 1
print(ok, errors)
PY
)
wait "$FLOOD_PID" || fail "flood: $(cat "$E2E_DIR/flood.out")"
flood=$(cat "$E2E_DIR/flood.out")
[ "${result%% *}" = "100" ] || fail "real connections during the flood: $result ($flood)"
cookies=$(($(counter events.syn_proxy_cookies_sent) - cookies_before))
[ "$cookies" -ge 100000 ] || fail "only $cookies cookies sent for the flood ($flood)"
[ "$(counter drops.syn_pool_full)" -eq 0 ] || fail "syn_pool_full: $(counter drops.syn_pool_full)"
# A flow counts against max_requests from its SYN: the flood must not fill the circuit breaker.
[ "$(counter drops.lb_circuit_open)" -eq 0 ] || fail "lb_circuit_open: $(counter drops.lb_circuit_open) ($flood)"
held=$(flows)
if [ "$MODE" = true ]; then
    [ "$held" -le $((baseline + 100)) ] || fail "$held flows after the flood: more than the 100 real ones"
    pass "flood ($flood): $cookies SYN cookies sent, 100 of 100 real connections exchanged data ($result); $held flows held, none for a spoofed SYN"
else
    # Auto: at most each worker's threshold of half-open flows (a quarter of its flow table,
    # times l4_syn_proxy_percent) beyond the real ones; the rest of the flood got cookies.
    half_open=$(python3 -c '
import json, sys
x = json.load(open(sys.argv[1]))["xlb"]
print(x.get("workers", 1) * x.get("flows_per_worker", 65536) // 4 * x.get("l4_syn_proxy_percent", 50) // 100)' \
        "$E2E_DIR/bootstrap.json")
    [ "$held" -le $((baseline + 100 + half_open)) ] ||
        fail "$held flows after the flood: more than the 100 real ones and the $half_open half-open ones auto allows"
    pass "flood ($flood), auto: $cookies SYN cookies sent ($(counter events.syn_proxy_circuit_cookies) for the circuit breaker), 100 of 100 real connections exchanged data ($result); $held flows held (at most $half_open half-open)"
fi

# The real connections' entries go with the closing timeout (30 s), the half-open ones of the
# auto mode with the SYN timeout (bounded wait of 45 s).
back() { [ "$(flows)" -le "$baseline" ]; }
wait_until 450 0.1 back || fail "flows $(flows), baseline $baseline"
pass "flows back at the baseline ($baseline)"

# greet N: N connections to the greeting VIP, one attempt each (a retry would hide a hang),
# each waiting at most 8 s for its backend's name; prints how many got it.
greet() {
    in_client timeout 200 python3 - "$1" <<'PY'
import socket, sys
ok = 0
for i in range(int(sys.argv[1])):
    try:
        with socket.create_connection(("198.18.0.100", 9002), timeout=8) as s:
            s.settimeout(8)
            ok += bool(s.recv(16))
    except OSError:
        pass
print(ok)
PY
}
# Each restart starts the port stack afresh: the second run hands out the SNAT ports of the
# first, whose connections the backend holds in TIME-WAIT (60 s).
e2e_stop_xlbd
e2e_edit_config 'c["xlb"]["l4_syn_proxy"] = True'
e2e_start_xlbd
first=$(greet 90)
[ "$first" = 90 ] || fail "greetings before the restart: $first of 90"
e2e_stop_xlbd
e2e_start_xlbd
second=$(greet 90)
[ "$second" = 90 ] || fail "greetings on SNAT ports in TIME-WAIT: $second of 90"
stale=$(counter events.syn_proxy_stale_resets)
# Each port goes to the one backend it had: about a quarter of the SYNs meet a TIME-WAIT that
# refuses them (the client's ISN and TSval, random per connection, both older than its own), so
# none in 90 does not happen (0.75^90).
[ "$stale" -gt 0 ] || fail "no SYN met a backend's TIME-WAIT: the test did not test it"
pass "server speaks first, SNAT ports reused while backends hold them in TIME-WAIT: 90 of 90 greeted, $stale TIME-WAITs reset by xlb"

e2e_stop_xlbd
pass "clean exit"
