#!/usr/bin/env python3
"""Write fuzz_l7's seed corpus (tests/fuzz/l7/corpus/): gRPC-looking exchanges in the input
format fuzz_l7.c describes (2 set-up bytes, then records of kind, 16-bit length, bytes).
HTTP/2 frames and HPACK blocks are written by hand (static-table indexes, literals with and
without indexing), as a gRPC peer writes them. Run from anywhere: python3 make_seeds.py."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# set-up byte 0
V6, COOKIE, TS, SACK, WS = 0x01, 0x02, 0x04, 0x08, 0x10
MSS_1460, MSS_536 = 0 << 5, 1 << 5

# record kinds
C_DATA, C_AT, C_CTRL, B_SYNACK, B_CTRL, B_DATA, B_AT, CLOCK, REUSE = range(9)
FIN = 0x10

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(ftype, flags, stream, payload=b""):
    n = len(payload)
    head = bytes([n >> 16, (n >> 8) & 0xff, n & 0xff, ftype, flags]) + struct.pack(">I", stream)
    return head + payload


def settings(pairs=(), ack=False):
    return frame(4, 1 if ack else 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def lit(value):
    b = value.encode()
    assert len(b) < 127
    return bytes([len(b)]) + b


def request_block(path, cookie=None):
    out = b"\x83\x86"  # :method POST, :scheme http
    out += b"\x04" + lit(path)  # :path, literal without indexing
    out += b"\x41" + lit("l7.test:9001")  # :authority, incremental indexing
    out += b"\x40" + lit("te") + lit("trailers")
    out += b"\x5f" + lit("application/grpc")  # content-type (31), incremental indexing
    out += b"\x40" + lit("user-agent") + lit("grpc-python/1.51.1")
    if cookie is not None:
        out += b"\x0f\x11" + lit(cookie)  # cookie (32), without indexing
    return out


def response_block():
    return b"\x88" + b"\x5f" + lit("application/grpc")  # :status 200, content-type


def trailers_block(status="0"):
    return b"\x40" + lit("grpc-status") + lit(status)


def message(n):
    return b"\x00" + struct.pack(">I", n) + b"x" * n


def rec(kind, data=b""):
    return bytes([kind]) + struct.pack(">H", len(data)) + data


def hello():
    return PREFACE + settings([(3, 100), (4, 0x100000)])


def request(path, cookie=None, body=5):
    return (settings(ack=True) + frame(1, 0x4, 1, request_block(path, cookie)) +
            frame(0, 0x1, 1, message(body)))


def backend_response(body=5):
    return (settings([(3, 100)]) + settings(ack=True) + frame(1, 0x4, 1, response_block()) +
            frame(0, 0, 1, message(body)))


def exchange(setup0, path="/svc/M", body=5):
    """Handshake (by the harness), hello, request, backend accepts, response, trailers, FINs."""
    return (bytes([setup0, 7]) +
            rec(C_DATA, hello()) +
            rec(C_DATA, request(path)) +
            rec(B_SYNACK) +
            rec(B_DATA, backend_response(body)) +
            rec(C_DATA, settings(ack=True)) +
            rec(B_DATA, frame(1, 0x5, 1, trailers_block("0"))) +
            rec(C_DATA) +
            rec(C_DATA | FIN) +
            rec(B_DATA | FIN) +
            rec(C_DATA) +
            rec(CLOCK | FIN, struct.pack(">H", 3)))


def write(name, data):
    with open(os.path.join(HERE, "corpus", name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(os.path.join(HERE, "corpus"), exist_ok=True)
    write("grpc_ok.bin", exchange(TS | SACK | WS | MSS_1460))
    # Set-Cookie inserted into the response's first header block; a 600-byte message past a
    # 536-byte MSS (IPv6, no timestamps): the segment is cut in two.
    write("grpc_cookie_v6_mss536.bin", exchange(V6 | COOKIE | SACK | WS | MSS_536, body=600))
    # The response headers retransmitted from their start: the cookie goes in again.
    resp = backend_response()
    write("grpc_cookie_retransmit.bin",
          bytes([COOKIE | TS | SACK | WS | MSS_1460, 7]) +
          rec(C_DATA, hello()) +
          rec(C_DATA, request("/svc/M")) +
          rec(B_SYNACK) +
          rec(B_DATA, resp) +
          rec(B_AT, struct.pack(">h", -len(resp)) + resp) +
          rec(C_CTRL, bytes([0x10]) + struct.pack(">i", -20) + struct.pack(">H", 502) + b"\x00") +
          rec(C_DATA, settings(ack=True)) +
          rec(B_DATA, frame(1, 0x5, 1, trailers_block("14"))) +
          rec(C_DATA | FIN) +
          rec(B_DATA | FIN) +
          rec(C_DATA))
    # No route for /other/: xlb answers UNAVAILABLE itself, GOAWAY and FIN.
    write("no_route.bin",
          bytes([TS | SACK | WS | MSS_1460, 7]) +
          rec(C_DATA, hello()) +
          rec(C_DATA, request("/other/M")) +
          rec(C_DATA) +
          rec(C_DATA | FIN) +
          rec(CLOCK | FIN, struct.pack(">H", 3)))
    # The backend refuses (RST to xlb's SYN), then a second connection whose backend is silent.
    write("backend_refused_then_silent.bin",
          bytes([TS | SACK | WS | MSS_1460, 7]) +
          rec(C_DATA, hello()) +
          rec(C_DATA, request("/svc/M")) +
          rec(B_SYNACK | FIN) +
          rec(C_DATA | FIN) +
          rec(REUSE) +
          rec(C_DATA, hello()) +
          rec(C_DATA, request("/svc/M")) +
          rec(CLOCK | FIN, struct.pack(">H", 12)))

    # Session cookie route; PINGs before binding (answered by xlb, cut from the replay); the
    # first request carries our cookie (no Set-Cookie), later streams none or another
    # endpoint's; responses get Set-Cookie, a trailers-only one too; RST_STREAM; 36 streams
    # (past the 32 followed); the backend's GOAWAY; the client never acknowledges, so the
    # insertions pile up past the 8 remembered.
    ours = "xlb-session=MTk4LjE4LjAuMjE6NTAwNTE7YmFja2VuZHM0"
    other = "xlb-session=MTAuMC4wLjE6NTAwNTE="  # 10.0.0.1:50051
    ping = frame(6, 0, 0, b"12345678")
    many = b"".join(frame(1, 0x5, sid, b"\x83\x86\x84") for sid in range(9, 81, 2))
    resp = frame(1, 0x4, 1, response_block()) + frame(1, 0x4, 3, response_block())
    resp += frame(1, 0x5, 5, b"\x88" + trailers_block("14")) + frame(3, 0, 7, b"\x00\x00\x00\x08")
    later = b"".join(frame(1, 0x4, sid, response_block()) for sid in range(9, 31, 2))
    write("streams_cookie.bin",
          bytes([COOKIE | TS | SACK | WS | MSS_1460, 7]) +
          rec(C_DATA, hello() + ping) +
          rec(C_DATA, settings(ack=True) + ping + frame(1, 0x4, 1, request_block("/svc/M", ours))) +
          rec(C_DATA) +  # acknowledges xlb's PING ACK: now the request is bound
          rec(B_SYNACK) +
          rec(B_DATA, settings([(3, 100)]) + settings(ack=True)) +
          rec(C_DATA, settings(ack=True) + frame(1, 0x4, 3, request_block("/svc/A")) +
              frame(1, 0x4, 5, request_block("/svc/B", other)) +
              frame(1, 0x4, 7, request_block("/svc/C"))) +
          rec(B_DATA, resp) +
          rec(C_DATA, many) +
          rec(B_DATA, later) +
          rec(B_DATA, frame(1, 0x5, 1, trailers_block("0")) +
              frame(1, 0x5, 3, trailers_block("2"))) +
          rec(B_DATA, frame(7, 0, 0, struct.pack(">II", 11, 0))) +
          rec(CLOCK | FIN, struct.pack(">H", 400)))

    # A client filling the 8 KiB receive buffer before its first request (a large DATA frame,
    # its bytes repeated to 1400 per segment by modifier 0x80): RST, receive overflow.
    write("receive_overflow.bin",
          bytes([TS | SACK | WS | MSS_1460, 7]) +
          rec(C_DATA, hello() + bytes([0, 0x3e, 0x80, 0, 0, 0, 0, 0, 1])) +
          b"".join(rec(C_DATA | 0x80, b"x") for _ in range(6)))

    # The clusters' circuit breakers at one request in flight: the first client is bound (its
    # backend SYN retransmitted meanwhile), a second one is answered "circuit breaker open";
    # back to the first, whose backend accepts; then seven clients more, one more than the 8
    # connections the pool holds: the last gets a RST.
    write("clients_circuit_pool.bin",
          bytes([TS | SACK | WS | MSS_1460, 7 | 0x10]) +
          rec(C_DATA, hello()) +
          rec(C_DATA, request("/svc/M")) +
          rec(REUSE | 0x10) +
          rec(C_DATA, hello() + request("/svc/M")) +
          rec(C_DATA) +
          rec(CLOCK, struct.pack(">H", 600)) +
          rec(REUSE | 0x20, b"\x00") +
          rec(B_SYNACK) +
          rec(B_DATA, backend_response() + frame(1, 0x5, 1, trailers_block("0"))) +
          b"".join(rec(REUSE | 0x10) for _ in range(7)))

    # Two clients bound at once (both backend SYNs on the retransmission list); the first
    # backend accepts, the second never answers; the cookie secrets rotate meanwhile, and a
    # third client connects after the rotation.
    write("two_connecting_rotate.bin",
          bytes([TS | SACK | WS | MSS_1460, 7 | 0x40]) +
          rec(C_DATA, hello()) +
          rec(C_DATA, request("/svc/M")) +
          rec(REUSE | 0x10) +
          rec(C_DATA, hello() + request("/svc/M")) +
          rec(CLOCK, struct.pack(">H", 1000)) +
          rec(REUSE | 0x20, b"\x00") +
          rec(B_SYNACK) +
          rec(REUSE | 0x20, b"\x01") +
          rec(CLOCK | FIN, struct.pack(">H", 8)) +
          rec(REUSE | 0x10) +
          rec(C_DATA, hello() + request("/svc/M")) +
          rec(B_SYNACK) +
          rec(B_DATA, backend_response() + frame(1, 0x5, 1, trailers_block("0"))))


if __name__ == "__main__":
    main()
