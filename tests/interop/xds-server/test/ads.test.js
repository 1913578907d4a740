'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const h = require('./helpers');

let srv;
const clients = [];
const client = () => { const c = new h.AdsClient(srv.target); clients.push(c); return c; };
const names = (resp) => (resp.resources || []).map((r) => r.name || r.cluster_name).sort();

before(async () => {
  srv = await h.startServer();
  const r = await srv.control('PUT', '/resources', { resources: h.baseResources() });
  assert.equal(r.status, 200, JSON.stringify(r.body));
});

after(async () => {
  for (const c of clients) c.close();
  if (srv) assert.equal(await srv.stop(), 0);
});

test('LDS/RDS/CDS/EDS by name, nested Any decoded, node recorded', async () => {
  const c = client();
  c.send({ type: 'lds', names: ['svc.test:443'] });
  const lds = await c.next('lds');
  assert.deepEqual(names(lds), ['svc.test:443']);
  assert.ok(lds.nonce);
  const hcm = lds.resources[0].api_listener.api_listener;
  assert.match(hcm['@type'], /HttpConnectionManager$/);
  assert.equal(hcm.rds.route_config_name, 'route-a');
  assert.match(hcm.http_filters[0].typed_config['@type'], /Router$/);
  c.ack(lds, ['svc.test:443']);

  c.send({ type: 'rds', names: ['route-a'] });
  const rds = await c.next('rds');
  assert.deepEqual(names(rds), ['route-a']);
  assert.equal(rds.resources[0].virtual_hosts[0].routes[0].route.cluster, 'cluster-a');
  c.ack(rds, ['route-a']);

  c.send({ type: 'cds', names: ['cluster-a', 'cluster-agg'] });
  const cds = await c.next('cds');
  assert.deepEqual(names(cds), ['cluster-a', 'cluster-agg']);
  const agg = cds.resources.find((r) => r.name === 'cluster-agg');
  assert.deepEqual(agg.cluster_type.typed_config.clusters, ['cluster-a', 'cluster-b']);
  c.ack(cds, ['cluster-a', 'cluster-agg']);

  c.send({ type: 'eds', names: ['cluster-a'] });
  const eds = await c.next('eds');
  assert.deepEqual(names(eds), ['cluster-a']);
  const ports = eds.resources[0].endpoints[0].lb_endpoints.map((e) => e.endpoint.address.socket_address.port_value);
  assert.deepEqual(ports, [8001, 8002]);
  c.ack(eds, ['cluster-a']);

  // ACKs produce no further responses.
  assert.ok(await c.quiet('lds', 400));

  const reqs = (await srv.control('GET', '/requests?type=lds')).body.requests;
  const mine = reqs.filter((r) => r.stream_id === reqs[0].stream_id);
  assert.equal(mine[0].kind, 'initial');
  assert.equal(mine[0].node.id, h.NODE.id);
  assert.equal(mine[0].node.userAgentName, 'xds-server-selftest');
  assert.deepEqual(mine[0].resource_names, ['svc.test:443']);
  assert.equal(mine[1].kind, 'ack');
  assert.equal(mine[1].response_nonce, lds.nonce);
  assert.equal(mine[1].version_info, lds.version_info);
  assert.equal(mine[1].node, null);

  const streams = (await srv.control('GET', '/streams?kind=ads')).body.streams;
  const s = streams.find((x) => x.id === mine[0].stream_id);
  assert.equal(s.node_id, h.NODE.id);
  assert.match(s.peer, /127\.0\.0\.1/);
  assert.equal(s.subscriptions[h.TYPES.eds].acked_version, eds.version_info);
});

test('wildcard LDS and CDS (legacy empty list and explicit "*")', async () => {
  const c = client();
  c.send({ type: 'lds' });
  const lds = await c.next('lds');
  assert.deepEqual(names(lds), ['other.test:443', 'svc.test:443']);
  c.ack(lds, []); // legacy wildcard ACK keeps an empty list
  c.send({ type: 'cds', names: ['*'] });
  const cds = await c.next('cds');
  assert.deepEqual(names(cds), ['cluster-a', 'cluster-agg', 'cluster-b']);
  c.ack(cds, ['*']);
  assert.ok(await c.quiet('lds', 300));
  // RDS with an empty list is not a wildcard: nothing is sent.
  c.send({ type: 'rds' });
  assert.ok(await c.quiet('rds', 400));
});

