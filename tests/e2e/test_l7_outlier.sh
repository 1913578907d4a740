#!/usr/bin/env bash
# Per-RPC outcomes of L7 VIPs with real gRPC peers (tools/lib/grpc_backend.py and
# grpc_client.py, Debian's python3-grpcio): outlier detection (gRPC A50) counts one call result
# per RPC from the response's grpc-status, the endpoint counters and metrics count per RPC too,
# and an EDS drop_overloads category at 100 % answers every RPC itself.
#
# 198.18.0.100:50051 (listener l7) sends /xlb.test.Echo/ to cluster od: b-ok-1 (be1), b-ok-2
# (be2) and b-fail (be3, --fail: every RPC ends with UNAVAILABLE), with failure-percentage
# outlier detection (enforcing 100 %, threshold 50 %, minimum hosts 3, request volume 3,
# interval 1 s, base ejection time 4 s, max ejection percent 50; success rate off).
# 198.18.0.100:50052 (listener drop) sends it to cluster dropper, the same three backends, whose
# EDS drops 100 % in category lb-test. Checked:
#   - per-connection RPCs until b-fail is ejected (`xlbctl endpoints od`: EJECTED yes, USABLE no),
#     bounded in rounds;
#   - every endpoint's OK / FAILED counts are exactly the RPCs its backend logged (b-fail: all
#     failed, the others all succeeded), in `xlbctl endpoints` and in xlb_endpoint_requests_total;
#   - 10 RPCs on one connection count 10 successes on the endpoint that answered, not 1;
#   - while b-fail is ejected, 30 new connections never reach it (each sample counts only when it
#     ran entirely inside the ejection `xlbctl` reported before it: its EJECTED FOR MS);
#   - without traffic it is un-ejected again after the ejection time, and new connections reach
#     it (bounded waits, no timing assertion);
#   - the drop VIP: 20 RPCs, each UNAVAILABLE with "xlb: dropped by drop overload category
#     lb-test", no backend reached, xlb_drop_overload_total{category="lb-test"} 20.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require

topo_create "$E2E_PREFIX" 3
xlb_write_config
e2e_edit_config '
t = "type.googleapis.com/envoy."
x = c["xlb"]
x["vips"] = [{"address": "198.18.0.100", "port": 50051, "target": "xds:///l7", "l7_mode": "splice"},
             {"address": "198.18.0.100", "port": 50052, "target": "xds:///drop", "l7_mode": "splice"}]
def listener(name, cluster):
    return {"name": name, "api_listener": {"api_listener": {
        "@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        "route_config": {"name": name + "-routes", "virtual_hosts": [{"name": "echo",
            "domains": ["*"], "routes": [{"match": {"prefix": "/xlb.test.Echo/"},
                                          "route": {"cluster": cluster}}]}]},
        "http_filters": [{"name": "router", "typed_config": {
            "@type": t + "extensions.filters.http.router.v3.Router"}}]}}}
def eds(name, policy=None):
    e = {"cluster_name": name, "endpoints": [{"locality": {"zone": "a"},
        "load_balancing_weight": 1, "lb_endpoints": [
            {"endpoint": {"address": {"socket_address": {"address": "198.18.0.2%d" % i,
                                                         "port_value": 50051}}}}
            for i in (1, 2, 3)]}]}
    if policy:
        e["policy"] = policy
    return e
od = {"interval": "1s", "base_ejection_time": "4s", "max_ejection_time": "300s",
      "max_ejection_percent": 50, "enforcing_success_rate": 0,
      "enforcing_failure_percentage": 100, "failure_percentage_threshold": 50,
      "failure_percentage_minimum_hosts": 3, "failure_percentage_request_volume": 3}
x["static_resources"] = {
  "listeners": [listener("l7", "od"), listener("drop", "dropper")],
  "clusters": [{"name": "od", "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}},
                "outlier_detection": od},
               {"name": "dropper", "type": "EDS",
                "eds_cluster_config": {"eds_config": {"ads": {}}}}],
  "endpoints": [eds("od"), eds("dropper", {"drop_overloads": [{"category": "lb-test",
      "drop_percentage": {"numerator": 100, "denominator": "HUNDRED"}}]})]}'
