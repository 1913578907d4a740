#!/usr/bin/python3
"""A real gRPC test backend (Debian's python3-grpcio; no generated code, no protoc).

    grpc_backend.py --name NAME --port PORT [--address ADDR]... [--fail]
                    [--echo-header HEADER]... [--set-cookie COOKIE] [--lifetime SECONDS]

It serves the unary method /xlb.test.Echo/Who with raw bytes in and out (a generic handler
with no (de)serializers): the reply is NAME. With --echo-header the reply is NAME, a newline,
then a JSON object mapping each named header (metadata key) to the list of the values the
request carried ([] when absent), so a client can check that metadata arrived. With --fail
every RPC fails with UNAVAILABLE (message "backend NAME fails on purpose"), for outlier
ejection tests. With --set-cookie 'N=V; Attr...' the response's initial metadata carries
`set-cookie: N=V; Attr...` unless the request's `cookie` already holds N=V: what a
stateful-session cookie looks like, so that clients' cookie jars can be tested without xlb.

It also serves /xlb.test.Echo/Bulk, for transfers checked byte for byte: the request is an
8-byte big-endian reply size R followed by any payload; the reply is the SHA-256 of the whole
request (32 bytes), then R bytes of bulk_bytes(that digest, R) (the same function the client
uses to check them). With --fail it fails like Who.

/xlb.test.Echo/Slow answers NAME after 5 s, unless the call is cancelled first (its client,
or a proxy, reset the stream at its deadline): then it logs "cancel METHOD PEER" and returns.

--max-streams N announces SETTINGS_MAX_CONCURRENT_STREAMS N. --delay-ms N answers Who N ms late
(a slow backend, whose calls stay in flight).

--tls-cert FILE --tls-key FILE serve TLS (grpc.ssl_server_credentials) with that certificate
chain and key instead of cleartext; --tls-client-ca FILE then requires a client certificate the
CA FILE signed (mTLS).

--health-file FILE serves grpc.health.v1.Health/Watch (A17's streaming health check) for any
service name: the status is the file's first word, SERVING or NOT_SERVING (SERVING while the
file is absent), sent at once and again whenever the file changes (looked at every 50 ms), until
the call ends; ABORT instead ends the call (and any new one at once) with UNAVAILABLE, a Watch
that fails. Each call logs "watch SERVICE PEER". Without it the health service is not
served: its calls get UNIMPLEMENTED, as from a server without one.

--orca-utilization U puts an ORCA load report (gRPC A51: an xds.data.orca.v3.OrcaLoadReport,
hand-encoded) in the `endpoint-load-metrics-bin` trailer of every Who call: cpu_utilization U
and rps_fractional 100, what weighted round robin (A58) weighs backends by. --orca-file FILE
reads U from FILE's first word at each call instead, when the file exists, so a test can change
it while the server runs. --orca-oob serves A51's out-of-band reports instead of the trailers:
xds.service.orca.v3.OpenRcaService/StreamCoreMetrics streams the same report every
report_interval the request asks for (at least 0.05 s), logging "orca_oob INTERVAL_MS PEER";
without it that method is UNIMPLEMENTED.

--address (repeatable, default "::") takes IPv4 or IPv6 addresses; "::" binds both families.
It prints "ready" once every address is bound and the server runs, then one line per call it
sees: "rpc METHOD PEER" for Who and Bulk (Bulk adds "bytes=N", the request's size) (PEER as gRPC names it, ipv4:A:P or ipv6:[A]:P, so a test can
count the distinct client connections), "rpc METHOD unimplemented" for any other method. It
exits 0 on SIGTERM or SIGINT (after a 1 s grace for calls in flight), and by itself after
--lifetime seconds (default 600), so it is bounded even if nobody stops it.
"""
import argparse
import hashlib
import json
import signal
import struct
import sys
import threading
import time
from concurrent import futures

import grpc

SERVICE = "xlb.test.Echo"
METHOD = "/" + SERVICE + "/Who"
BULK_METHOD = "/" + SERVICE + "/Bulk"
SLOW_METHOD = "/" + SERVICE + "/Slow"
SLOW_SECONDS = 5.0
BULK_MAX = 64 << 20  # the largest reply a Bulk request may ask for

_print_lock = threading.Lock()


def say(line):
    with _print_lock:
        print(line, flush=True)


def cookie_pairs(metadata):
    """The NAME=VALUE pairs of every cookie header of a request, stripped."""
    pairs = set()
    for key, value in metadata:
        if key == "cookie":
            for part in value.split(";"):
                if part.strip():
                    pairs.add(part.strip())
    return pairs


def orca_report(utilization, qps=100.0):
    """An OrcaLoadReport: cpu_utilization (field 1) and rps_fractional (6), both doubles."""
    return (bytes([1 << 3 | 1]) + struct.pack("<d", utilization) +
            bytes([6 << 3 | 1]) + struct.pack("<d", qps))


