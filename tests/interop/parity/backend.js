'use strict';
// Real gRPC backends for test_grpc_parity.sh: one grpc-js server per ADDR:PORT argument, all in
// this process. Each answers the unary method /parity.Parity/Echo (and /parity.Hash/Echo, the
// ring-hash route) with its own "ADDR:PORT" as raw bytes, so a client can count who served it.
// Prints "READY" on stdout once every server listens; exits on SIGTERM/SIGINT.
const path = require('path');
const grpc = require(path.join(__dirname, '..', 'node_modules', '@grpc', 'grpc-js'));

const raw = { serialize: (b) => b, deserialize: (b) => b };
function method(p) {
  return { path: p, requestStream: false, responseStream: false,
           requestSerialize: raw.serialize, requestDeserialize: raw.deserialize,
           responseSerialize: raw.serialize, responseDeserialize: raw.deserialize };
}
const services = [{ Echo: method('/parity.Parity/Echo') }, { Echo: method('/parity.Hash/Echo') }];

const addrs = process.argv.slice(2);
if (addrs.length === 0) {
  console.error('usage: backend.js ADDR:PORT...');
  process.exit(2);
}
const servers = [];
let pending = addrs.length;
for (const addr of addrs) {
  const server = new grpc.Server();
  const reply = Buffer.from(addr);
  for (const svc of services) {
    server.addService(svc, { Echo: (call, cb) => cb(null, reply) });
  }
  server.bindAsync(addr, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) {
      console.error(`bind ${addr}: ${err.message}`);
      process.exit(1);
    }
    if (--pending === 0) console.log('READY');
  });
  servers.push(server);
}
function stop() {
  for (const s of servers) s.forceShutdown();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