"$XLBD" --check --config "$E2E_DIR/bootstrap.json" >/dev/null || fail "xlbd --check rejected the L7 bootstrap"

BACKENDS=(b-ok-1 b-ok-2 b-fail)
for i in 1 2 3; do
    name=${BACKENDS[$((i - 1))]}
    flags=()
    [ "$name" != b-fail ] || flags=(--fail)
    grpc_backend "$E2E_PREFIX-be$i" "$E2E_DIR/$name.log" --name "$name" --port 50051 \
        --address "198.18.0.2$i" "${flags[@]}"
done
e2e_start_xlbd
FAIL_EP=198.18.0.23:50051

client() { grpc_client "$E2E_PREFIX-client" "$@"; }
od() { client --target 198.18.0.100:50051 "$@"; }
logged() { grpc_rpcs "$E2E_DIR/$1.log"; }
all_logged() { echo $(($(logged b-ok-1) + $(logged b-ok-2) + $(logged b-fail))); }
address_of() { # backend name -> its endpoint in cluster od
    case $1 in b-ok-1) echo 198.18.0.21:50051 ;; b-ok-2) echo 198.18.0.22:50051 ;; *) echo "$FAIL_EP" ;; esac
}
# ep ADDRESS FIELD: the field of ADDRESS in `xlbctl --json endpoints od` (ejected, usable,
# ejected_for_ms, multiplier, succeeded, failed); "-" when absent.
ep() {
    xlbctl --json endpoints od | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e["address"] == sys.argv[1]:
        v = e.get(sys.argv[2], "-")
        print(str(v).lower() if isinstance(v, bool) else (int(v) if isinstance(v, float) else v))
        break
else:
    sys.exit("no endpoint " + sys.argv[1])' "$1" "$2"
}
ejected() { [ "$(ep "$FAIL_EP" ejected)" = true ]; }
not_ejected() { [ "$(ep "$FAIL_EP" ejected)" = false ]; }
now_ms() { date +%s%3N; }
# counts_match: every endpoint's OK and FAILED are exactly the RPCs its backend logged.
counts_match() {
    local name addr n
    for name in "${BACKENDS[@]}"; do
        addr=$(address_of "$name")
        n=$(logged "$name")
        if [ "$name" = b-fail ]; then
            [ "$(ep "$addr" failed)" = "$n" ] && [ "$(ep "$addr" succeeded)" = 0 ] || return 1
        else
            [ "$(ep "$addr" succeeded)" = "$n" ] && [ "$(ep "$addr" failed)" = 0 ] || return 1
        fi
    done
}
counts_table() {
    local name
    for name in "${BACKENDS[@]}"; do
        echo "$name logged $(logged "$name"), xlb ok $(ep "$(address_of "$name")" succeeded) failed $(ep "$(address_of "$name")" failed);"
    done | tr '\n' ' '
}
# metric_value NAME LABELS...: the sample of NAME whose labels include every LABEL (k="v").
metric_value() {
    xlbctl metrics | python3 -c '
import re, sys
name, want = sys.argv[1], sys.argv[2:]
for line in sys.stdin:
    m = re.match(r"^(\w+)\{(.*)\} (\S+)$", line.strip())
    if m and m.group(1) == name and all(w in m.group(2).split(",") for w in want):
        print(int(float(m.group(3))))
        break
else:
    print("-")' "$@"
}

# The first SYNs may meet backends xlb is still resolving: TCP retries them. Any backend's
# answer will do, b-fail's included.
answers() { od --count 1 --deadline 2 | grep -Eq '"OK": 1|fails on purpose'; }
wait_until 50 0.2 answers || fail "no RPC through the L7 VIP reached a backend"
[ "$(ep "$FAIL_EP" ejected)" = false ] || fail "b-fail ejected before any traffic: $(xlbctl endpoints od)"
pass "an RPC through the L7 VIP reaches a backend; nothing is ejected yet"

# ---- ejection: rounds of 10 new connections until b-fail is ejected (60 rounds at most) ----
rounds=0
while ! ejected; do
    rounds=$((rounds + 1))
    [ "$rounds" -le 60 ] || fail "b-fail not ejected after 600 RPCs ($(counts_table)): $(xlbctl endpoints od)"
    out=$(od --count 10 --per-connection --deadline 3)
    # b-fail answers UNAVAILABLE itself; nothing else may fail.
    grpc_expect "$out" 'set(r["details"]) <= {"UNAVAILABLE: backend b-fail fails on purpose"}'
