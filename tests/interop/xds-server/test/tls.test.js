'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const h = require('./helpers');

let ca;
before(() => { ca = h.makeTestCa(); });
after(() => { if (ca) ca.cleanup(); });

async function fetchLds(target, creds) {
  const c = new h.AdsClient(target, creds);
  try {
    c.send({ type: 'lds' });
    return await c.next('lds', 8000);
  } finally {
    c.close();
  }
}

async function expectRefused(target, creds) {
  const c = new h.AdsClient(target, creds);
  try {
    c.send({ type: 'lds' });
    const st = await h.withTimeout(c.ended, 10000, 'refused stream to end');
    assert.equal(st.code, h.grpc.status.UNAVAILABLE, `status ${st.code} ${st.details}`);
    assert.equal(c.responses.length, 0);
  } finally {
    c.close();
  }
}

test('TLS: server certificate verified by the test CA; plaintext client refused', async () => {
  const srv = await h.startServer(['--tls-cert', ca.file('server.crt'), '--tls-key', ca.file('server.key'),
    '--resources', await writeResources()]);
  try {
    const lds = await fetchLds(`localhost:${srv.xdsPort}`, h.grpc.credentials.createSsl(ca.read('ca.crt')));
    assert.equal(lds.resources.length, 2);
    await expectRefused(srv.target, h.grpc.credentials.createInsecure());
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test('mTLS: client certificate required and checked against --client-ca', async () => {
  const srv = await h.startServer(['--tls-cert', ca.file('server.crt'), '--tls-key', ca.file('server.key'),
    '--client-ca', ca.file('ca.crt'), '--resources', await writeResources()]);
  try {
    const good = h.grpc.credentials.createSsl(ca.read('ca.crt'), ca.read('client.key'), ca.read('client.crt'));
    const lds = await fetchLds(`127.0.0.1:${srv.xdsPort}`, good);
    assert.equal(lds.resources.length, 2);
    const all = (await srv.control('GET', '/streams?all=1')).body.streams;
    assert.equal(all[0].peer_certificate.subject.CN, 'xlb-interop-client');

    await expectRefused(`127.0.0.1:${srv.xdsPort}`, h.grpc.credentials.createSsl(ca.read('ca.crt')));
    await expectRefused(`127.0.0.1:${srv.xdsPort}`,
      h.grpc.credentials.createSsl(ca.read('ca.crt'), ca.read('other-client.key'), ca.read('other-client.crt')));
    assert.equal((await srv.control('GET', '/streams?all=1')).body.streams.length, 1, 'refused clients opened no stream');
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test('IPv6 loopback, insecure', async () => {
  const srv = await h.startServer(['--resources', await writeResources()], { host: '::1' });
  try {
    const lds = await fetchLds(srv.target, h.grpc.credentials.createInsecure());
    assert.equal(lds.resources.length, 2);
    const s = (await srv.control('GET', '/streams?all=1')).body.streams[0];
    assert.match(s.peer, /::1/);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

async function writeResources() {
  const fs = require('fs');
  const path = require('path');
  const f = path.join(ca.dir, 'resources.json');
  fs.writeFileSync(f, JSON.stringify({ resources: h.baseResources() }));
  return f;
}
