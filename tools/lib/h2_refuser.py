#!/usr/bin/python3
"""An HTTP/2 server that refuses every request stream, as a server too busy to take it would.

    h2_refuser.py --address ADDR --port PORT [--lifetime SECONDS]

It accepts connections, exchanges SETTINGS, answers PINGs and resets each request stream with
RST_STREAM REFUSED_STREAM as soon as its HEADERS arrive (RFC 9113 8.7: the request was not
processed, so a client may send it again). It prints "ready" once listening, then
"refused STREAM" per stream. One thread per connection; it exits by itself after --lifetime
seconds (default 600) and on SIGTERM, so that it is bounded even if nobody stops it.
"""
import argparse
import signal
import socket
import struct
import sys
import threading

from h2_streams import ACK, HEADERS, PING, PREFACE, RST_STREAM, SETTINGS, frame, split_frames

REFUSED_STREAM = 7
_print_lock = threading.Lock()


def say(line):
    with _print_lock:
        print(line, flush=True)


def serve(conn):
    """One connection: frames in, SETTINGS acknowledged, PINGs answered, streams refused."""
    conn.settimeout(60)
    try:
        buf = b""
        while len(buf) < len(PREFACE):
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        if not buf.startswith(PREFACE):
            return
        buf = buf[len(PREFACE):]
        conn.sendall(frame(SETTINGS, 0, 0, b""))
        while True:
            frames, buf = split_frames(buf)
            for ftype, flags, sid, payload in frames:
                if ftype == SETTINGS and not flags & ACK:
                    conn.sendall(frame(SETTINGS, ACK, 0, b""))
                elif ftype == PING and not flags & ACK:
                    conn.sendall(frame(PING, ACK, 0, payload))
                elif ftype == HEADERS and sid % 2 == 1:
                    conn.sendall(frame(RST_STREAM, 0, sid, struct.pack(">I", REFUSED_STREAM)))
                    say("refused %d" % sid)
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
    except OSError:
        return
    finally:
        conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--lifetime", type=float, default=600.0)
    args = parser.parse_args()
    if not 0 < args.lifetime <= 3600:
        parser.error("--lifetime must be 0..3600")
    family = socket.AF_INET6 if ":" in args.address else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.address, args.port))
    listener.listen(64)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    timer = threading.Timer(args.lifetime, stop.set)
    timer.daemon = True
    timer.start()
    listener.settimeout(0.2)
    say("ready")
    while not stop.is_set():
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
    listener.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
