#!/usr/bin/env bash
# Client-side weighted round robin (A58) through a stream VIP, as a gRPC user sees it: three
# grpcio backends put ORCA load reports (A51) in the trailers of their calls, with
# utilizations 0.2, 0.4 and 0.8 at the same qps; one grpcio channel's RPCs then go to them
# about 4:2:1. The backends swap their utilizations while xlbd runs and the shares follow.
# `xlbctl endpoints` shows each worker's weights (qps / utilization), `xlbctl simulate` names
# the policy, and the counters count the reports. Then the same through a second cluster that
# asks for out-of-band reports (A51: each subchannel's StreamCoreMetrics call, every 0.2 s)
# from a second grpcio server on each backend host that sends no trailers. Last, a third
# cluster asks the first servers, which do not implement StreamCoreMetrics, for out-of-band
# reports: each is asked once (UNIMPLEMENTED: not again on that connection) while its RPCs are
# served. Blackout 1 s and update period 0.1 s, so that a few seconds of calls (bounded by
# count) cover them. Counts come from the backends' own logs; nothing is timed. About 25 s.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

topo_create "$E2E_PREFIX" 3
xlb_write_config
e2e_edit_config '
c["xlb"]["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///wrr"},
                    {"address": "198.18.0.100", "port": 50052, "target": "xds:///oob"},
                    {"address": "198.18.0.100", "port": 50053, "target": "xds:///nooob"}]
# Weights are per worker, as per channel in gRPC: with one worker the warm-up channel and the
# measured one (two client connections) share them.
c["xlb"]["workers"] = 1
policy = {"policies": [{"typed_extension_config": {"name": "wrr", "typed_config": {
    "@type": T + "extensions.load_balancing_policies.client_side_weighted_round_robin.v3."
                 "ClientSideWeightedRoundRobin",
    "blackout_period": "1s", "weight_update_period": "0.100s"}}}]}
oob = copy.deepcopy(policy)
oob["policies"][0]["typed_extension_config"]["typed_config"].update(
    {"enable_oob_load_report": True, "oob_reporting_period": "0.200s"})
c["xlb"]["static_resources"] = static_l7(
    [("wrr", {"load_balancing_policy": policy}, [locality("a", (1, 2, 3))]),
     ("oob", {"load_balancing_policy": oob}, [locality("a", (1, 2, 3), port=50061)]),
     ("nooob", {"load_balancing_policy": oob}, [locality("a", (1, 2, 3))])])'

utilize() { # utilize U1 U2 U3: what b1, b2, b3 report from their next call on
    local n=1 u
    for u in "$@"; do echo "$u" >"$E2E_DIR/u$n.tmp" && mv "$E2E_DIR/u$n.tmp" "$E2E_DIR/u$n"; n=$((n + 1)); done
}
utilize 0.2 0.4 0.8
for n in 1 2 3; do
    grpc_backend "$E2E_PREFIX-be$n" "$E2E_DIR/b$n.log" --name "b$n" --port 50051 \
        --address "198.18.0.2$n" --orca-file "$E2E_DIR/u$n"
    grpc_backend "$E2E_PREFIX-be$n" "$E2E_DIR/o$n.log" --name "o$n" --port 50061 \
        --address "198.18.0.2$n" --orca-file "$E2E_DIR/u$n" --orca-oob
done
e2e_start_xlbd

answers() {
    grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50051 --count 1 --deadline 2 |
        grep -q '"status": {"OK": 1}'
}
wait_until 50 0.2 answers || fail "no RPC through the WRR VIP succeeded"

sim=$(xlbctl simulate --vip 198.18.0.100:50051 --path /xlb.test.Echo/Who --n 3 --json) ||
    fail "xlbctl simulate: $sim"
grep -q '"weighted_round_robin"' <<<"$sim" || fail "xlbctl simulate does not name the policy: $sim"
pass "xlbctl simulate names the policy weighted_round_robin"

# counts [PREFIX]: the Who calls each backend (b, or o for the OOB servers) has logged.
counts() { for n in 1 2 3; do printf '%s ' "$(grpc_rpcs "$E2E_DIR/${1:-b}$n.log")"; done; }
# shares [PORT [PREFIX]]: 300 calls spaced 10 ms (past the blackout and many update periods,
# with reports from every backend all along), then 700 on the same channel; prints the 700's
# counts.
shares() {
    local port=${1:-50051} prefix=${2:-b} out a1 a2 a3 b1 b2 b3
    out=$(grpc_client "$E2E_PREFIX-client" --target "198.18.0.100:$port" --count 300 \
        --interval 0.01)
    grpc_expect "$out" 'r["status"] == {"OK": 300}'
    read -r a1 a2 a3 <<<"$(counts "$prefix")"
    out=$(grpc_client "$E2E_PREFIX-client" --target "198.18.0.100:$port" --count 700)
    grpc_expect "$out" 'r["status"] == {"OK": 700}'
    read -r b1 b2 b3 <<<"$(counts "$prefix")"
    echo "$((b1 - a1)) $((b2 - a2)) $((b3 - a3))"
}

