#!/usr/bin/env bash
# xlb's LRS client (lrs_probe: the client with a fake stats source counting known traffic)
# against the independent Node LRS server: the node in each stream's first request, reports
# that add up exactly to the source's totals (across a stream the server resets), the
# cluster set the server asks for (send_all_clusters, an explicit list, a change mid-stream),
# measured intervals, and the 1 s default floor for a 0 interval.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${XLB_BUILD_DIR:-$HERE/../../build}
PROBE="$BUILD/tests/interop/probe/lrs_probe"
DIR=$(mktemp -d /tmp/xlb-interop-lrs-XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$DIR"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    for f in "$DIR"/*.err; do [ -f "$f" ] && sed "s|^|$(basename "$f"): |" "$f" | tail -20; done
    exit 1
}
pass() { echo "ok - $*"; }

"$HERE/install.sh" >/dev/null

SERVER_PID=
start_server() { # [PORT]: sets XDS_PORT, CTL and SERVER_PID
    node "$HERE/xds-server/server.js" --port "${1:-0}" --control-port 0 --host 127.0.0.1 \
        --quiet >"$DIR/xds.out" 2>&1 &
    SERVER_PID=$!
    PIDS+=($SERVER_PID)
    for _ in $(seq 1 100); do
        grep -q '^READY' "$DIR/xds.out" && break
        sleep 0.1
    done
    read -r XDS_PORT CTL_PORT < <(sed -n \
        's/^READY xds=\([0-9]*\) control=\([0-9]*\)$/\1 \2/p' "$DIR/xds.out") || true
    [ -n "${XDS_PORT:-}" ] || fail "server did not start: $(cat "$DIR/xds.out")"
    CTL="http://127.0.0.1:$CTL_PORT"
}

api() { # METHOD PATH [JSON]: the control API's answer on stdout
    python3 - "$CTL" "$@" <<'PY'
import sys, urllib.request
ctl, method, path = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
req = urllib.request.Request(ctl + path, data=body, method=method,
                             headers={"content-type": "application/json"})
print(urllib.request.urlopen(req, timeout=5).read().decode())
PY
}

stat_reports() { # how many recorded reports carry cluster stats
    api GET /lrs | python3 -c '
import json, sys
print(sum(1 for r in json.load(sys.stdin)["reports"] if r["cluster_stats"]))'
}

wait_reports() { # N: until the server holds N reports with stats (bounded)
    for _ in $(seq 1 500); do
        [ "$(stat_reports)" -ge "$1" ] && return 0
        sleep 0.02
    done
    fail "the server never got $1 reports"
}

start_probe() { # NAME ARGS...: runs in the background, PROBE_PID set
    local name=$1
    shift
    "$PROBE" --server "127.0.0.1:$XDS_PORT" --node-id "$name" "$@" >"$DIR/$name.json" \
        2>"$DIR/$name.err" &
    PROBE_PID=$!
    PIDS+=($PROBE_PID)
}

wait_probe() { # NAME: the probe bounds itself with --timeout-ms
    wait "$PROBE_PID" || fail "$1: probe failed: $(cat "$DIR/$1.err")"
}

