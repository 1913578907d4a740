# Shared by the end-to-end tests (source it). Each test gets its own namespaces, named after
# its PID; the EXIT trap stops what the test started (by PID), removes the namespaces and the
# DPDK runtime directories, and fails the test if one under its prefix is left.
set -euo pipefail

E2E_SOURCE=${XLB_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
E2E_BUILD=${XLB_BUILD_DIR:-$E2E_SOURCE/build}
XLBD=$E2E_BUILD/apps/xlbd
XLBCTL=$E2E_BUILD/apps/xlbctl
. "$E2E_SOURCE/tools/lib/topology.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: end-to-end tests need root (network namespaces)"
    exit 77 # meson's "skipped"
fi

RUN_PREFIX="xlbt$$"
RUN_DIR=$(mktemp -d "/tmp/xlb-e2e-$$-XXXXXX")
XLB_SOURCE=$E2E_SOURCE
# XLB_E2E_PORT=af_xdp runs the tests with xlbd on DPDK's net_af_xdp instead of net_af_packet
# (tools/lib/xlbd.sh, XLB_PORT_KIND); a test that sets it before sourcing this file always does.
XLB_PORT_KIND=${XLB_E2E_PORT:-af_packet}
XLB_BUILD=$E2E_BUILD
. "$E2E_SOURCE/tools/lib/xlbd.sh"
# Names the tests use.
E2E_PREFIX=$RUN_PREFIX
E2E_DIR=$RUN_DIR

E2E_EXTRA_CLEANUP=""

e2e_cleanup() {
    local rc=$?
    if [ $rc -ne 0 ] && [ -f "$E2E_DIR/xlbd.log" ]; then
        echo "--- xlbd log ---"
        tail -n 40 "$E2E_DIR/xlbd.log"
    fi
    xlb_stop_all
    [ -z "$E2E_EXTRA_CLEANUP" ] || $E2E_EXTRA_CLEANUP || rc=1
    xlb_remove_run
    # A DPDK instance the test started under a prefix it did not register in
    # RUN_DPDK_PREFIXES would leave its runtime directory behind on every run.
    xlb_check_dpdk_runtime_gone "$RUN_PREFIX" || rc=1
    exit $rc
}
trap e2e_cleanup EXIT


e2e_start_xlbd() {
    xlb_start || fail "xlbd did not start"
}

e2e_stop_xlbd() {
    xlb_stop || fail "xlbd did not stop cleanly"
}

xlbctl() {
    xlb_ctl "$@"
}

in_client() {
    ip netns exec "$E2E_PREFIX-client" "$@"
}

# A counter's total from `xlbctl --json counters`, e.g. counter events.arp_replies
counter() {
    xlbctl --json counters | python3 -c '
import json, sys
total = json.load(sys.stdin)["total"]
for part in sys.argv[1].split("."):
    total = total[part]
print(int(total))' "$1"
}

# Edit this test's bootstrap with Python statements on `c` (the parsed JSON), e.g.
#   e2e_edit_config 'c["xlb"]["workers"] = 2'
# The code also has these helpers for stream VIPs' static resources (docs/static-resources.md):
#   T                              "type.googleapis.com/envoy."
#   locality(zone, backends, weight=1, port=50051)
#                                  a LocalityLbEndpoints of the topology's backends 198.18.0.2N
#   static_l7([(name, cluster_fields, localities), ...])
#                                  for each name: a listener whose one route sends everything to
#                                  the EDS cluster of that name (cluster_fields added to it), and
#                                  its ClusterLoadAssignment; the VIP's target is xds:///name
e2e_edit_config() {
    python3 - "$E2E_DIR/bootstrap.json" "$1" <<'PY'
import copy, json, sys
path, code = sys.argv[1], sys.argv[2]
c = json.load(open(path))
T = "type.googleapis.com/envoy."

def locality(zone, backends, weight=1, port=50051):
    return {"locality": {"zone": zone}, "load_balancing_weight": weight, "lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": "198.18.0.2%d" % n,
                                                     "port_value": port}}}} for n in backends]}

def static_l7(services):
    router = {"name": "router",
              "typed_config": {"@type": T + "extensions.filters.http.router.v3.Router"}}
    def hcm(name):
        return {"@type": T + "extensions.filters.network.http_connection_manager.v3."
                             "HttpConnectionManager",
                "route_config": {"name": name, "virtual_hosts": [{"name": name, "domains": ["*"],
                    "routes": [{"match": {"prefix": "/"}, "route": {"cluster": name}}]}]},
                "http_filters": [router]}
    return {
        "listeners": [{"name": n, "api_listener": {"api_listener": hcm(n)}}
                      for n, _, _ in services],
        "clusters": [dict({"name": n, "type": "EDS",
                           "eds_cluster_config": {"eds_config": {"ads": {}}}}, **fields)
                     for n, fields, _ in services],
        "endpoints": [{"cluster_name": n, "endpoints": localities}
                      for n, _, localities in services]}

exec(code)
json.dump(c, open(path, "w"), indent=1)
PY
}

# e2e_hold_connections COUNT PORT: a client holds COUNT connections open to 198.18.0.100:PORT
# (tools/lib/hold_connections.py, for name_server.py --echo backends); returns once they are
# open, their backends' names in $E2E_DIR/ready as a JSON list.
e2e_hold_connections() {
    # Not through in_client: $! must be the client itself, so that cleanup's kill reaches it.
    ip netns exec "$E2E_PREFIX-client" python3 "$E2E_SOURCE/tools/lib/hold_connections.py" \
        "$E2E_DIR" 198.18.0.100 "$2" "$1" >"$E2E_DIR/held.json" 2>&1 &
    E2E_HOLDER=$!
    RUN_PIDS+=("$E2E_HOLDER")
    wait_until 150 0.2 test -f "$E2E_DIR/ready" || fail "the client did not connect"
}

# Each held connection echoes once more; $E2E_DIR/held.json then maps each backend's name to
# one true (echoed) or false per connection it held.
e2e_release_held() {
    touch "$E2E_DIR/go"
    wait "$E2E_HOLDER" || true
}

e2e_setup() {
    topo_create "$E2E_PREFIX" 3
    xlb_write_config
}
