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

# DPDK leaves a primary process's runtime files (shared config, memory maps, sockets: a few
# MB, in RAM where /run is a tmpfs) in /var/run/dpdk/PREFIX after it exits, and nothing else
# removes them. Call this once the run's processes are stopped, with exactly the prefixes the
# run gave its own processes: never a pattern, so that no other run's directory is touched.
xlb_remove_dpdk_runtime() { # PREFIX...
    local prefix
    for prefix in "$@"; do
        case $prefix in "" | . | .. | */*) continue ;; esac # one directory name, nothing else
        rm -rf -- "/var/run/dpdk/$prefix"
    done
}

# Fails, naming them, if PREFIX or a PREFIX-* derived from it (a second instance, a generator)
# still has a runtime directory: one the run created without removing it.
xlb_check_dpdk_runtime_gone() { # PREFIX
    local left
    left=$(compgen -G "/var/run/dpdk/$1" ; compgen -G "/var/run/dpdk/$1-*") || true
    [ -z "$left" ] || { echo "DPDK runtime directories left behind: $left"; return 1; }
}
