#!/usr/bin/env bash
# TLS on a stream VIP (issue 20, docs/tls.md): xlb ends TLS from its clients with its own TCP and
# OpenSSL over memory BIOs, then balances every RPC as in cleartext. Certificates made here with
# openssl (ECDSA P-256): a CA, the VIP's certificate for api.xlb.test, a client certificate, a
# self-signed client certificate, and a second VIP certificate for rotation. The certificates
# come from a certificate_providers instance (A29's file_watcher, refresh_interval 1s).
# VIPs, both 198.18.0.100, round robin over b1..b3: 443 TLS, 8443 TLS with mTLS required.
# Checked: xlbd --check names a key that does not match its certificate; one grpcio secure
# channel, 60 RPCs: all OK, spread over the three backends; curl --http2 over TLS; h2load over
# TLS (4 connections, 16 streams each); openssl s_client offering only http/1.1 gets the
# no_application_protocol alert; SNI choosing among the VIP's certificates; a TLS 1.2 session
# resumed with its ticket; mTLS: a client with a certificate the CA signed succeeds, one without,
# with a self-signed or an expired one fails; the VIP's certificate and counters in xlbctl
# status and metrics; the certificate files replaced while h2load runs and clients open a
# connection per RPC: new handshakes get the new certificate and nothing fails; a reload whose
# key does not match is rejected and the running certificate keeps serving; upstream TLS with a
# client certificate, one backend refused by its SAN; a clean stop. About 15 s.
. "$(dirname "$0")/lib.sh"
. "$E2E_SOURCE/tools/lib/grpc_peers.sh"
grpc_require
command -v openssl >/dev/null || fail "openssl is missing (tools/setup-deps.sh installs it)"

# ---- certificates ----
PKI=$E2E_DIR/pki
mkdir -p "$PKI"
(
    cd "$PKI"
    key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
    key ca.key
    openssl req -x509 -new -key ca.key -subj "/CN=xlb test CA" -days 2 -out ca.pem 2>/dev/null
    # sign NAME CN SAN: NAME.pem signed by the CA
    sign() {
        key "$1.key"
        openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr" 2>/dev/null
        printf 'subjectAltName=%s\n' "$3" >"$1.ext"
        openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile "$1.ext" -out "$1.pem" 2>/dev/null
    }
    sign server "api one" DNS:api.xlb.test
    sign rotated "api two" DNS:api.xlb.test
    sign client "client one" DNS:client.xlb.test
    sign backend "backend" DNS:backend.xlb.test
    sign other "other" DNS:other.xlb.test
    key rogue.key
    openssl req -x509 -new -key rogue.key -subj "/CN=rogue" -days 2 -out rogue.pem 2>/dev/null
    # A client certificate from the CA that expired in 2020 (openssl ca can backdate).
    printf '[ca]\ndefault_ca = t\n[t]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n' >ca.cnf
    : >index.txt
    echo 1000 >serial
    key expired.key
    openssl req -new -key expired.key -subj "/CN=expired client" -out expired.csr 2>/dev/null
    openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr \
        -out expired.pem -startdate 20200101000000Z -enddate 20200102000000Z -notext 2>/dev/null
    cp server.pem vip.pem
    cp server.key vip.key
) || fail "openssl could not make the test certificates"

topo_create "$E2E_PREFIX" 3
xlb_write_config
e2e_edit_config '
t = "type.googleapis.com/envoy."
pki = "'"$PKI"'"
c["certificate_providers"] = {"web": {"plugin_name": "file_watcher", "config": {
    "certificate_file": pki + "/vip.pem", "private_key_file": pki + "/vip.key",
    "ca_certificate_file": pki + "/ca.pem", "refresh_interval": "1s"}},
  "alt": {"plugin_name": "file_watcher", "config": {
    "certificate_file": pki + "/other.pem", "private_key_file": pki + "/other.key"}},
  "upstream": {"plugin_name": "file_watcher", "config": {
    "certificate_file": pki + "/client.pem", "private_key_file": pki + "/client.key",
    "ca_certificate_file": pki + "/ca.pem"}}}
x = c["xlb"]
x["vips"] = [
    {"address": "198.18.0.100", "port": 443, "target": "xds:///echo", "l7_mode": "stream",
     "tls": {"certificate_provider": "web", "sni_certificate_providers": ["alt"]}},
    {"address": "198.18.0.100", "port": 8443, "target": "xds:///echo", "l7_mode": "stream",
     "tls": {"certificate_provider": "web", "require_client_certificate": True}},
    {"address": "198.18.0.100", "port": 50443, "target": "xds:///secure", "l7_mode": "stream"}]
