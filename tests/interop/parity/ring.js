'use strict';
// What gRPC A42 implies for a ring_hash cluster, computed here independently of xlb and of
// grpc-js's picker: builds the ring (point k of endpoint "ADDR:PORT" hashes
// XXH64("ADDR:PORT_k", seed 0), ring size from min_ring_size and the 4096 cap, points spread by
// normalised weight) and prints, as JSON, the share of the 64-bit hash space each endpoint
// owns (what requests with a random hash get) and the endpoint that owns XXH64(user) for each
// user (what a header hash_policy on that user's header value picks).
//
//   ring.js --endpoints ADDR:PORT[=W],... [--users u1,u2] [--min-ring 1024] [--max-ring 8388608]
const path = require('path');
const xxhash = require(path.join(__dirname, '..', 'node_modules', 'xxhash-wasm'));

const a = { endpoints: [], users: [], minRing: 1024, maxRing: 8388608, cap: 4096 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const k = argv[i], v = argv[i + 1];
  if (k === '--endpoints') a.endpoints = v.split(',').map((e) => {
    const [addr, w] = e.split('=');
    return { addr, weight: w === undefined ? 1 : Number(w) };
  });
  else if (k === '--users') a.users = v.split(',').filter((u) => u.length > 0);
  else if (k === '--min-ring') a.minRing = Number(v);
  else if (k === '--max-ring') a.maxRing = Number(v);
  else { console.error(`unknown option ${k}`); process.exit(2); }
}

xxhash().then(({ h64 }) => {
  const total = a.endpoints.reduce((s, e) => s + e.weight, 0);
  const norm = a.endpoints.map((e) => e.weight / total);
  const minNorm = Math.min(...norm);
  const minRing = Math.min(a.minRing, a.cap), maxRing = Math.min(a.maxRing, a.cap);
  const scale = Math.min(Math.ceil(minNorm * minRing) / minNorm, maxRing);
  const ring = [];
  let current = 0, target = 0;
  a.endpoints.forEach((e, i) => {
    target += scale * norm[i];
    for (let k = 0; current < target; k++, current++) ring.push({ hash: h64(`${e.addr}_${k}`, 0n), addr: e.addr });
  });
  ring.sort((x, y) => (x.hash < y.hash ? -1 : x.hash > y.hash ? 1 : 0));
  // A hash goes to the first point at or above it (wrapping to point 0): point i owns
  // (hash[i-1], hash[i]], and point 0 also owns everything above the last point.
  const space = 1n << 64n;
  const owned = {};
  for (const e of a.endpoints) owned[e.addr] = 0n;
  ring.forEach((p, i) => {
    const prev = i === 0 ? ring[ring.length - 1].hash - space : ring[i - 1].hash;
    owned[p.addr] += p.hash - prev;
  });
  const share = {};
  for (const [addr, o] of Object.entries(owned)) share[addr] = Number((o * 1000000000n) / space) / 1e9;
  const owner = (h) => {
    for (const p of ring) if (p.hash >= h) return p.addr;
    return ring[0].addr;
  };
  const users = {};
  for (const u of a.users) users[u] = owner(h64(u, 0n));
  console.log(JSON.stringify({ points: ring.length, share, users }));
});
