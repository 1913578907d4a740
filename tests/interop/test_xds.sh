#!/usr/bin/env bash
# xlbd's xDS client against the independent Node management server: warming until the
# configuration is complete, ACKs, a NACK whose error_detail names the resource and the rule
# while the valid resources of the same response still apply (A46), removal, a server restart,
# and fallback to a second server and back (A71). xlbd runs on a null device in a namespace of
# its own, with the servers on that namespace's loopback.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${XLB_BUILD_DIR:-$HERE/../../build}
XLBD=$BUILD/apps/xlbd
XLBCTL=$BUILD/apps/xlbctl
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root (a network namespace)"; exit 77; fi
NS="xlbx$$"
DIR=$(mktemp -d /tmp/xlb-xds-XXXXXX)
PIDS=()
cleanup() {
    local rc=$?
    for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ $rc -eq 0 ] || { echo "--- xlbd log"; tail -n 30 "$DIR/xlbd.log" 2>/dev/null; }
    ip netns del "$NS" 2>/dev/null || true
    # xlbd's DPDK runtime files, under the prefix its bootstrap gave it (below).
    xlb_remove_dpdk_runtime "xlbx-${DIR: -6}"
    rm -rf "$DIR"
    exit $rc
}
trap cleanup EXIT
. "$HERE/../../tools/lib/harness.sh"
in_ns() { ip netns exec "$NS" "$@"; }

"$HERE/install.sh" >/dev/null
ip netns add "$NS"
ip -n "$NS" link set lo up

# start_server NAME PORT [OPTION...]: a server on the namespace's loopback (PORT 0: any).
start_server() {
    # Not through in_ns: a backgrounded function would make $! a subshell, not the server.
    # The file goes first: the background job truncates it only once it runs, and a READY line
    # of an earlier server read meanwhile would give its port, or none.
    rm -f "$DIR/$1.out"
    ip netns exec "$NS" node "$HERE/xds-server/server.js" --host 127.0.0.1 --port "$2" \
        --control-port 0 --quiet "${@:3}" >"$DIR/$1.out" 2>&1 &
    PIDS+=($!)
    eval "${1}_PID=$!"
    wait_until 100 0.1 grep -q '^READY' "$DIR/$1.out" || fail "server $1 did not start"
    local ports
    ports=$(sed -n 's/^READY xds=\([0-9]*\) control=\([0-9]*\)$/\1 \2/p' "$DIR/$1.out")
    eval "${1}_XDS=${ports% *} ${1}_CONTROL=${ports#* }"
}
# control NAME METHOD PATH [BODY]: the server's control API, from inside the namespace. A
# refused connection is tried again for up to 5 s; if it still fails, the server's output is
# shown (the test then fails on the request's error).
control() {
    local port_var="${1}_CONTROL"
    in_ns python3 - "${!port_var}" "$2" "$3" "${4:-}" <<'PY' || { sed 's/^/# server: /' "$DIR/$1.out" >&2; return 1; }
import sys, time, urllib.error, urllib.request
port, method, path, body = sys.argv[1:5]
req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), method=method,
                             data=body.encode() if body else None,
                             headers={"content-type": "application/json"})
for attempt in range(50):
    try:
        print(urllib.request.urlopen(req, timeout=5).read().decode())
        break
    except urllib.error.URLError as e:
        if attempt == 49 or not isinstance(e.reason, ConnectionRefusedError):
            raise
        time.sleep(0.1)
PY
}
resources() { # the full set as JSON; $1: ring-hash minimum size of cluster "alpha"
    python3 - "$1" <<'PY'
import json, sys
t = "type.googleapis.com/envoy."
def cluster(name, extra=None):
    c = {"@type": t + "config.cluster.v3.Cluster", "name": name, "type": "EDS",
         "eds_cluster_config": {"eds_config": {"ads": {}}}}
    c.update(extra or {})
    return c
def cla(name, port):
    return {"@type": t + "config.endpoint.v3.ClusterLoadAssignment", "cluster_name": name,
            "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 1,
                           "lb_endpoints": [{"endpoint": {"address": {"socket_address":
                               {"address": "198.18.0.21", "port_value": port}}}}]}]}