router = {"name": "router", "typed_config": {"@type": t + "extensions.filters.http.router.v3.Router"}}
def hcm(cluster):
    return {"@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
            "route_config": {"name": cluster, "virtual_hosts": [{"name": cluster, "domains": ["*"],
                "routes": [{"match": {"prefix": "/"}, "route": {"cluster": cluster}}]}]},
            "http_filters": [router]}
def eps(port):
    return [{"locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": "198.18.0.2%d" % n,
                                                     "port_value": port}}}} for n in (1, 2, 3)]}]
def cluster(name):
    return {"name": name, "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}}}
# secure: upstream TLS (A29) with a client certificate, the CA, and the SAN of the backends.
secure = cluster("secure")
secure["transport_socket"] = {"name": "envoy.transport_sockets.tls", "typed_config": {
    "@type": t + "extensions.transport_sockets.tls.v3.UpstreamTlsContext",
    "common_tls_context": {
        "tls_certificate_provider_instance": {"instance_name": "upstream"},
        "validation_context": {
            "ca_certificate_provider_instance": {"instance_name": "upstream"},
            "match_subject_alt_names": [{"exact": "backend.xlb.test"}]}}}}
x["static_resources"] = {
    "listeners": [{"name": n, "api_listener": {"api_listener": hcm(n)}} for n in ("echo", "secure")],
    "clusters": [cluster("echo"), secure],
    "endpoints": [{"cluster_name": "echo", "endpoints": eps(50051)},
                  {"cluster_name": "secure", "endpoints": eps(50061)}]}'

# ---- xlbd --check reads the files ----
cp "$E2E_DIR/bootstrap.json" "$E2E_DIR/good.json"
sed "s#$PKI/vip.key#$PKI/client.key#" "$E2E_DIR/good.json" >"$E2E_DIR/bad.json"
out=$("$XLBD" --check --config "$E2E_DIR/bad.json" 2>&1) && fail "--check took a mismatched key"
grep -q "xlb.vips\[0\].tls: certificate_providers.web: .*client.key" <<<"$out" ||
    fail "--check does not name the mismatched key: $out"
out=$("$XLBD" --check --config "$E2E_DIR/good.json" 2>&1) || fail "--check rejected: $out"
python3 - "$E2E_DIR/good.json" "$E2E_DIR/bad-instance.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
secure = c["xlb"]["static_resources"]["clusters"][1]
secure["transport_socket"]["typed_config"]["common_tls_context"]["validation_context"][
    "ca_certificate_provider_instance"]["instance_name"] = "nowhere"
json.dump(c, open(sys.argv[2], "w"))
PY
out=$("$XLBD" --check --config "$E2E_DIR/bad-instance.json" 2>&1) &&
    fail "--check took a cluster naming an unknown certificate provider instance"
grep -q "unrecognized certificate provider instance name: nowhere" <<<"$out" ||
    fail "--check does not name the unknown instance: $out"
pass "xlbd --check reads the certificate files, names a key that does not match and an unknown instance"

for n in 1 2 3; do
    grpc_backend "$E2E_PREFIX-be$n" "$E2E_DIR/b$n.log" --name "b$n" --port 50051 \
        --address "198.18.0.2$n"
done
# Upstream TLS backends on port 50061, each requiring a client certificate from the CA: tb1 and
# tb2 present backend.xlb.test, tb3 a certificate from the same CA for other.xlb.test.
for n in 1 2 3; do
    cert=backend
    [ "$n" != 3 ] || cert=other
    grpc_backend "$E2E_PREFIX-be$n" "$E2E_DIR/tb$n.log" --name "tb$n" --port 50061 \
        --address "198.18.0.2$n" --tls-cert "$PKI/$cert.pem" --tls-key "$PKI/$cert.key" \
        --tls-client-ca "$PKI/ca.pem"
done
e2e_start_xlbd

VIP=198.18.0.100
tls_client() { # PORT ARGS...: grpc_client.py over TLS for api.xlb.test
    local port=$1
    shift
    grpc_client "$E2E_PREFIX-client" --target "$VIP:$port" --tls-ca "$PKI/ca.pem" \
        --tls-name api.xlb.test "$@"
}
s_client() { # ARGS...: openssl s_client to the TLS VIP, nothing sent; the HTTP/2 bytes it
    # may print (xlb's SETTINGS) removed, so that grep reads text
    in_client timeout 10 openssl s_client -connect "$VIP:443" -servername api.xlb.test \
        -CAfile "$PKI/ca.pem" "$@" </dev/null 2>&1 | tr -d '\000'
}
tls_counter() { # VIP-INDEX FIELD: a TLS counter of a VIP in xlbctl status --json
    xlbctl --json status | python3 -c '
import json, sys
v = json.load(sys.stdin)["vips"][int(sys.argv[1])]["tls"]
f = sys.argv[2]
print(v["failures"][f[9:]] if f.startswith("failures.") else v[f])' "$1" "$2"
}

answers() { tls_client 443 --count 1 --deadline 2 | grep -q '"status": {"OK": 1}'; }
wait_until 50 0.2 answers || fail "no RPC over TLS succeeded: $(tls_client 443 --count 1 --deadline 2)"

# ---- one secure channel, 60 RPCs ----
out=$(tls_client 443 --count 60)
grpc_expect "$out" 'r["status"] == {"OK": 60}'
grpc_expect "$out" 'all(15 <= r["backends"].get(b, 0) <= 25 for b in ("b1", "b2", "b3"))'
pass "one grpcio secure channel, 60 RPCs: all OK, round robin $(grpc_field "$out" 'r["backends"]')"

# ---- curl and h2load over TLS ----
grpc_frame "$E2E_DIR/frame.bin"
out=$(in_client timeout 20 curl -sS --http2 --cacert "$PKI/ca.pem" \
    --resolve "api.xlb.test:443:$VIP" -H 'content-type: application/grpc' -H 'te: trailers' \
    --data-binary @"$E2E_DIR/frame.bin" -o "$E2E_DIR/curl.out" -w '%{http_version} %{http_code}' \
    https://api.xlb.test/xlb.test.Echo/Who 2>&1) || fail "curl over TLS: $out"
[ "$out" = "2 200" ] && grep -qa "b[123]" "$E2E_DIR/curl.out" ||
    fail "curl --http2 over TLS: $out, body $(od -c "$E2E_DIR/curl.out" | head -3)"
out=$(in_client timeout 60 h2load -n 400 -c 4 -m 16 -d "$E2E_DIR/frame.bin" \
    -H 'content-type: application/grpc' -H 'te: trailers' \
    "https://$VIP:443/xlb.test.Echo/Who" 2>&1) || fail "h2load over TLS: $out"
grep -q "requests: 400 total, 400 started, 400 done, 400 succeeded, 0 failed" <<<"$out" ||
    fail "h2load over TLS: $(grep -E '^requests|^status|TLS|Application' <<<"$out")"
grep -q "Application protocol: h2" <<<"$out" || fail "h2load did not negotiate h2: $out"
pass "curl --http2 and h2load (4 connections x 16 streams, 400 requests) over TLS"

# ---- ALPN: a client that does not offer h2 gets an alert ----
before=$(tls_counter 0 failures.no_alpn)
out=$(s_client -alpn http/1.1) && fail "a client offering only http/1.1 completed a handshake: $out"
grep -qi "no application protocol" <<<"$out" || fail "no no_application_protocol alert: $out"
[ "$(tls_counter 0 failures.no_alpn)" -gt "$before" ] || fail "no_alpn not counted"
pass "a client offering only http/1.1 gets the no_application_protocol alert, counted"

# ---- SNI chooses among the VIP's certificates; an unknown name gets the default ----
sni_subject() { # NAME: the subject the VIP presents to a client asking for NAME
    in_client timeout 10 openssl s_client -connect "$VIP:443" -servername "$1" -alpn h2 \
        </dev/null 2>&1 | tr -d '\000' | grep -a -m1 "^subject=" || true
}
[[ "$(sni_subject other.xlb.test)" == *"CN = other"* ]] ||
    fail "SNI other.xlb.test got $(sni_subject other.xlb.test)"
[[ "$(sni_subject api.xlb.test)" == *"api one"* ]] &&
    [[ "$(sni_subject nobody.xlb.test)" == *"api one"* ]] ||
    fail "SNI api.xlb.test or an unknown name did not get the default certificate"
pass "SNI chooses the VIP's certificate for other.xlb.test; api.xlb.test and an unknown name get the default"

# ---- resumption with a ticket (TLS 1.2: the ticket comes within the handshake) ----
before=$(tls_counter 0 resumptions)
out=$(s_client -alpn h2 -tls1_2 -sess_out "$E2E_DIR/sess.pem")
grep -q "Verify return code: 0" <<<"$out" || fail "s_client did not verify the VIP: $out"
out=$(s_client -alpn h2 -tls1_2 -sess_in "$E2E_DIR/sess.pem")
grep -q "^Reused, TLSv1.2" <<<"$out" || fail "the session was not resumed: $(grep -E 'New|Reused' <<<"$out")"
[ "$(tls_counter 0 resumptions)" -gt "$before" ] || fail "the resumption was not counted"
pass "a TLS 1.2 session resumes with its ticket, counted"

# ---- mTLS on 8443 ----
out=$(tls_client 8443 --count 5 --tls-cert "$PKI/client.pem" --tls-key "$PKI/client.key")
grpc_expect "$out" 'r["status"] == {"OK": 5}'
before_none=$(tls_counter 1 failures.no_client_certificate)
before_bad=$(tls_counter 1 failures.bad_client_certificate)
out=$(tls_client 8443 --count 1 --deadline 3)
grpc_expect "$out" '"OK" not in r["status"]'
out=$(tls_client 8443 --count 1 --deadline 3 --tls-cert "$PKI/rogue.pem" --tls-key "$PKI/rogue.key")
grpc_expect "$out" '"OK" not in r["status"]'
out=$(tls_client 8443 --count 1 --deadline 3 --tls-cert "$PKI/expired.pem" --tls-key "$PKI/expired.key")
grpc_expect "$out" '"OK" not in r["status"]'
[ "$(tls_counter 1 failures.no_client_certificate)" -gt "$before_none" ] &&
    [ "$(tls_counter 1 failures.bad_client_certificate)" -ge $((before_bad + 2)) ] ||
    fail "mTLS refusals not counted: $(xlbctl --json status)"
pass "mTLS: the CA's client certificate is served; none, a self-signed and an expired one are refused"

# ---- what operators see ----
st=$(xlbctl --json status)
python3 - "$st" <<'PY' || fail "xlbctl status --json lacks the VIP's certificate: $st"
import json, sys
v = json.loads(sys.argv[1])["vips"][0]["tls"]
assert v["subject"].endswith("CN=api one") or "api one" in v["subject"], v
assert "api.xlb.test" in v["sans"], v
assert v["not_after"] and v["handshakes"] >= 60 // 60, v
PY
status=$(xlbctl status)
grep -q "api.xlb.test" <<<"$status" || fail "xlbctl status does not show the certificate"
vips=$(xlbctl vips)
grep -q "api one" <<<"$vips" && grep -q "api.xlb.test" <<<"$vips" && grep -q "CN=other" <<<"$vips" ||
    fail "xlbctl vips does not show the certificates: $vips"
xlbctl metrics | python3 -c '
import sys, time
m = {}
for line in sys.stdin:
    if line and not line.startswith("#"):
        k, v = line.rsplit(" ", 1)
        m[k] = float(v)
vip = "vip=\"198.18.0.100\",port=\"443\""
assert m["xlb_vip_tls_handshakes_total{%s}" % vip] >= 5, m
assert m["xlb_vip_tls_failures_total{%s,reason=\"no_alpn\"}" % vip] >= 1, m
assert m["xlb_vip_tls_certificate_expiry_timestamp_seconds{%s}" % vip] > time.time(), m
' || fail "the TLS metrics are wrong: $(xlbctl metrics | grep tls)"
pass "xlbctl vips, status and metrics show the VIP's certificates (subject, SANs, expiry) and its handshakes"

# ---- rotation under load: h2load's connections and a connection per RPC while the files are
# replaced ----
subject() { s_client -alpn h2 | grep -a -m1 "^subject=" || true; }
[[ "$(subject)" == *"api one"* ]] || fail "the VIP does not serve the first certificate: $(subject)"
in_client timeout 90 h2load -n 6000 -c 4 -m 8 -d "$E2E_DIR/frame.bin" \
    -H 'content-type: application/grpc' -H 'te: trailers' \
    "https://$VIP:443/xlb.test.Echo/Who" >"$E2E_DIR/h2load-rotation.log" 2>&1 &
H2LOAD_PID=$!
RUN_PIDS+=("$H2LOAD_PID")
tls_client 443 --per-connection --count 150 --interval 0.02 >"$E2E_DIR/rotation.json" &
ROT_PID=$!
RUN_PIDS+=("$ROT_PID")
sleep 0.5
cp "$PKI/rotated.pem" "$PKI/vip.pem.new" && cp "$PKI/rotated.key" "$PKI/vip.key.new"
mv "$PKI/vip.key.new" "$PKI/vip.key" && mv "$PKI/vip.pem.new" "$PKI/vip.pem"
rotated() { [[ "$(subject)" == *"api two"* ]]; }
wait_until 50 0.2 rotated || fail "new handshakes still get the old certificate: $(subject)"
wait "$ROT_PID" || fail "the client running through the rotation failed"
out=$(cat "$E2E_DIR/rotation.json")
grpc_expect "$out" 'r["status"] == {"OK": 150}'
wait "$H2LOAD_PID" || fail "h2load through the rotation failed: $(tail -20 "$E2E_DIR/h2load-rotation.log")"
grep -q "requests: 6000 total, 6000 started, 6000 done, 6000 succeeded, 0 failed" \
    "$E2E_DIR/h2load-rotation.log" ||
    fail "h2load through the rotation: $(grep -E '^requests|^status' "$E2E_DIR/h2load-rotation.log")"
pass "certificate files replaced under load: new handshakes get the new one, 150 of 150 RPCs and 6000 of 6000 h2load requests OK"

# ---- a reload with a key that does not match keeps the running certificate ----
e2e_edit_config '
p = c["certificate_providers"]["web"]["config"]
p["private_key_file"] = "'"$PKI"'/client.key"'
rejected=$(xlbctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["reload"]["rejected"])')
kill -HUP "$XLBD_PID"
more_rejected() {
    [ "$(xlbctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["reload"]["rejected"])')" -gt "$rejected" ]
}
wait_until 50 0.1 more_rejected || fail "a reload with a mismatched key was not rejected"
status=$(xlbctl --json status)
grep -q "client.key" <<<"$status" || fail "the rejected reload does not say why"
out=$(tls_client 443 --count 10)
grpc_expect "$out" 'r["status"] == {"OK": 10}'
rotated || fail "the running certificate changed after a rejected reload: $(subject)"
pass "a reload with a mismatched key is rejected, saying why; the running certificate serves"

# ---- upstream TLS (A29): subchannels speak TLS, the server's SAN is checked ----
status_field() { xlbctl --json status | python3 -c 'import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
out=$(grpc_client "$E2E_PREFIX-client" --target "$VIP:50443" --count 60)
grpc_expect "$out" 'r["status"] == {"OK": 60}'
grpc_expect "$out" 'set(r["backends"]) == {"tb1", "tb2"} and min(r["backends"].values()) >= 20'
[ "$(grpc_rpcs "$E2E_DIR/tb3.log")" -eq 0 ] || fail "tb3, whose SAN does not match, got RPCs"
[ "$(status_field 'r["upstream_tls"]["handshakes"]')" -ge 2 ] &&
    [ "$(status_field 'r["upstream_tls"]["failures"]["bad_server_certificate"]')" -ge 1 ] ||
    fail "upstream handshakes not counted: $(xlbctl --json status | grep -A12 upstream_tls)"
metrics=$(xlbctl metrics) # whole first: grep -q would cut the pipe (pipefail)
grep -q '^xlb_upstream_tls_failures_total{reason="bad_server_certificate"} [1-9]' <<<"$metrics" ||
    fail "upstream TLS failures not in the metrics: $(grep upstream_tls <<<"$metrics")"
pass "upstream TLS with a client certificate: 60 of 60 RPCs on tb1 and tb2 $(grpc_field "$out" 'r["backends"]'), tb3's SAN refused and counted"

# ---- a clean stop: everything TLS held is freed (the sanitizer build checks for leaks) ----
e2e_stop_xlbd
# OpenSSL ran on the worker's own heap (docs/tls.md, "Worker memory"), which never ran dry.
grep -Eq 'worker 0: TLS heap of [0-9]+ bytes, at most [1-9][0-9]* used, 0 requests refused' \
    "$E2E_DIR/xlbd.log" || fail "the worker's TLS heap: $(grep -E 'TLS heap|malloc' "$E2E_DIR/xlbd.log")"
pass "xlbd stops cleanly after serving TLS; the worker's handshakes used its TLS heap only"