# check NAME MODE [MIN_INTERVAL_S]: compares the server's record (after $DIR/NAME.before, what
# a previous server process recorded, if any) with the probe's totals; prints one line per
# verified property, exits non-zero with the reason otherwise.
check() {
    api GET /lrs >"$DIR/$1.lrs"
    [ -f "$DIR/$1.before" ] || echo '{"reports": []}' >"$DIR/$1.before"
    python3 - "$DIR/$1.lrs" "$DIR/$1.json" "$1" "$2" "${3:-0.29}" "$DIR/$1.before" <<'PY'
import json, sys
# Stream ids restart with a new server process: keep the two apart.
lrs = [dict(r, stream_id=("before", r["stream_id"]))
       for r in json.load(open(sys.argv[6]))["reports"]]
lrs += json.load(open(sys.argv[1]))["reports"]
totals = json.load(open(sys.argv[2]))
name, mode, min_interval = sys.argv[3], sys.argv[4], float(sys.argv[5])
FEATURE = "envoy.lrs.supports_send_all_clusters"

def die(msg):
    print("FAIL:", msg)
    sys.exit(1)

def dur(s):
    return float(s.rstrip("s")) if s else 0.0

def num(x, key):
    return int(x.get(key, 0))

streams = {}
for r in lrs:
    streams.setdefault(r["stream_id"], []).append(r)
for sid, reqs in streams.items():
    first = reqs[0]
    node = first["node"] or die("stream %s: first request without a node" % (sid,))
    if node.get("id") != name:
        die("stream %s: node id %r, expected %r" % (sid, node.get("id"), name))
    if FEATURE not in node.get("clientFeatures", []):
        die("stream %s: node lacks %s: %s" % (sid, FEATURE, node))
    if first["cluster_stats"]:
        die("stream %s: the first request carries stats" % (sid,))
    if any(r["node"] for r in reqs[1:]):
        die("stream %s: node repeated after the first request" % (sid,))
print("node %s (user agent %s/%s, feature %s) in the first request of each of %d stream(s)"
      % (name, node.get("userAgentName"), node.get("userAgentVersion"), FEATURE, len(streams)))

reports = [r for r in lrs if r["cluster_stats"]]
if len(reports) != totals["reports"]:
    die("server got %d reports, the probe queued %d" % (len(reports), totals["reports"]))

seen = [sorted(cs["clusterName"] for cs in r["cluster_stats"]) for r in reports]
if mode == "all":
    if any(s != ["cluster-a", "cluster-b"] for s in seen):
        die("send_all_clusters: reported sets %s" % seen)
    print("send_all_clusters: every report has cluster-a and cluster-b, never cluster-off")
elif mode == "list-then-all":
    k = 0
    while k < len(seen) and seen[k] == ["cluster-b"]:
        k += 1
    if k < 2 or k == len(seen) or any(s != ["cluster-a", "cluster-b"] for s in seen[k:]):
        die("explicit list then send_all: reported sets %s" % seen)
    print("clusters [cluster-b, cluster-off, nobody]: %d reports of cluster-b only; "
          "then send_all_clusters: %d reports of both" % (k, len(seen) - k))

for cname, want in totals["clusters"].items():
    stats = [cs for r in reports for cs in r["cluster_stats"] if cs["clusterName"] == cname]
    if cname == "cluster-off":
        if stats:
            die("cluster-off (no lrs_server) was reported")
        continue
    for cs in stats:
        if cs.get("clusterServiceName", "") != want["service"]:
            die("%s: cluster_service_name %r" % (cname, cs.get("clusterServiceName")))
        iv = dur(cs.get("loadReportInterval"))
        if not min_interval <= iv <= 5.0:
            die("%s: load_report_interval %.3f s" % (cname, iv))
    for loc in want["localities"]:
        key = (loc["region"], loc["zone"], loc["sub_zone"], loc["priority"])
        got = {"issued": 0, "successful": 0, "errors": 0}
        last_gauge = None
        for cs in stats:
            for u in cs.get("upstreamLocalityStats", []):
                l = u.get("locality", {})
                if (l.get("region", ""), l.get("zone", ""), l.get("subZone", ""),
                        u.get("priority", 0)) != key:
                    continue
                got["issued"] += num(u, "totalIssuedRequests")
                got["successful"] += num(u, "totalSuccessfulRequests")
                got["errors"] += num(u, "totalErrorRequests")
                last_gauge = num(u, "totalRequestsInProgress")
        for k in got:
            if got[k] != loc[k]:
                die("%s %s: sum of %s deltas %d, source total %d" % (cname, key, k, got[k], loc[k]))
        if last_gauge != loc["in_progress"]:
            die("%s %s: last in-progress %s, source gauge %d"
                % (cname, key, last_gauge, loc["in_progress"]))
    drops = {}
    total = 0
    for cs in stats:
        total += num(cs, "totalDroppedRequests")
        for d in cs.get("droppedRequests", []):
            drops[d["category"]] = drops.get(d["category"], 0) + num(d, "droppedCount")
    want_drops = {c: n for c, n in want["drops"].items() if n}
    if drops != want_drops:
        die("%s: drops %s, source %s" % (cname, drops, want_drops))
    if total != sum(want["drops"].values()) + want["uncategorized"]:
        die("%s: total_dropped_requests %d" % (cname, total))
    print("%s: %d reports add up to the source's totals (%s; drops %s + %d uncategorized)"
          % (cname, len(stats), ", ".join("%s %d/%d/%d" % (l["region"], l["issued"],
             l["successful"], l["errors"]) for l in want["localities"]), want_drops,
             want["uncategorized"]))
PY
}

start_server

# 1. send_all_clusters, 800 ms, and a server restart midway (the channel closes): the client
#    reports again on a new channel to the new server process, and the counts in flight across
#    the restart are neither lost nor repeated. The first server's record is read as soon as
#    it holds 3 reports, far from the next one, and kept.
api PUT /lrs-config '{"send_all_clusters": true, "interval_ms": 800}' >/dev/null
start_probe xlb-lrs-all --reports 6 --min-interval-ms 100
wait_reports 3
api GET /lrs >"$DIR/xlb-lrs-all.before"
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
start_server "$XDS_PORT"
api PUT /lrs-config '{"send_all_clusters": true, "interval_ms": 300}' >/dev/null
wait_probe xlb-lrs-all
OUT=$(check xlb-lrs-all all) || fail "send_all: $OUT"
grep -q "of each of 2 stream" <<<"$OUT" || fail "no second stream after the restart: $OUT"
pass "send_all_clusters across a server restart:"
sed 's/^/    /' <<<"$OUT"

# 2. An explicit list (one enabled cluster, one without lrs_server, one unknown), then
#    send_all_clusters pushed on the open stream: cluster-a's first report covers everything
#    since the start.
api POST /reset-log >/dev/null
api PUT /lrs-config '{"send_all_clusters": false,
  "clusters": ["cluster-b", "cluster-off", "nobody"], "interval_ms": 300}' >/dev/null
start_probe xlb-lrs-list --reports 7 --min-interval-ms 100
wait_reports 3
api PUT /lrs-config '{"send_all_clusters": true}' >/dev/null
wait_probe xlb-lrs-list
OUT=$(check xlb-lrs-list list-then-all) || fail "explicit list: $OUT"
pass "explicit clusters, then send_all_clusters:"
sed 's/^/    /' <<<"$OUT"

# 3. An interval of 0 with the default floor: reports come 1 s apart.
api POST /reset-log >/dev/null
api PUT /lrs-config '{"send_all_clusters": true, "interval_ms": 0}' >/dev/null
start_probe xlb-lrs-floor --reports 2
wait_probe xlb-lrs-floor
OUT=$(check xlb-lrs-floor all 0.99) || fail "interval floor: $OUT"
pass "interval 0 raised to the 1 s default minimum (every load_report_interval >= 1 s)"
