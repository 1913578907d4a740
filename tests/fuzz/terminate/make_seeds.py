#!/usr/bin/python3
"""Seeds for fuzz_terminate (fuzz_terminate.c describes the input): a gRPC call over HTTP/2 as
the client and the backend would write it, with loss, a half-close, a stalled reader and a reset,
each through a terminate VIP (the relay carries it as it is) and a stream-mode VIP (its HTTP/2
server session parses the client's side).

    make_seeds.py DIR
"""
import struct
import sys

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(ftype, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def block(fields):
    return b"".join(literal(n, v) for n, v in fields)


def rec(kind, data=b""):
    return bytes([kind]) + struct.pack(">H", len(data)) + data


REQUEST = block([(b":method", b"POST"), (b":scheme", b"http"), (b":path", b"/svc/Who"),
                 (b":authority", b"vip"), (b"content-type", b"application/grpc"),
                 (b"te", b"trailers")])
RESPONSE = block([(b":status", b"200"), (b"content-type", b"application/grpc")])
TRAILERS = block([(b"grpc-status", b"0")])
MESSAGE = b"\x00\x00\x00\x00\x05hello"

client = PREFACE + frame(4, 0, 0, b"") + frame(1, 4, 1, REQUEST) + frame(0, 1, 1, MESSAGE)
backend = (frame(4, 0, 0, struct.pack(">HI", 3, 100)) + frame(4, 1, 0, b"") +
           frame(1, 4, 1, RESPONSE) + frame(0, 0, 1, MESSAGE) + frame(1, 5, 1, TRAILERS))
two_calls = client + frame(1, 4, 3, REQUEST) + frame(0, 1, 3, MESSAGE)

SEEDS = {
    "call": bytes([0]) + rec(0, client) + rec(1, backend),
    "call_lossy": bytes([3]) + rec(0, client) + rec(1, backend) + rec(0x12, b"\x05"),
    "call_half_close": bytes([0]) + rec(0, client) + rec(3) + rec(1, backend) + rec(4),
    "two_calls_stalled_client": bytes([0]) + rec(5) + rec(0, two_calls) + rec(1, backend * 40) +
    rec(2, b"\xff") + rec(5),
    "call_reset": bytes([0x08]) + rec(0, client[:40]) + rec(1, backend[:20]),
    "ping_goaway": bytes([0]) + rec(0, PREFACE + frame(4, 0, 0, b"") + frame(6, 0, 0, b"12345678")) +
    rec(1, frame(4, 0, 0, b"") + frame(7, 0, 0, struct.pack(">II", 0, 0))),
}

# The same over stream-mode VIPs (setup bit 4).
SEEDS.update({"stream_" + name: bytes([data[0] | 0x10]) + data[1:] for name, data in list(SEEDS.items())})

if __name__ == "__main__":
    for name, data in SEEDS.items():
        with open("%s/%s" % (sys.argv[1], name), "wb") as f:
            f.write(data)
