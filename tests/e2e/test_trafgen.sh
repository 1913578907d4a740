#!/usr/bin/env bash
# xlb-trafgen drives xlbd over a memif link (xlbd is the memif server, the generator the
# client; no namespace is needed) and counts what comes back, and xlbd's counters account for
# every frame:
#   1. a SYN flood to an L4 VIP whose backends do not resolve: every SYN is dropped as
#      next_hop_unresolved;
#   2. the same with the generator standing in for the backends (ARP, SYN-ACK): every SYN
#      makes a flow, reaches a backend, and its SYN-ACK comes back NATed to the client;
#   3. range mode, ACK segments over 5,000 flows with no connection: every one gets a RST;
#   4. pcap replay of a file written here: ICMP echo requests answered, ACKs reset;
#   5. the bounds: --duration stops an endless --count; bad options are refused.
set -euo pipefail
SRC=${XLB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${XLB_BUILD_DIR:-$SRC/build}
XLBD=$BUILD/apps/xlbd
XLBCTL=$BUILD/apps/xlbctl
TRAFGEN=$BUILD/tools/trafgen/xlb-trafgen
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root (DPDK runtime directories)"; exit 77; fi
DIR=$(mktemp -d /tmp/xlb-trafgen-XXXXXX)
PREFIX="xlbtg-${DIR##*-}" # DPDK file prefixes: $PREFIX for xlbd, $PREFIX-tg for the generator
XLBD_PID=""
TG_PID=""
cleanup() {
    local rc=$?
    if [ $rc -ne 0 ] && [ -f "$DIR/xlbd.log" ]; then
        echo "--- xlbd log ---"
        tail -n 30 "$DIR/xlbd.log"
        echo "--- xlb-trafgen log ---"
        tail -n 20 "$DIR/trafgen.log" 2>/dev/null || true
    fi
    for pid in $TG_PID $XLBD_PID; do
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$DIR" "/var/run/dpdk/$PREFIX" "/var/run/dpdk/$PREFIX-tg"
    exit $rc
}
trap cleanup EXIT
. "$SRC/tools/lib/harness.sh"
[ -x "$TRAFGEN" ] || fail "$TRAFGEN is not built"

# xlbd: one memif server port, an L4 VIP whose static cluster has three on-link backends.
python3 - "$DIR" "$PREFIX" >"$DIR/bootstrap.json" <<'PY'
import json, sys
d, prefix = sys.argv[1], sys.argv[2]
def ep(a):
    return {"endpoint": {"address": {"socket_address": {"address": a, "port_value": 9000}}}}
print(json.dumps({"xlb": {
  "eal": ["--no-huge", "--no-pci", "-m", "128", "--file-prefix=" + prefix,
          "--vdev=net_memif0,role=server,socket=" + d + "/memif.sock,id=0"],
  "worker_idle_sleep_us": 50, "control_socket": d + "/xlbd.sock",
  "ports": [{"name": "net_memif0", "addresses": ["198.18.0.10/24"], "gateway": "198.18.0.1"}],
  "snat": ["198.18.0.11"],
  "vips": [{"address": "198.18.0.100", "port": 9000, "cluster": "tcp"}],
  "static_resources": {
    "clusters": [{"name": "tcp", "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}},
                  "circuit_breakers": {"thresholds": [{"max_requests": 100000}]}}],
    "endpoints": [{"cluster_name": "tcp", "endpoints": [{"locality": {"zone": "a"},
        "load_balancing_weight": 1,
        "lb_endpoints": [ep("198.18.0.21"), ep("198.18.0.22"), ep("198.18.0.23")]}]}]}}}))
PY
"$XLBD" --check --config "$DIR/bootstrap.json" >/dev/null || fail "bootstrap rejected"
"$XLBD" --config "$DIR/bootstrap.json" >"$DIR/xlbd.log" 2>&1 &
XLBD_PID=$!
wait_until 100 0.1 xlbctl status || fail "xlbd did not start"
serving() { xlbctl --json status | python3 -c '
import json, sys
assert json.load(sys.stdin)["vips"][0]["summary"] == "serving gen 1"'; }
wait_until 50 0.1 serving || fail "VIP not serving: $(xlbctl status)"

counter() { # a total from xlbctl --json counters, e.g. counter drops.next_hop_unresolved
    xlbctl --json counters | python3 -c '
import json, sys
total = json.load(sys.stdin)["total"]
for part in sys.argv[1].split("."):
    total = total[part]
print(int(total))' "$1"
}
snapshot() { # NAME: keep the counters a phase is measured against
    xlbctl --json counters >"$DIR/counters-$1.json"
}
# delta NAME COUNTER: how much COUNTER grew since snapshot NAME
delta() {
    xlbctl --json counters | python3 -c '
import json, sys
def get(c):
    for part in sys.argv[2].split("."):
        c = c[part]
    return int(c)
before = get(json.load(open(sys.argv[1]))["total"])
print(get(json.load(sys.stdin)["total"]) - before)' "$DIR/counters-$1.json" "$2"
}
# trafgen NAME ARGS...: run the generator (bounded by timeout); its stdout must be one JSON
# object, kept in $DIR/NAME.json.
trafgen() {
    local name=$1
    shift
    timeout 120 "$TRAFGEN" --memif "$DIR/memif.sock" --idle-sleep-us 20 "$@" \
        -- --file-prefix="$PREFIX-tg" >"$DIR/$name.json" 2>>"$DIR/trafgen.log" &
    TG_PID=$!
    local rc=0
    wait "$TG_PID" || rc=$?
    TG_PID=""
    [ $rc -eq 0 ] || fail "$name: xlb-trafgen exited with $rc: $(tail -n 5 "$DIR/trafgen.log")"
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$DIR/$name.json" ||
        fail "$name: stdout is not one JSON object: $(cat "$DIR/$name.json")"
}
# tg NAME FIELD: a field of a run's summary, e.g. tg syn received_by_kind.tcp_rst
tg() {
    python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
for part in sys.argv[2].split("."):
    v = v[part]
print(v)' "$DIR/$1.json" "$2"
}

# 1. SYN flood, 100 sources x 100 ports: the backends never resolve (nobody answers ARP for
# them), so xlbd drops every SYN as next_hop_unresolved.
snapshot syn
trafgen syn --mode syn --src-ip 198.18.1.0-198.18.1.99 --src-port 10000-10099 \
    --dst 198.18.0.100:9000 --count 10000 --rate-pps 20000
[ "$(tg syn sent)" = 10000 ] && [ "$(tg syn not_sent)" = 0 ] || fail "syn: $(cat "$DIR/syn.json")"
[ "$(delta syn rx_packets)" -ge 10000 ] || fail "syn: xlbd rx grew by $(delta syn rx_packets)"
[ "$(delta syn drops.next_hop_unresolved)" = 10000 ] ||
    fail "syn: next_hop_unresolved grew by $(delta syn drops.next_hop_unresolved)"
[ "$(delta syn events.flows_created)" = 0 ] || fail "syn: flows were created"
pass "SYN flood: 10000 SYNs over 10000 flows at $(tg syn pps) pps; xlbd received them all" \
    "and dropped each as next_hop_unresolved"

# 2. The generator stands in for the backends: it answers ARP for them (and announces them),
# and each SYN xlbd forwards SNAT -> backend gets a SYN-ACK, which xlbd NATs back to the client.
snapshot backends
trafgen backends --mode syn --src-ip 198.18.2.0-198.18.2.29 --src-port 10000-10099 \
    --dst 198.18.0.100:9000 --count 3000 --rate-pps 20000 \
    --backend-ips 198.18.0.21-198.18.0.23 --warmup 2
[ "$(tg backends sent)" = 3000 ] || fail "backends: $(cat "$DIR/backends.json")"
[ "$(delta backends events.flows_created)" = 3000 ] ||
    fail "backends: flows_created grew by $(delta backends events.flows_created)"
[ "$(tg backends answered.backend_syns)" = 3000 ] ||
    fail "backends: $(tg backends answered.backend_syns) SYNs reached the backends"
[ "$(tg backends received_by_kind.tcp_syn_ack)" = 3000 ] ||
    fail "backends: $(tg backends received_by_kind.tcp_syn_ack) SYN-ACKs came back"
reachable=$(xlbctl neighbours | grep -Ec "^198\.18\.0\.2[123] .* reachable")
[ "$reachable" = 3 ] || fail "backends: $(xlbctl neighbours)"
pass "SYN flood with stand-in backends: 3000 flows created, 3000 SYNs NATed to the backends," \
    "3000 SYN-ACKs NATed back"

# 3. Range mode: ACK segments of no connection from 50 sources x 100 ports get a RST each.
snapshot range
trafgen range --mode range --flags A --src-ip 198.18.3.0-198.18.3.49 --src-port 20000-20099 \
    --dst 198.18.0.100:9000 --rate-pps 50000
[ "$(tg range sent)" = 5000 ] || fail "range: $(cat "$DIR/range.json")"
[ "$(delta range events.tcp_resets_sent)" = 5000 ] ||
    fail "range: tcp_resets_sent grew by $(delta range events.tcp_resets_sent)"
[ "$(tg range received_by_kind.tcp_rst)" = 5000 ] ||
    fail "range: $(tg range received_by_kind.tcp_rst) RSTs received"
pass "range mode: 5000 ACKs over 5000 flows, 5000 RSTs sent by xlbd and received"

# 4. pcap replay: a classic pcap file (written here) of 40 ICMP echo requests and 10 ACKs to the
# VIP, with MAC addresses that are not xlbd's (the generator rewrites them).
python3 - "$DIR/replay.pcap" <<'PY'
import struct, sys
def csum(b):
    b += b"\0" * (len(b) % 2)
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def addr(a):
    return bytes(int(x) for x in a.split("."))
def ipv4(src, dst, proto, payload):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0x4000, 64, proto, 0,
                    addr(src), addr(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload
def ether(l3):
    return b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02\x08\x00" + l3
def echo(seq):
    b = struct.pack("!BBHHH", 8, 0, 0, 0x7467, seq) + b"xlb-trafgen"
    return b[:2] + struct.pack("!H", csum(b)) + b[4:]
def ack(src, dst, sport, dport):
    t = struct.pack("!HHIIBBHHH", sport, dport, 1000, 2000, 5 << 4, 0x10, 65535, 0, 0)
    pseudo = addr(src) + addr(dst) + struct.pack("!BBH", 0, 6, len(t))
    return t[:16] + struct.pack("!H", csum(pseudo + t)) + t[18:]
vip = "198.18.0.100"
frames = [ether(ipv4("198.18.4.1", vip, 1, echo(i))) for i in range(40)]
frames += [ether(ipv4("198.18.4.2", vip, 6, ack("198.18.4.2", vip, 30000 + i, 9000)))
           for i in range(10)]
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, frame in enumerate(frames):
        f.write(struct.pack("<IIII", 1700000000, i, len(frame), len(frame)) + frame)
PY
snapshot pcap
trafgen pcap --mode pcap --pcap "$DIR/replay.pcap"
[ "$(tg pcap sent)" = 50 ] && [ "$(tg pcap pcap.packets)" = 50 ] ||
    fail "pcap: $(cat "$DIR/pcap.json")"
[ "$(delta pcap events.icmp_echo_replies)" = 40 ] ||
    fail "pcap: icmp_echo_replies grew by $(delta pcap events.icmp_echo_replies)"
[ "$(tg pcap received_by_kind.icmp_echo_reply)" = 40 ] ||
    fail "pcap: $(tg pcap received_by_kind.icmp_echo_reply) echo replies received"
[ "$(tg pcap received_by_kind.tcp_rst)" = 10 ] ||
    fail "pcap: $(tg pcap received_by_kind.tcp_rst) RSTs received"
pass "pcap replay: 50 frames replayed, 40 echo replies and 10 RSTs came back"

# 5. Bounds and refusals: an endless count stops at --duration; bad options exit 2.
trafgen bounded --mode range --src-ip 198.18.5.0-198.18.5.255 --dst 198.18.0.100:9000 \
    --count 1000000000000 --duration 1 --linger 0.2
[ "$(tg bounded stopped_by)" = duration ] || fail "bounded: $(cat "$DIR/bounded.json")"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert 0.9 <= s["elapsed_s"] < 3' \
    "$DIR/bounded.json" || fail "bounded: $(cat "$DIR/bounded.json")"
pass "--duration 1 stops an endless --count after $(tg bounded elapsed_s) s" \
    "($(tg bounded sent) frames, $(tg bounded pps) pps)"
rc=0
"$TRAFGEN" --mode syn --src-ip 198.18.1.1 --memif "$DIR/memif.sock" 2>"$DIR/usage.err" || rc=$?
[ $rc = 2 ] && grep -q "needs --dst" "$DIR/usage.err" ||
    fail "missing --dst: rc $rc, $(cat "$DIR/usage.err")"
rc=0
"$TRAFGEN" --mode pcap --pcap "$DIR/bootstrap.json" --memif "$DIR/memif.sock" 2>"$DIR/usage.err" ||
    rc=$?
[ $rc = 1 ] && grep -q "not a pcap file" "$DIR/usage.err" || fail "not a pcap: rc $rc"
pass "bad options and files are refused before EAL starts"

kill -TERM "$XLBD_PID"
rc=0
wait "$XLBD_PID" || rc=$?
XLBD_PID=""
[ $rc = 0 ] || fail "xlbd exited with $rc"
pass "clean exit"
