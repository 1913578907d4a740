"""A test backend: a TCP server on [::]:PORT (IPv4 too) answering each connection with NAME.

    name_server.py PORT NAME [--echo] [--mss] [--lifetime SECONDS]

With --mss the answer is "NAME MSS", MSS being the connection's TCP_MAXSEG as this kernel
sees it (what the client's SYN offered, less the options every segment carries). Without --echo the connection is closed after the name; with --echo it then echoes what the
client sends until the client closes (one thread per connection). The server ends by itself
after its lifetime (default 300 s), so it is bounded even if nobody stops it; tests stop it by
PID earlier. Used by the demo and the forwarding tests.
"""
import argparse
import socket
import socketserver
import time


class Answer(socketserver.BaseRequestHandler):
    def handle(self):
        answer = self.server.name
        if self.server.mss:
            mss = self.request.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
            answer += b" %d" % mss
        self.request.sendall(answer)
        while self.server.echo:
            data = self.request.recv(64)
            if not data:
                return
            self.request.sendall(data)


class Server(socketserver.ThreadingTCPServer):
    address_family = socket.AF_INET6
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 128

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("name")
    parser.add_argument("--echo", action="store_true")
    parser.add_argument("--mss", action="store_true")
    parser.add_argument("--lifetime", type=float, default=300)
    args = parser.parse_args()
    server = Server(("::", args.port), Answer)
    server.name, server.echo, server.timeout = args.name.encode(), args.echo, 0.5
    server.mss = args.mss
    deadline = time.time() + args.lifetime
    while time.time() < deadline:
        server.handle_request()


if __name__ == "__main__":
    main()
