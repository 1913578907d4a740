#!/usr/bin/env bash
# Bulk TCP through xlb against kernel TCP, over a path that loses segments and has a bandwidth
# bottleneck (issue 18). A kernel client sends RELAY_MB MB to a kernel server on be1, and
# receives RELAY_MB MB from it, at each loss rate of RELAY_LOSS (percent), over the paths of
# RELAY_PATHS, "kernel terminate" by default (at 5 % and above the kernel and NAT paths move
# RELAY_MB_AT_5 MB, 10 by default, see below; the terminate path always RELAY_MB):
#   kernel     straight from client to be1 across the switch (the baseline)
#   nat        through the full-NAT VIP 198.18.0.100:5001 (l4_mode "nat")
#   terminate  through the VIP 198.18.0.100:5002 (l4_mode "terminate": xlb's own TCP towards
#              the client and another towards be1, relaying the bytes)
# Every transfer must arrive intact: the sender's and the receiver's sha256 of the stream must
# agree. Goodput is printed for each, with the ratio to the kernel's, and never asserted.
#
# The impairments, the same for all three paths:
#   loss        nftables `numgen random mod 100 < N drop` on TCP, in both directions at both
#               ends: what the client and be1 receive (their input hook) and what they send
#               (the switch's ingress from their veth: a drop in the sender's own output hook
#               is reported to its TCP, which sends again at once, so it would be no loss);
#   bottleneck  tc tbf at RELAY_RATE on the client's side, both ways (the client's eth0 and
#               the switch's port towards the client).
#
# Then a receiver that stops reading: be1 accepts a connection through the terminate VIP and
# sleeps while the client sends; once the client can send no more, xlb's RSS stops growing and
# its port drops no frame (the mbuf pool's use is not reported: no xlbctl command or DPDK 22.11
# telemetry gives it); then be1 reads and everything arrives intact.
. "$(dirname "$0")/lib.sh"

MB=${RELAY_MB:-100}
# At 5 % on both ends (about 10 % of the segments each way on the whole path) kernel CUBIC
# moved 2 Mbit/s here, 10 MB in 40 s: 100 MB would take 7 minutes per transfer. The kernel
# pair (and NAT, whose TCP is the kernel's end to end) is the reference rate only, so it moves
# 10 MB there; xlb's terminate path, which the issue asks to carry 100 MB intact at 5 %, moves
# RELAY_MB (13-15 Mbit/s here: 100 MB in about a minute each way).
MB_AT_5=${RELAY_MB_AT_5:-10}
LOSSES=${RELAY_LOSS:-0 1 5}
RATE=${RELAY_RATE:-300mbit}
# The NAT path is a comparison the issue does not ask for: in CI's budget, only by request.
PATHS=${RELAY_PATHS:-kernel terminate}
HOLD_MB=${RELAY_HOLD_MB:-64}
BACKEND=198.18.0.21
VIP=198.18.0.100
PORT=5001

topo_create "$E2E_PREFIX" 1
xlb_write_config
e2e_edit_config '
x = c["xlb"]
x["vips"] += [{"address": "198.18.0.100", "port": 5001, "cluster": "bulk", "l4_mode": "nat"},
              {"address": "198.18.0.100", "port": 5002, "cluster": "bulk",
               "l4_mode": "terminate"}]
sr = x["static_resources"]
sr["clusters"].append({"name": "bulk", "type": "EDS",
                       "eds_cluster_config": {"eds_config": {"ads": {}}}})
sr["endpoints"].append({"cluster_name": "bulk", "endpoints": [{
    "locality": {"zone": "a"}, "load_balancing_weight": 1, "lb_endpoints": [
        {"endpoint": {"address": {"socket_address": {"address": "198.18.0.21",
                                                     "port_value": 5001}}}}]}]})
if "terminate" not in "'"$PATHS"'".split():
    x["vips"] = [v for v in x["vips"] if v.get("l4_mode") != "terminate"]
    for v in x["vips"]:
        v.pop("l4_mode", None)'

# The peers: one program, a server on be1 and a client; both hash what they send and receive.
# The stream is a seeded pseudo-random MiB, rotated by a different offset for each MiB, so that
# a lost, repeated or reordered piece changes the hash.
cat >"$E2E_DIR/bulk.py" <<'PY'
import hashlib, json, os, random, socket, sys, time

MIB = 1 << 20
HEADER = 64