test('update pushes a new version; unknown name gives empty LDS', async () => {
  const c = client();
  c.send({ type: 'eds', names: ['cluster-b'] });
  const e1 = await c.next('eds');
  c.ack(e1, ['cluster-b']);
  c.send({ type: 'lds', names: ['nope.test:1'] });
  const l = await c.next('lds');
  assert.equal((l.resources || []).length, 0, 'LDS response without the unknown listener');
  c.ack(l, ['nope.test:1']);
  await h.waitSeen(srv, e1);

  const res = h.baseResources().map((r) => (r.clusterName === 'cluster-b' ? h.endpoints('cluster-b', [9000, 9001]) : r));
  const put = await srv.control('PUT', '/resources', { resources: res });
  assert.deepEqual(put.body.changed_types, [h.TYPES.eds]);
  const e2 = await c.next('eds');
  assert.notEqual(e2.version_info, e1.version_info);
  assert.notEqual(e2.nonce, e1.nonce);
  assert.deepEqual(e2.resources[0].endpoints[0].lb_endpoints.map((x) => x.endpoint.address.socket_address.port_value), [9000, 9001]);
  c.ack(e2, ['cluster-b']);
  await h.waitSeen(srv, e2);

  // Putting the same set again changes nothing and pushes nothing.
  const same = await srv.control('PUT', '/resources', { resources: res });
  assert.deepEqual(same.body.changed_types, []);
  assert.ok(await c.quiet('eds', 400));
  await srv.control('PUT', '/resources', { resources: h.baseResources() });
  c.ack(await c.next('eds'), ['cluster-b']);
});

test('NACK is recorded with error_detail; previous version stays; stale nonce ignored', async () => {
  const c = client();
  c.send({ type: 'cds', names: ['cluster-a'] });
  const c1 = await c.next('cds');
  c.ack(c1, ['cluster-a']);
  assert.equal((await h.waitSeen(srv, c1)).kind, 'ack');

  const bad = h.baseResources().map((r) => (r.name === 'cluster-a' && r['@type'] === h.TYPES.cds ? { ...r, lbPolicy: 'MAGLEV' } : r));
  await srv.control('PUT', '/resources', { resources: bad });
  const c2 = await c.next('cds');
  assert.notEqual(c2.version_info, c1.version_info);
  c.nack(c2, ['cluster-a'], c1.version_info, 'MAGLEV not supported');
  // A NACK is not answered with the same config again.
  assert.ok(await c.quiet('cds', 500));

  const nacks = (await srv.control('GET', '/requests?type=cds&kind=nack')).body.requests;
  const n = nacks[nacks.length - 1];
  assert.equal(n.response_nonce, c2.nonce);
  assert.equal(n.version_info, c1.version_info, 'client keeps the previous version');
  assert.deepEqual(n.error_detail, { code: 3, message: 'MAGLEV not supported' });
  const s = (await srv.control('GET', `/streams`)).body.streams.find((x) => x.id === n.stream_id);
  assert.equal(s.subscriptions[h.TYPES.cds].acked_version, c1.version_info);
  assert.equal(s.subscriptions[h.TYPES.cds].last_nack.error_detail.message, 'MAGLEV not supported');

  // A request carrying an old nonce is recorded as stale and not acted on.
  c.send({ type: 'cds', names: ['cluster-a', 'cluster-b'], version: c1.version_info, nonce: c1.nonce });
  assert.ok(await c.quiet('cds', 400));
  const stale = (await srv.control('GET', `/requests?type=cds&stream=${n.stream_id}`)).body.requests.pop();
  assert.equal(stale.kind, 'stale');

  // Fixing the config pushes a fresh version.
  await srv.control('PUT', '/resources', { resources: h.baseResources() });
  const c3 = await c.next('cds');
  assert.equal(c3.resources[0].lb_policy, 'ROUND_ROBIN');
  c.ack(c3, ['cluster-a']);
});

test('a nonce carried over from another stream is recorded and ignored', async () => {
  const c = client();
  c.send({ type: 'cds', names: ['cluster-a'], version: '1', nonce: '12345' });
  assert.ok(await c.quiet('cds', 400));
  const reqs = (await srv.control('GET', '/requests?type=cds&kind=foreign_nonce')).body.requests;
  assert.equal(reqs.length, 1);
  assert.equal(reqs[0].response_nonce, '12345');
  // The same request without the nonce, as the first of a stream should be, is answered.
  c.send({ type: 'cds', names: ['cluster-a'], version: '1' });
  const resp = await c.next('cds');
  assert.deepEqual(names(resp), ['cluster-a']);
  c.ack(resp, ['cluster-a']);
});

