#!/usr/bin/env bash
# Terminate VIPs ("l4_mode": "terminate", docs/tcp.md "The relay"): xlb's own TCP on both
# sides, kernel TCP at both ends. Over IPv4 and IPv6: every connection gets its backend's
# greeting and its data echoed back byte for byte, connections spread over the backends, a
# client's half-close reaches the backend and the answer still comes back, a backend that
# refuses resets the client, both sides use the MSS tcp_mss_clamp allows, and the flows and TCP
# connections go away after the close.
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_edit_config '
x = c["xlb"]
x["tcp_mss_clamp"] = 1300
x["vips"] += [{"address": "198.18.0.100", "port": 9004, "cluster": "mss", "l4_mode": "terminate"}]
x["vips"] += [{"address": a, "port": 9002, "cluster": "relayed", "l4_mode": "terminate"}
              for a in ("198.18.0.100", "2001:2::100")]
x["vips"] += [{"address": "198.18.0.100", "port": 9003, "cluster": "refusing",
               "l4_mode": "terminate", "congestion_control": "newreno"}]
sr = x["static_resources"]
def cluster(name, port, hosts):
    sr["clusters"].append({"name": name, "type": "EDS",
                           "eds_cluster_config": {"eds_config": {"ads": {}}}})
    sr["endpoints"].append({"cluster_name": name, "endpoints": [
        {"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
            {"endpoint": {"address": {"socket_address": {"address": h, "port_value": port}}}}
            for h in hosts]}]})
cluster("relayed", 9002, [h for n in (1, 2, 3) for h in ("198.18.0.2%d" % n, "2001:2::2%d" % n)])
cluster("refusing", 9009, ["198.18.0.21"])
cluster("mss", 9004, ["198.18.0.21"])'
for b in be1 be2 be3; do
    # $! is the server itself, so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$b" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9002 "$b" \
        --echo >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
ip netns exec "$E2E_PREFIX-be1" python3 "$E2E_SOURCE/tools/lib/name_server.py" 9004 be1 --mss \
    >/dev/null 2>&1 &
RUN_PIDS+=($!)
e2e_start_xlbd

# 30 connections per family, each: the greeting, then 64 KiB of random bytes echoed back
# intact, written while reading (so neither side's window holds the other up).
result=$(in_client timeout 200 python3 - <<'PY'
import collections, os, socket, threading
names, bad = collections.Counter(), []
def one(addr, family, i):
    data = os.urandom(65536)
    for attempt in range(3):  # the first may meet backends not resolved yet
        try:
            with socket.create_connection((addr, 9002), timeout=10) as s:
                s.settimeout(20)
                name = s.recv(3)
                t = threading.Thread(target=s.sendall, args=(data,))
                t.start()
                got = bytearray()
                while len(got) < len(data):
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    got += chunk
                t.join()
                if bytes(got) != data:
                    bad.append((family, i, len(got)))
                names[(family, name.decode())] += 1
                return
        except OSError as e:
            last = e
    bad.append((family, i, repr(last)))
for family, addr in (("v4", "198.18.0.100"), ("v6", "2001:2::100")):
    for i in range(30):
        one(addr, family, i)
print(dict(names), bad)
PY
) || fail "clients: $result"
case $result in
*"} []") ;;
*) fail "echo through the relay: $result" ;;
esac
for f in v4 v6; do
    for b in be1 be2 be3; do
        case $result in *"('$f', '$b')"*) ;; *) fail "no $f connection reached $b: $result" ;; esac
    done
done
[ "$(counter events.relay_connections)" -ge 60 ] || fail "relay_connections: $(counter events.relay_connections)"
pass "60 connections over IPv4 and IPv6, 64 KiB each echoed intact, spread: $result"
# Each side's connection writes the other's received segments: they leave as they came, their
# mbufs sent in place (tcp.md): each side has the same MSS here.
in_place=$(counter tcp.segs_in_place)
[ "$in_place" -ge 1 ] || fail "no segment relayed in place (segs_in_place $in_place)"
pass "relayed segments sent from the mbufs they arrived in ($in_place)"

# Half-close: the client sends and shuts its side; the backend's echo of everything still
# arrives, then the backend's FIN (the echo server closes when it reads the end).
half=$(in_client timeout 60 python3 - <<'PY'
import socket
with socket.create_connection(("198.18.0.100", 9002), timeout=10) as s:
    s.settimeout(20)
    s.recv(3)
    s.sendall(b"x" * 5000)
    s.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
print(len(got))
PY
) || fail "half-close: $half"
[ "$half" = 5000 ] || fail "half-close: $half bytes echoed of 5000"
pass "a half-closed client still gets all 5000 bytes back, then the backend's FIN"

# A backend that refuses: the client, whose handshake xlb completed, is reset.
refused=$(in_client timeout 60 python3 - <<'PY'
import socket
try:
    with socket.create_connection(("198.18.0.100", 9003), timeout=10) as s:
        s.settimeout(20)
        print("data:%r" % s.recv(16))
except ConnectionResetError:
    print("reset")
PY
) || fail "refused: $refused"
[ "$refused" = reset ] || fail "a refusing backend: the client got $refused"
[ "$(counter events.relay_backend_failures)" -ge 1 ] || fail "relay_backend_failures not counted"
pass "a refusing backend resets the client (relay_backend_failures counted)"

# MSS: the backend's kernel sees what xlb's SYN offered, the client's what its SYN-ACK offered:
# both at most the clamp (1300, less 12 bytes of timestamps).
mss=$(in_client timeout 30 python3 - <<'PY'
import socket
with socket.create_connection(("198.18.0.100", 9004), timeout=10) as s:
    s.settimeout(10)
    answer = s.recv(32).decode().split()
    print(answer[1], s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG))
PY
) || fail "mss: $mss"
set -- $mss
[ "$1" -le 1300 ] && [ "$2" -le 1300 ] || fail "MSS backend $1, client $2: above the clamp 1300"
pass "both sides' MSS within tcp_mss_clamp 1300 (backend $1, client $2)"

# Everything closes: the flows go (a closed connection's lingers 3 s for its TIME-WAIT).
flows() { xlbctl --json flows | python3 -c 'import json,sys; print(json.load(sys.stdin)["matching"])'; }
no_flows() { [ "$(flows)" -eq 0 ]; }
wait_until 200 0.1 no_flows || fail "$(flows) flows left"
pass "no flow left after the connections closed"

e2e_stop_xlbd
pass "clean exit"
