# Run xlbd inside the test topology (source this after topology.sh). Used by the demo and the
# end-to-end tests. Set before use:
#   XLB_BUILD    build directory holding apps/xlbd and apps/xlbctl
#   RUN_PREFIX   namespace prefix of the topology (see topology.sh)
#   RUN_DIR      a private temporary directory (bootstrap, socket, log)
# Every process started is appended to RUN_PIDS, so that cleanup can stop them by PID. xlbd
# runs with the DPDK file prefix $RUN_PREFIX; a run that starts DPDK processes with prefixes
# of their own appends them to RUN_DPDK_PREFIXES, so that cleanup removes their runtime
# directories too.

RUN_PIDS=()
RUN_DPDK_PREFIXES=()
XLBD_PID=""

. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

xlb_ctl() {
    "$XLB_BUILD/apps/xlbctl" --socket "$RUN_DIR/xlbd.sock" "$@"
}

# The port kind xlbd attaches to the lb host's eth0 with: af_packet (the default) or af_xdp
# (DPDK's net_af_xdp, docs/running.md), e.g. `sudo XLB_PORT_KIND=af_xdp tools/demo.sh`.
XLB_PORT_KIND=${XLB_PORT_KIND:-af_packet}

# The bootstrap (default: the demo's) with this run's socket and DPDK file prefix, and its
# af_packet port turned into an af_xdp one (one queue) when XLB_PORT_KIND says so.
xlb_write_config() {
    local source=${1:-$XLB_SOURCE/tools/demo/bootstrap.json}
    local port=()
    case $XLB_PORT_KIND in
    af_packet) ;;
    af_xdp)
        port=(-e 's#"--vdev=net_af_packet0,iface=eth0,qpairs=1"#"--vdev=net_af_xdp0,iface=eth0,start_queue=0,queue_count=1"#'
            -e 's#"net_af_packet0"#"net_af_xdp0"#') ;;
    *)
        echo "XLB_PORT_KIND=$XLB_PORT_KIND: af_packet or af_xdp" >&2
        return 1 ;;
    esac
    sed -e "s#\"/run/xlb/demo.sock\"#\"$RUN_DIR/xlbd.sock\"#" \
        -e "s#\"--no-pci\"#\"--no-pci\", \"--file-prefix=$RUN_PREFIX\"#" \
        "${port[@]}" "$source" >"$RUN_DIR/bootstrap.json"
}

gateways_reachable() {
    [ "$(xlb_ctl neighbours | grep -Ec "gateway +reachable")" -eq 2 ]
}

# Start xlbd on the lb host; returns once it serves its socket and has resolved both gateways.
xlb_start() {
    ip netns exec "$RUN_PREFIX-lb" "$XLB_BUILD/apps/xlbd" --config "$RUN_DIR/bootstrap.json" \
        >"$RUN_DIR/xlbd.log" 2>&1 &
    XLBD_PID=$!
    RUN_PIDS+=("$XLBD_PID")
    xlb_wait_until 100 0.1 xlb_ctl status || { echo "xlbd did not open its control socket"; return 1; }
    xlb_wait_until 50 0.1 gateways_reachable || { echo "xlbd did not resolve its gateways"; return 1; }
}

# SIGTERM (or the signal given), then require exit status 0 and the control socket gone.
xlb_stop() { # [SIGNAL]
    local signal=${1:-TERM}
    kill -"$signal" "$XLBD_PID"
    local rc=0
    wait "$XLBD_PID" || rc=$?
    [ $rc -eq 0 ] || { echo "xlbd exited with $rc after SIG$signal"; return 1; }
    [ ! -e "$RUN_DIR/xlbd.sock" ] || { echo "control socket left behind"; return 1; }
}

# Stop everything this run started, by PID, and wait for it to be gone.
xlb_stop_all() {
    for pid in "${RUN_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    for pid in "${RUN_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
}

# Remove the run's namespaces (and with them every link), its files and its DPDK runtime
# directories (call it once the run's processes are stopped).
xlb_remove_run() {
    topo_destroy "$RUN_PREFIX"
    rm -rf "$RUN_DIR"
    xlb_remove_dpdk_runtime "$RUN_PREFIX" "${RUN_DPDK_PREFIXES[@]}"
}

xlb_cleanup_run() {
    xlb_stop_all
    xlb_remove_run
}
