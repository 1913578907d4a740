#!/usr/bin/env bash
# Client-side health checking (gRPC A17) through a stream VIP, as a user sees it: a round-robin
# cluster of three grpcio backends whose health_checks has a grpc_health_check for service
# xlb.test.Echo. b1 and b2 serve grpc.health.v1.Health/Watch with the status in a file of theirs
# (tools/lib/grpc_backend.py --health-file); b3 has no health service (UNIMPLEMENTED), which A17
# treats as healthy. Checked with one grpcio channel's RPCs, counted in the backends' own logs:
#   - b2 starts NOT_SERVING: it gets no RPC, while its connection stays up, and xlbctl endpoints
#     shows it TRANSIENT_FAILURE; b1 and b3 share the RPCs;
#   - b2's status turns SERVING: it is READY again and takes RPCs, with no new connection;
#   - b1's turns NOT_SERVING: b1 gets no more RPCs;
#   - b2's Watch fails (ends UNAVAILABLE, call after call): b2 is TRANSIENT_FAILURE and gets no
#     RPC; the call is made again, after gRPC's backoff, on the same connection, and once one
#     answers SERVING b2 is READY and takes RPCs again;
#   - each Watch named the cluster's service, and the counters show the watches, the
#     NOT_SERVING answers, the failed calls and b3's UNIMPLEMENTED.
# Nothing is timed: each change is awaited (bounded) in xlbctl endpoints. About 15 s.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

topo_create "$E2E_PREFIX" 3
xlb_write_config
e2e_edit_config '
c["xlb"]["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///hc"}]
check = {"grpc_health_check": {"service_name": "xlb.test.Echo"}}
c["xlb"]["static_resources"] = static_l7(
    [("hc", {"health_checks": [check]}, [locality("a", (1, 2, 3))])])'

echo SERVING >"$E2E_DIR/b1.health"
echo NOT_SERVING >"$E2E_DIR/b2.health"
for n in 1 2; do
    grpc_backend "$E2E_PREFIX-be$n" "$E2E_DIR/b$n.log" --name "b$n" --port 50051 \
        --address "198.18.0.2$n" --health-file "$E2E_DIR/b$n.health"
done
grpc_backend "$E2E_PREFIX-be3" "$E2E_DIR/b3.log" --name b3 --port 50051 --address 198.18.0.23
e2e_start_xlbd

states() {
    xlbctl --json endpoints hc | python3 -c 'import json,sys; print(" ".join(e["connectivity"] for e in json.load(sys.stdin)))'
}
answers() {
    grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 1 --deadline 2 |
        grep -q '"status": {"OK": 1}'
}
wait_until 50 0.2 answers || fail "no RPC through the health-checked VIP succeeded"
states_are() { [ "$(states)" = "$1" ]; }
# A worker connects every endpoint of the priority; b2's Watch answers NOT_SERVING.
wait_until 100 0.1 states_are "READY TRANSIENT_FAILURE READY" ||
    fail "endpoints are '$(states)', not b1 READY, b2 TRANSIENT_FAILURE (NOT_SERVING), b3 READY"

counts() { for n in 1 2 3; do printf '%s ' "$(grpc_rpcs "$E2E_DIR/b$n.log")"; done; }
spread() { # the RPCs each backend took of one channel's 60
    read -r a1 a2 a3 <<<"$(counts)"
    out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 60)
    grpc_expect "$out" 'r["status"] == {"OK": 60}'
    read -r b1 b2 b3 <<<"$(counts)"
    echo "$((b1 - a1)) $((b2 - a2)) $((b3 - a3))"
}
read -r s1 s2 s3 <<<"$(spread)"
[ "$s2" -eq 0 ] && [ "$s1" -gt 0 ] && [ "$s3" -gt 0 ] ||
    fail "with b2 NOT_SERVING, 60 RPCs went b1 $s1, b2 $s2, b3 $s3"
grep -q "^watch xlb.test.Echo " "$E2E_DIR/b2.log" || fail "b2 saw no Watch for xlb.test.Echo: $(cat "$E2E_DIR/b2.log")"
pass "b2 NOT_SERVING: TRANSIENT_FAILURE, none of 60 RPCs (b1 $s1, b3 $s3); b3 without a health service serves"