test('removal: LDS/CDS SotW omit it, RDS/EDS stop carrying it', async () => {
  const c = client();
  c.send({ type: 'cds' });
  const c1 = await c.next('cds');
  c.ack(c1, []);
  c.send({ type: 'eds', names: ['cluster-a', 'cluster-b'] });
  const e1 = await c.next('eds');
  assert.deepEqual(names(e1), ['cluster-a', 'cluster-b']);
  c.ack(e1, ['cluster-a', 'cluster-b']);
  await h.waitSeen(srv, e1);
  await h.waitSeen(srv, c1);

  const r = await srv.control('PATCH', '/resources', {
    remove: [{ type: 'cds', name: 'cluster-b' }, { type: 'eds', name: 'cluster-b' }],
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const c2 = await c.next('cds');
  assert.deepEqual(names(c2), ['cluster-a', 'cluster-agg']);
  c.ack(c2, []);
  const e2 = await c.next('eds');
  assert.deepEqual(names(e2), ['cluster-a']);
  c.ack(e2, ['cluster-a', 'cluster-b']);
  await h.waitSeen(srv, c2);

  await srv.control('PUT', '/resources', { resources: h.baseResources() });
  assert.deepEqual(names(await c.next('cds')), ['cluster-a', 'cluster-agg', 'cluster-b']);
});

test('unsubscribing and resubscribing', async () => {
  const c = client();
  c.send({ type: 'rds', names: ['route-a'] });
  const r1 = await c.next('rds');
  c.ack(r1, ['route-a']);
  c.send({ type: 'rds', names: ['route-a', 'route-b'], version: r1.version_info, nonce: r1.nonce });
  const r2 = await c.next('rds');
  assert.deepEqual(names(r2), ['route-a', 'route-b']);
  c.ack(r2, ['route-a', 'route-b']);
  c.send({ type: 'rds', names: [], version: r2.version_info, nonce: r2.nonce });
  assert.ok(await c.quiet('rds', 300));
  const sid = (await srv.control('GET', '/requests?type=rds')).body.requests.pop().stream_id;
  const s = (await srv.control('GET', '/streams')).body.streams.find((x) => x.id === sid);
  assert.deepEqual(s.subscriptions[h.TYPES.rds].resource_names, []);
});

test('bad resources are refused with 400 and leave the set unchanged', async () => {
  const before = (await srv.control('GET', '/resources')).body;
  const r = await srv.control('PUT', '/resources', { resources: [{ '@type': h.TYPES.cds, name: 'x', lbPolicyy: 'ROUND_ROBIN' }] });
  assert.equal(r.status, 400);
  assert.match(r.body.error, /lbPolicyy/);
  const r2 = await srv.control('PUT', '/resources', { resources: [{ '@type': 'type.googleapis.com/no.such.Type', name: 'x' }] });
  assert.equal(r2.status, 400);
  const after = (await srv.control('GET', '/resources')).body;
  assert.deepEqual(after, before);
  assert.equal((await srv.control('GET', '/nope')).status, 404);
});

test('close-streams ends streams with UNAVAILABLE; client reconnects', async () => {
  const c = client();
  c.send({ type: 'lds', names: ['svc.test:443'] });
  const l1 = await c.next('lds');
  c.ack(l1, ['svc.test:443']);
  await h.waitSeen(srv, l1);
  const closed = await srv.control('POST', '/close-streams', {});
  assert.ok(closed.body.closed.length >= 1);
  const st = await h.withTimeout(c.ended, 5000, 'stream end');
  assert.equal(st.code, h.grpc.status.UNAVAILABLE);
  assert.equal((await srv.control('GET', '/streams?kind=ads')).body.streams.length, 0);

  // Reconnect: a new stream gets the resources again, even with the old version.
  const c2 = client();
  c2.send({ type: 'lds', names: ['svc.test:443'], version: l1.version_info });
  const l2 = await c2.next('lds');
  assert.deepEqual(names(l2), ['svc.test:443']);
  assert.equal(l2.version_info, l1.version_info);
  const streams = (await srv.control('GET', '/streams?kind=ads')).body.streams;
  assert.equal(streams.length, 1);
  assert.equal(streams[0].node_id, h.NODE.id);
});
