#!/usr/bin/env bash
# xlbd --check: exit 0 for a valid file, otherwise one line per problem and a non-zero exit.
set -euo pipefail
SRC=${XLB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
XLBD=${XLB_BUILD_DIR:-$SRC/build}/apps/xlbd
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$("$XLBD" --check --config "$SRC/tools/demo/bootstrap.json")
[ "$out" = "$SRC/tools/demo/bootstrap.json: configuration is valid" ] || { echo "FAIL: $out"; exit 1; }
echo "ok - the demo bootstrap is valid"

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

rc=0
out=$("$XLBD" --check --config "$dir/missing.json" 2>&1) || rc=$?
[ $rc -ne 0 ] && [ "$out" = "$dir/missing.json: No such file or directory" ] ||
    { echo "FAIL: $out"; exit 1; }
echo "ok - a missing file is reported"

rc=0
"$XLBD" >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || { echo "FAIL: no --config gave $rc"; exit 1; }
echo "ok - usage errors exit 2"