watches_b2=$(grep -c "^watch " "$E2E_DIR/b2.log")
echo SERVING >"$E2E_DIR/b2.health"
wait_until 100 0.1 states_are "READY READY READY" || fail "b2 SERVING again, but endpoints are '$(states)'"
[ "$(grep -c "^watch " "$E2E_DIR/b2.log")" = "$watches_b2" ] ||
    fail "b2 was watched again: its connection (or its Watch call) did not last"
read -r s1 s2 s3 <<<"$(spread)"
[ "$s1" -gt 0 ] && [ "$s2" -gt 0 ] && [ "$s3" -gt 0 ] ||
    fail "with all SERVING, 60 RPCs went b1 $s1, b2 $s2, b3 $s3"
pass "b2 SERVING: READY on the same connection, RPCs on all three (b1 $s1, b2 $s2, b3 $s3)"

echo NOT_SERVING >"$E2E_DIR/b1.health"
wait_until 100 0.1 states_are "TRANSIENT_FAILURE READY READY" ||
    fail "b1 NOT_SERVING, but endpoints are '$(states)'"
read -r s1 s2 s3 <<<"$(spread)"
[ "$s1" -eq 0 ] && [ "$s2" -gt 0 ] && [ "$s3" -gt 0 ] ||
    fail "with b1 NOT_SERVING, 60 RPCs went b1 $s1, b2 $s2, b3 $s3"
pass "b1 NOT_SERVING: no more RPCs (b2 $s2, b3 $s3)"

# b2's Watch ends UNAVAILABLE, and so does each new one until the file changes: the first is
# made again at once (it had answers), the next ones after the backoff (1 s, then 1.6 s...).
watches_b2=$(grep -c "^watch " "$E2E_DIR/b2.log")
echo ABORT >"$E2E_DIR/b2.health"
wait_until 100 0.1 states_are "TRANSIENT_FAILURE TRANSIENT_FAILURE READY" ||
    fail "b2's Watch failed, but endpoints are '$(states)'"
watched_again() { [ "$(grep -c "^watch " "$E2E_DIR/b2.log")" -ge $((watches_b2 + 3)) ]; }
wait_until 100 0.1 watched_again || fail "b2's failed Watch was not made again: $(cat "$E2E_DIR/b2.log")"
read -r s1 s2 s3 <<<"$(spread)"
[ "$s1" -eq 0 ] && [ "$s2" -eq 0 ] && [ "$s3" -eq 60 ] ||
    fail "with b2's Watch failing, 60 RPCs went b1 $s1, b2 $s2, b3 $s3"
echo SERVING >"$E2E_DIR/b2.health"
wait_until 100 0.1 states_are "TRANSIENT_FAILURE READY READY" ||
    fail "b2's Watch answers SERVING again, but endpoints are '$(states)'"
peers=$(grep "^watch " "$E2E_DIR/b2.log" | awk '{print $3}' | sort -u | wc -l)
[ "$peers" -eq 1 ] || fail "b2 was watched from $peers connections: $(cat "$E2E_DIR/b2.log")"
read -r s1 s2 s3 <<<"$(spread)"
[ "$s1" -eq 0 ] && [ "$s2" -gt 0 ] && [ "$s3" -gt 0 ] ||
    fail "with b2 SERVING again, 60 RPCs went b1 $s1, b2 $s2, b3 $s3"
pass "b2's Watch failing: TRANSIENT_FAILURE, no RPC, the call made again on the same connection; SERVING again: RPCs (b2 $s2, b3 $s3)"

watches=$(counter events.stream_health_watches)
not_serving=$(counter events.stream_health_not_serving)
unimplemented=$(counter events.stream_health_unimplemented)
failures=$(counter events.stream_health_watch_failures)
[ "$watches" -ge 6 ] && [ "$not_serving" -ge 2 ] && [ "$unimplemented" -ge 1 ] &&
    [ "$failures" -ge 3 ] ||
    fail "counters: watches $watches, not serving $not_serving, unimplemented $unimplemented, failures $failures"
pass "counters: $watches watches, $not_serving NOT_SERVING answers, $failures failed calls, $unimplemented UNIMPLEMENTED (b3)"
e2e_stop_xlbd
