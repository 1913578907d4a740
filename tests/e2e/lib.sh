# Shared by the end-to-end tests (source it). Each test gets its own namespaces, named after
# its PID; the EXIT trap stops what the test started (by PID) and removes the namespaces.
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

E2E_PREFIX="xlbt$$"
E2E_DIR=$(mktemp -d "/tmp/xlb-e2e-$$-XXXXXX")
E2E_PIDS=()
XLBD_PID=""

e2e_cleanup() {
    local rc=$?
    for pid in "${E2E_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    topo_destroy "$E2E_PREFIX"
    if [ $rc -ne 0 ] && [ -f "$E2E_DIR/xlbd.log" ]; then
        echo "--- xlbd log ---"
        tail -n 40 "$E2E_DIR/xlbd.log"
    fi
    rm -rf "$E2E_DIR"
    exit $rc
}
trap e2e_cleanup EXIT

fail() {
    echo "FAIL: $*"
    exit 1
}

pass() {
    echo "ok - $*"
}

# wait_until TRIES DELAY COMMAND...: poll a condition, bounded in count and time.
wait_until() {
    local tries=$1 delay=$2
    shift 2
    for _ in $(seq 1 "$tries"); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep "$delay"
    done
    return 1
}

# The demo bootstrap with this test's socket and file prefix; extra jq-free edits by sed.
e2e_write_config() {
    sed -e "s#@SOCKET@#$E2E_DIR/xlbd.sock#" \
        -e "s#\"--no-pci\"#\"--no-pci\", \"--file-prefix=$E2E_PREFIX\"#" \
        "$E2E_SOURCE/tools/demo/bootstrap.json" >"$E2E_DIR/bootstrap.json"
}

e2e_start_xlbd() {
    ip netns exec "$E2E_PREFIX-lb" "$XLBD" --config "$E2E_DIR/bootstrap.json" \
        >"$E2E_DIR/xlbd.log" 2>&1 &
    XLBD_PID=$!
    E2E_PIDS+=("$XLBD_PID")
    wait_until 100 0.1 xlbctl status || fail "xlbd did not open its control socket"
    # Ready to serve once both gateways are resolved (ARP and ND round trips done).
    wait_until 50 0.1 bash -c "'$XLBCTL' --socket '$E2E_DIR/xlbd.sock' neighbours | grep -c reachable | grep -qx 2" ||
        fail "gateways not resolved"
}

# Stop xlbd with SIGTERM and require a clean exit.
e2e_stop_xlbd() {
    kill -TERM "$XLBD_PID"
    local rc=0
    wait "$XLBD_PID" || rc=$?
    [ $rc -eq 0 ] || fail "xlbd exited with $rc after SIGTERM"
    [ ! -e "$E2E_DIR/xlbd.sock" ] || fail "control socket left behind"
}

xlbctl() {
    "$XLBCTL" --socket "$E2E_DIR/xlbd.sock" "$@"
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

e2e_setup() {
    topo_create "$E2E_PREFIX" 3
    e2e_write_config
}
