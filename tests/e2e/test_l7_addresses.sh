#!/usr/bin/env bash
# An endpoint's additional addresses (gRPC A61, issue 23) through stream and splice VIPs, as a
# user sees it. Endpoint "he" lists 198.18.0.22:50051 first (be2: nothing listens, the kernel
# answers RST), then [2001:2::21]:50051 and 198.18.0.21:50051 (be1's grpcio backend, bound to
# both families). Endpoint "hole" lists [2001:2::23]:50051 first (be3 drops it with nftables:
# no answer at all), then 198.18.0.23:50051 (be3's grpcio backend).
#  - stream VIP :50051 -> he: every RPC succeeds, over IPv6 from an IPv4 VIP (the refused
#    address makes the next start at once); xlbctl endpoints shows the connected address.
#  - stream VIP :50052 -> hole: every RPC succeeds over IPv4, after the silent address's
#    Connection Attempt Delay (its attempt abandoned).
#  - splice VIP :50053 -> he: every RPC succeeds; each connection goes to the first IPv4
#    address, is refused, and goes on to the next IPv4 one (l7_next_address).
# Counts come from the backends' logs and xlb's counters; nothing is timed. About 15 s.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

topo_create "$E2E_PREFIX" 3
xlb_write_config
e2e_edit_config '
c["xlb"]["vips"] = [
    {"address": "198.18.0.100", "port": 50051, "target": "xds:///he", "l7_mode": "stream"},
    {"address": "198.18.0.100", "port": 50052, "target": "xds:///hole", "l7_mode": "stream"},
    {"address": "198.18.0.100", "port": 50053, "target": "xds:///he", "l7_mode": "splice"}]
def endpoint(first, *more):
    def sa(a):
        return {"address": {"socket_address": {"address": a, "port_value": 50051}}}
    e = sa(first)
    if more:
        e["additional_addresses"] = [sa(a) for a in more]
    return {"locality": {"zone": "a"}, "load_balancing_weight": 1,
            "lb_endpoints": [{"endpoint": e}]}
c["xlb"]["static_resources"] = static_l7([
    ("he", {}, [endpoint("198.18.0.22", "2001:2::21", "198.18.0.21")]),
    ("hole", {}, [endpoint("2001:2::23", "198.18.0.23")])])'

ip netns exec "$E2E_PREFIX-be3" nft -f - <<'NFT' || fail "nftables in be3"
table inet xlb_a61 {
    chain input {
        type filter hook input priority 0;
        ip6 daddr 2001:2::23 tcp dport 50051 drop
    }
}
NFT

grpc_backend "$E2E_PREFIX-be1" "$E2E_DIR/b1.log" --name b1 --port 50051 --address "::"
grpc_backend "$E2E_PREFIX-be3" "$E2E_DIR/b3.log" --name b3 --port 50051 --address "::"
e2e_start_xlbd

answers() {
    grpc_client "$E2E_PREFIX-client" --target "198.18.0.100:$1" --count 1 --deadline 3 |
        grep -q '"status": {"OK": 1}'
}

# Stream VIP, first address refused: over the IPv6 address, from an IPv4 VIP.
wait_until 50 0.2 answers 50051 || fail "no RPC through the stream VIP to endpoint he"
before=$(grpc_rpcs "$E2E_DIR/b1.log")
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 20)
grpc_expect "$out" 'r["status"] == {"OK": 20}'
[ $(($(grpc_rpcs "$E2E_DIR/b1.log") - before)) -eq 20 ] || fail "b1 did not answer the 20 RPCs"
ends=$(xlbctl --json endpoints he)
python3 - "$ends" <<'PY' || fail "xlbctl endpoints he: $ends"
import json, sys
e = json.loads(sys.argv[1])[0]
assert e["address"] == "198.18.0.22:50051", e
assert e["additional_addresses"] == ["[2001:2::21]:50051", "198.18.0.21:50051"], e
assert e["connectivity"] == "READY", e
assert e["connected_address"] == "[2001:2::21]:50051", e
PY
pass "stream: 20 of 20 RPCs over [2001:2::21] after 198.18.0.22 refused; xlbctl shows it"

# Stream VIP, first address silent: over IPv4 once the delay passed.
wait_until 50 0.2 answers 50052 || fail "no RPC through the stream VIP to endpoint hole"
before=$(grpc_rpcs "$E2E_DIR/b3.log")
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50052 --count 20)
grpc_expect "$out" 'r["status"] == {"OK": 20}'
[ $(($(grpc_rpcs "$E2E_DIR/b3.log") - before)) -eq 20 ] || fail "b3 did not answer the 20 RPCs"
[ "$(counter events.stream_attempts_abandoned)" -ge 1 ] ||
    fail "the silent address's attempt was not abandoned"
[ "$(counter events.stream_address_attempts)" -ge 2 ] || fail "stream_address_attempts < 2"
connected=$(xlbctl --json endpoints hole | python3 -c 'import json,sys; print(json.load(sys.stdin)[0].get("connected_address"))')
[ "$connected" = "198.18.0.23:50051" ] || fail "hole connected to '$connected'"
pass "stream: 20 of 20 RPCs over 198.18.0.23 while [2001:2::23] stayed silent"

# Splice VIP: each connection tries 198.18.0.22, is refused, and goes on to 198.18.0.21.
next_before=$(counter events.l7_next_address)
before=$(grpc_rpcs "$E2E_DIR/b1.log")
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50053 --count 10 --per-connection)
grpc_expect "$out" 'r["status"] == {"OK": 10}'
[ $(($(grpc_rpcs "$E2E_DIR/b1.log") - before)) -eq 10 ] || fail "b1 did not answer the 10 RPCs"
[ $(($(counter events.l7_next_address) - next_before)) -ge 1 ] ||
    fail "the splice mode never went on to a next address"
pass "splice: 10 of 10 RPCs reach 198.18.0.21 after 198.18.0.22 refused"
e2e_stop_xlbd