done
[ "$(ep "$FAIL_EP" usable)" = false ] || fail "b-fail ejected but usable: $(xlbctl endpoints od)"
[ "$(ep 198.18.0.21:50051 ejected)" = false ] && [ "$(ep 198.18.0.22:50051 ejected)" = false ] ||
    fail "a healthy endpoint was ejected: $(xlbctl endpoints od)"
pass "b-fail ejected after $rounds round(s) of 10 connections (EJECTED yes, USABLE no, multiplier $(ep "$FAIL_EP" multiplier)); b-ok-1 and b-ok-2 not"
xlbctl endpoints od | sed -n '1p;/198\.18\.0\.23:/p' | sed 's/^/#   /'

# ---- per-RPC counts: OK / FAILED of each endpoint = the RPCs its backend logged ----
# The counters are the workers' and read as they are: allow them a moment to be complete.
wait_until 50 0.1 counts_match || fail "per-RPC counts differ: $(counts_table)"
for name in "${BACKENDS[@]}"; do
    addr=$(address_of "$name")
    n=$(logged "$name")
    ok=$(metric_value xlb_endpoint_requests_total 'cluster="od"' "endpoint=\"$addr\"" 'result="success"')
    bad=$(metric_value xlb_endpoint_requests_total 'cluster="od"' "endpoint=\"$addr\"" 'result="failure"')
    if [ "$name" = b-fail ]; then
        [ "$ok" = 0 ] && [ "$bad" = "$n" ] || fail "metrics for $name: success $ok failure $bad, logged $n"
    else
        [ "$ok" = "$n" ] && [ "$bad" = 0 ] || fail "metrics for $name: success $ok failure $bad, logged $n"
    fi
done
[ "$(metric_value xlb_endpoint_ejected 'cluster="od"' "endpoint=\"$FAIL_EP\"")" = 1 ] ||
    fail "xlb_endpoint_ejected of b-fail is not 1: $(xlbctl metrics | grep xlb_endpoint_ejected)"
pass "every RPC counted once: $(counts_table) xlb_endpoint_requests_total alike; xlb_endpoint_ejected 1"

# ---- while ejected ----
# A sample counts only if it ran entirely inside the ejection xlbctl reported just before it:
# xlb un-ejects only at a sweep after that ejection's end, so a sample that finished earlier
# than EJECTED FOR MS after it began saw b-fail ejected throughout. A sample that did not fit is
# not judged (the next ejection, longer by the A50 multiplier, gives it another chance).
# window_open: b-fail is ejected now, for at least 1.5 s more; sets WINDOW_END (ms, local
# clock) to a bound of that ejection's end.
window_open() {
    local start left
    start=$(now_ms)
    ejected || return 1
    left=$(ep "$FAIL_EP" ejected_for_ms)
    [ "$left" != - ] && [ "$left" -ge 1500 ] || return 1
    WINDOW_END=$((start + left))
}
# Into an ejection with time left: let an ejection about to end run out, and send connections
# until b-fail is ejected again (bounded).
re_eject() {
    local i
    for i in $(seq 1 120); do
        window_open && return 0
        if ejected; then
            sleep 0.25
        else
            od --count 5 --per-connection --deadline 3 >/dev/null
        fi
    done
    fail "b-fail not ejected again: $(xlbctl endpoints od)"
}

# 10 RPCs on one channel: one connection, one backend, 10 results on its endpoint.
done_one_channel=0
for attempt in $(seq 1 10); do
    re_eject
    before_fail=$(logged b-fail)
    declare -A ok_before=()
    for name in b-ok-1 b-ok-2; do ok_before[$name]=$(ep "$(address_of "$name")" succeeded); done
    out=$(od --count 10 --deadline 3)
    [ "$(now_ms)" -lt "$WINDOW_END" ] || { echo "# one-channel sample $attempt outlasted the ejection; again"; continue; }
    grpc_expect "$out" 'r["status"] == {"OK": 10} and len(r["backends"]) == 1'
    [ "$(logged b-fail)" = "$before_fail" ] || fail "an ejected b-fail got RPCs: $out"
    got=$(grpc_field "$out" 'list(r["backends"])[0]')
    other=b-ok-1
    [ "$got" != b-ok-1 ] || other=b-ok-2
    grew_by_10() { [ "$(ep "$(address_of "$got")" succeeded)" = $((ok_before[$got] + 10)) ]; }
    wait_until 50 0.1 grew_by_10 ||
        fail "10 RPCs on one connection to $got: OK went from ${ok_before[$got]} to $(ep "$(address_of "$got")" succeeded)"
    [ "$(ep "$(address_of "$other")" succeeded)" = "${ok_before[$other]}" ] || fail "$other counted RPCs it did not get"
    done_one_channel=1
    break
