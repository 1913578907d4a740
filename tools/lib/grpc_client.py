#!/usr/bin/python3
"""A real gRPC test client (Debian's python3-grpcio): COUNT unary RPCs, one JSON summary.

    grpc_client.py --target HOST:PORT [--count N] [--path /svc/Method] [--header K=V]...
                   [--per-connection] [--cookie-jar FILE] [--cookie N=V] [--deadline S]
                   [--max-seconds S] [--message TEXT] [--bulk-up BYTES --bulk-down BYTES]
                   [--path-each /svc/Method]... [--cookie-each N=V]... [--interval S]
                   [--tls-ca FILE [--tls-name NAME] [--tls-cert FILE --tls-key FILE]]

HOST is an IPv4 address, [IPv6] in brackets, or a name. The RPCs carry raw bytes (no generated
code): the reply of tools/lib/grpc_backend.py is its name, optionally followed by a newline and
a JSON object of echoed headers. --per-connection opens a new channel, and so a new TCP and
HTTP/2 connection, for every RPC and closes it afterwards (xlb binds per connection, so spread
tests need this); otherwise all RPCs share one channel and one connection.

Cookie jar, with --cookie-jar FILE or --cookie N=V only: every `set-cookie` a response carries
(initial metadata, or the trailers of a trailers-only response) stores its NAME=VALUE (Max-Age
<= 0 deletes NAME); every RPC sends the jar as one `cookie` header ("N1=V1; N2=V2"). FILE is
loaded before the first RPC and saved at the end (JSON {name: value}); --cookie seeds the jar
(after loading). Without either the client never sends a cookie, but still counts and reports
the set-cookies it receives.

Per RPC, on one channel: --path-each (repeatable) gives RPC i the i-th path modulo their number
instead of --path; --cookie-each (repeatable) gives RPC i the i-th `cookie` header modulo their
number ("" sends none) instead of the jar, which it excludes; --interval pauses S seconds
between RPCs (default 0), so that a run spans changes made while it goes on.

--bulk-up/--bulk-down call /xlb.test.Echo/Bulk instead (grpc_backend.py): each request
carries BYTES-UP seeded random bytes, each reply must be the SHA-256 of that request followed by
BYTES-DOWN bytes derived from it; an RPC whose bytes differ counts as bulk_corrupt.

--tls-ca makes the channels secure (grpc.ssl_channel_credentials): the server must present a
certificate the CA FILE signed, for NAME (--tls-name, default: HOST); --tls-cert/--tls-key add
a client certificate (mTLS). ALPN h2 is grpc's own.

The channels use no proxy (grpc.enable_http_proxy 0), no retries (grpc.enable_retries 0), a
subchannel pool of their own (a new channel never reuses another channel's connection) and
pick_first. Each RPC has a deadline (--deadline, default 5 s) and the run stops issuing RPCs
after --max-seconds (default 120), so it is bounded in time. It prints one JSON object:
  rpcs             RPCs made
  backends         {backend name: successful RPCs it answered}
  status           {status code name, e.g. OK, UNAVAILABLE: RPCs}
  details          {"CODE: message": RPCs} for the RPCs that did not end OK
  set_cookie       responses that carried at least one set-cookie
  cookie           NAME=VALUE of the last set-cookie seen (null if none)
  set_cookie_header  the last set-cookie header in full (null if none)
  set_cookies      per RPC in order: its set-cookie headers in full (a list, empty if none)
  echo             {header: {value: RPCs}} of what the backends echoed ("(absent)" if none)
  sequence         per RPC in order: the backend's name, or the status code name ("bulk"
                   for a Bulk RPC that ended OK)
  bulk_intact      Bulk RPCs whose bytes arrived intact both ways
  bulk_corrupt     Bulk RPCs that ended OK with bytes differing in either direction
  elapsed_s        the run's duration
It exits 0 whatever the RPCs' outcomes (the summary is the result), 2 on bad arguments.
"""
import argparse
import hashlib
import ipaddress
import json
import os
import random
import sys
import time

import grpc

from grpc_backend import BULK_MAX, BULK_METHOD, bulk_bytes