def cubic(s):
    """Both kernels run CUBIC, Debian's default and xlb's, whatever the host's default is (BBR
    on some, which ignores random loss); a namespace may not change its default, a socket may."""
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
    return s


def stream(total, seed):
    block = random.Random(seed).randbytes(MIB)
    sent, i = 0, 0
    while sent < total:
        k = (i * 40503) % MIB
        piece = (block[k:] + block[:k])[:total - sent]
        sent += len(piece)
        i += 1
        yield piece


def recv_exact(s, n):
    out = bytearray()
    while len(out) < n:
        chunk = s.recv(min(n - len(out), MIB))
        if not chunk:
            raise EOFError(f"the peer closed after {len(out)} of {n} bytes")
        out += chunk
    return bytes(out)


def drain(s, total):
    """Receive exactly total bytes; returns their sha256."""
    h, got = hashlib.sha256(), 0
    while got < total:
        try:
            chunk = s.recv(min(total - got, MIB))
        except TimeoutError:
            raise TimeoutError(f"nothing for {s.gettimeout():.0f} s after {got} of {total} bytes")
        if not chunk:
            raise EOFError(f"the peer closed after {got} of {total} bytes")
        h.update(chunk)
        got += len(chunk)
    return h.hexdigest()


def send_stream(s, total, seed, progress=None):
    h = hashlib.sha256()
    sent = 0
    for piece in stream(total, seed):
        h.update(piece)
        view = memoryview(piece)
        while view:
            n = s.send(view)
            view = view[n:]
            sent += n
            if progress:  # after every send: the last one before the windows closed counts
                with open(progress + ".tmp", "w") as f:
                    f.write(str(sent))
                os.replace(progress + ".tmp", progress)
    return h.hexdigest()


def serve(port, conns):
    srv = cubic(socket.socket())
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(8)
    srv.settimeout(300)
    for _ in range(conns):
        s, _ = srv.accept()
        cubic(s)
        s.settimeout(120)
        try:
            what = recv_exact(s, HEADER).decode().split()
            if what[0] == "get":  # send what was asked for, then its sha256
                digest = send_stream(s, int(what[1]), int(what[2]))
                s.sendall(digest.encode())
                s.shutdown(socket.SHUT_WR)
                recv_exact(s, 2)  # the client's "ok": it has everything
            else:  # put, or hold: read nothing until the go file exists
                if what[0] == "hold":
                    for _ in range(1200):
                        if os.path.exists(what[2]):
                            break
                        time.sleep(0.1)
                s.sendall(drain(s, int(what[1])).encode())
        except (OSError, EOFError, ValueError) as e:
            print(f"server: {what}: {e}", file=sys.stderr, flush=True)
        s.close()


def client(host, port, op, total, extra):
    s = cubic(socket.socket())
    s.settimeout(30)
    s.connect((host, port))
    s.settimeout(120)
    seed = int.from_bytes(os.urandom(4), "little")
    t0 = time.monotonic()
    if op == "get":
        s.sendall(f"get {total} {seed}".encode().ljust(HEADER))
        mine = drain(s, total)
        t1 = time.monotonic()
        theirs = recv_exact(s, 64).decode()
        s.sendall(b"ok")
    else:
        header = f"{op} {total} {extra[0] if op == 'hold' else ''}"
        s.sendall(header.encode().ljust(HEADER))
        mine = send_stream(s, total, seed, extra[1] if op == "hold" else None)
        s.shutdown(socket.SHUT_WR)
        theirs = recv_exact(s, 64).decode()
        t1 = time.monotonic()
    s.close()
    print(json.dumps({"seconds": t1 - t0, "bytes": total, "sender": theirs if op == "get" else mine,
                      "receiver": mine if op == "get" else theirs}))
    if mine != theirs:
        sys.exit(f"{op} {total} bytes: sha256 {mine} here, {theirs} at the server")


if sys.argv[1] == "serve":
    serve(int(sys.argv[2]), int(sys.argv[3]))
else:
    client(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6:])
PY

# One server for every transfer of the run (bounded: a connection count and accept timeout).
ip netns exec "$E2E_PREFIX-be1" python3 "$E2E_DIR/bulk.py" serve "$PORT" 64 \
    >"$E2E_DIR/server.log" 2>&1 &
RUN_PIDS+=($!)

