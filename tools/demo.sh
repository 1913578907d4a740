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

say "client -> TCP 198.18.0.100:8080 (no forwarding service yet: refused by silence, counted)"
client timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.0.100/8080' 2>/dev/null || echo "no connection, as expected"

say "xlbctl status"
xlb_ctl status
say "xlbctl config dump (static resources, validated as xDS resources are)"
xlb_ctl config dump
say "xlbctl counters"
xlb_ctl counters

say "stopping xlbd (SIGTERM)"
xlb_stop
echo "xlbd exited cleanly; removing the topology"
