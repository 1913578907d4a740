#!/usr/bin/env bash
# xlb's gRPC channel (nghttp2 + OpenSSL on the event loop) against the independent Node xDS
# server: ADS over cleartext on IPv4, IPv6 and a DNS name, TLS verified against the test CA,
# mTLS, and the failures an operator must be able to tell apart.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${XLB_BUILD_DIR:-$HERE/../../build}
PROBE="$BUILD/tests/interop/probe/grpc_ads_probe"
DIR=$(mktemp -d /tmp/xlb-interop-XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$DIR"
}
trap cleanup EXIT
. "$HERE/../../tools/lib/harness.sh"

"$HERE/install.sh" >/dev/null
"$HERE/make-test-ca.sh" "$DIR/ca" >/dev/null 2>&1

LISTENER='{"resources": [{"@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
  "name": "svc", "api_listener": {"api_listener": {
  "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
  "rds": {"route_config_name": "svc-routes", "config_source": {"ads": {}}},
  "http_filters": [{"name": "router", "typed_config": {
    "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}]}}}]}'
LDS=type.googleapis.com/envoy.config.listener.v3.Listener

# start_server NAME ARGS...: sets XDS_PORT and CONTROL_PORT from the server's READY line.
start_server() {
    local name=$1
    shift
    node "$HERE/xds-server/server.js" --port 0 --control-port 0 --quiet "$@" >"$DIR/$name.out" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 100); do
        grep -q '^READY' "$DIR/$name.out" && break
        sleep 0.1
    done
    read -r XDS_PORT CONTROL_PORT < <(sed -n 's/^READY xds=\([0-9]*\) control=\([0-9]*\)$/\1 \2/p' "$DIR/$name.out")
    [ -n "$XDS_PORT" ] || fail "$name server did not start: $(cat "$DIR/$name.out")"
    CONTROL_HOST=127.0.0.1
    [ "$2" != "::1" ] || CONTROL_HOST="[::1]"
    python3 - "$CONTROL_HOST:$CONTROL_PORT" "$LISTENER" <<'PY'
import sys, urllib.request
req = urllib.request.Request("http://%s/resources" % sys.argv[1], data=sys.argv[2].encode(),
                             method="PUT", headers={"content-type": "application/json"})
urllib.request.urlopen(req, timeout=5).read()
PY
}

probe() { # SERVER-URI [probe args...] -> output in $OUT, status in $RC
    RC=0
    OUT=$("$PROBE" --server "$@" --type "$LDS" --name svc --timeout-ms 10000 2>&1) || RC=$?
}

expect_listener() { # LABEL
    [ $RC -eq 0 ] || fail "$1: $OUT"
    grep -q "\"resources\": \[\"type.googleapis.com/envoy.config.listener.v3.Listener\"\]" <<<"$OUT" ||
        fail "$1: unexpected response $OUT"
    pass "$1"
}

acks() { # the server's count of ACKed LDS responses
    python3 -c '
import json, sys, urllib.request
r = json.load(urllib.request.urlopen("http://%s/requests?type=lds&kind=ack" % sys.argv[1], timeout=5))
print(len(r["requests"] if isinstance(r, dict) else r))' "$CONTROL_HOST:$CONTROL_PORT"
}

start_server plain --host 127.0.0.1
probe "127.0.0.1:$XDS_PORT"
expect_listener "cleartext over IPv4: LDS response received"
[ "$(acks)" -ge 1 ] || fail "the server saw no ACK"
pass "the server recorded the ACK"
probe "localhost:$XDS_PORT"
expect_listener "a DNS name, resolved without blocking"
probe "dns:///localhost:$XDS_PORT"
expect_listener "a dns:/// target"

start_server v6 --host ::1
probe "[::1]:$XDS_PORT"
expect_listener "cleartext over IPv6"

start_server tls --host 127.0.0.1 --tls-cert "$DIR/ca/server.crt" --tls-key "$DIR/ca/server.key"
probe "localhost:$XDS_PORT" --ca "$DIR/ca/ca.crt"
expect_listener "TLS, server verified against the test CA by name"
probe "127.0.0.1:$XDS_PORT" --ca "$DIR/ca/ca.crt"
expect_listener "TLS, server verified by IP address"
probe "localhost:$XDS_PORT" --ca "$DIR/ca/other-ca.crt"
[ $RC -ne 0 ] && grep -q "certificate verification failed" <<<"$OUT" || fail "wrong CA accepted: $OUT"
pass "TLS with the wrong CA fails with OpenSSL's reason ($(grep -o 'failed: .*' <<<"$OUT"))"
probe "127.0.0.1:$XDS_PORT"
[ $RC -ne 0 ] || fail "cleartext to a TLS server succeeded"
pass "cleartext to a TLS server fails"

start_server mtls --host 127.0.0.1 --tls-cert "$DIR/ca/server.crt" --tls-key "$DIR/ca/server.key" \
    --client-ca "$DIR/ca/ca.crt"
probe "localhost:$XDS_PORT" --ca "$DIR/ca/ca.crt"
[ $RC -ne 0 ] || fail "mTLS server accepted a client without a certificate"
pass "mTLS without a client certificate fails"
probe "localhost:$XDS_PORT" --ca "$DIR/ca/ca.crt" --cert "$DIR/ca/client.crt" --key "$DIR/ca/client.key"
expect_listener "mTLS with the client certificate"
probe "localhost:$XDS_PORT" --ca "$DIR/ca/ca.crt" --cert "$DIR/ca/client.crt" --key "$DIR/ca/server.key"
[ $RC -ne 0 ] && grep -q "key values mismatch" <<<"$OUT" || fail "mismatched client key: $OUT"
pass "a client key that does not match its certificate is refused before connecting"

# A port nobody listens on (the cleartext server's, after stopping it).
kill "${PIDS[0]}"
wait "${PIDS[0]}" 2>/dev/null || true
start_server again --host 127.0.0.1
PORT_AGAIN=$XDS_PORT
kill "${PIDS[-1]}"
wait "${PIDS[-1]}" 2>/dev/null || true
probe "127.0.0.1:$PORT_AGAIN"
[ $RC -ne 0 ] && grep -q "cannot connect" <<<"$OUT" || fail "closed port: $OUT"
pass "a closed port fails with \"cannot connect\""