done
[ "$done_one_channel" = 1 ] || fail "no one-channel sample fitted inside an ejection in 10 attempts"
pass "10 RPCs on one connection to $got: its OK count grew by 10 (per RPC, not per connection)"

# 30 new connections in samples of 10, none of which may reach b-fail.
clean=0 samples=0
for attempt in $(seq 1 20); do
    re_eject
    before_fail=$(logged b-fail)
    out=$(od --count 10 --per-connection --deadline 3)
    if [ "$(now_ms)" -ge "$WINDOW_END" ]; then
        echo "# sample $attempt outlasted the ejection; again"
        continue
    fi
    grpc_expect "$out" 'r["status"] == {"OK": 10} and "b-fail" not in r["backends"]'
    [ "$(logged b-fail)" = "$before_fail" ] || fail "an ejected b-fail got $(($(logged b-fail) - before_fail)) RPC(s): $out"
    clean=$((clean + 10)) samples=$((samples + 1))
    [ "$clean" -lt 30 ] || break
done
[ "$clean" -ge 30 ] || fail "only $clean connections ran inside ejections in 20 attempts"
# If the ejection did not work, each connection would reach b-fail with probability 1/3:
# (2/3)^30 < 1e-5.
pass "while b-fail is ejected, 30 new connections ($samples samples) reach only b-ok-1 and b-ok-2"

# ---- un-ejection without traffic, then b-fail is reached again ----
# Ejection time is 4 s times the multiplier (A50), at most max_ejection_time; 90 s covers it.
wait_until 180 0.5 not_ejected || fail "b-fail still ejected without traffic: $(xlbctl endpoints od)"
[ "$(ep "$FAIL_EP" usable)" = true ] || fail "b-fail un-ejected but not usable: $(xlbctl endpoints od)"
pass "without traffic b-fail is un-ejected (USABLE yes, multiplier $(ep "$FAIL_EP" multiplier))"
before_fail=$(logged b-fail)
reached=0
for round in $(seq 1 20); do
    out=$(od --count 5 --per-connection --deadline 3)
    if [ "$(logged b-fail)" -gt "$before_fail" ]; then
        grpc_expect "$out" '"UNAVAILABLE: backend b-fail fails on purpose" in r["details"]'
        reached=1
        break
    fi
done
# (2/3)^100 is the chance that a usable b-fail goes unpicked by 100 connections.
[ "$reached" = 1 ] || fail "b-fail not reached by 100 connections after its un-ejection"
pass "un-ejected b-fail is picked again (reached within $((round * 5)) connections)"

# ---- drop overloads: category lb-test at 100 % ----
before=$(all_logged)
out=$(client --target 198.18.0.100:50052 --count 20 --per-connection --deadline 3)
grpc_expect "$out" 'r["status"] == {"UNAVAILABLE": 20} and r["backends"] == {}'
grpc_expect "$out" 'r["details"] == {"UNAVAILABLE: xlb: dropped by drop overload category lb-test": 20}'
[ "$(all_logged)" = "$before" ] || fail "dropped RPCs reached backends"
dropped() { [ "$(metric_value xlb_drop_overload_total 'cluster="dropper"' 'category="lb-test"')" = 20 ]; }
wait_until 50 0.1 dropped ||
    fail "xlb_drop_overload_total: $(xlbctl metrics | grep '^xlb_drop_overload_total')"
pass "drop_overloads lb-test 100 %: 20 x UNAVAILABLE \"xlb: dropped by drop overload category lb-test\", no backend reached, xlb_drop_overload_total 20"

e2e_stop_xlbd
pass "clean exit"