CHANNEL_OPTIONS = [
    ("grpc.enable_http_proxy", 0),
    ("grpc.enable_retries", 0),
    ("grpc.use_local_subchannel_pool", 1),
    ("grpc.lb_policy_name", "pick_first"),
    ("grpc.primary_user_agent", "xlb-test-client"),
    ("grpc.max_receive_message_length", BULK_MAX + 1024),
    ("grpc.max_send_message_length", BULK_MAX + 1024),
]


def grpc_target(target):
    """HOST:PORT to a gRPC target URI; IP literals use the ipv4:/ipv6: resolvers (no DNS)."""
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError("--target must be HOST:PORT, not %r" % target)
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        return "dns:///%s:%s" % (host, port)
    return "ipv4:%s:%s" % (ip, port) if ip.version == 4 else "ipv6:[%s]:%s" % (ip, port)


def header(text):
    key, sep, value = text.partition("=")
    key = key.strip().lower()
    if not sep or not key:
        raise argparse.ArgumentTypeError("--header wants KEY=VALUE, not %r" % text)
    return key, value


class Summary:
    def __init__(self):
        self.rpcs = 0
        self.backends = {}
        self.status = {}
        self.details = {}
        self.set_cookie = 0
        self.cookie = None
        self.set_cookie_header = None
        self.set_cookies = []
        self.echo = {}
        self.sequence = []
        self.bulk_intact = 0
        self.bulk_corrupt = 0

    def add(self, table, key):
        table[key] = table.get(key, 0) + 1

    def as_dict(self, elapsed):
        return {"rpcs": self.rpcs, "backends": self.backends, "status": self.status,
                "details": self.details, "set_cookie": self.set_cookie, "cookie": self.cookie,
                "set_cookie_header": self.set_cookie_header,
                "set_cookies": self.set_cookies, "echo": self.echo,
                "sequence": self.sequence, "bulk_intact": self.bulk_intact,
                "bulk_corrupt": self.bulk_corrupt, "elapsed_s": round(elapsed, 3)}


class Jar:
    def __init__(self, path, seeds):
        self.path = path
        self.enabled = bool(path or seeds)
        self.cookies = {}
        if path and os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path) as f:
                self.cookies = dict(json.load(f))
        for seed in seeds:
            name, _, value = seed.partition("=")
            self.cookies[name.strip()] = value.strip()

    def header(self):
        if not self.cookies:
            return None
        return "; ".join("%s=%s" % kv for kv in self.cookies.items())

    def store(self, set_cookie):
        """Remember one set-cookie header; returns its NAME=VALUE."""
        parts = [p.strip() for p in set_cookie.split(";")]
        name, _, value = parts[0].partition("=")
        name, value = name.strip(), value.strip()
        max_age = None
        for attr in parts[1:]:
            key, _, arg = attr.partition("=")
            if key.strip().lower() == "max-age":
                try:
                    max_age = int(arg.strip())
                except ValueError:
                    pass
        if not self.enabled:
            pass
        elif max_age is not None and max_age <= 0:
            self.cookies.pop(name, None)
        else:
            self.cookies[name] = value
        return "%s=%s" % (name, value)

    def save(self):
        if self.path:
            with open(self.path, "w") as f:
                json.dump(self.cookies, f)


