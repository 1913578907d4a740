#!/usr/bin/env bash
# xlbd --check: exit 0 for a valid file, otherwise one line per problem and a non-zero exit;
# unknown keys of the xlb section are problems; --json gives the same result for tools.
set -euo pipefail
SRC=${XLB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
XLBD=${XLB_BUILD_DIR:-$SRC/build}/apps/xlbd
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$("$XLBD" --check --config "$SRC/tools/demo/bootstrap.json")
[ "$(head -n 1 <<<"$out")" = "$SRC/tools/demo/bootstrap.json: configuration is valid" ] ||
    { echo "FAIL: $out"; exit 1; }
echo "ok - the demo bootstrap is valid"

# Issue 24: --check prints what the configuration can hold. The demo has one worker, the
# default flow table, an L7 VIP and -m 512: the pool is a quarter of 512 MiB in entries of the
# printed size, never below its floor of 1,024.
grep -qx 'capacity: flows 65536 per worker x 1 workers = 65536 (123 bytes each, 7.7 MiB)' <<<"$out" ||
    { echo "FAIL: flow capacity: $out"; exit 1; }
bytes=$(sed -n 's/^capacity: l7 connections .*(\([0-9]*\) bytes each.*/\1/p' <<<"$out")
want=$(( 512 * 1024 * 1024 / 4 / ${bytes:-1} ))
[ "$want" -ge 1024 ] || want=1024
grep -Eqx "capacity: l7 connections $want per worker x 1 workers = $want \\([0-9]+ bytes each, [0-9.]+ MiB\\)" \
    <<<"$out" || { echo "FAIL: l7 capacity: $out"; exit 1; }
grep -qx 'capacity: eal memory 512.0 MiB' <<<"$out" || { echo "FAIL: eal memory: $out"; exit 1; }
# Its stream VIP makes the stream engine, sized by tcp_connections_per_worker (4096); its HTTP/2
# heap is an eighth of the 512 MiB (64 KiB a connection would be 256 MiB): 64 MiB, of which 7/8
# hold 1,792 sessions of 32 KiB.
grep -Eqx 'capacity: stream engine 4096 connections per worker x 1 workers \([0-9.]+ MiB each, [0-9.]+ MiB\); its HTTP/2 heap of 64.0 MiB holds 1792 sessions at once per worker' \
    <<<"$out" || { echo "FAIL: stream engine: $out"; exit 1; }
# OpenSSL's heap on each worker (docs/tls.md): 32 KiB a connection would be 128 MiB, a
# sixteenth of the 512 MiB is 32 MiB.
grep -qx "capacity: stream engine TLS heap of 32.0 MiB per worker (OpenSSL's memory)" <<<"$out" ||
    { echo "FAIL: TLS heap: $out"; exit 1; }
! grep -q 'capacity: warning' <<<"$out" || { echo "FAIL: the demo does not fit: $out"; exit 1; }
# Two workers in 128 MiB: the tables alone take more, which --check says (xlbd would not start).
sed -e 's/^\( *\)"512",$/\1"128",/' -e 's/"workers": *1/"workers": 2/' \
    "$SRC/tools/demo/bootstrap.json" >"$dir/small.json"
out_small=$("$XLBD" --check --config "$dir/small.json")
grep -Eqx 'capacity: warning: these take [0-9.]+ MiB, more than the eal memory 128.0 MiB: xlbd will not start \(raise -m, or lower the counts\)' \
    <<<"$out_small" || { echo "FAIL: no warning for 2 workers in 128 MiB: $out_small"; exit 1; }
# The stream engine's limits size it: 1,024 retry buffers of 1 MiB take 1 GiB more per worker.
sed -e 's/"workers": *1/"workers": 1, "stream_retry_buffers": 1024, "stream_retry_buffer_bytes": 1048576/' \
    "$SRC/tools/demo/bootstrap.json" >"$dir/retry.json"
out_retry=$("$XLBD" --check --config "$dir/retry.json")
grep -Eq 'capacity: warning: these take [0-9.]+ MiB, more than the eal memory 512.0 MiB' \
    <<<"$out_retry" || { echo "FAIL: 1 GiB of retry buffers fit in 512 MiB: $out_retry"; exit 1; }
echo "ok - --check prints the stream engine's memory, and warns when the tables exceed -m"
# With 2 GiB and two workers the default pool follows the memory: 512 MiB / 2 / entry size.
sed -e 's/^\( *\)"512",$/\1"2048",/' -e 's/"workers": *1/"workers": 2/' \
    "$SRC/tools/demo/bootstrap.json" >"$dir/big.json"
out=$("$XLBD" --check --config "$dir/big.json")
l7=$(sed -n 's/^capacity: l7 connections \([0-9]*\) per worker x 2 workers.*/\1/p' <<<"$out")
bytes=$(sed -n 's/^capacity: l7 connections .*(\([0-9]*\) bytes each.*/\1/p' <<<"$out")
[ -n "$l7" ] && [ "$l7" -eq $(( 2048 * 1024 * 1024 / 4 / 2 / bytes )) ] ||
    { echo "FAIL: l7 pool for 2 GiB: $out"; exit 1; }
# The stream heap follows the memory too: 2 GiB / 8 / 2 workers = 128 MiB, 3,584 sessions each.
grep -Eq 'its HTTP/2 heap of 128.0 MiB holds 3584 sessions at once per worker$' <<<"$out" ||
    { echo "FAIL: stream heap for 2 GiB: $out"; exit 1; }
# And the TLS heap: 2 GiB / 16 / 2 workers = 64 MiB.
grep -qx "capacity: stream engine TLS heap of 64.0 MiB per worker (OpenSSL's memory)" <<<"$out" ||
    { echo "FAIL: TLS heap for 2 GiB: $out"; exit 1; }
echo "ok - --check prints the flows, L7 connections and stream sessions the configuration holds ($l7 per worker at 2 GiB)"

# Issue 21: the mbuf pool against what can hold mbufs at once. Unset, it is sized to them;
# set too small, --check and the start refuse it and say why.
grep -qx 'capacity: mbuf pool 13438 >= 13438 needed: rx 2x1024 + tx 2x1024 + redirect rings 8190 + lcore caches 3x384' \
    <<<"$out" || { echo "FAIL: mbuf pool for 2 workers: $out"; exit 1; }
sed -e 's/"workers": *1/"workers": 2, "mbuf_pool_size": 8191/' \
    "$SRC/tools/demo/bootstrap.json" >"$dir/small-pool.json"
expected='xlb.mbuf_pool_size: mbuf pool 8191 < 13438 needed: rx 2x1024 + tx 2x1024 + redirect rings 8190 + lcore caches 3x384'
for how in --check ""; do
    rc=0
    out=$("$XLBD" $how --config "$dir/small-pool.json" 2>&1) || rc=$?
    [ $rc -eq 1 ] && [ "$out" = "$expected" ] || { echo "FAIL: ${how:-start} with a small pool: $rc $out"; exit 1; }
done
echo "ok - a pool smaller than what can hold mbufs is refused, naming the numbers"

cat >"$dir/bad.json" <<'JSON'
{"xlb": {"workers": 0, "ports": [{"name": "p", "addresses": ["198.18.0.10/24"]}],
 "vips": [{"address": "198.18.0.100", "port": 1}, {"address": "198.18.0.100", "port": 70000, "cluster": "c"},
          {"address": "198.18.0.101", "port": 80, "cluster": "c"}, {"address": "198.18.0.102", "port": 80, "cluster": "c"}]}}
JSON
rc=0
out=$("$XLBD" --check --config "$dir/bad.json" 2>&1) || rc=$?
expected='xlb.workers: must be 1..64
xlb.vips[0]: needs exactly one of "target" (L7) or "cluster" (L4)
xlb.vips[1].port: must be 1..65535'
[ $rc -ne 0 ] || { echo "FAIL: invalid file accepted"; exit 1; }
[ "$out" = "$expected" ] || { echo "FAIL: got:"; echo "$out"; exit 1; }
echo "ok - an invalid file lists every problem by JSON path and exits $rc"

# Issue 22: an af_xdp port names what it lacks on this host before DPDK starts.
cat >"$dir/xdp.json" <<'JSON'
{"xlb": {"workers": 2, "eal": ["--no-huge", "--vdev=net_af_xdp0,iface=nosuchif0,queue_count=2",
  "--vdev=net_af_xdp1,iface=lo"],
 "ports": [{"name": "net_af_xdp0", "addresses": ["198.18.0.10/24"]},
           {"name": "net_af_xdp1", "addresses": ["198.18.1.10/24"]}]}}
JSON
rc=0
out=$("$XLBD" --check --config "$dir/xdp.json" 2>&1) || rc=$?
expected='xlb.eal[1]: net_af_xdp0: interface nosuchif0 does not exist in this network namespace
xlb.eal[2]: net_af_xdp1: queue_count=1 but 2 workers need a queue each'
[ $rc -ne 0 ] || { echo "FAIL: af_xdp file accepted"; exit 1; }
[ "$out" = "$expected" ] || { echo "FAIL: af_xdp: got:"; echo "$out"; exit 1; }
echo "ok - --check names an af_xdp port's missing interface and missing queues"

# Issue 25: misspelt keys of the xlb section are errors, all of them, with the nearest known
# key; gRPC's part ignores fields it does not know.
cat >"$dir/typos.json" <<'JSON'
{"xds_servers": [{"server_uri": "xds.example:443", "channel_creds": [{"type": "insecure"}],
  "future_field": 1}],
 "certificate_providers": {},
 "xlb": {"wrokers_typo": 2, "ports": [{"name": "p", "addresses": ["198.18.0.10/24"], "mut": 1450}],
  "vips": [{"address": "198.18.0.100", "port": 80, "cluster": "c", "l7mode": "stream"},
           {"address": "198.18.0.101", "port": 80, "tagret": "xds:///s"}]}}
JSON
rc=0
out=$("$XLBD" --check --config "$dir/typos.json" 2>&1) || rc=$?
expected='xlb.wrokers_typo: unknown key; did you mean "workers"?
xlb.ports[0].mut: unknown key; did you mean "mtu"?
xlb.vips[0].l7mode: unknown key; did you mean "l7_mode"?
xlb.vips[1].tagret: unknown key; did you mean "target"?
xlb.vips[1]: needs exactly one of "target" (L7) or "cluster" (L4)'
[ $rc -eq 1 ] || { echo "FAIL: a file with unknown keys gave $rc"; exit 1; }
[ "$out" = "$expected" ] || { echo "FAIL: got:"; echo "$out"; exit 1; }
echo "ok - unknown keys of the xlb section are reported, each with the nearest known key"
# Starting reads the file the same way: it stops before EAL with the same lines.
rc=0
out=$("$XLBD" --config "$dir/typos.json" 2>&1) || rc=$?
[ $rc -eq 1 ] && [ "$out" = "$expected" ] || { echo "FAIL: start with unknown keys: $rc $out"; exit 1; }
echo "ok - xlbd does not start on a file with unknown keys"

# --check --json: the same result for tools, on stdout, with the same exit status.
out=$("$XLBD" --check --json --config "$SRC/tools/demo/bootstrap.json")
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r == {"file": sys.argv[2], "valid": True, "errors": [], "errors_not_shown": 0}, r
' "$out" "$SRC/tools/demo/bootstrap.json" || { echo "FAIL: --json of a valid file: $out"; exit 1; }
rc=0
out=$("$XLBD" --check --json --config "$dir/typos.json" 2>"$dir/stderr") || rc=$?
[ $rc -eq 1 ] && [ ! -s "$dir/stderr" ] || { echo "FAIL: --json exit $rc, stderr $(cat "$dir/stderr")"; exit 1; }
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["valid"] is False and r["errors_not_shown"] == 0, r
got = [(e["path"], e["message"], e["suggestion"]) for e in r["errors"]]
want = [("xlb.wrokers_typo", "unknown key", "workers"),
        ("xlb.ports[0].mut", "unknown key", "mtu"),
        ("xlb.vips[0].l7mode", "unknown key", "l7_mode"),
        ("xlb.vips[1].tagret", "unknown key", "target"),
        ("xlb.vips[1]", "needs exactly one of \"target\" (L7) or \"cluster\" (L4)", None)]
assert got == want, got
' "$out" || { echo "FAIL: --json of the typos: $out"; exit 1; }
rc=0
out=$("$XLBD" --check --json --config "$dir/missing.json") || rc=$?
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["valid"] is False and r["errors"] == [
    {"path": sys.argv[2], "message": "No such file or directory", "suggestion": None}], r
' "$out" "$dir/missing.json" && [ $rc -eq 1 ] || { echo "FAIL: --json of a missing file: $out"; exit 1; }
echo "ok - --check --json prints the result with path, message and suggestion per error"

rc=0
"$XLBD" --json --config "$SRC/tools/demo/bootstrap.json" >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --json without --check gave $rc"; exit 1; }
echo "ok - --json without --check is a usage error"

rc=0
out=$("$XLBD" --check --config "$dir/missing.json" 2>&1) || rc=$?
[ $rc -ne 0 ] && [ "$out" = "$dir/missing.json: No such file or directory" ] ||
    { echo "FAIL: $out"; exit 1; }
echo "ok - a missing file is reported"

rc=0
"$XLBD" >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || { echo "FAIL: no --config gave $rc"; exit 1; }
echo "ok - usage errors exit 2"

# Issue 21: insecure channel credentials towards a server off loopback are valid (gRPC allows
# them) but let anyone on the path inject configuration: --check warns on stderr, naming the
# server; loopback and TLS servers give no warning.
with_server() { # URI CREDS_TYPE OUT
    python3 - "$SRC/tools/demo/bootstrap.json" "$1" "$2" >"$3" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["xds_servers"] = [{"server_uri": sys.argv[2], "channel_creds": [{"type": sys.argv[3]}]}]
b.setdefault("node", {"id": "check-test"})
print(json.dumps(b))
PY
}
with_server 198.18.0.1:18000 insecure "$dir/insecure.json"
err=$("$XLBD" --check --config "$dir/insecure.json" 2>&1 >/dev/null) ||
    { echo "FAIL: insecure remote server made the file invalid: $err"; exit 1; }
want='warning: xds_servers[0].channel_creds: insecure credentials towards 198.18.0.1:18000, which is not on loopback: anyone on the path can inject configuration (use "tls")'
grep -qxF "$want" <<<"$err" || { echo "FAIL: no insecure warning: $err"; exit 1; }
for case in "127.0.0.1:18000 insecure" "[::1]:18000 insecure" "localhost:18000 insecure" \
    "198.18.0.1:18000 tls"; do
    read -r uri creds <<<"$case"
    with_server "$uri" "$creds" "$dir/quiet.json"
    err=$("$XLBD" --check --config "$dir/quiet.json" 2>&1 >/dev/null) ||
        { echo "FAIL: $case made the file invalid: $err"; exit 1; }
    [ -z "$err" ] || { echo "FAIL: $case warned: $err"; exit 1; }
done
echo "ok - --check warns about insecure credentials towards a server off loopback, only then"

# control_socket_group names a group of this host; an unknown one is a configuration error.
python3 - "$SRC/tools/demo/bootstrap.json" >"$dir/group.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["xlb"]["control_socket_group"] = "xlb-no-such-group"
print(json.dumps(b))
PY
rc=0
out=$("$XLBD" --check --config "$dir/group.json" 2>&1) || rc=$?
[ $rc -ne 0 ] && grep -qxF 'xlb.control_socket_group: no group "xlb-no-such-group" on this host' <<<"$out" ||
    { echo "FAIL: unknown control_socket_group (rc $rc): $out"; exit 1; }
echo "ok - an unknown control_socket_group is reported"