hcm = {"@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
       "rds": {"route_config_name": "svc-routes", "config_source": {"ads": {}}},
       "http_filters": [{"name": "router", "typed_config":
                         {"@type": t + "extensions.filters.http.router.v3.Router"}}]}
routes = {"@type": t + "config.route.v3.RouteConfiguration", "name": "svc-routes",
          "virtual_hosts": [{"name": "vh", "domains": ["*"], "routes": [
              {"match": {"prefix": "/a"}, "route": {"cluster": "alpha"}},
              {"match": {"prefix": "/"}, "route": {"weighted_clusters": {"clusters": [
                  {"name": "beta", "weight": 1}, {"name": "gamma", "weight": 1}]}}}]}]}
alpha = cluster("alpha", {"lb_policy": "RING_HASH",
                          "ring_hash_lb_config": {"minimum_ring_size": int(sys.argv[1])}})
beta = cluster("beta", {"circuit_breakers": {"thresholds": [{"max_requests": 77 if sys.argv[1] == "0" else 55}]},
                        "lrs_server": {"self": {}}})
res = [{"@type": t + "config.listener.v3.Listener", "name": "svc", "api_listener": {"api_listener": hcm}},
       routes, alpha, beta, cluster("gamma"), cluster("tcp"),
       cla("alpha", 8081), cla("beta", 8082), cla("gamma", 8083), cla("tcp", 9000)]
print(json.dumps({"resources": res}))
PY
}
vip_state() { # INDEX
    xlbctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["vips"][int(sys.argv[1])]["state"])' "$1"
}
resource_field() { # TYPE NAME FIELD
    xlbctl --json config dump | python3 -c '
import json, sys
for r in json.load(sys.stdin):
    if r["type"] == sys.argv[1] and r["name"] == sys.argv[2]:
        print(r.get(sys.argv[3], "")); break' "$1" "$2" "$3"
}
write_bootstrap() { # SERVER-PORT... (CREDS_JSON in the environment overrides insecure)
    python3 - "$DIR" "$@" >"$DIR/bootstrap.json" <<'PY'
import json, os, sys
d, ports = sys.argv[1], sys.argv[2:]
creds = json.loads(os.environ.get("CREDS_JSON", '[{"type": "insecure"}]'))
print(json.dumps({
  "xds_servers": [{"server_uri": "127.0.0.1:%s" % p, "channel_creds": creds} for p in ports],
  "node": {"id": "xlb-interop", "cluster": "edge", "locality": {"zone": "z1"}, "metadata": {"role": "test"}},
  "xlb": {"eal": ["--no-huge", "--no-pci", "-m", "128", "--file-prefix=xlbx-%s" % d[-6:], "--vdev=net_null0"],
          "worker_idle_sleep_us": 100, "control_socket": d + "/xlbd.sock",
          "ports": [{"name": "net_null0", "addresses": ["198.18.0.10/24"]}],
          "vips": [{"address": "198.18.0.100", "port": 8080, "target": "xds:///svc", "l7_mode": "splice"},
                   {"address": "198.18.0.100", "port": 9000, "cluster": "tcp"}]}}))
PY
}
start_xlbd() {
    ip netns exec "$NS" "$XLBD" --config "$DIR/bootstrap.json" >"$DIR/xlbd.log" 2>&1 &
    XLBD_PID=$!
    PIDS+=($XLBD_PID)
    wait_until 100 0.1 xlbctl status || fail "xlbd did not start"
}

# ---- warming, then ready ----
start_server primary 0
write_bootstrap "$primary_XDS"
start_xlbd
wait_until 50 0.1 bash -c "[ \"\$($XLBCTL --socket $DIR/xlbd.sock --json xds | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"stream\"])')\" = established ]" ||
    fail "no ADS stream: $(xlbctl xds)"
