#!/usr/bin/env bash
# Stock kernel clients through the full NAT of an L4 VIP: nghttpd (Debian's nghttp2-server)
# serves HTTP/2 on three backends, and curl, h2load and nc connect from the client host, over
# IPv4 and IPv6. Every request must be answered, also while a reload removes a backend under
# steady load; h2load's connections spread over the backends, each connection one flow, and
# the backends' successful connects (as xlb's outlier counters see them) add up to them.
. "$(dirname "$0")/lib.sh"

for tool in nghttpd h2load curl nc; do
    command -v "$tool" >/dev/null || fail "$tool is missing (tools/setup-deps.sh installs it)"
done

e2e_setup
e2e_edit_config '
x = c["xlb"]
x["vips"] += [{"address": "198.18.0.100", "port": 9002, "cluster": "h2"},
              {"address": "2001:2::100", "port": 9002, "cluster": "h2v6"}]
sr = x["static_resources"]
def ep(a):
    return {"endpoint": {"address": {"socket_address": {"address": a, "port_value": 9002}}}}
for name, addrs in (("h2", ("198.18.0.21", "198.18.0.22", "198.18.0.23")),
                    ("h2v6", ("2001:2::21", "2001:2::22", "2001:2::23"))):
    sr["clusters"].append({"name": name, "type": "EDS",
                           "eds_cluster_config": {"eds_config": {"ads": {}}}})
    sr["endpoints"].append({"cluster_name": name, "endpoints": [{
        "locality": {"zone": "a"}, "load_balancing_weight": 1,
        "lb_endpoints": [ep(a) for a in addrs]}]})'

# Each backend serves its name at /who over cleartext HTTP/2 (prior knowledge).
for b in be1 be2 be3; do
    mkdir -p "$E2E_DIR/www-$b"
    printf '%s' "$b" >"$E2E_DIR/www-$b/who"
    # $! is nghttpd itself, so cleanup's kill by PID reaches it.
    ip netns exec "$E2E_PREFIX-$b" nghttpd --no-tls -d "$E2E_DIR/www-$b" 9002 \
        >"$E2E_DIR/nghttpd-$b.log" 2>&1 &
    RUN_PIDS+=($!)
done

e2e_start_xlbd
# The first SYNs may meet backends xlb is still resolving: TCP retries them.
answered() { in_client curl -s --max-time 3 --http2-prior-knowledge "http://$1:9002/who" | grep -q '^be[123]$'; }
wait_until 50 0.2 answered 198.18.0.100 || fail "curl through the IPv4 VIP got no answer"
wait_until 50 0.2 answered '[2001:2::100]' || fail "curl through the IPv6 VIP got no answer"
pass "curl --http2-prior-knowledge gets a backend's answer through the IPv4 and IPv6 VIPs"

in_client nc -z -w 3 198.18.0.100 9002 || fail "nc could not connect to the VIP"
in_client nc -z -w 3 2001:2::100 9002 || fail "nc could not connect to the IPv6 VIP"
pass "nc connects through both VIPs"

flows_before=$(counter events.flows_created)
ok_before=$(xlbctl --json endpoints h2 | python3 -c 'import json,sys; print(sum(e["succeeded"] for e in json.load(sys.stdin)))')
out=$(in_client h2load -n 600 -c 30 -m 4 "http://198.18.0.100:9002/who" 2>&1) || fail "h2load: $out"
grep -q "requests: 600 total, 600 started, 600 done, 600 succeeded, 0 failed, 0 errored" <<<"$out" ||
    fail "h2load did not get 600 answers: $(grep -E '^requests|^status' <<<"$out")"
[ "$(counter events.flows_created)" -eq $((flows_before + 30)) ] ||
    fail "30 connections made $(($(counter events.flows_created) - flows_before)) flows"
# Connect outcomes reach the endpoints' counters in the control plane's next 250 ms tick.
spread() {
    xlbctl --json endpoints h2 | python3 -c '
import json, sys
eps = json.load(sys.stdin)
ok = sum(e["succeeded"] for e in eps) - int(sys.argv[1])
busy = sum(1 for e in eps if e["succeeded"] > 0)
sys.exit(0 if ok == 30 and busy == 3 else 1)' "$ok_before"
}
wait_until 20 0.25 spread || fail "connect outcomes: $(xlbctl endpoints h2)"
pass "h2load: 600 HTTP/2 requests on 30 connections, all answered; 30 flows over all three backends"

out=$(in_client h2load -n 200 -c 10 -m 4 "http://[2001:2::100]:9002/who" 2>&1) || fail "h2load IPv6: $out"
grep -q "200 succeeded, 0 failed" <<<"$out" || fail "h2load IPv6: $(grep -E '^requests' <<<"$out")"
pass "h2load over IPv6: 200 requests on 10 connections, all answered"

# Steady load across a configuration change: h2load keeps 10 connections busy for 6 s while a
# SIGHUP reload drops be1 from the cluster. Connections already on be1 keep their flows (it is
# removed, not failing), new ones avoid it, and not one request fails.
# Not through in_client: $! must be h2load itself, so that cleanup's kill reaches it.
ip netns exec "$E2E_PREFIX-client" h2load -D 6 -c 10 -m 2 "http://198.18.0.100:9002/who" \
    >"$E2E_DIR/steady.out" 2>&1 &
load=$!
RUN_PIDS+=("$load")
sleep 2
e2e_edit_config '
for e in c["xlb"]["static_resources"]["endpoints"]:
    if e["cluster_name"] == "h2":
        lbs = e["endpoints"][0]["lb_endpoints"]
        e["endpoints"][0]["lb_endpoints"] = [l for l in lbs
            if l["endpoint"]["address"]["socket_address"]["address"] != "198.18.0.21"]'
kill -HUP "$XLBD_PID"
gone() { ! xlbctl --json endpoints h2 | grep -q '198.18.0.21'; }
wait_until 50 0.1 gone || fail "be1 still in the cluster after the reload"
wait "$load" || fail "h2load under the reload: $(tail -n 5 "$E2E_DIR/steady.out")"
grep -Eq "requests: [0-9]+ total, [0-9]+ started, [0-9]+ done, [1-9][0-9]* succeeded, 0 failed, 0 errored" \
    "$E2E_DIR/steady.out" || fail "requests failed across the reload: $(grep '^requests' "$E2E_DIR/steady.out")"
pass "steady h2load across a reload that removes a backend: $(grep -Eo '[0-9]+ succeeded, 0 failed' "$E2E_DIR/steady.out")"
after=$(in_client curl -s --max-time 3 --http2-prior-knowledge "http://198.18.0.100:9002/who")
[ "$after" = be2 ] || [ "$after" = be3 ] || fail "a new connection after the reload went to $after"

e2e_stop_xlbd
pass "clean exit"