def one_rpc(channel, args, jar, summary):
    metadata = list(args.header)
    index = summary.rpcs
    if args.cookie_each:
        cookie = args.cookie_each[index % len(args.cookie_each)] or None
    else:
        cookie = jar.header()
    if cookie is not None:
        metadata.append(("cookie", cookie))
    bulk = args.bulk_up is not None
    if bulk:
        rng = random.Random(summary.rpcs)  # seeded: a failure can be replayed
        request = args.bulk_down.to_bytes(8, "big") + rng.randbytes(args.bulk_up)
    else:
        request = args.message.encode()
    path = args.path_each[index % len(args.path_each)] if args.path_each else args.path
    call = channel.unary_unary(BULK_METHOD if bulk else path)  # bytes in, bytes out
    summary.rpcs += 1
    reply, code, details, headers = None, None, "", ()
    try:
        reply, state = call.with_call(request, metadata=metadata,
                                      timeout=args.deadline)
        code = grpc.StatusCode.OK
        headers = tuple(state.initial_metadata() or ())
    except grpc.RpcError as err:
        code, details = err.code(), err.details() or ""
        # A trailers-only response has its headers among the trailers.
        headers = tuple(err.initial_metadata() or ()) + tuple(err.trailing_metadata() or ())
    summary.add(summary.status, code.name)
    cookies = [v for k, v in headers if k == "set-cookie"]
    summary.set_cookies.append(cookies)
    if cookies:
        summary.set_cookie += 1
        for value in cookies:
            summary.cookie = jar.store(value)
            summary.set_cookie_header = value
    if code != grpc.StatusCode.OK:
        summary.add(summary.details, "%s: %s" % (code.name, details))
        summary.sequence.append(code.name)
        return
    if bulk:
        digest = hashlib.sha256(request).digest()
        if reply == digest + bulk_bytes(digest, args.bulk_down):
            summary.bulk_intact += 1
        else:
            summary.bulk_corrupt += 1
        summary.sequence.append("bulk")
        return
    text = reply.decode(errors="replace")
    name, _, rest = text.partition("\n")
    summary.add(summary.backends, name)
    summary.sequence.append(name)
    if rest:
        for key, values in json.loads(rest).items():
            seen = summary.echo.setdefault(key, {})
            for value in values or ["(absent)"]:
                summary.add(seen, value)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def channel_opener(target, args):
    """A function that opens a channel: cleartext, or TLS as --tls-* say."""
    if args.tls_ca is None:
        return lambda: grpc.insecure_channel(target, CHANNEL_OPTIONS)
    creds = grpc.ssl_channel_credentials(
        root_certificates=read_file(args.tls_ca),
        private_key=read_file(args.tls_key) if args.tls_key else None,
        certificate_chain=read_file(args.tls_cert) if args.tls_cert else None)
    options = list(CHANNEL_OPTIONS)
    if args.tls_name:
        options.append(("grpc.ssl_target_name_override", args.tls_name))
    return lambda: grpc.secure_channel(target, creds, options)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--path", default="/xlb.test.Echo/Who")
    parser.add_argument("--header", type=header, action="append", default=[])
    parser.add_argument("--per-connection", action="store_true")
    parser.add_argument("--cookie-jar", default=None)
    parser.add_argument("--cookie", action="append", default=[])
    parser.add_argument("--deadline", type=float, default=5.0)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--message", default="")
    parser.add_argument("--bulk-up", type=int, default=None)
    parser.add_argument("--path-each", action="append", default=[])
    parser.add_argument("--cookie-each", action="append", default=[])
    parser.add_argument("--interval", type=float, default=0.0)
    parser.add_argument("--bulk-down", type=int, default=None)
    parser.add_argument("--tls-ca", default=None)
    parser.add_argument("--tls-name", default=None)
    parser.add_argument("--tls-cert", default=None)
    parser.add_argument("--tls-key", default=None)
    args = parser.parse_args()
    try:
        target = grpc_target(args.target)
    except ValueError as err:
        parser.error(str(err))
    if not 0 <= args.count <= 100000:
        parser.error("--count must be 0..100000")

    if args.cookie_each and (args.cookie_jar or args.cookie):
        parser.error("--cookie-each excludes --cookie-jar and --cookie")
    if not 0 <= args.interval <= 10:
        parser.error("--interval must be 0..10")
    if (args.bulk_up is None) != (args.bulk_down is None):
        parser.error("--bulk-up and --bulk-down go together")
    if args.bulk_up is not None and not (0 <= args.bulk_up <= BULK_MAX and
                                         0 <= args.bulk_down <= BULK_MAX):
        parser.error("--bulk-up and --bulk-down must be 0..%d" % BULK_MAX)

    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    if args.tls_ca is None and (args.tls_name or args.tls_cert):
        parser.error("--tls-name, --tls-cert and --tls-key need --tls-ca")
    open_channel = channel_opener(target, args)

    jar = Jar(args.cookie_jar, args.cookie)
    summary = Summary()
    start = time.monotonic()
    shared = None if args.per_connection else open_channel()
    try:
        for i in range(args.count):
            if time.monotonic() - start > args.max_seconds:
                break
            if i and args.interval:
                time.sleep(args.interval)
            if shared is not None:
                one_rpc(shared, args, jar, summary)
                continue
            channel = open_channel()
            try:
                one_rpc(channel, args, jar, summary)
            finally:
                channel.close()
    finally:
        if shared is not None:
            shared.close()
        jar.save()
    print(json.dumps(summary.as_dict(time.monotonic() - start), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
