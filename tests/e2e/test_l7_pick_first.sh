#!/usr/bin/env bash
# Pick first (A62) through a stream VIP, as a user sees it: a cluster of three grpcio backends
# whose load_balancing_policy is PickFirst (static JSON, "@type" and all). One grpcio channel's
# 40 RPCs all land on the first endpoint; once that backend is stopped (by PID) the next 40 all
# succeed and all land on the next endpoint in order, the others none. An RPC that meets the
# dead backend before xlb has seen it fail is retried, as a user would (bounded). xlbctl
# simulate names the policy and the endpoint; xlbctl endpoints shows that only the endpoint in
# use was connected. Counts come from the backends' own logs; nothing
# is timed. About 15 s.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

topo_create "$E2E_PREFIX" 3
xlb_write_config
e2e_edit_config '
c["xlb"]["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///pf"}]
policy = {"policies": [{"typed_extension_config": {"name": "pick_first", "typed_config": {
    "@type": T + "extensions.load_balancing_policies.pick_first.v3.PickFirst",
    "shuffle_address_list": False}}}]}
# Two localities, the second one heavier: pick first goes by list order, not by weight.
c["xlb"]["static_resources"] = static_l7([("pf", {"load_balancing_policy": policy},
                                          [locality("a", (1, 2)), locality("b", (3,), 100)])])'

declare -A PIDS
for n in 1 2 3; do
    grpc_backend "$E2E_PREFIX-be$n" "$E2E_DIR/b$n.log" --name "b$n" --port 50051 \
        --address "198.18.0.2$n"
    PIDS[$n]=$GRPC_BACKEND_PID
done
e2e_start_xlbd

sim=$(xlbctl simulate --vip 198.18.0.100:50051 --path /xlb.test.Echo/Who --n 20 --json) ||
    fail "xlbctl simulate: $sim"
python3 - "$sim" <<'PY' || fail "xlbctl simulate does not show pick first on b1: $sim"
import json, sys
r = json.loads(sys.argv[1])
assert [e["address"] for e in r["endpoints"]] == ["198.18.0.21:50051"], r["endpoints"]
assert r["endpoints"][0]["picks"] == 20, r["endpoints"]
assert '"pick_first"' in sys.argv[1], r
PY
pass "xlbctl simulate: policy pick_first, all 20 picks on 198.18.0.21"

answers() {
    grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 1 --deadline 2 |
        grep -q '"status": {"OK": 1}'
}
wait_until 50 0.2 answers || fail "no RPC through the pick-first VIP succeeded"

counts() { for n in 1 2 3; do printf '%s ' "$(grpc_rpcs "$E2E_DIR/b$n.log")"; done; }
read -r a1 a2 a3 <<<"$(counts)"
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 40)
grpc_expect "$out" 'r["status"] == {"OK": 40}'
read -r b1 b2 b3 <<<"$(counts)"
[ $((b1 - a1)) -eq 40 ] && [ "$b2" -eq "$a2" ] && [ "$b3" -eq "$a3" ] ||
    fail "pick first spread 40 RPCs as b1 $((b1 - a1)), b2 $((b2 - a2)), b3 $((b3 - a3))"
pass "pick first: 40 of 40 RPCs on the first endpoint (b1)"

# One subchannel at a time (A62): xlb connected b1 only; b2 and b3 were never tried.
states=$(xlbctl --json endpoints pf | python3 -c 'import json,sys; print(" ".join(e["connectivity"] for e in json.load(sys.stdin)))')
[ "$states" = "READY IDLE IDLE" ] || fail "pick first's endpoints are '$states', not 'READY IDLE IDLE'"
pass "pick first connected its first endpoint only: b1 READY, b2 and b3 IDLE"

kill "${PIDS[1]}"
wait "${PIDS[1]}" 2>/dev/null || true
# The first RPC after the stop may meet the dead connection: retried, as a user would.
wait_until 50 0.2 answers || fail "no RPC succeeded after b1 stopped"
read -r c1 c2 c3 <<<"$(counts)"
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 40)
grpc_expect "$out" 'r["status"] == {"OK": 40}'
read -r d1 d2 d3 <<<"$(counts)"
[ $((d2 - c2)) -eq 40 ] && [ "$d3" -eq "$c3" ] ||
    fail "after b1 stopped, 40 RPCs went b2 $((d2 - c2)), b3 $((d3 - c3)) (want all on b2)"
pass "pick first: with b1 stopped, 40 of 40 RPCs on the next endpoint (b2), none on b3"
e2e_stop_xlbd
