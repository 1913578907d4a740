#!/usr/bin/env bash
# Kernel TCP bulk transfer through an L4 VIP (full NAT), on af_packet or af_xdp
# (docs/performance.md, "af_packet against af_xdp"). A benchmark: it reports, it never passes
# or fails on a figure. Needs root (network namespaces).
#
#   tools/bench/l4_bulk.sh [BUILD_DIR]     (default: $XLB_BUILD_DIR, else build-release)
#   L4B_MB=200 L4B_ROUNDS=3 XLB_PORT_KIND=af_xdp tools/bench/l4_bulk.sh build
#
# The client (198.18.0.2) sends L4B_MB megabytes over one TCP connection to the VIP
# 198.18.0.100:5001, which xlb forwards to a sink on be1 (198.18.0.21); the sink answers with
# the byte count once the client has shut its side down. Per round: the client's wall time
# (Mbit/s) and xlb's worker busy cycles per MB, at the TSC rate measured as l7_vs_haproxy.sh
# does (tools/bench/cpu_accounting.sh).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${XLB_BUILD_DIR:-$SRC/build-release}}" && pwd)
MB=${L4B_MB:-200}
ROUNDS=${L4B_ROUNDS:-3}

[ "$(id -u)" -eq 0 ] || { echo "l4_bulk: needs root (network namespaces)"; exit 1; }
[ -x "$BUILD/apps/xlbd" ] || { echo "l4_bulk: no $BUILD/apps/xlbd (build first)"; exit 1; }

RUN_PREFIX="xlbk$$"
RUN_DIR=$(mktemp -d "/tmp/xlb-l4bulk-$$-XXXXXX")
XLB_SOURCE=$SRC
XLB_BUILD=$BUILD
. "$SRC/tools/lib/topology.sh"
. "$SRC/tools/lib/xlbd.sh"
. "$SRC/tools/bench/cpu_accounting.sh"
trap xlb_cleanup_run EXIT

topo_create "$RUN_PREFIX" 1
# The sink: one connection per round, bounded by the round count and a 120 s accept timeout.
ip netns exec "$RUN_PREFIX-be1" python3 - "$ROUNDS" <<'PY' >"$RUN_DIR/sink.log" 2>&1 &
import socket, sys
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("198.18.0.21", 5001))
srv.listen(4)
srv.settimeout(120)
for _ in range(int(sys.argv[1])):
    conn, _ = srv.accept()
    total = 0
    while True:
        chunk = conn.recv(1 << 20)
        if not chunk:
            break
        total += len(chunk)
    conn.sendall(str(total).encode())
    conn.close()
PY
RUN_PIDS+=("$!")

xlb_write_config
python3 - "$RUN_DIR/bootstrap.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
x = c["xlb"]
x["workers"] = 1
x["vips"] = [{"address": "198.18.0.100", "port": 5001, "cluster": "bulk"}]
sr = x["static_resources"]
sr["clusters"].append({"name": "bulk", "type": "EDS",
                       "eds_cluster_config": {"eds_config": {"ads": {}}}})
sr["endpoints"].append({"cluster_name": "bulk", "endpoints": [{
    "locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": "198.18.0.21", "port_value": 5001}}}}]}]})
json.dump(c, open(sys.argv[1], "w"), indent=1)
PY
xlb_start
bulk_ready() { xlb_ctl clusters | grep -Eq "^bulk .* READY "; }
xlb_wait_until 100 0.1 bulk_ready || { echo "l4_bulk: cluster bulk is not ready: $(xlb_ctl clusters)"; exit 1; }
TSC_HZ=$(bench_tsc_hz)
echo "l4_bulk: $XLB_PORT_KIND, $MB MB per round over one connection, $ROUNDS rounds, TSC $TSC_HZ Hz"
echo "round  Mbit/s  xlb busy ms  xlb busy cycles per MB"
for round in $(seq 1 "$ROUNDS"); do
    before=$(bench_xlb_busy)
    seconds=$(ip netns exec "$RUN_PREFIX-client" timeout 120 python3 - "$MB" <<'PY'
import socket, sys, time
mb = int(sys.argv[1])
block = b"x" * (1 << 20)
s = socket.create_connection(("198.18.0.100", 5001), timeout=30)
t0 = time.monotonic()
for _ in range(mb):
    s.sendall(block)
s.shutdown(socket.SHUT_WR)
got = int(s.recv(64).decode() or 0)
t1 = time.monotonic()
if got != mb << 20:
    sys.exit(f"the sink received {got} bytes of {mb << 20}")
print(f"{t1 - t0:.6f}")
PY
)
    busy=$(($(bench_xlb_busy) - before))
    python3 -c 'import sys
mb, s, busy, hz = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(f"{sys.argv[5]:<6} {mb * 8 * 1.048576 / s:7.0f}  {busy * 1000 / hz:11.0f}  {busy / mb:22.0f}")' \
        "$MB" "$seconds" "$busy" "$TSC_HZ" "$round"
done
xlb_stop
