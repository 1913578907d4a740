#!/usr/bin/python3
"""Open many HTTP/2 request streams on one connection, ignoring the server's stream limit.

    h2_streams.py --target HOST:PORT --streams N [--path /svc/Method] [--seconds S] [--after-ack]

A stock client (grpcio, h2load) keeps to the server's SETTINGS_MAX_CONCURRENT_STREAMS and
queues the rest, so a server's enforcement of its own limit can only be seen with a client that
does not: this one sends the connection preface, an empty SETTINGS and N gRPC request HEADERS
(streams 1, 3, 5, ...) without END_STREAM and nothing else, so every stream stays open. It
acknowledges the server's SETTINGS, answers PINGs and reads for --seconds (default 3; it stops
early once every stream has been reset or the connection closed), then prints one JSON object:
  max_concurrent_streams  the server's SETTINGS_MAX_CONCURRENT_STREAMS (null if not sent)
  rst                     {error code name: streams reset by the server with it}
  refused_streams         the stream ids reset with REFUSED_STREAM, in order
  headers                 streams the server sent HEADERS on
  goaway                  the server's GOAWAY error code name (null if none)
  closed                  whether the server closed the connection
  sent                    whether the requests were sent (false: no SETTINGS came in 3 s)
Streams beyond a limit the client has not acknowledged yet get REFUSED_STREAM from nghttp2
(RFC 9113 5.1.2); beyond an acknowledged one nghttp2 ends the connection with PROTOCOL_ERROR.
--after-ack waits (up to 3 s) for the server's SETTINGS, acknowledges them, and only then sends
the HEADERS, to see the second case.

Bounded: one connection, N <= 1000 streams, --seconds <= 30 of reading. Exit 0 whatever the
server did, 2 on bad arguments, 1 if the connection could not be made.
"""
import argparse
import json
import select
import socket
import struct
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0, 1, 3, 4, 6, 7
END_HEADERS, ACK = 0x4, 0x1
MAX_CONCURRENT_STREAMS = 3
ERRORS = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
          "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
          "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY",
          "HTTP_1_1_REQUIRED"]


def error_name(code):
    return ERRORS[code] if code < len(ERRORS) else "0x%x" % code


def frame(ftype, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def split_frames(buf):
    """The complete frames at the start of buf, as (type, flags, stream id, payload), and the
    bytes after them (a frame still arriving)."""
    frames = []
    while len(buf) >= 9:
        length = int.from_bytes(buf[:3], "big")
        if len(buf) < 9 + length:
            break
        sid = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
        frames.append((buf[3], buf[4], sid, buf[9:9 + length]))
        buf = buf[9 + length:]
    return frames, buf


def literal(name, value):
    """HPACK literal header field without indexing, new name, raw strings (lengths < 127)."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def request_block(path, authority):
    fields = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", path),
              (b":authority", authority), (b"content-type", b"application/grpc"),
              (b"te", b"trailers")]
    return b"".join(literal(n, v) for n, v in fields)


def split_target(target):
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError("--target must be HOST:PORT, not %r" % target)
    return host.strip("[]"), int(port)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--streams", type=int, required=True)
    parser.add_argument("--path", default="/xlb.test.Echo/Who")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--after-ack", action="store_true")
    args = parser.parse_args()
    try:
        host, port = split_target(args.target)
    except ValueError as err:
        parser.error(str(err))
    if not 1 <= args.streams <= 1000 or not 0 < args.seconds <= 30:
        parser.error("--streams must be 1..1000 and --seconds 0..30")

    try:
        sock = socket.create_connection((host, port), timeout=5)
    except OSError as err:
        print("cannot connect to %s: %s" % (args.target, err), file=sys.stderr)
        return 1
    block = request_block(args.path.encode(), args.target.encode())
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b""))
    ids = [1 + 2 * i for i in range(args.streams)]
    requests = b"".join(frame(HEADERS, END_HEADERS, sid, block) for sid in ids)

    result = {"max_concurrent_streams": None, "rst": {}, "refused_streams": [], "headers": 0,
              "goaway": None, "closed": False}
    reset = set()
    buf = b""
    settled = not args.after_ack
    end = time.monotonic() + 3.0
    while time.monotonic() < end and len(reset) < len(ids):
        if settled and requests:
            sock.sendall(requests)
            requests = b""
            end = time.monotonic() + args.seconds
        ready, _, _ = select.select([sock], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            break
        try:
            chunk = sock.recv(65536)
        except OSError:
            chunk = b""
        if not chunk:
            result["closed"] = True
            break
        frames, buf = split_frames(buf + chunk)
        for ftype, flags, sid, payload in frames:
            if ftype == SETTINGS and not flags & ACK:
                for off in range(0, len(payload) - 5, 6):
                    ident, value = struct.unpack(">HI", payload[off:off + 6])
                    if ident == MAX_CONCURRENT_STREAMS:
                        result["max_concurrent_streams"] = value
                sock.sendall(frame(SETTINGS, ACK, 0, b""))
                settled = True
            elif ftype == PING and not flags & ACK:
                sock.sendall(frame(PING, ACK, 0, payload))
            elif ftype == RST_STREAM and len(payload) == 4:
                name = error_name(int.from_bytes(payload, "big"))
                result["rst"][name] = result["rst"].get(name, 0) + 1
                if name == "REFUSED_STREAM":
                    result["refused_streams"].append(sid)
                reset.add(sid)
            elif ftype == HEADERS:
                result["headers"] += 1
            elif ftype == GOAWAY and len(payload) >= 8:
                result["goaway"] = error_name(int.from_bytes(payload[4:8], "big"))
    sock.close()
    result["sent"] = not requests
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