def bulk_bytes(seed, size):
    """SIZE bytes derived from SEED (bytes): SHA-256 in counter mode, cheap to check."""
    out = bytearray()
    block = 0
    while len(out) < size:
        out += hashlib.sha256(seed + block.to_bytes(8, "big")).digest() * 128
        block += 1
    return bytes(out[:size])


class Backend:
    def __init__(self, args):
        self.args = args
        self.set_cookie = args.set_cookie
        self.cookie_pair = args.set_cookie.split(";", 1)[0].strip() if args.set_cookie else None

    def who(self, request, context):
        metadata = context.invocation_metadata()
        say("rpc %s %s" % (METHOD, context.peer()))
        if self.set_cookie and self.cookie_pair not in cookie_pairs(metadata):
            context.send_initial_metadata((("set-cookie", self.set_cookie),))
        if self.args.fail:
            context.abort(grpc.StatusCode.UNAVAILABLE,
                          "backend %s fails on purpose" % self.args.name)
        if self.args.delay_ms:
            time.sleep(self.args.delay_ms / 1000.0)  # a slow backend: its calls stay in flight
        utilization = self.utilization()
        if utilization is not None and not self.args.orca_oob:
            context.set_trailing_metadata((("endpoint-load-metrics-bin",
                                            orca_report(utilization)),))
        reply = self.args.name
        if self.args.echo_header:
            echoed = {h: [v for k, v in metadata if k == h] for h in self.args.echo_header}
            reply += "\n" + json.dumps(echoed, sort_keys=True)
        return reply.encode()

    def utilization(self):
        """The utilization to report: --orca-file's first word when it exists, else
        --orca-utilization, else None (no report)."""
        if self.args.orca_file:
            try:
                with open(self.args.orca_file) as f:
                    return float(f.read().split()[0])
            except (OSError, IndexError, ValueError):
                pass
        return self.args.orca_utilization

    def slow(self, request, context):
        peer = context.peer()
        say("rpc %s %s" % (SLOW_METHOD, peer))
        end = time.monotonic() + SLOW_SECONDS
        while context.is_active() and time.monotonic() < end:
            time.sleep(0.02)
        if not context.is_active():
            say("cancel %s %s" % (SLOW_METHOD, peer))
        return self.args.name.encode()

    def bulk(self, request, context):
        say("rpc %s %s bytes=%d" % (BULK_METHOD, context.peer(), len(request)))
        if self.args.fail:
            context.abort(grpc.StatusCode.UNAVAILABLE,
                          "backend %s fails on purpose" % self.args.name)
        if len(request) < 8:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Bulk wants an 8-byte reply size")
        size = int.from_bytes(request[:8], "big")
        if size > BULK_MAX:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Bulk reply size over %d" % BULK_MAX)
        digest = hashlib.sha256(request).digest()
        return digest + bulk_bytes(digest, size)


HEALTH_STATUS = {"SERVING": 1, "NOT_SERVING": 2}  # grpc.health.v1 ServingStatus
HEALTH_ABORT = "ABORT"  # --health-file's word for a Watch that ends with UNAVAILABLE


def health_service_name(request):
    """HealthCheckRequest.service (field 1, a string), from its few bytes of protobuf."""
    if len(request) >= 2 and request[0] == 0x0A:
        length, at = request[1], 2
        if length & 0x80 and len(request) >= 3:
            length, at = (length & 0x7F) | (request[2] << 7), 3
        return request[at:at + length].decode(errors="replace")
    return ""


class Health:
    """grpc.health.v1.Health/Watch with the status read from a file (--health-file)."""

    def __init__(self, path):
        self.path = path

    def status(self):
        try:
            with open(self.path) as f:
                word = (f.read().split() or ["SERVING"])[0]
        except FileNotFoundError:
            word = "SERVING"
        return HEALTH_ABORT if word == HEALTH_ABORT else HEALTH_STATUS.get(word, 0)

    def watch(self, request, context):
        say("watch %s %s" % (health_service_name(request) or "(server)", context.peer()))
        sent = None
        deadline = time.monotonic() + 600
        while context.is_active() and time.monotonic() < deadline:
            now = self.status()
            if now == HEALTH_ABORT:
                context.abort(grpc.StatusCode.UNAVAILABLE, "health file says ABORT")
            if now != sent:
                sent = now
                yield bytes([0x08, now])  # HealthCheckResponse{status}
            time.sleep(0.05)


def varints(data):
    """The varint fields of a protobuf message: {field number: value}; others skipped."""
    fields, at = {}, 0
    while at < len(data):
        key, at = read_varint(data, at)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            fields[number], at = read_varint(data, at)
        elif wire_type == 2:
            length, at = read_varint(data, at)
            fields[number] = data[at:at + length]
            at += length
        elif wire_type in (1, 5):
            at += 8 if wire_type == 1 else 4
        else:
            break
    return fields


