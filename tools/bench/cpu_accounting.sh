# shellcheck shell=bash
# CPU accounting for the benchmarks that run xlbd next to other proxies (source it after
# tools/lib/xlbd.sh; needs XLBD_PID and RUN_DIR). Perf-free: xlbd's workers count their busy
# and idle TSC cycles (`xlbctl --json status`), and the kernel counts every thread's run time
# in /proc/PID/task/TID/schedstat (nanoseconds: utime + stime without the 10 ms ticks of
# /proc/PID/stat). Used by l7_vs_haproxy.sh and conn_rate.sh.

# The workers' busy cycles, summed (loops that received packets, as OVS-DPDK's pmd stats
# count them).
bench_xlb_busy() {
    xlb_ctl --json status | python3 -c '
import json, sys
print(sum(w["busy_cycles"] for w in json.load(sys.stdin)["workers"]))'
}

# The TSC rate: the workers' busy + idle cycles (every loop counts its cycles in one or the
# other) over 2 s of wall time, each reading timed at the middle of its xlbctl call.
bench_tsc_hz() {
    python3 - "$XLB_BUILD/apps/xlbctl" "$RUN_DIR/xlbd.sock" <<'PY'
import json, subprocess, sys, time
def sample():
    t0 = time.monotonic()
    out = subprocess.run([sys.argv[1], "--socket", sys.argv[2], "--json", "status"],
                         capture_output=True, check=True).stdout
    t1 = time.monotonic()
    w = json.loads(out)["workers"]
    return (t0 + t1) / 2, sum(x["busy_cycles"] + x["idle_cycles"] for x in w)
a = sample()
time.sleep(2)
b = sample()
print(int((b[1] - a[1]) / (b[0] - a[0])))
PY
}

# bench_cpu_ns PID [COMM-REGEX]: the run time in ns of PID's threads, or of those whose name
# matches COMM-REGEX (xlbd's workers: '^(rte|lcore)-worker').
bench_cpu_ns() {
    local pid=$1 pattern=${2:-} t n=0 a
    for t in /proc/"$pid"/task/*; do
        if [ -n "$pattern" ]; then
            grep -Eq "$pattern" "$t/comm" 2>/dev/null || continue
        fi
        read -r a _ <"$t/schedstat" 2>/dev/null || continue
        n=$((n + a))
    done
    echo "$n"
}
