#!/usr/bin/env bash
# The demo: xlb's main job on its embedded default configuration (tools/demo/bootstrap.json).
# Builds what is missing, creates a client, three backends and a switch in network namespaces,
# starts xlbd on its own host with DPDK's af_packet driver, drives real traffic from the
# client, prints what xlb saw, and removes everything again.
set -euo pipefail

XLB_SOURCE=$(cd "$(dirname "$0")/.." && pwd)
XLB_BUILD=${XLB_BUILD:-$XLB_SOURCE/build}
. "$XLB_SOURCE/tools/lib/topology.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "demo: run as root (it creates network namespaces)" >&2
    exit 1
fi
"$XLB_SOURCE/tools/setup-deps.sh"
[ -f "$XLB_BUILD/build.ninja" ] || meson setup "$XLB_BUILD" "$XLB_SOURCE" >/dev/null
ninja -C "$XLB_BUILD" >/dev/null

RUN_PREFIX="xlbdemo$$"
RUN_DIR=$(mktemp -d "/tmp/xlb-demo-$$-XXXXXX")
. "$XLB_SOURCE/tools/lib/xlbd.sh"
trap xlb_cleanup_run EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
client() { ip netns exec "$RUN_PREFIX-client" "$@"; }

say "topology: client $TOPO_CLIENT4, backends 198.18.0.21-23, gateway $TOPO_GATEWAY4, xlb port 198.18.0.10"
topo_create "$RUN_PREFIX" 3
xlb_write_config
xlb_start || { tail -n 20 "$RUN_DIR/xlbd.log"; exit 1; }
echo "xlbd is running (pid $XLBD_PID) and has resolved its gateways:"
xlb_ctl neighbours

say "client -> VIP 198.18.0.100: ARP and ICMP echo"
client arping -c 3 -w 5 -I eth0 198.18.0.100 || true
client ping -c 5 -i 0.2 -W 2 198.18.0.100

say "client -> VIP 2001:2::100: neighbour discovery and ICMPv6 echo"
client ping -6 -c 5 -i 0.2 -W 2 2001:2::100

say "backends: a TCP server on port 9000 of each, answering with its name"
for b in 1 2 3; do
    # $! is the server itself (cleanup kills it by PID); it ends by itself after 120 s.
    ip netns exec "$RUN_PREFIX-be$b" python3 "$XLB_SOURCE/tools/lib/name_server.py" 9000 \
        "backend-$b" --lifetime 120 >/dev/null 2>&1 &
    RUN_PIDS+=($!)
done
listening() { ip netns exec "$RUN_PREFIX-be$1" ss -Hltn 'sport = :9000' | grep -q .; }
for b in 1 2 3; do xlb_wait_until 50 0.1 listening "$b" || echo "backend-$b is not listening"; done

say "client -> L4 VIP 198.18.0.100:9000 (cluster demo-tcp, ring hash): 60 TCP connections through xlb's full NAT"
client timeout 60 python3 -c '
import collections, socket
seen = collections.Counter()
for _ in range(60):
    for attempt in range(3):
        try:
            with socket.create_connection(("198.18.0.100", 9000), timeout=3) as s:
                seen[s.recv(32).decode()] += 1
            break
        except OSError:
            pass
for name, n in sorted(seen.items()):
    print(f"  {name}: {n} connections")
print(f"  total: {sum(seen.values())} of 60")'
say "xlbctl endpoints demo-tcp (connect outcomes counted per endpoint)"
xlb_ctl endpoints demo-tcp

say "xlbctl simulate on the gRPC VIP 198.18.0.100:8080 (HTTP/2 is not forwarded yet: the pick a request would get)"
xlb_ctl simulate --vip 198.18.0.100:8080 --path /demo.Greeter/SayHello --n 10000

say "xlbctl status"
xlb_ctl status
say "xlbctl config dump (static resources, validated as xDS resources are)"
xlb_ctl config dump
say "xlbctl counters"
xlb_ctl counters

say "stopping xlbd (SIGTERM)"
xlb_stop
echo "xlbd exited cleanly; removing the topology"
