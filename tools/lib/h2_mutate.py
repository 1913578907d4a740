#!/usr/bin/python3
"""Mutated HTTP/2 client streams against an HTTP/2 (prior knowledge) VIP.

Each connection sends a valid connection preface, SETTINGS and a gRPC request's HEADERS,
mutated in one of several ways (random byte flips, truncation, garbage, an oversized frame
length, a broken preface, a PING storm, a header block larger than any buffer, CONTINUATION
misuse, an early FIN), reads what comes back for a short while and closes. Bounded: --count
connections, each with a short timeout. Prints a JSON summary of what the server did.
"""
import argparse
import json
import random
import socket
import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(ftype, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):
    # HPACK literal header field without indexing, new name, raw strings (lengths < 127)
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def request_block():
    fields = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", b"/xlb.test.Echo/Who"),
              (b":authority", b"vip"), (b"content-type", b"application/grpc"), (b"te", b"trailers")]
    return b"".join(literal(n, v) for n, v in fields)


def valid_stream():
    return PREFACE + frame(4, 0, 0, b"") + frame(4, 1, 0, b"") + frame(1, 0x4, 1, request_block())


def mutate(rng, kind):
    base = valid_stream()
    if kind == "flip":
        b = bytearray(base)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == "truncate":
        return base[: rng.randrange(1, len(base))]
    if kind == "garbage":
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 2000)))
    if kind == "bad_preface":
        return b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    if kind == "frame_too_large":
        return PREFACE + b"\xff\xff\xff\x00\x00\x00\x00\x00\x00" + b"x" * 100
    if kind == "ping_storm":
        return PREFACE + frame(4, 0, 0, b"") + b"".join(frame(6, 0, 0, b"12345678") for _ in range(40))
    if kind == "huge_headers":
        block = request_block() + b"".join(literal(b"x-pad", b"y" * 120) for _ in range(120))
        return PREFACE + frame(4, 0, 0, b"") + frame(4, 1, 0, b"") + frame(1, 0x4, 1, block[:16000])
    if kind == "continuation":
        return PREFACE + frame(4, 0, 0, b"") + frame(1, 0, 1, request_block()[:10]) + frame(0, 0, 1, b"data")
    if kind == "bad_hpack":
        return PREFACE + frame(4, 0, 0, b"") + frame(4, 1, 0, b"") + frame(1, 0x4, 1, b"\xff\xff\xff\xff\xff")
    return base  # "valid" (then the early close below)


KINDS = ["flip", "truncate", "garbage", "bad_preface", "frame_too_large", "ping_storm",
         "huge_headers", "continuation", "bad_hpack", "valid"]


def run_one(host, port, data, timeout):
    outcome = "closed"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect((host, port))
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        got = 0
        while got < 1 << 16:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += len(chunk)
        outcome = "answered" if got else "closed"
    except ConnectionResetError:
        outcome = "reset"
    except socket.timeout:
        outcome = "timeout"
    except OSError as e:
        outcome = "error:" + type(e).__name__
    finally:
        s.close()
    return outcome


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True, help="host:port ([v6]:port)")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=0.5)
    a = ap.parse_args()
    host, port = a.target.rsplit(":", 1)
    host = host.strip("[]")
    rng = random.Random(a.seed)
    summary = {}
    for i in range(min(a.count, 10000)):
        kind = KINDS[i % len(KINDS)]
        out = run_one(host, int(port), mutate(rng, kind), a.timeout)
        summary.setdefault(kind, {}).setdefault(out, 0)
        summary[kind][out] += 1
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
