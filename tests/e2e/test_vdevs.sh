#!/usr/bin/env bash
# xlbd starts, serves and stops cleanly on each kind of virtual device it supports besides
# af_packet (covered by the other tests): null, ring, tap and memif. Each runs in a namespace
# of its own so that the tap interface appears nowhere else.
. "$(dirname "$0")/lib.sh"

ip netns add "$E2E_PREFIX-vdev"
check_vdev() { # NAME VDEV-ARGUMENT
    local name=$1 vdev=$2
    cat >"$E2E_DIR/$name.json" <<JSON
{"xlb": {"eal": ["--no-huge", "--no-pci", "-m", "128", "--file-prefix=$E2E_PREFIX-$name",
                 "--vdev=$vdev"],
         "worker_idle_sleep_us": 100, "control_socket": "$E2E_DIR/$name.sock",
         "ports": [{"name": "${vdev%%,*}", "addresses": ["198.18.0.10/24"]}]}}
JSON
    RUN_DPDK_PREFIXES+=("$E2E_PREFIX-$name") # its runtime directory, removed at exit
    ip netns exec "$E2E_PREFIX-vdev" "$XLBD" --config "$E2E_DIR/$name.json" >"$E2E_DIR/xlbd.log" 2>&1 &
    local pid=$!
    RUN_PIDS+=("$pid")
    wait_until 100 0.1 "$XLBCTL" --socket "$E2E_DIR/$name.sock" status || fail "$name: xlbd did not start"
    local json
    json=$("$XLBCTL" --socket "$E2E_DIR/$name.sock" --json status)
    python3 -c '
import json, sys
s = json.loads(sys.argv[1])
assert s["ports"][0]["name"] == sys.argv[2], s["ports"]
assert s["workers"][0]["loops"] > 0, s["workers"]
' "$json" "${vdev%%,*}" || fail "$name: status"
    kill -TERM "$pid"
    local rc=0
    wait "$pid" || rc=$?
    [ $rc -eq 0 ] || fail "$name: exit status $rc"
    pass "$name ($vdev): starts, polls, stops cleanly"
}

check_vdev null net_null0
check_vdev ring net_ring0
check_vdev tap net_tap0,iface=xlbtap0
check_vdev memif "net_memif0,role=server,socket=$E2E_DIR/memif.sock"

ip netns del "$E2E_PREFIX-vdev" # (the EXIT trap removes it too if a check fails)
