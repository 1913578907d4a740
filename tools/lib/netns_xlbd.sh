# One xlbd on a null device in a network namespace of its own, for tests of the control plane
# alone (no topology, no traffic). Source it with SRC (the source tree) and RUN_NAME (a short
# name for the namespace and the temporary directory) set. It sets BUILD, XLBD, XLBCTL, NS,
# DIR and EAL_PREFIX, skips the test (exit 77) without root, and its EXIT trap kills xlbd by
# PID, deletes the namespace, DIR and the DPDK runtime directory of EAL_PREFIX, and shows the
# end of xlbd's log if the test failed. The test writes $DIR/bootstrap.json with the control
# socket $DIR/xlbd.sock and the DPDK option --file-prefix=$EAL_PREFIX.

BUILD=${XLB_BUILD_DIR:-$SRC/build}
XLBD=$BUILD/apps/xlbd
XLBCTL=$BUILD/apps/xlbctl
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root (a network namespace)"; exit 77; fi
NS="$RUN_NAME$$"
EAL_PREFIX=$NS # unique like the namespace, and removable by name at exit
DIR=$(mktemp -d "/tmp/$RUN_NAME-XXXXXX")
XLBD_PID=""
netns_xlbd_cleanup() {
    local rc=$?
    [ $rc -eq 0 ] || [ ! -f "$DIR/xlbd.log" ] || tail -n 30 "$DIR/xlbd.log"
    [ -z "$XLBD_PID" ] || kill -KILL "$XLBD_PID" 2>/dev/null || true
    [ -z "$XLBD_PID" ] || wait "$XLBD_PID" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    rm -rf "$DIR"
    xlb_remove_dpdk_runtime "$EAL_PREFIX"
    xlb_check_dpdk_runtime_gone "$EAL_PREFIX" || rc=1
    exit $rc
}
trap netns_xlbd_cleanup EXIT
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
ip netns add "$NS"

# Start xlbd on $DIR/bootstrap.json; returns once it serves its control socket (1 if it never
# does).
netns_xlbd_start() {
    ip netns exec "$NS" "$XLBD" --config "$DIR/bootstrap.json" >"$DIR/xlbd.log" 2>&1 &
    XLBD_PID=$!
    xlb_wait_until 100 0.1 xlbctl status
}

# SIGTERM, then return xlbd's exit status.
netns_xlbd_stop() {
    kill -TERM "$XLBD_PID"
    local rc=0
    wait "$XLBD_PID" || rc=$?
    XLBD_PID=""
    return $rc
}
