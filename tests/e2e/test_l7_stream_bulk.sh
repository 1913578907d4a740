#!/usr/bin/env bash
# Bulk RPCs through the L7 stream mode (issue 19), suite `bulk` (normal build only: the
# sanitizers would slow the transfers and see nothing e2e_l7_stream does not). The VIP
# 198.18.0.100:50051 (`"l7_mode": "stream"`) sends /xlb.test.Echo/ to cluster bulk, round robin
# over b1..b3 (tools/lib/grpc_backend.py on be1..be3, port 50051). Checked:
#   - over 1 % random loss (nftables `numgen random mod 100 < 1 drop` on TCP at the client's and
#     the backends' input hooks and at the switch's ingress from their veths, so both directions
#     of both sides lose segments), one grpcio channel makes STREAM_BULK_RPCS (default 24) Bulk
#     RPCs of 256 KiB up and 256 KiB down, every one intact byte for byte (the backend hashes
#     what it received, the client checks the hash and the reply's derived bytes), spread over
#     all three backends; the test fails if the rules dropped nothing;
#   - a client that stops reading (tools/lib/h2_slow_reader.py: HTTP/2 windows at their
#     largest, a 32 KiB socket buffer, 8 streams asking 4 MiB each): once its requests have
#     reached the backends, xlbd's RSS may not grow (six samples, 1 s apart, at most 1 MiB) nor
#     its port drop frames for want of mbufs; then the client reads and all 8 replies arrive
#     intact;
#   - 24 replies of 32 KiB that the backends end while the client reads nothing (xlb holds them
#     all): they arrive intact once it reads, and 6 more Bulk RPCs pass (the subchannels'
#     connection windows came back).
# About 25 s; it prints the bulk RPCs' duration (never asserted). XLB_STREAM_TEST_MODE=splice runs it on a splice VIP (no l7_mode key).
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require
command -v nft >/dev/null || fail "nft is missing (tools/setup-deps.sh installs nftables)"
MODE=${XLB_STREAM_TEST_MODE:-stream}
case $MODE in stream | splice) ;; *) fail "XLB_STREAM_TEST_MODE=$MODE: stream or splice" ;; esac
RPCS=${STREAM_BULK_RPCS:-24}
if ! [[ $RPCS =~ ^[0-9]+$ ]] || [ "$RPCS" -lt 3 ] || [ "$RPCS" -gt 1000 ]; then
    fail "STREAM_BULK_RPCS=$RPCS: 3..1000"
fi

topo_create "$E2E_PREFIX" 3
xlb_write_config
e2e_edit_config '
t = "type.googleapis.com/envoy."
x = c["xlb"]
vip = {"address": "198.18.0.100", "port": 50051, "target": "xds:///bulk"}
if "'"$MODE"'" == "stream":
    vip["l7_mode"] = "stream"