[ "$(vip_state 0)" = error ] || [ "$(vip_state 0)" = warming ] || fail "VIP not warming/error before resources: $(vip_state 0)"
pass "before the server has resources the L7 VIP is $(vip_state 0): $(xlbctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["vips"][0]["config"].get("reason",""))')"

control primary PUT /resources "$(resources 1024)" >/dev/null
wait_until 50 0.1 bash -c "[ \"\$($XLBCTL --socket $DIR/xlbd.sock --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"vips\"][0][\"state\"])')\" = ready ]" ||
    fail "L7 VIP not ready: $(xlbctl --json status)"
[ "$(vip_state 1)" = ready ] || fail "L4 VIP not ready"
pass "LDS -> RDS -> CDS -> EDS delivered: both VIPs ready"
[ "$(resource_field cluster alpha state)" = acked ] || fail "cluster alpha not acked"
node_id=$(control primary GET "/requests?type=lds" | python3 -c '
import json, sys
r = json.load(sys.stdin); r = r["requests"] if isinstance(r, dict) else r
print(next(x["node"]["id"] for x in r if x.get("node")))')
[ "$node_id" = xlb-interop ] || fail "node id seen by the server: $node_id"
pass "the server saw node xlb-interop and ACKs; config dump shows acked resources"
# The whole node, as the bootstrap above describes it, with xlb's user agent and features.
node_problem=$(control primary GET "/requests?type=lds" | python3 -c '
import json, sys
version = sys.argv[1]
r = json.load(sys.stdin); r = r["requests"] if isinstance(r, dict) else r
node = next(x["node"] for x in r if x.get("node"))
def get(snake, camel):
    return node.get(snake, node.get(camel))
want = {"cluster": "edge", "locality": {"zone": "z1"}, "metadata": {"role": "test"},
        "user_agent_name": "xlb", "user_agent_version": version,
        "client_features": ["envoy.lb.does_not_support_overprovisioning",
                            "envoy.lrs.supports_send_all_clusters",
                            "xds.config.resource-in-sotw"]}
camel = {"user_agent_name": "userAgentName", "user_agent_version": "userAgentVersion",
         "client_features": "clientFeatures"}
for key, value in want.items():
    got = get(key, camel.get(key, key))
    if key == "client_features":
        got = sorted(got or [])
    if got != value:
        print("%s: %r, not %r" % (key, got, value)); break' "$("$XLBD" --version | awk '{print $2}')")
[ -z "$node_problem" ] || fail "node seen by the server: $node_problem"
pass "node: cluster, locality, metadata, user agent xlb $("$XLBD" --version | awk '{print $2}') and the three client features as configured"

# ---- load reports (LRS) for the cluster with lrs_server: self ----
control primary PUT /lrs-config '{"send_all_clusters": true, "interval_ms": 1000}' >/dev/null
lrs_reports() {
    control primary GET /lrs | python3 -c '
import json, sys
r = json.load(sys.stdin)
reports = r["reports"] if isinstance(r, dict) else r
found = 0
def get(d, snake, camel):
    return d.get(snake, d.get(camel))
for rep in reports:
    for cs in get(rep, "cluster_stats", "clusterStats") or []:
        # Localities with no load are left out: nothing counts RPCs before forwarding exists.
        if get(cs, "cluster_name", "clusterName") == "beta":
            found += 1
print(found)'
}
has_lrs_report() { [ "$(lrs_reports)" -ge 1 ]; }
wait_until 60 0.25 has_lrs_report || fail "no load report for cluster beta: $(control primary GET /lrs | head -c 600)"
pass "LRS: xlbd reports load for cluster beta (lrs_server: self) to the server"

# ---- a NACK that still applies the valid resources of the same response (A46) ----
beta_before=$(resource_field cluster beta version)
control primary PUT /resources "$(resources 0)" >/dev/null
wait_until 50 0.1 bash -c "[ \"\$($XLBCTL --socket $DIR/xlbd.sock --json config dump | python3 -c '
import json,sys
print(next(r[\"state\"] for r in json.load(sys.stdin) if r[\"name\"] == \"alpha\" and r[\"type\"] == \"cluster\"))')\" = nacked ]" ||
    fail "alpha was not NACKed"
nack=$(control primary GET "/requests?type=cds&kind=nack")
grep -q 'cluster \\"alpha\\": ring_hash_lb_config.minimum_ring_size' <<<"$nack" ||
    fail "the server's NACK lacks the precise error_detail: $nack"
[ "$(resource_field cluster beta version)" != "$beta_before" ] || fail "valid beta of the NACKed response was not applied"
[ "$(vip_state 0)" = ready ] || fail "a NACK took the VIP down"
pass "NACK with error_detail naming cluster alpha and the rule; beta from the same response applied; VIP still ready"

# ---- removal ----
control primary PATCH /resources '{"remove": [{"type": "cds", "name": "gamma"}]}' >/dev/null
gamma_gone() { [ "$(resource_field cluster gamma state)" = does_not_exist ]; }
wait_until 50 0.1 gamma_gone ||
    fail "gamma not removed: $(xlbctl config dump)"
[ "$(vip_state 0)" = ready ] || fail "a removed cluster took the VIP down"
pass "cluster removed by the server: does_not_exist, its error stays local, VIP ready"

# ---- an update: beta's endpoint moves to another port, and xlbd applies it ----
endpoint_port() { # EDS-NAME: the port of its first endpoint in the config dump
    xlbctl --json config dump | python3 -c '
import json, sys
for r in json.load(sys.stdin):
    if r["type"] == "cluster_load_assignment" and r["name"] == sys.argv[1]:
        v = json.dumps(r.get("resource", {}))
        import re
        m = re.search(r"\"port_?[vV]alue\": (\d+)", v)
        print(m.group(1) if m else ""); break' "$1"
}
[ "$(endpoint_port beta)" = 8082 ] || fail "beta's endpoint before the update: $(endpoint_port beta)"
control primary PATCH /resources "$(python3 -c '
import json
t = "type.googleapis.com/envoy."
print(json.dumps({"upsert": [{"@type": t + "config.endpoint.v3.ClusterLoadAssignment",
    "cluster_name": "beta", "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 3,
    "lb_endpoints": [{"endpoint": {"address": {"socket_address":
        {"address": "198.18.0.22", "port_value": 8092}}}}]}]}]}))')" >/dev/null
beta_moved() { [ "$(endpoint_port beta)" = 8092 ]; }
wait_until 50 0.1 beta_moved || fail "beta's new endpoint not applied: $(endpoint_port beta)"
[ "$(resource_field cluster_load_assignment beta state)" = acked ] || fail "beta's update not acked"
[ "$(vip_state 0)" = ready ] || fail "an update took the VIP down"
pass "update: beta's endpoint moved to port 8092 (weight 3), applied and ACKed, VIP ready"

# ---- the server ends the ADS call (connection kept): xlbd notices and calls again ----
streams_before=$(control primary GET "/requests?type=lds" | python3 -c '
import json, sys
r = json.load(sys.stdin); r = r["requests"] if isinstance(r, dict) else r
print(len({x["stream_id"] for x in r}))')
control primary POST /close-streams '{}' >/dev/null
new_stream() {
    [ "$(control primary GET "/requests?type=lds" | python3 -c '
import json, sys
r = json.load(sys.stdin); r = r["requests"] if isinstance(r, dict) else r
print(len({x["stream_id"] for x in r}))')" -gt "$streams_before" ]
}
wait_until 80 0.25 new_stream || fail "xlbd did not open a new ADS call after the server ended it"
[ "$(vip_state 0)" = ready ] || fail "the ended call took the VIP down"
pass "the server ended the ADS call: xlbd noticed and called again, VIP ready"
# Nonces belong to one stream: the first request of each type on the new one carries none.
no_foreign_nonce() { # SERVER
    [ "$(control "$1" GET "/requests?kind=foreign_nonce" | python3 -c '
import json, sys
r = json.load(sys.stdin); r = r["requests"] if isinstance(r, dict) else r
print(len(r))')" = 0 ] || fail "a request carried a nonce of another stream: $(control "$1" GET "/requests?kind=foreign_nonce")"
}
no_foreign_nonce primary
pass "the new call's first requests carry no nonce of the old call"

# ---- the server restarts: xlbd keeps its configuration and reconnects ----
kill "$primary_PID"; wait "$primary_PID" 2>/dev/null || true
stream_state() { xlbctl --json xds | python3 -c 'import json,sys; print(json.load(sys.stdin)["stream"])'; }
not_established() { [ "$(stream_state)" != established ]; }
established() { [ "$(stream_state)" = established ]; }
wait_until 50 0.1 not_established ||
    fail "xlbd did not notice the server going away: $(xlbctl xds)"
[ "$(vip_state 0)" = ready ] || fail "losing the server took the VIP down"
# The new server wraps every resource in a Resource (resource-in-sotw) and changes alpha.
start_server primary "$primary_XDS" --wrap-resources
control primary PUT /resources "$(resources 2048)" >/dev/null
wait_until 80 0.25 established ||
    fail "xlbd did not reconnect: $(xlbctl xds)"
pass "server restart: xlbd kept serving its configuration and reconnected"
alpha_ring() {
    xlbctl --json config dump | python3 -c '
import json, sys
for r in json.load(sys.stdin):
    if r["type"] == "cluster" and r["name"] == "alpha":
        c = r.get("resource", {}).get("ring_hash_lb_config", r.get("resource", {}).get("ringHashLbConfig", {}))
        print("%s %s" % (r["state"], c.get("minimum_ring_size", c.get("minimumRingSize", "")))); break'
}
alpha_new() { [ "$(alpha_ring)" = "acked 2048" ]; }
wait_until 80 0.25 alpha_new || fail "the restarted server's alpha did not arrive: $(alpha_ring)"
[ "$(control primary GET /options | python3 -c 'import json,sys; print(json.load(sys.stdin)["wrap_resources"])')" = True ] ||
    fail "the restarted server does not wrap resources"
nacks=$(control primary GET "/requests?kind=nack" | python3 -c '
import json, sys
r = json.load(sys.stdin); r = r["requests"] if isinstance(r, dict) else r
print(len(r))')
[ "$nacks" = 0 ] || fail "wrapped resources NACKed: $(control primary GET "/requests?kind=nack")"
[ "$(vip_state 0)" = ready ] || fail "VIP not ready after the restart"
pass "after the restart the new resources arrived wrapped in Resource (resource-in-sotw): alpha acked with minimum_ring_size 2048, no NACK"
kill "$XLBD_PID"; wait "$XLBD_PID" || fail "xlbd exit status"

# ---- fallback (A71): the primary is down and nothing is cached ----
start_server secondary 0
control secondary PUT /resources "$(resources 1024)" >/dev/null
kill "$primary_PID"; wait "$primary_PID" 2>/dev/null || true
write_bootstrap "$primary_XDS" "$secondary_XDS"
start_xlbd
wait_until 80 0.25 bash -c "[ \"\$($XLBCTL --socket $DIR/xlbd.sock --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"vips\"][0][\"state\"])')\" = ready ]" ||
    fail "no fallback: $(xlbctl xds)"
[ "$(xlbctl --json xds | python3 -c 'import json,sys; print(json.load(sys.stdin)["server_index"])')" = 1 ] || fail "not on the second server"
pass "primary unreachable with nothing cached: fell back to the second server, VIP ready"
start_server primary "$primary_XDS"
control primary PUT /resources "$(resources 1024)" >/dev/null
wait_until 120 0.25 bash -c "[ \"\$($XLBCTL --socket $DIR/xlbd.sock --json xds | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"server_index\"])')\" = 0 ]" ||
    fail "did not return to the primary: $(xlbctl xds)"
no_foreign_nonce primary
no_foreign_nonce secondary
pass "the primary came back and delivered: xlbd returned to it, no nonce crossed streams"

# ---- A57: an EDS resource the server never sends does not exist after 15 s ----
with_delta=$(resources 1024 | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = "type.googleapis.com/envoy."
for r in d["resources"]:
    if r["@type"].endswith("RouteConfiguration"):
        r["virtual_hosts"][0]["routes"].insert(0, {"match": {"prefix": "/d"}, "route": {"cluster": "delta"}})
d["resources"].append({"@type": t + "config.cluster.v3.Cluster", "name": "delta", "type": "EDS",
                       "eds_cluster_config": {"eds_config": {"ads": {}}}})
print(json.dumps(d))')
control primary PUT /resources "$with_delta" >/dev/null
delta_eds() { resource_field cluster_load_assignment delta state; }
delta_requested() { [ "$(delta_eds)" = requested ]; }
wait_until 40 0.25 delta_requested || fail "delta's EDS was not requested: $(delta_eds)"
pass "cluster delta's EDS is requested and not yet known not to exist"
delta_gone() { [ "$(delta_eds)" = does_not_exist ]; }
wait_until 120 0.25 delta_gone || fail "delta's EDS never timed out: $(delta_eds)"
[ "$(vip_state 0)" = ready ] || fail "VIP not ready once delta's EDS does not exist"
pass "A57: delta's EDS does_not_exist after the 15 s timer; the cluster is empty, the VIP ready"
kill -TERM "$XLBD_PID"; wait "$XLBD_PID" || fail "xlbd did not exit cleanly"

# ---- TLS with mutual authentication, from the bootstrap's channel_creds ----
"$HERE/make-test-ca.sh" "$DIR/ca" >/dev/null 2>&1
kill "$primary_PID" "$secondary_PID"; wait "$primary_PID" "$secondary_PID" 2>/dev/null || true
start_tls_server() {
    rm -f "$DIR/tls.out" # as in start_server
    ip netns exec "$NS" node "$HERE/xds-server/server.js" --host 127.0.0.1 --port 0 --control-port 0 \
        --tls-cert "$DIR/ca/server.crt" --tls-key "$DIR/ca/server.key" --client-ca "$DIR/ca/ca.crt" \
        --quiet >"$DIR/tls.out" 2>&1 &
    tls_PID=$!
    PIDS+=($tls_PID)
    wait_until 100 0.1 grep -q '^READY' "$DIR/tls.out" || fail "TLS server did not start"
    local ports
    ports=$(sed -n 's/^READY xds=\([0-9]*\) control=\([0-9]*\)$/\1 \2/p' "$DIR/tls.out")
    tls_XDS=${ports% *} tls_CONTROL=${ports#* }
}
start_tls_server
control tls PUT /resources "$(resources 1024)" >/dev/null
CREDS_JSON="[{\"type\": \"tls\", \"config\": {\"ca_certificate_file\": \"$DIR/ca/ca.crt\",
  \"certificate_file\": \"$DIR/ca/client.crt\", \"private_key_file\": \"$DIR/ca/client.key\"}}]" \
    write_bootstrap "$tls_XDS"
start_xlbd
vip_ready() { [ "$(vip_state 0)" = ready ]; }
wait_until 80 0.25 vip_ready || fail "no configuration over mTLS: $(xlbctl xds)"
pass "mTLS: xlbd verified the server against the test CA and presented its client certificate"
kill -TERM "$XLBD_PID"; wait "$XLBD_PID" || fail "xlbd did not exit cleanly"
CREDS_JSON="[{\"type\": \"tls\", \"config\": {\"ca_certificate_file\": \"$DIR/ca/other-ca.crt\"}}]" \
    write_bootstrap "$tls_XDS"
start_xlbd
tls_failed() { xlbctl --json xds | grep -q "certificate verification failed"; }
wait_until 80 0.25 tls_failed || fail "a server signed by another CA was not refused: $(xlbctl xds)"
[ "$(vip_state 0)" != ready ] || fail "configuration accepted from an unverified server"
pass "TLS: a server the configured CA did not sign is refused, with OpenSSL's reason in xlbctl xds"
kill -TERM "$XLBD_PID"; wait "$XLBD_PID" || fail "xlbd did not exit cleanly"

# Issue 21: a server certificate the test CA signed, but for another name, and one that has
# expired. Each is refused, with OpenSSL's reason as the stream's last error in xlbctl xds.
server_cert() { # NAME SAN [START END]: a server certificate signed by the test CA
    local d="$DIR/ca/$1"
    mkdir -p "$d"
    : >"$d/index.txt"
    echo 01 >"$d/serial"
    cat >"$d/ca.cnf" <<CNF
[ca]
default_ca = test_ca
[test_ca]
database = $d/index.txt
new_certs_dir = $d
serial = $d/serial
default_md = sha256
default_days = 30
policy = any
[any]
commonName = supplied
[server]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = $2
CNF
    openssl req -new -newkey rsa:2048 -nodes -keyout "$d/server.key" -out "$d/server.csr" \
        -subj "/CN=$1" 2>/dev/null
    # openssl ca takes explicit validity dates (OpenSSL 3.0's x509 has no -not_after).
    openssl ca -batch -notext -config "$d/ca.cnf" -cert "$DIR/ca/ca.crt" -keyfile "$DIR/ca/ca.key" \
        -extensions server -in "$d/server.csr" -out "$d/server.crt" \
        ${3:+-startdate "$3" -enddate "$4"} 2>/dev/null || fail "openssl ca for $1"
}
tls_refused_with() { # CERT_DIR REASON
    kill "$tls_PID"; wait "$tls_PID" 2>/dev/null || true
    rm -f "$DIR/tls.out" # as in start_server: the last server's READY line must not be read
    ip netns exec "$NS" node "$HERE/xds-server/server.js" --host 127.0.0.1 --port 0 --control-port 0 \
        --tls-cert "$1/server.crt" --tls-key "$1/server.key" --quiet >"$DIR/tls.out" 2>&1 &
    tls_PID=$!
    PIDS+=($tls_PID)
    wait_until 100 0.1 grep -q '^READY' "$DIR/tls.out" || fail "TLS server ($1) did not start"
    tls_XDS=$(sed -n 's/^READY xds=\([0-9]*\) control=.*/\1/p' "$DIR/tls.out")
    CREDS_JSON="[{\"type\": \"tls\", \"config\": {\"ca_certificate_file\": \"$DIR/ca/ca.crt\"}}]" \
        write_bootstrap "$tls_XDS"
    start_xlbd
    refused_for() { xlbctl --json xds | grep -qF "certificate verification failed: $2"; }
    wait_until 80 0.25 refused_for "$@" || fail "not refused with \"$2\": $(xlbctl xds)"
    [ "$(vip_state 0)" != ready ] || fail "configuration accepted from a server refused for $2"
    kill -TERM "$XLBD_PID"; wait "$XLBD_PID" || fail "xlbd did not exit cleanly"
}
server_cert wrong-name "DNS:xds.wrong.example"
tls_refused_with "$DIR/ca/wrong-name" "IP address mismatch"
pass "TLS: a certificate for another name is refused (IP address mismatch, in xlbctl xds)"
server_cert expired "DNS:localhost,IP:127.0.0.1,IP:::1" 20200101000000Z 20200201000000Z
tls_refused_with "$DIR/ca/expired" "certificate has expired"
pass "TLS: an expired certificate is refused (certificate has expired, in xlbctl xds)"
pass "clean exit"
