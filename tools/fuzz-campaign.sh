#!/usr/bin/env bash
# A fuzzing campaign: every libFuzzer target (or the ones named) for SECONDS each, from its kept
# corpus, then what the campaign found that adds coverage merged back into that corpus
# (tests/fuzz/<folder>/corpus, minimised with -merge=1), and a summary table. Crashing inputs
# are kept in fuzz-findings/<target>/ for a regression test. The test command runs each target
# for 10 s; this is for the longer runs docs/testing.md describes.
#
#   tools/fuzz-campaign.sh SECONDS [TARGET...]     (JOBS targets at a time, default nproc)
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC"
seconds=${1:?usage: tools/fuzz-campaign.sh SECONDS [TARGET...]}
shift
case "$seconds" in '' | *[!0-9]*) echo "SECONDS must be a number" >&2; exit 2 ;; esac
jobs=${JOBS:-$(nproc)}
# A corpus that grows past this many files is left as it is and reported: minimise by hand.
max_corpus=${MAX_CORPUS_FILES:-200}

if [ ! -f build-fuzz/build.ninja ]; then
    CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
        >/dev/null || exit 1
fi
ninja -C build-fuzz >/dev/null || { echo "fuzz build failed" >&2; exit 1; }

mapfile -t all < <(find build-fuzz/tests/fuzz -maxdepth 2 -type f -name 'fuzz_*' -executable | sort)
targets=()
for t in "${all[@]}"; do
    if [ $# -eq 0 ]; then targets+=("$t"); continue; fi
    for want in "$@"; do [ "$(basename "$t")" = "$want" ] && targets+=("$t"); done
done
[ ${#targets[@]} -gt 0 ] || { echo "no such target: $*" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p fuzz-findings

# One target's run: its own copy of the corpus grows; crashes go to fuzz-findings/NAME/.
run_one() { # TARGET
    local t=$1 name folder
    name=$(basename "$t")
    folder=$(basename "$(dirname "$t")")
    mkdir -p "$work/$name" "fuzz-findings/$name"
    [ -d "tests/fuzz/$folder/corpus" ] && cp -r "tests/fuzz/$folder/corpus/." "$work/$name/"
    "$t" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="fuzz-findings/$name/" "$work/$name" >"$work/$name.log" 2>&1
    echo $? >"$work/$name.rc"
}
export -f run_one
export work seconds
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}

# Merge back, one target at a time (several targets share a folder's corpus).
printf '%-28s %12s %8s %8s %8s\n' target execs before after crashes
status=0
for t in "${targets[@]}"; do
    name=$(basename "$t")
    folder=$(basename "$(dirname "$t")")
    corpus="tests/fuzz/$folder/corpus"
    mkdir -p "$corpus"
    before=$(find "$corpus" -type f | wc -l)
    merged="$work/$name.merged"
    mkdir -p "$merged"
    cp -r "$corpus/." "$merged/"
    "$t" -merge=1 -rss_limit_mb=2048 "$merged" "$work/$name" >"$work/$name.merge.log" 2>&1
    after=$(find "$merged" -type f | wc -l)
    if [ "$after" -le "$max_corpus" ]; then
        cp -n "$merged/"* "$corpus/" 2>/dev/null
    else
        echo "$name: corpus would grow to $after files (> $max_corpus); left as it was" >&2
    fi
    after=$(find "$corpus" -type f | wc -l)
    execs=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$work/$name.log" | grep -Eo '[0-9]+$')
    crashes=$(find "fuzz-findings/$name" -type f | wc -l)
    printf '%-28s %12s %8s %8s %8s\n' "$name" "${execs:-?}" "$before" "$after" "$crashes"
    if [ "$(cat "$work/$name.rc")" != 0 ] || [ "$crashes" -gt 0 ]; then
        status=1
        tail -n 20 "$work/$name.log"
    fi
    rmdir "fuzz-findings/$name" 2>/dev/null
done
rmdir fuzz-findings 2>/dev/null
exit $status