# The bottleneck, both ways on the client's side.
bottleneck() { # NS DEV
    ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$RATE" burst 128kb latency 20ms
}
bottleneck "$E2E_PREFIX-client" eth0
bottleneck "$E2E_PREFIX-sw" v-client

# impair PERCENT: the loss rules, replaced (0 removes them).
impair() {
    local n=$1 ns rule="meta l4proto tcp numgen random mod 100 < $1 counter drop"
    for ns in client be1; do
        ip netns exec "$E2E_PREFIX-$ns" nft -f - <<EOF
table inet xlbloss
delete table inet xlbloss
$([ "$n" -eq 0 ] || echo "table inet xlbloss { chain received { type filter hook input priority 0; $rule; }; }")
EOF
    done
    ip netns exec "$E2E_PREFIX-sw" nft -f - <<EOF
table netdev xlbloss
delete table netdev xlbloss
$([ "$n" -eq 0 ] || echo "table netdev xlbloss {
    chain from_client { type filter hook ingress device v-client priority 0; $rule; }
    chain from_be1 { type filter hook ingress device v-be1 priority 0; $rule; }
}")
EOF
}

# The segments the rules dropped so far, over the four of them.
dropped() {
    local total=0 ns n
    for ns in client be1 sw; do
        n=$(ip netns exec "$E2E_PREFIX-$ns" nft list ruleset |
            sed -n 's/.*counter packets \([0-9]*\) bytes.*/\1/p' | awk '{s += $1} END {print s + 0}')
        total=$((total + n))
    done
    echo "$total"
}

e2e_start_xlbd
bulk_ready() { xlbctl clusters | grep -Eq "^bulk .* READY "; }
wait_until 100 0.1 bulk_ready || fail "cluster bulk is not ready: $(xlbctl clusters)"

target() { # PATH: host and port the client connects to
    case $1 in
    kernel) echo "$BACKEND $PORT" ;;
    nat) echo "$VIP 5001" ;;
    terminate) echo "$VIP 5002" ;;
    esac
}

# xlb's relay events and its drops, for a failure's message.
relay_counters() {
    xlbctl --json counters | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]
print(" ".join(f"{group}.{k}={v}" for group in ("events", "drops") for k, v in t[group].items()
               if v and (group == "drops" or k.startswith("relay"))))'
}

# transfer PATH OP LOSS: one bulk transfer, checked; its Mbit/s into $E2E_DIR/goodput.
transfer() {
    local path=$1 op=$2 loss=$3 out mb=$MB
    [ "$loss" -lt 5 ] || [ "$path" = terminate ] || mb=$MB_AT_5
    # shellcheck disable=SC2046
    out=$(in_client timeout 300 python3 "$E2E_DIR/bulk.py" client $(target "$path") "$op" \
        $((mb << 20)) 2>&1) || fail "$op of $mb MB over $path at $loss% loss: ${out:-timed out} (server: $(tail -n 3 "$E2E_DIR/server.log"); xlb: $(relay_counters))"
    python3 - "$out" "$path" "$op" "$loss" >>"$E2E_DIR/goodput" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
print(sys.argv[4], sys.argv[3], sys.argv[2], f"{r['bytes'] * 8 / r['seconds'] / 1e6:.0f}",
      f"{r['seconds']:.2f}", r["bytes"] >> 20)
PY
    pass "$op $mb MB over $path at $loss% loss: intact ($(tail -n 1 "$E2E_DIR/goodput" | awk '{print $4 " Mbit/s, " $5 " s"}'))"
    [ "$path" != terminate ] || echo "  xlb's TCP so far: $(tcp_counters)"
}

# xlb's TCP endpoint's recovery counters (their totals so far), to read a goodput figure by.
tcp_counters() {
    xlbctl --json counters | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]["tcp"]
keys = ("segs_out", "retransmits", "rtos", "fast_retransmits", "sack_recoveries",
        "rcv_worker_full", "rcv_queue_full", "ooo_dropped_conn", "tx_full", "no_mbuf")
print(" ".join(f"{k}={t[k]}" for k in keys if k in t))'
}

: >"$E2E_DIR/goodput"
for loss in $LOSSES; do
    impair "$loss"
    before=$(dropped)
    for path in $PATHS; do
        transfer "$path" put "$loss"
        transfer "$path" get "$loss"
    done
    # The impairment was there: at N% of several hundred thousand segments, drops by the thousand.
    drops=$(($(dropped) - before))
    [ "$loss" -eq 0 ] || [ "$drops" -gt 0 ] || fail "no segment dropped at $loss%"
    echo "at $loss% loss the rules dropped $drops segments"
