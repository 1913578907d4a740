'use strict';
// A proxyless gRPC client for test_grpc_parity.sh: grpc-js with grpc-js-xds, configured by the
// xDS bootstrap in GRPC_XDS_BOOTSTRAP (or GRPC_XDS_BOOTSTRAP_CONFIG). It sends unary RPCs one
// after the other and counts the replies per backend (each backend answers with its own
// "ADDR:PORT") and the failures. A call the xDS drop_overloads config drops fails with
// UNAVAILABLE and "Call dropped by load balancing policy. Category: ..." and counts as dropped.
//
//   client.js --target xds:///svc --method /parity.Parity/Echo --n 4000 [--warmup 200]
//             [--header NAME --users u1,u2,...] [--time-limit-s 120]
//
// Without --users: N calls without headers. With --users: N calls per user, each carrying
// "NAME: user". Prints one JSON object:
//   {"n", "picked", "dropped", "failed", "errors": {details: count},
//    "endpoints": {addr: count}, "users": {user: {addr: count}}}
// Every call has a 5 s deadline and the whole run a time limit, after which it exits 1.
const path = require('path');
const nm = path.join(__dirname, '..', 'node_modules');
const grpc = require(path.join(nm, '@grpc', 'grpc-js'));
const xds = require(path.join(nm, '@grpc', 'grpc-js-xds'));

function parseArgs(argv) {
  const a = { target: null, method: '/parity.Parity/Echo', n: 4000, warmup: 200,
              header: 'x-user', users: null, timeLimitS: 120 };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i], v = argv[i + 1];
    if (v === undefined) throw new Error(`missing value for ${k}`);
    switch (k) {
      case '--target': a.target = v; break;
      case '--method': a.method = v; break;
      case '--n': a.n = Number(v); break;
      case '--warmup': a.warmup = Number(v); break;
      case '--header': a.header = v; break;
      case '--users': a.users = v.split(',').filter((u) => u.length > 0); break;
      case '--time-limit-s': a.timeLimitS = Number(v); break;
      default: throw new Error(`unknown option ${k}`);
    }
  }
  if (!a.target) throw new Error('--target is required');
  if (!(a.n >= 1 && a.n <= 1000000)) throw new Error('--n must be in 1..1000000');
  return a;
}

const args = parseArgs(process.argv.slice(2));
const timer = setTimeout(() => {
  console.error(`client: time limit of ${args.timeLimitS} s reached`);
  process.exit(1);
}, args.timeLimitS * 1000);

xds.register();
const raw = (b) => b;
const Client = grpc.makeGenericClientConstructor({
  Echo: { path: args.method, requestStream: false, responseStream: false,
          requestSerialize: raw, requestDeserialize: raw,
          responseSerialize: raw, responseDeserialize: raw },
}, 'Parity');
const client = new Client(args.target, grpc.credentials.createInsecure());

function call(user) {
  return new Promise((resolve) => {
    const md = new grpc.Metadata();
    if (user !== null) md.set(args.header, user);
    client.Echo(Buffer.alloc(0), md, { deadline: Date.now() + 5000 }, (err, reply) => {
      resolve(err ? { err } : { addr: reply.toString() });
    });
  });
}

async function main() {
  await new Promise((resolve, reject) => {
    client.waitForReady(Date.now() + 30000, (err) => (err ? reject(err) : resolve()));
  });
  // Warm-up, not counted: lets round robin connect every subchannel before counting.
  for (let i = 0; i < args.warmup; i++) await call(null);
  const out = { n: 0, picked: 0, dropped: 0, failed: 0, errors: {}, endpoints: {}, users: {} };
  const count = (res, user) => {
    out.n++;
    if (res.addr !== undefined) {
      out.picked++;
      out.endpoints[res.addr] = (out.endpoints[res.addr] || 0) + 1;
      if (user !== null) {
        const h = out.users[user] || (out.users[user] = {});
        h[res.addr] = (h[res.addr] || 0) + 1;
      }
      return;
    }
    const { code, details } = res.err;
    if (code === grpc.status.UNAVAILABLE && /drop/i.test(details)) out.dropped++;
    else out.failed++;
    const key = `${grpc.status[code]}: ${details}`;
    out.errors[key] = (out.errors[key] || 0) + 1;
  };
  for (const user of args.users || [null]) {
    for (let i = 0; i < args.n; i++) count(await call(user), user);
  }
  console.log(JSON.stringify(out));
}

main().then(() => {
  clearTimeout(timer);
  client.close();
  process.exit(0);
}, (err) => {
  console.error(`client: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