def read_varint(data, at):
    value = shift = 0
    while at < len(data):
        b = data[at]
        at += 1
        value |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            break
    return value, at


def stream_core_metrics(backend):
    """A51's OpenRcaService/StreamCoreMetrics (--orca-oob): the report every report_interval."""
    def handler(request, context):
        interval = varints(varints(request).get(1, b"")) if request else {}
        seconds = interval.get(1, 0) + interval.get(2, 0) / 1e9
        seconds = max(seconds, 0.05)
        say("orca_oob %d %s" % (round(seconds * 1000), context.peer()))
        deadline = time.monotonic() + 600
        while context.is_active() and time.monotonic() < deadline:
            utilization = backend.utilization()
            if utilization is not None:
                yield orca_report(utilization)
            time.sleep(seconds)
    return handler


class LogUnknown(grpc.GenericRpcHandler):
    """Registered after the Who handler: sees only the calls nothing else took, logs them and
    lets gRPC answer UNIMPLEMENTED."""

    def service(self, handler_call_details):
        say("rpc %s unimplemented" % handler_call_details.method)
        return None


def server_credentials(args):
    """TLS credentials from --tls-*, or None for cleartext."""
    if args.tls_cert is None:
        return None

    def read(path):
        with open(path, "rb") as f:
            return f.read()
    ca = read(args.tls_client_ca) if args.tls_client_ca else None
    return grpc.ssl_server_credentials([(read(args.tls_key), read(args.tls_cert))],
                                       root_certificates=ca,
                                       require_client_auth=ca is not None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--address", action="append", default=[])
    parser.add_argument("--fail", action="store_true")
    parser.add_argument("--echo-header", action="append", default=[],
                        type=lambda h: h.lower())
    parser.add_argument("--set-cookie", default=None)
    parser.add_argument("--lifetime", type=float, default=600.0)
    parser.add_argument("--max-streams", type=int, default=None,
                        help="SETTINGS_MAX_CONCURRENT_STREAMS this server announces")
    parser.add_argument("--delay-ms", type=int, default=0,
                        help="answer Who this many milliseconds late")
    parser.add_argument("--tls-cert", default=None)
    parser.add_argument("--tls-key", default=None)
    parser.add_argument("--tls-client-ca", default=None)
    parser.add_argument("--orca-utilization", type=float, default=None,
                        help="report this cpu_utilization in an ORCA trailer on Who calls")
    parser.add_argument("--orca-file", default=None,
                        help="read the utilization to report from this file at each call")
    parser.add_argument("--orca-oob", action="store_true",
                        help="report by OpenRcaService/StreamCoreMetrics, not in trailers")
    parser.add_argument("--health-file", default=None,
                        help="serve grpc.health.v1.Health/Watch with the status in this file")
    args = parser.parse_args()
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        parser.error("--tls-client-ca needs --tls-cert")
    creds = server_credentials(args)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    backend = Backend(args)
    # Two servers on one port must not share it silently.
    options = [("grpc.so_reuseport", 0),
               ("grpc.max_receive_message_length", BULK_MAX + 1024),
               ("grpc.max_send_message_length", BULK_MAX + 1024)]
    if args.max_streams is not None:
        options.append(("grpc.max_concurrent_streams", args.max_streams))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16), options=options,
                         maximum_concurrent_rpcs=256)
    handlers = [grpc.method_handlers_generic_handler(SERVICE, {
        "Who": grpc.unary_unary_rpc_method_handler(backend.who),
        "Bulk": grpc.unary_unary_rpc_method_handler(backend.bulk),
        "Slow": grpc.unary_unary_rpc_method_handler(backend.slow)})]
    if args.health_file:
        health = Health(args.health_file)
        handlers.append(grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
            "Watch": grpc.unary_stream_rpc_method_handler(health.watch)}))
    if args.orca_oob:
        handlers.append(grpc.method_handlers_generic_handler("xds.service.orca.v3.OpenRcaService", {
            "StreamCoreMetrics": grpc.unary_stream_rpc_method_handler(
                stream_core_metrics(backend))}))
    server.add_generic_rpc_handlers(tuple(handlers) + (LogUnknown(),))
    for address in args.address or ["::"]:
        host = "[%s]" % address if ":" in address else address
        try:
            where = "%s:%d" % (host, args.port)
            bound = (server.add_secure_port(where, creds) if creds is not None
                     else server.add_insecure_port(where))
        except RuntimeError:  # newer grpcio raises where older returns 0
            bound = 0
        if bound == 0:
            print("cannot listen on %s:%d" % (host, args.port), file=sys.stderr, flush=True)
            return 1
    server.start()
    say("ready")
    deadline = time.monotonic() + args.lifetime
    while not stop.is_set() and time.monotonic() < deadline:
        stop.wait(0.2)
    server.stop(1).wait(5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