done
impair 0

echo "goodput, Mbit/s (MB each way, tbf $RATE on the client's side; up: client->backend, down: backend->client)"
python3 - "$E2E_DIR/goodput" "$PATHS" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    loss, op, path, mbit, _, mb = line.split()
    rows.setdefault((loss, {"put": "up", "get": "down"}[op]), {})[path] = (float(mbit), mb)
paths = sys.argv[2].split()
ratios = [p for p in paths if p != "kernel"] if "kernel" in paths else []
print(f"{'loss':>4} {'dir':>4} {'MB':>7} " + " ".join(f"{p:>9}" for p in paths)
      + " ".join(f" {p + '/kernel':>16}" for p in ratios))
for (loss, op), r in rows.items():
    mb = "/".join(dict.fromkeys(r[p][1] for p in paths))  # each path's, once if the same
    print(f"{loss + '%':>4} {op:>4} {mb:>7} " + " ".join(f"{r[p][0]:9.0f}" for p in paths)
          + " ".join(f" {r[p][0] / r['kernel'][0]:16.2f}" for p in ratios))
PY

# A receiver that stops reading: be1 accepts and sleeps until $E2E_DIR/go exists, while the
# client sends HOLD_MB MB, more than the two kernels' socket buffers hold (4 MB send, 6 MB
# receive by default). The client's sends stop once every window on the way is closed; from
# then on xlb's RSS must not grow, nor may its port run out of mbufs; then be1 reads, and the
# bytes arrive intact.
hold_path=terminate
case " $PATHS " in *" terminate "*) ;; *) hold_path=nat ;; esac
rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$XLBD_PID/status"; }
port_rx_dropped() {
    xlbctl --json status | python3 -c '
import json, sys
print(sum(p["rx_dropped"] for p in json.load(sys.stdin)["ports"]))'
}
rss_start=$(rss_kib)
dropped_start=$(port_rx_dropped)
# shellcheck disable=SC2046
# Not through timeout(1): $! must be the client itself, so that cleanup's kill reaches it (its
# socket operations time out by themselves).
ip netns exec "$E2E_PREFIX-client" python3 "$E2E_DIR/bulk.py" client \
    $(target "$hold_path") hold $((HOLD_MB << 20)) "$E2E_DIR/go" "$E2E_DIR/progress" \
    >"$E2E_DIR/hold.out" 2>&1 &
holder=$!
RUN_PIDS+=("$holder")
sent_before=-1
unchanged=0
client_stalled() { # three samples in a row with the same byte count, the windows closed
    local now
    now=$(cat "$E2E_DIR/progress" 2>/dev/null || echo 0)
    if [ "$now" -gt 0 ] && [ "$now" -eq "$sent_before" ]; then
        unchanged=$((unchanged + 1))
    else
        unchanged=0
    fi
    sent_before=$now
    [ "$unchanged" -ge 3 ]
}
wait_until 90 1 client_stalled || fail "the client's sends did not stop ($(cat "$E2E_DIR/progress" 2>/dev/null) bytes sent)"
sent=$(cat "$E2E_DIR/progress")
[ "$sent" -lt $((HOLD_MB << 20)) ] ||
    fail "the client sent all $HOLD_MB MB through $hold_path while be1 read nothing"
samples=()
for _ in 1 2 3 4 5 6; do
    samples+=("$(rss_kib)")
    sleep 1
done
echo "hold through $hold_path: the client stopped after $((sent >> 10)) KiB; xlbd RSS $rss_start KiB before, then ${samples[*]} KiB"
grown=$((samples[5] - samples[0]))
[ "$grown" -le 1024 ] || fail "xlbd's RSS grew by $grown KiB while the windows were closed"
[ "$(port_rx_dropped)" -eq "$dropped_start" ] || fail "the port dropped frames while be1 did not read (mbufs: $dropped_start -> $(port_rx_dropped))"
touch "$E2E_DIR/go"
wait "$holder" || fail "after be1 read again: $(cat "$E2E_DIR/hold.out")"
pass "a receiver that stopped reading through $hold_path: the client stalled after $((sent >> 10)) KiB, xlbd's RSS flat ($grown KiB), then all $HOLD_MB MB intact"
