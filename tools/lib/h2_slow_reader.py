#!/usr/bin/python3
"""An HTTP/2 gRPC client that asks for bulk replies and then stops reading its socket.

    h2_slow_reader.py --target HOST:PORT --streams N --bulk-down BYTES --go FILE
                      [--stalled FILE] [--seconds S] [--until-close]

It opens one connection with a small socket receive buffer, announces the largest HTTP/2
windows (SETTINGS_INITIAL_WINDOW_SIZE and a connection WINDOW_UPDATE of 2^31-1), so that only
TCP can hold the server back, and sends N /xlb.test.Echo/Bulk requests (grpc_backend.py) each
asking for BYTES. It reads until the server's SETTINGS have come and acknowledges them (the
connection's set-up, up to 5 s; a few KiB at most). Then it reads nothing until FILE exists (touching --stalled FILE once it has
sent everything, for the caller to start measuring), bounded by --seconds (default 120). Then
it reads every reply and checks each stream's DATA byte for byte: one gRPC message, the SHA-256
of its request followed by bulk_bytes(that digest, BYTES); with --until-close it then goes on
reading until the server closes the connection. Prints one JSON object:
  intact     streams whose reply arrived complete and exact
  ended      streams the server ended (END_STREAM or RST_STREAM)
  rst        {error code name: streams reset}
  goaway     the server's GOAWAY error code name (null if none)
  goaways    the last_stream_id of each GOAWAY, in order
  closed     whether the server closed the connection (its FIN) before the reader stopped
  held       whether FILE appeared before --seconds ran out
Exit 0 whatever the server did, 2 on bad arguments, 1 if it could not connect.
"""
import argparse
import hashlib
import json
import os
import select
import socket
import struct
import sys
import time

from grpc_backend import BULK_MAX, BULK_METHOD, bulk_bytes
from h2_streams import (ACK, DATA, END_HEADERS, GOAWAY, HEADERS, PING, PREFACE, RST_STREAM,
                        SETTINGS, error_name, frame, request_block, split_frames,
                        split_target)

END_STREAM = 0x1
WINDOW_UPDATE = 8
INITIAL_WINDOW_SIZE = 4
MAX_WINDOW = (1 << 31) - 1


class Reader:
    """The frames the server sent: SETTINGS and PINGs answered, each stream's DATA kept."""

    def __init__(self, sock, ids):
        self.sock = sock
        self.result = {"intact": 0, "ended": 0, "rst": {}, "goaway": None, "goaways": [],
                       "held": False, "closed": False}
        self.received = {sid: bytearray() for sid in ids}
        self.ended = set()
        self.settings_seen = False
        self.buf = b""

    def take(self, chunk):
        """Parse what arrived; False once the server has closed."""
        if not chunk:
            return False
        frames, self.buf = split_frames(self.buf + chunk)
        for ftype, flags, sid, payload in frames:
            self.frame(ftype, flags, sid, payload)
        return True

    def frame(self, ftype, flags, sid, payload):
        if ftype == SETTINGS and not flags & ACK:
            self.sock.sendall(frame(SETTINGS, ACK, 0, b""))
            self.settings_seen = True
        elif ftype == PING and not flags & ACK:
            self.sock.sendall(frame(PING, ACK, 0, payload))
        elif ftype == DATA and sid in self.received:
            pad = payload[0] if flags & 0x8 else 0
            self.received[sid] += payload[1:len(payload) - pad] if flags & 0x8 else payload
        elif ftype == RST_STREAM and len(payload) == 4:
            name = error_name(int.from_bytes(payload, "big"))
            self.result["rst"][name] = self.result["rst"].get(name, 0) + 1
            self.ended.add(sid)
        elif ftype == GOAWAY and len(payload) >= 8:
            self.result["goaway"] = error_name(int.from_bytes(payload[4:8], "big"))
            self.result["goaways"].append(int.from_bytes(payload[:4], "big") & 0x7FFFFFFF)
        if ftype in (DATA, HEADERS) and flags & END_STREAM and sid in self.received:
            self.ended.add(sid)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--streams", type=int, required=True)
    parser.add_argument("--bulk-down", type=int, required=True)
    parser.add_argument("--go", required=True)
    parser.add_argument("--stalled", default=None)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--until-close", action="store_true")
    args = parser.parse_args()
    try:
        host, port = split_target(args.target)
    except ValueError as err:
        parser.error(str(err))
    if not 1 <= args.streams <= 100 or not 0 <= args.bulk_down <= BULK_MAX:
        parser.error("--streams must be 1..100 and --bulk-down 0..%d" % BULK_MAX)
    if not 0 < args.seconds <= 300:
        parser.error("--seconds must be 0..300")

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # Small, so that the TCP window closes soon after the client stops reading.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
    sock.settimeout(5)
    try:
        sock.connect((host, port))
    except OSError as err:
        print("cannot connect to %s: %s" % (args.target, err), file=sys.stderr)
        return 1
    sock.settimeout(None)

    block = request_block(BULK_METHOD.encode(), args.target.encode())
    ids = [1 + 2 * i for i in range(args.streams)]
    expected = {}
    out = PREFACE + frame(SETTINGS, 0, 0, struct.pack(">HI", INITIAL_WINDOW_SIZE, MAX_WINDOW))
    out += frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", MAX_WINDOW - 65535))
    for sid in ids:
        request = args.bulk_down.to_bytes(8, "big") + os.urandom(64)
        digest = hashlib.sha256(request).digest()
        message = digest + bulk_bytes(digest, args.bulk_down)
        expected[sid] = b"\0" + struct.pack(">I", len(message)) + message
        grpc_message = b"\0" + struct.pack(">I", len(request)) + request
        out += frame(HEADERS, END_HEADERS, sid, block)
        out += frame(DATA, END_STREAM, sid, grpc_message)
    sock.sendall(out)

    reader = Reader(sock, ids)
    # The connection's set-up first, as any client does: the server's SETTINGS read and
    # acknowledged (a splice VIP binds only then). 4 KiB at a time, so that little else is read.
    setup_end = time.monotonic() + 5
    while not reader.settings_seen and time.monotonic() < setup_end:
        ready, _, _ = select.select([sock], [], [], max(0.0, setup_end - time.monotonic()))
        if not ready or not reader.take(sock.recv(4096)):
            break
    if args.stalled:
        open(args.stalled, "w").close()

    end = time.monotonic() + args.seconds
    held = False
    while time.monotonic() < end:
        if os.path.exists(args.go):
            held = True
            break
        time.sleep(0.1)

    reader.result["held"] = held
    while time.monotonic() < end and (len(reader.ended) < len(ids) or args.until_close):
        ready, _, _ = select.select([sock], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            break
        try:
            chunk = sock.recv(1 << 20)
        except OSError:  # a reset: not a close
            break
        if not reader.take(chunk):
            reader.result["closed"] = True
            break
    result, received, ended = reader.result, reader.received, reader.ended
    sock.close()
    result["ended"] = len(ended)
    result["intact"] = sum(1 for sid in ids if bytes(received[sid]) == expected[sid])
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
