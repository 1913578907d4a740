#!/usr/bin/env bash
# Static analysis: cppcheck (Debian's cppcheck 2.10) over xlb's own C code -- lib, control,
# dataplane, apps, tools and tests -- with the checks that find bugs (severity error and
# warning: uninitialised and null pointers, out-of-bounds, leaks, wrong printf arguments,
# undefined behaviour) and the portability ones, not the style checks. Configuration:
#   .cppcheck/suppressions.txt  false positives, each narrow and with its reason
#   .cppcheck/cjson.cfg         cJSON's iteration macro
# System and library headers (DPDK, cJSON, protobuf-c, nghttp2, OpenSSL) are not analysed.
# Prints each finding and exits 1 when there is one. About 15 s on 2 cores.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC"
command -v cppcheck >/dev/null || { echo "check-static: cppcheck not found (apt-get install cppcheck)" >&2; exit 2; }

# Every folder that holds a tracked header, so that "xlb_log.h" and friends resolve.
mapfile -t incs < <(git ls-files -- '*.h' | xargs -n1 dirname | sort -u | sed 's/^/-I/')
jobs=$(nproc 2>/dev/null || echo 2)

out=$(mktemp)
trap 'rm -f "$out"' EXIT
cppcheck -j "$jobs" -q --std=c11 --enable=warning,portability --inline-suppr \
    --library=.cppcheck/cjson.cfg --suppressions-list=.cppcheck/suppressions.txt \
    --suppress=missingIncludeSystem --suppress=missingInclude \
    -D__GNUC__ -DALLOW_EXPERIMENTAL_API -DXLB_VERSION='"0"' "${incs[@]}" \
    --template='{file}:{line}: {severity}: {message} [{id}]' \
    --error-exitcode=1 lib control dataplane apps tools tests 2>"$out" || true
if [ -s "$out" ]; then
    cat "$out"
    echo "check-static: $(grep -c ': \(error\|warning\|portability\|style\|performance\): ' "$out" || true) finding(s); fix them, or suppress a false positive narrowly in .cppcheck/suppressions.txt with its reason"
    exit 1
fi
echo "check-static: cppcheck found nothing"