x["vips"] = [vip]
x["static_resources"] = {
  "listeners": [{"name": "bulk", "api_listener": {"api_listener": {
      "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
      "route_config": {"name": "bulk-routes", "virtual_hosts": [{"name": "echo", "domains": ["*"],
          "routes": [{"match": {"prefix": "/xlb.test.Echo/"}, "route": {"cluster": "bulk"}}]}]},
      "http_filters": [{"name": "router", "typed_config": {
          "@type": t + "extensions.filters.http.router.v3.Router"}}]}}}],
  "clusters": [{"name": "bulk", "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}}}],
  "endpoints": [{"cluster_name": "bulk", "endpoints": [{"locality": {"zone": "a"},
      "load_balancing_weight": 1, "lb_endpoints": [
          {"endpoint": {"address": {"socket_address": {"address": "198.18.0.2%d" % i,
                                                       "port_value": 50051}}}}
          for i in (1, 2, 3)]}]}]}'
check=$("$XLBD" --check --config "$E2E_DIR/bootstrap.json" 2>&1) ||
    fail "xlbd --check rejected the $MODE-mode bootstrap: $check"

for i in 1 2 3; do
    grpc_backend "$E2E_PREFIX-be$i" "$E2E_DIR/b$i.log" --name "b$i" --port 50051 --address "198.18.0.2$i"
done
e2e_start_xlbd
client() { grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 "$@"; }
bulk_calls() { grep -c '^rpc /xlb.test.Echo/Bulk ' "$E2E_DIR/$1.log" || true; }

answers() { client --count 1 --deadline 2 | grep -q '"status": {"OK": 1}'; }
wait_until 50 0.2 answers || fail "no RPC through the $MODE VIP succeeded"
pass "an RPC through the $MODE VIP reaches a backend"

# impair PERCENT: the loss rules, replaced (0 removes them).
impair() {
    local n=$1 ns rule="meta l4proto tcp numgen random mod 100 < $1 counter drop"
    for ns in client be1 be2 be3; do
        ip netns exec "$E2E_PREFIX-$ns" nft -f - <<EOF
table inet xlbloss
delete table inet xlbloss
$([ "$n" -eq 0 ] || echo "table inet xlbloss { chain received { type filter hook input priority 0; $rule; }; }")
EOF
    done
    ip netns exec "$E2E_PREFIX-sw" nft -f - <<EOF
table netdev xlbloss
delete table netdev xlbloss
$([ "$n" -eq 0 ] || echo "table netdev xlbloss {
    chain from_client { type filter hook ingress device v-client priority 0; $rule; }
    chain from_be1 { type filter hook ingress device v-be1 priority 0; $rule; }
    chain from_be2 { type filter hook ingress device v-be2 priority 0; $rule; }
    chain from_be3 { type filter hook ingress device v-be3 priority 0; $rule; }
}")
EOF
}
# The segments the rules dropped so far.
dropped() {
    local total=0 ns n
    for ns in client be1 be2 be3 sw; do
        n=$(ip netns exec "$E2E_PREFIX-$ns" nft list ruleset |
            sed -n 's/.*counter packets \([0-9]*\) bytes.*/\1/p' | awk '{s += $1} END {print s + 0}')
        total=$((total + n))
    done
    echo "$total"
}

# ---- bulk RPCs both ways over 1 % loss, one channel ----
impair 1
out=$(client --count "$RPCS" --bulk-up 262144 --bulk-down 262144 --deadline 60 --max-seconds 240)
lost=$(dropped)
impair 0
grpc_expect "$out" 'r["status"] == {"OK": '"$RPCS"'} and r["bulk_intact"] == '"$RPCS"' and r["bulk_corrupt"] == 0'
[ "$lost" -gt 0 ] || fail "the loss rules dropped no segment"
spread=""
for i in 1 2 3; do
    n=$(bulk_calls "b$i")
    spread+="b$i $n "
    [ "$n" -ge 1 ] || fail "b$i got no Bulk RPC of the channel's $RPCS ($spread)"
done
echo "# $RPCS bulk RPCs (256 KiB each way) over 1 % loss: $(grpc_field "$out" 'r["elapsed_s"]') s, $lost segments dropped"
pass "one channel, $RPCS Bulk RPCs of 256 KiB each way over 1 % loss: all intact ($lost segments dropped), spread $spread"
if [ "$MODE" = stream ]; then
    # The sessions' output is copied into the send queues in mbufs of a segment's payload
    # (xlb_tcp_write_copy), which leave in place, retransmissions included (tcp.md).
    in_place=$(counter tcp.segs_in_place)
    [ "$in_place" -ge 1 ] || fail "no segment sent in place (segs_in_place $in_place)"
    pass "the bulk RPCs' segments sent from their send-queue mbufs ($in_place)"
fi

# ---- a client that stops reading ----
rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$XLBD_PID/status"; }
port_rx_dropped() {
    xlbctl --json status | python3 -c '
import json, sys
print(sum(p["rx_dropped"] for p in json.load(sys.stdin)["ports"]))'
}
all_calls() { echo $(($(bulk_calls b1) + $(bulk_calls b2) + $(bulk_calls b3))); }
# slow_reader TAG STREAMS BYTES: start tools/lib/h2_slow_reader.py (its output in
# $E2E_DIR/TAG.out, its PID in $reader) and wait until its requests have all reached the
# backends.
slow_reader() {
    local tag=$1 streams=$2 bytes=$3 before
    before=$(all_calls)
    rm -f "$E2E_DIR/go"
    # Not through timeout(1): $! must be the reader itself, so that cleanup's kill reaches it.
    ip netns exec "$E2E_PREFIX-client" "$GRPC_PY" "$GRPC_PEERS_DIR/h2_slow_reader.py" \
        --target 198.18.0.100:50051 --streams "$streams" --bulk-down "$bytes" --go "$E2E_DIR/go" \
        --stalled "$E2E_DIR/$tag.stalled" --seconds 90 >"$E2E_DIR/$tag.out" 2>&1 &
    reader=$!
    RUN_PIDS+=("$reader")
    wait_until 100 0.2 test -f "$E2E_DIR/$tag.stalled" ||
        fail "the slow reader did not send its requests: $(cat "$E2E_DIR/$tag.out")"
    forwarded() { [ $(($(all_calls) - before)) -ge "$streams" ]; }
    wait_until 100 0.2 forwarded ||
        fail "the slow reader's $streams requests did not all reach the backends ($(($(all_calls) - before)))"
}
slow_reader slow 8 $((4 << 20))
dropped_start=$(port_rx_dropped)
rss_start=$(rss_kib)
# The backends answer at once; 2 s for what can move to move, then xlb must stay flat.
sleep 2
samples=()
for _ in 1 2 3 4 5 6; do
    samples+=("$(rss_kib)")
    sleep 1
done
echo "# slow reader: xlbd RSS $rss_start KiB before, then ${samples[*]} KiB"
grown=$((samples[5] - samples[0]))
[ "$grown" -le 1024 ] || fail "xlbd's RSS grew by $grown KiB while the client did not read"
[ "$(port_rx_dropped)" -eq "$dropped_start" ] ||
    fail "the port dropped frames while the client did not read: $dropped_start -> $(port_rx_dropped)"
touch "$E2E_DIR/go"
wait "$reader" || fail "slow reader: $(cat "$E2E_DIR/slow.out")"
out=$(cat "$E2E_DIR/slow.out")
grpc_expect "$out" 'r["held"] and r["intact"] == 8 and r["ended"] == 8 and r["rst"] == {} and r["goaway"] is None'
pass "a client that stopped reading 8 x 4 MiB replies: xlbd's RSS flat ($grown KiB over 5 s), no frame dropped, then all 8 intact"

# ---- replies that end at the backends while xlb still holds them ----
# 24 replies of 32 KiB fit in their stream windows: the backends send them whole and end their
# streams while the client reads nothing. The bytes xlb holds then were never consumed on the
# subchannels; their connection windows must still come back, or the next RPCs stall.
slow_reader held 24 32768
sleep 1
touch "$E2E_DIR/go"
wait "$reader" || fail "slow reader: $(cat "$E2E_DIR/held.out")"
out=$(cat "$E2E_DIR/held.out")
grpc_expect "$out" 'r["held"] and r["intact"] == 24 and r["ended"] == 24 and r["rst"] == {}'
out=$(client --count 6 --bulk-up 262144 --bulk-down 262144 --deadline 30 --max-seconds 60)
grpc_expect "$out" 'r["status"] == {"OK": 6} and r["bulk_intact"] == 6'
pass "24 replies the backends ended while the client did not read: all intact, and the subchannels carry 6 more Bulk RPCs"

e2e_stop_xlbd
pass "clean exit"
