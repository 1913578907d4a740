#!/usr/bin/env bash
# The test command: install what is missing, check formatting and run the static analysis,
# build, and run every test twice -- once in a normal build and once under AddressSanitizer +
# UndefinedBehaviorSanitizer -- then run each fuzz target briefly. Ends with one line
# "N passed, N failed, N skipped".
#
# As root (CI) every test can run, so a skipped test counts as failed: a test that skips says
# why, and that reason is printed. Without root the end-to-end and interop tests skip (they
# need network namespaces) and the summary says how many did.
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC"
"$SRC/tools/setup-deps.sh" || exit 1

passed=0
failed=0
skipped=0
failures=()
as_root=false
[ "$(id -u)" -eq 0 ] && as_root=true

# One check that is not a meson test: a script that passes or fails as a whole.
run_check() { # LABEL COMMAND...
    local label=$1 log
    shift
    echo "== $label"
    log=$(mktemp)
    if "$@" >"$log" 2>&1; then
        tail -n 1 "$log"
        passed=$((passed + 1))
    else
        cat "$log"
        failed=$((failed + 1)); failures+=("$label")
    fi
    rm -f "$log"
}

run_check "format (tools/check-format.sh)" tools/check-format.sh
run_check "static analysis (tools/check-static.sh)" tools/check-static.sh

# Add up a meson test log (JSON lines) into the totals.
count_results() { # BUILD_DIR LABEL
    local log="$1/meson-logs/testlog.json" line
    [ -f "$log" ] || { failed=$((failed + 1)); failures+=("$2: no test log"); return; }
    while IFS=$'\t' read -r name result; do
        case "$result" in
        OK | EXPECTEDFAIL) passed=$((passed + 1)) ;;
        SKIP)
            if $as_root; then
                failed=$((failed + 1)); failures+=("$2: $name (skipped as root)")
            else
                skipped=$((skipped + 1))
            fi
            ;;
        *) failed=$((failed + 1)); failures+=("$2: $name ($result)") ;;
        esac
    done < <(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    print(t["name"] + "\t" + t["result"])' "$log")
    # The output of each failed test, so that a CI log alone explains the failure, and the
    # reason each skipped test gave (its "SKIP: ..." line).
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    out = (t.get("stdout") or "").splitlines()
    if t["result"] == "SKIP":
        why = [l for l in out if l.startswith("SKIP")] or ["(the test printed no SKIP: line)"]
        print("skipped: " + sys.argv[2] + ": " + t["name"] + ": " + why[-1])
    elif t["result"] not in ("OK", "EXPECTEDFAIL"):
        print("--- " + sys.argv[2] + ": " + t["name"] + " (last 80 lines) ---")
        print("\n".join(out[-80:]))' "$log" "$2"
}

run_build() { # BUILD_DIR LABEL MESON_ARGS...
    local dir=$1 label=$2
    shift 2
    echo "== $label build ($dir)"
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; failed=$((failed + 1)); failures+=("$label: meson setup"); return; }
        rm -f "$dir.setup.log"
    fi
    if ! ninja -C "$dir" >/dev/null; then
        ninja -C "$dir" | tail -n 30
        failed=$((failed + 1)); failures+=("$label: build")
        return
    fi
    rm -f "$dir/meson-logs/testlog.json"
    # shellcheck disable=SC2086 # TEST_ARGS: words for meson test
    meson test -C "$dir" --print-errorlogs --num-processes 2 ${TEST_ARGS:-} | grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout):'
    count_results "$dir" "$label"
}

# The relay's bulk test moves 50 MB each way here (RELAY_MB; 100 MB by hand): CI's time.
RELAY_MB=${RELAY_MB:-50} run_build build normal
# The capacity suite (new connections per second) and the bulk suite (100 MB transfers through
# the TCP relay) measure what the sanitizers slow down and check nothing they would see that the
# other suites do not (packet/relay and e2e_tcp_relay run under them): normal build only.
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 TEST_ARGS="--no-suite capacity --no-suite bulk" \
    run_build build-asan "asan+ubsan" -Db_sanitize=address,undefined -Db_lundef=false

# The independent xDS management server (Node, tests/interop) checks itself before xlb's
# interop tests rely on it.
echo "== interop: xDS management server self-test"
if tests/interop/run-self-test.sh >interop-selftest.log 2>&1; then :; fi
n_pass=$(grep -Eo '^# pass [0-9]+' interop-selftest.log | grep -Eo '[0-9]+' || echo 0)
n_fail=$(grep -Eo '^# fail [0-9]+' interop-selftest.log | grep -Eo '[0-9]+' || echo 1)
echo "interop self-test: $n_pass passed, $n_fail failed"
passed=$((passed + n_pass))
if [ "$n_fail" -ne 0 ] || [ "$n_pass" -eq 0 ]; then
    tail -n 40 interop-selftest.log
    failed=$((failed + (n_fail > 0 ? n_fail : 1)))
    failures+=("interop: xDS server self-test")
fi
rm -f interop-selftest.log

# Fuzz targets: a short smoke run each (longer campaigns: docs/testing.md).
if command -v clang >/dev/null; then
    echo "== fuzz targets (build-fuzz)"
    if [ ! -f build-fuzz/build.ninja ]; then
        CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
            -Db_lundef=false >/dev/null 2>&1
    fi
    if ninja -C build-fuzz >/dev/null 2>&1; then
        for target in $(find build-fuzz/tests/fuzz -maxdepth 2 -type f -name 'fuzz_*' -executable | sort); do
            name=$(basename "$target")
            # Seeds: the corpus beside the target's sources (build-fuzz mirrors tests/fuzz).
            corpus_seed="tests/fuzz/$(basename "$(dirname "$target")")/corpus"
            [ -d "$corpus_seed" ] || corpus_seed=
            work=$(mktemp -d)
            [ -n "$corpus_seed" ] && cp -r "$corpus_seed/." "$work/"
            if "$target" -max_total_time=6 -rss_limit_mb=2048 "$work" >"$work.log" 2>&1; then
                echo "ok - $name: $(grep -Eo 'Done [0-9]+ runs' "$work.log" | tail -n 1)"
                passed=$((passed + 1))
            else
                tail -n 30 "$work.log"
                failed=$((failed + 1)); failures+=("fuzz: $name")
            fi
            rm -rf "$work" "$work.log"
        done
    else
        failed=$((failed + 1)); failures+=("fuzz: build")
    fi
fi

for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
