# Sourced by the interop tests that run the Node management server (xds-server/) inside a
# network namespace, next to xlbd's control plane. Needs harness.sh's wait_until and fail.

# xds_server_start NS OUT PIDS_ARRAY: the server on NS's loopback, any free ports, its output
# in OUT; its PID appended to the array named PIDS_ARRAY (the caller's cleanup list). Sets
# XDS_NS, XDS_PORT and XDS_CONTROL_PORT.
xds_server_start() {
    local here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    rm -f "$2" # an earlier server's READY line must not be read before the new job truncates it
    # Not through a function: a backgrounded function would make $! a subshell.
    ip netns exec "$1" node "$here/xds-server/server.js" --host 127.0.0.1 --port 0 \
        --control-port 0 --quiet >"$2" 2>&1 &
    eval "$3+=($!)"
    wait_until 100 0.1 grep -q '^READY' "$2" || fail "xDS server did not start: $(cat "$2")"
    XDS_NS=$1
    read -r XDS_PORT XDS_CONTROL_PORT < <(sed -n 's/^READY xds=\([0-9]*\) control=\([0-9]*\)$/\1 \2/p' "$2")
}

# control METHOD PATH [BODY]: the server's control API, from inside its namespace; prints the
# answer.
control() {
    ip netns exec "$XDS_NS" python3 - "$XDS_CONTROL_PORT" "$1" "$2" "${3:-}" <<'PY'
import sys, urllib.request
port, method, path, body = sys.argv[1:5]
req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), method=method,
                             data=body.encode() if body else None,
                             headers={"content-type": "application/json"})
print(urllib.request.urlopen(req, timeout=5).read().decode())
PY
}
