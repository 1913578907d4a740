# What every shell test and the demo share (source it): results, a bounded wait, and xlbctl on
# the test's own control socket ($DIR/xlbd.sock unless XLB_SOCKET says otherwise).

fail() {
    echo "FAIL: $*"
    exit 1
}

pass() {
    echo "ok - $*"
}

# xlb_wait_until TRIES DELAY COMMAND...: poll a condition, bounded in count and time.
xlb_wait_until() {
    local tries=$1 delay=$2
    shift 2
    for _ in $(seq 1 "$tries"); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep "$delay"
    done
    return 1
}

wait_until() {
    xlb_wait_until "$@"
}

xlbctl() {
    "$XLBCTL" --socket "${XLB_SOCKET:-$DIR/xlbd.sock}" "$@"
}
