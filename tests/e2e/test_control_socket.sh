#!/usr/bin/env bash
# The control socket is owner-only, and no malformed request breaks the daemon: each gets an
# error reply and the next request is served.
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_start_xlbd
sock="$E2E_DIR/xlbd.sock"

mode=$(stat -c %a "$sock")
[ "$mode" = 600 ] || fail "socket mode is $mode, not 600"
pass "socket is mode 0600"

# Raw requests over the socket: each line in, one JSON reply line out.
python3 - "$sock" <<'PY' || fail "malformed requests"
import json, select, socket, sys, time

def session(lines, timeout=5):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(sys.argv[1])
    s.sendall(b"".join(lines))
    data = b""
    while data.count(b"\n") < len(lines):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return [json.loads(l) for l in data.splitlines()]

cases = [
    (b"this is not json\n", "request is not valid JSON"),
    (b"[1,2,3]\n", "request must be a JSON object"),
    (b"{}\n", 'request needs a "command" string'),
    (b'{"command": 7}\n', 'request needs a "command" string'),
    (b'{"command": "reboot"}\n', 'unknown command "reboot" (try help)'),
    (b'{"command": "status", "args": 5}\n', '"args" must be an object'),
    (b'{"command": "help", "args": {"command": "nope"}}\n', 'no command "nope"'),
    (b'{"command": "st\\u0000atus"}\n', None),
    (b"\xff\xfe\x00garbage\n", "request is not valid JSON"),
]
replies = session([c[0] for c in cases])
assert len(replies) == len(cases), replies
for (request, want), reply in zip(cases, replies):
    assert reply["ok"] is False, (request, reply)
    if want is not None:
        assert reply["error"] == want, (request, reply)

# A request over the size limit gets an error and the connection is closed.
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
try:
    s.sendall(b"x" * (70 * 1024))
except OSError:
    pass
reply = json.loads(s.makefile("rb").readline())
assert reply == {"ok": False, "error": "request longer than 65536 bytes"}, reply
s.close()

# Half a request, then the client goes away: nothing to answer, nothing breaks.
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'{"comm'); s.close()

# More idle clients than the daemon serves at once: the oldest idle ones make room (closed
# without a reply, issue 21), so that new clients are always served.
held = []
for _ in range(40):
    c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); held.append(c)
evicted, deadline = 0, time.monotonic() + 3
waiting = list(held)
while waiting and time.monotonic() < deadline:
    readable, _, _ = select.select(waiting, [], [], 0.2)
    for c in readable:
        waiting.remove(c)
        assert c.recv(4096) == b"", "an idle client got a reply"
        evicted += 1
# 32 are served at once (one slot may still be held by the abandoned client above).
assert 40 - 32 <= evicted <= 40 - 31, evicted
assert all(c in held[:evicted + 1] for c in held if c not in waiting), "not the oldest evicted"
for c in held:
    c.close()

# Still serving, with several requests pipelined on one connection.
ok = session([b'{"command":"status"}\n', b'{"command":"counters"}\n', b'{"command":"help"}\n'])
assert [r["ok"] for r in ok] == [True, True, True], ok
assert ok[0]["result"]["version"]
print("idle clients evicted beyond the limit:", evicted)
PY
pass "malformed, oversized and abandoned requests get error replies; idle clients make room"

xlbctl status >/dev/null || fail "xlbctl after abuse"
out=$(xlbctl frobnicate 2>&1) && fail "unknown command succeeded"
grep -q 'unknown command "frobnicate"' <<<"$out" || fail "xlbctl error text: $out"
out=$("$XLBCTL" --socket "$E2E_DIR/none.sock" status 2>&1) && fail "missing socket succeeded"
grep -q "is xlbd running" <<<"$out" || fail "xlbctl connection error text: $out"
pass "xlbctl reports errors and exits non-zero"

# A second daemon must not steal a live socket.
ip netns exec "$E2E_PREFIX-client" "$XLBD" --config "$E2E_DIR/bootstrap.json" >"$E2E_DIR/second.log" 2>&1 &
second=$!
RUN_PIDS+=("$second")
rc=0
wait "$second" || rc=$?
[ $rc -ne 0 ] || fail "a second xlbd started on the same socket"
xlbctl status >/dev/null || fail "first daemon lost its socket"
pass "a second xlbd refuses a live control socket"

e2e_stop_xlbd
pass "clean exit on SIGTERM"

# Ctrl-C in a terminal is SIGINT: the same clean exit (status 0, socket removed).
e2e_start_xlbd
xlb_stop INT || fail "xlbd did not stop cleanly on SIGINT"
pass "clean exit on SIGINT"
