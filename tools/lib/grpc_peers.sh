# Shell helpers for the gRPC test peers, tools/lib/grpc_backend.py and grpc_client.py (source
# it after harness.sh, which gives fail and xlb_wait_until). Used by the L7 end-to-end tests and
# by grpc_peers_selftest.sh. Every backend started is appended to RUN_PIDS, so that the
# caller's cleanup kills it by PID.

GRPC_PEERS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Debian's python3-grpcio is in /usr/lib/python3/dist-packages: it needs the system
# interpreter, not whatever python3 comes first in PATH (a pyenv or venv one lacks it).
GRPC_PY=${XLB_GRPC_PYTHON:-/usr/bin/python3}
[ -n "${RUN_PIDS+set}" ] || RUN_PIDS=()

# Fail unless grpc, curl and h2load are there.
grpc_require() {
    "$GRPC_PY" -c 'import grpc' 2>/dev/null ||
        fail "$GRPC_PY has no grpc module (tools/setup-deps.sh installs python3-grpcio)"
    local tool
    for tool in curl h2load; do
        command -v "$tool" >/dev/null || fail "$tool is missing (tools/setup-deps.sh installs it)"
    done
}

# grpc_backend NS LOG ARGS...: start grpc_backend.py ARGS in namespace NS with its output in
# LOG; returns once it is ready (fails the test if it is not within 10 s). Its PID is left in
# GRPC_BACKEND_PID. Backends run at most 600 s unless ARGS say --lifetime.
grpc_backend() {
    local ns=$1 log=$2
    shift 2
    # $! is the backend itself (ip netns exec execs it), so a kill by PID reaches it.
    ip netns exec "$ns" "$GRPC_PY" "$GRPC_PEERS_DIR/grpc_backend.py" "$@" >"$log" 2>&1 &
    GRPC_BACKEND_PID=$!
    RUN_PIDS+=("$GRPC_BACKEND_PID")
    xlb_wait_until 100 0.1 grep -qx ready "$log" || fail "gRPC backend $* did not start: $(cat "$log")"
}

# grpc_client NS ARGS...: grpc_client.py ARGS in namespace NS; prints its JSON summary. Bounded
# by the client's own --max-seconds (default 120) and by a timeout of 150 s around it.
grpc_client() {
    local ns=$1
    shift
    ip netns exec "$ns" timeout 150 "$GRPC_PY" "$GRPC_PEERS_DIR/grpc_client.py" "$@"
}

# grpc_expect JSON CONDITION: fail the test unless the Python CONDITION holds for r, the
# client's parsed summary (e.g. 'r["status"] == {"OK": 10}').
grpc_expect() {
    python3 - "$1" "$2" <<'PY' || fail "$2 does not hold for $1"
import json, sys
r = json.loads(sys.argv[1])
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

# grpc_field JSON EXPRESSION: print the Python EXPRESSION on r (e.g. 'r["cookie"]').
grpc_field() {
    python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}

# grpc_frame FILE: a gRPC request body by hand, one length-prefixed empty message (5 bytes),
# for curl --data-binary @FILE and h2load -d FILE. Such a request also needs the headers
# content-type: application/grpc and te: trailers (grpc-core answers a request without te
# without calling the handler).
grpc_frame() {
    printf '\0\0\0\0\0' >"$1"
}

# grpc_rpcs LOG [METHOD]: the calls of METHOD (default /xlb.test.Echo/Who) a backend logged.
grpc_rpcs() {
    grep -c "^rpc ${2:-/xlb.test.Echo/Who} " "$1" || true
}
