"""A test client that holds connections open across a change, to name_server.py --echo backends.

    hold_connections.py DIR ADDRESS PORT COUNT [FIRST_SOURCE]

It opens COUNT connections to ADDRESS:PORT (retrying for up to 30 s; with FIRST_SOURCE, an
IPv4 address, connection k comes from FIRST_SOURCE + k), writes the backend names they were
answered with to DIR/ready as a JSON list, then waits for DIR/go (at most 90 s) and prints, as
JSON, each backend's name with one entry per held connection: whether that connection still
echoed. Used by the end-to-end tests of reloads, flows and scale-out.
"""
import ipaddress
import json
import os
import socket
import sys
import time


def main():
    d, address, port, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    first = ipaddress.IPv4Address(sys.argv[5]) if len(sys.argv) > 5 else None
    conns = []
    deadline = time.time() + 30
    while len(conns) < count and time.time() < deadline:
        source = (str(first + len(conns)), 0) if first is not None else None
        try:
            s = socket.create_connection((address, port), timeout=3, source_address=source)
            conns.append((s, s.recv(16).decode()))
        except OSError:
            time.sleep(0.2)
    with open(d + "/ready", "w") as f:
        f.write(json.dumps([name for _, name in conns]))
    deadline = time.time() + 90
    while not os.path.exists(d + "/go") and time.time() < deadline:
        time.sleep(0.1)
    result = {}
    for s, name in conns:
        try:
            s.sendall(b"ping")
            s.settimeout(3)
            ok = s.recv(16) == b"ping"
        except OSError:
            ok = False
        result.setdefault(name, []).append(ok)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