read -r s1 s2 s3 <<<"$(shares)"
# 4:2:1 of 700 is 400, 200, 100; round robin would give 233 each. The stride scheduler is
# exact within a round, so the margins only cover calls of the warm-up's last update period.
[ "$s1" -ge 350 ] && [ "$s1" -le 450 ] && [ "$s2" -ge 160 ] && [ "$s2" -le 240 ] &&
    [ "$s3" -ge 70 ] && [ "$s3" -le 130 ] ||
    fail "utilizations 0.2 0.4 0.8 gave $s1 $s2 $s3 of 700 (want about 400 200 100)"
pass "WRR: utilizations 0.2 0.4 0.8 give $s1 $s2 $s3 of 700 RPCs on one channel"

# Each worker's weights: qps / utilization = 500, 250, 125.
weights=$(xlbctl --json endpoints wrr) || fail "xlbctl endpoints: $weights"
python3 - "$weights" <<'PY' || fail "xlbctl endpoints does not show the weights: $weights"
import json, sys
eps = json.loads(sys.argv[1])
got = [e["wrr"][0]["weight"] for e in eps]
assert all(abs(g - w) < 0.01 * w for g, w in zip(got, (500, 250, 125))), got
assert [e["wrr"][0]["share"] for e in eps][0] == 1, eps
PY
pass "xlbctl endpoints: weights 500 250 125 (100 qps over each utilization)"

# simulate picks with the shares the worker uses now.
sim=$(xlbctl simulate --vip 198.18.0.100:50051 --path /xlb.test.Echo/Who --n 700 --json) ||
    fail "xlbctl simulate: $sim"
python3 - "$sim" <<'PY' || fail "xlbctl simulate does not weigh as the worker: $sim"
import json, sys
picks = {e["address"]: e["picks"] for e in json.loads(sys.argv[1])["endpoints"]}
want = {"198.18.0.21:50051": 400, "198.18.0.22:50051": 200, "198.18.0.23:50051": 100}
assert all(abs(picks.get(a, 0) - n) <= 10 for a, n in want.items()), picks
PY
pass "xlbctl simulate: 700 picks weighed 400 200 100, as the worker's shares"

utilize 0.8 0.4 0.2
read -r t1 t2 t3 <<<"$(shares)"
[ "$t3" -ge 350 ] && [ "$t3" -le 450 ] && [ "$t1" -ge 70 ] && [ "$t1" -le 130 ] ||
    fail "utilizations 0.8 0.4 0.2 gave $t1 $t2 $t3 of 700 (want about 100 200 400)"
pass "WRR follows new reports: utilizations 0.8 0.4 0.2 give $t1 $t2 $t3 of 700"

reports=$(counter events.stream_orca_reports)
[ "$reports" -ge 2000 ] || fail "stream_orca_reports is $reports after 2,000 RPCs"
pass "stream_orca_reports counts the trailers' reports ($reports)"

# Out of band: the servers on 50061 put no report in their trailers.
read -r o1 o2 o3 <<<"$(shares 50052 o)"
[ "$o3" -ge 350 ] && [ "$o3" -le 450 ] && [ "$o1" -ge 70 ] && [ "$o1" -le 130 ] ||
    fail "out-of-band reports of 0.8 0.4 0.2 gave $o1 $o2 $o3 of 700 (want about 100 200 400)"
for n in 1 2 3; do
    grep -q "^orca_oob 200 " "$E2E_DIR/o$n.log" ||
        fail "o$n had no StreamCoreMetrics call asking for 200 ms: $(cat "$E2E_DIR/o$n.log")"
done
calls=$(counter events.stream_orca_oob_calls)
[ "$calls" -ge 3 ] || fail "stream_orca_oob_calls is $calls"
pass "WRR from out-of-band reports: $o1 $o2 $o3 of 700 ($calls StreamCoreMetrics calls, every 200 ms)"

# The servers on 50051 answer StreamCoreMetrics UNIMPLEMENTED: over 300 calls spaced 10 ms
# (past gRPC's first backoff, 1 s), each is asked once and serves every RPC.
out=$(grpc_client "$E2E_PREFIX-client" --target 198.18.0.100:50053 --count 300 --interval 0.01)
grpc_expect "$out" 'r["status"] == {"OK": 300}'
for n in 1 2 3; do
    asked=$(grpc_rpcs "$E2E_DIR/b$n.log" /xds.service.orca.v3.OpenRcaService/StreamCoreMetrics)
    [ "$asked" -eq 1 ] || fail "b$n, without the OOB service, was asked $asked times"
done
unimplemented=$(counter events.stream_orca_oob_unimplemented)
failures=$(counter events.stream_orca_oob_call_failures)
[ "$unimplemented" -eq 3 ] && [ "$failures" -eq 0 ] ||
    fail "stream_orca_oob_unimplemented is $unimplemented, stream_orca_oob_call_failures $failures"
pass "OOB service UNIMPLEMENTED: each backend asked once, 300 RPCs OK ($unimplemented unimplemented)"
e2e_stop_xlbd
