#!/usr/bin/env bash
# Least request (A48) through a stream VIP, as a user sees it: one HTTP/2 connection (h2load -m
# 16, 300 requests) to a cluster of three grpcio backends, one of which answers 300 ms late.
# Its calls stay in flight, so least request (choice_count 2) sends it clearly fewer requests
# than each fast one, where round robin over the same backends (another VIP, the same run)
# gives it a third. Counts come from the backends' own logs; nothing is timed. About 20 s.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

topo_create "$E2E_PREFIX" 3
xlb_write_config
e2e_edit_config '
c["xlb"]["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///lr"},
                    {"address": "198.18.0.100", "port": 50052, "target": "xds:///rr"}]
c["xlb"]["static_resources"] = static_l7(
    [("lr", {"lb_policy": "LEAST_REQUEST"}, [locality("a", (1, 2, 3))]),
     ("rr", {"lb_policy": "ROUND_ROBIN"}, [locality("a", (1, 2, 3))])])'

for n in 1 2 3; do
    delay=0
    [ "$n" != 3 ] || delay=300
    grpc_backend "$E2E_PREFIX-be$n" "$E2E_DIR/b$n.log" --name "b$n" --port 50051 \
        --address "198.18.0.2$n" --delay-ms "$delay"
done
e2e_start_xlbd

answers() {
    grpc_client "$E2E_PREFIX-client" --target "198.18.0.100:$1" --count 1 --deadline 2 |
        grep -q '"status": {"OK": 1}'
}
wait_until 50 0.2 answers 50051 || fail "no RPC through the least-request VIP succeeded"
wait_until 50 0.2 answers 50052 || fail "no RPC through the round-robin VIP succeeded"
grpc_frame "$E2E_DIR/frame.bin"

# run PORT: h2load's 300 requests on one connection, 16 at a time; prints "b1 b2 b3" counts.
run() {
    local before=() n out
    for n in 1 2 3; do before[n]=$(grpc_rpcs "$E2E_DIR/b$n.log"); done
    out=$(in_client timeout 120 h2load -n 300 -c 1 -m 16 -d "$E2E_DIR/frame.bin" \
        -H 'content-type: application/grpc' -H 'te: trailers' \
        "http://198.18.0.100:$1/xlb.test.Echo/Who" 2>&1) || fail "h2load to $1: $out"
    grep -q "requests: 300 total, 300 started, 300 done, 300 succeeded, 0 failed" <<<"$out" ||
        fail "h2load to $1: $(grep -E '^requests|^status' <<<"$out")"
    for n in 1 2 3; do printf '%s ' $(($(grpc_rpcs "$E2E_DIR/b$n.log") - before[n])); done
}

read -r rr1 rr2 rr3 <<<"$(run 50052)"
# Round robin ignores what is in flight: the slow backend gets its third (100; 80 leaves room).
[ "$rr3" -ge 80 ] || fail "round robin gave the slow backend $rr3 of 300 ($rr1 $rr2 $rr3)"
pass "round robin: the slow backend gets its third ($rr1 $rr2 $rr3 of 300)"

read -r lr1 lr2 lr3 <<<"$(run 50051)"
# Least request over two draws: the slow backend wins a pick only when both draws are it, or
# while it has no more in flight than the other (A48): about 40 of 300 in runs here. 70 is
# five standard deviations above that, and as far below what a policy blind to calls in flight
# gives it (100, or 100 +- 8 at random).
[ "$lr3" -le 70 ] && [ "$lr1" -ge 90 ] && [ "$lr2" -ge 90 ] ||
    fail "least request gave the slow backend $lr3 of 300 ($lr1 $lr2 $lr3)"
pass "least request: the slow backend gets $lr3 of 300 ($lr1 $lr2 $lr3), round robin gave it $rr3"
e2e_stop_xlbd
