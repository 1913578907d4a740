'use strict';
// Test helpers: start the server as a child process, talk to its control API,
// and a small ADS/LRS client written with @grpc/grpc-js + @grpc/proto-loader
// (independent of the server's own codec in ../proto.js).

const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const SERVER = path.join(__dirname, '..', 'server.js');
const T = 'type.googleapis.com/';
const TYPES = {
  lds: T + 'envoy.config.listener.v3.Listener',
  rds: T + 'envoy.config.route.v3.RouteConfiguration',
  cds: T + 'envoy.config.cluster.v3.Cluster',
  eds: T + 'envoy.config.endpoint.v3.ClusterLoadAssignment',
};

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timeout after ${ms} ms: ${what}`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

async function startServer(extraArgs = [], { host = '127.0.0.1' } = {}) {
  const args = [SERVER, '--port', '0', '--host', host, '--control-port', '0', ...(process.env.XDS_TEST_VERBOSE ? [] : ['--quiet']), ...extraArgs];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; if (process.env.XDS_TEST_VERBOSE) process.stderr.write(d); });
  const ready = new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /READY xds=(\d+) control=(\d+)/.exec(out);
      if (m) resolve({ xdsPort: Number(m[1]), controlPort: Number(m[2]) });
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  const ports = await withTimeout(ready, 20000, 'server READY line');
  const hostPort = host.includes(':') ? `[${host}]` : host;
  const srv = {
    proc,
    host,
    ...ports,
    target: `${hostPort}:${ports.xdsPort}`,
    control: (method, p, body) => control(host, ports.controlPort, method, p, body),
    stop: () => stopProcess(proc),
    stderr: () => stderr,
  };
  return srv;
}

// Poll the control API until the server has seen a request carrying this
// response's nonce (so a following resource change cannot race the ACK).
async function waitSeen(srv, resp, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reqs = (await srv.control('GET', `/requests?type=${encodeURIComponent(resp.type_url)}`)).body.requests;
    const hit = reqs.find((r) => r.response_nonce === resp.nonce);
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`timeout: server never saw nonce ${resp.nonce}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function stopProcess(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  const exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  proc.kill('SIGTERM');
  return withTimeout(exited, 10000, 'server exit on SIGTERM').catch((e) => {
    proc.kill('SIGKILL');
    throw e;
  });
}

function control(host, port, method, p, body) {
  return withTimeout(new Promise((resolve, reject) => {
    const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const req = http.request({
      host, port, method, path: p,
      headers: data ? { 'content-type': 'application/json', 'content-length': data.length } : {},
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const txt = Buffer.concat(chunks).toString();
        let json = null;
        try { json = JSON.parse(txt); } catch (e) { json = { raw: txt }; }
        resolve({ status: res.statusCode, body: json });
      });
    });
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  }), 10000, `control ${method} ${p}`);
}

// -------------------------------------------------------------- gRPC client side

let pkgCache = null;
function clientPackage() {
  if (pkgCache) return pkgCache;
  const deps = path.join(path.dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
  const includeDirs = ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(deps, d));
  const def = protoLoader.loadSync([
    'envoy/service/discovery/v3/ads.proto',
    'envoy/service/load_stats/v3/lrs.proto',
    'envoy/config/listener/v3/listener.proto',
    'envoy/config/route/v3/route.proto',
    'envoy/config/cluster/v3/cluster.proto',
    'envoy/config/endpoint/v3/endpoint.proto',
    'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
    'envoy/extensions/filters/http/router/v3/router.proto',
    'envoy/extensions/clusters/aggregate/v3/cluster.proto',
  ], { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true, json: true, includeDirs });
  pkgCache = grpc.loadPackageDefinition(def);
  return pkgCache;
}

const NODE = {
  id: 'xlb-selftest-node',
  cluster: 'selftest',
  user_agent_name: 'xds-server-selftest',
  client_features: ['envoy.lb.does_not_support_overprovisioning'],
};

class AdsClient {
  constructor(target, creds = grpc.credentials.createInsecure(), options = {}) {
    const pkg = clientPackage();
    this.client = new pkg.envoy.service.discovery.v3.AggregatedDiscoveryService(target, creds, options);
    this.responses = [];
    this.waiters = [];
    this.status = null;
    this.ended = new Promise((resolve) => { this.resolveEnded = resolve; });
    this.stream = this.client.StreamAggregatedResources();
    this.stream.on('data', (r) => { this.responses.push(r); this.wake(); });
    this.stream.on('status', (s) => { this.status = s; this.wake(); this.resolveEnded(s); });
    this.stream.on('error', () => { /* status carries it */ });
    this.sentNode = false;
  }

  wake() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  send({ type, names = [], version = '', nonce = '', error = null }) {
    const req = { type_url: TYPES[type] || type, resource_names: names, version_info: version, response_nonce: nonce };
    if (!this.sentNode) { req.node = NODE; this.sentNode = true; }
    if (error) req.error_detail = error;
    this.stream.write(req);
  }

  ack(resp, names) {
    this.send({ type: resp.type_url, names, version: resp.version_info, nonce: resp.nonce });
  }

  nack(resp, names, prevVersion, message) {
    this.send({ type: resp.type_url, names, version: prevVersion, nonce: resp.nonce, error: { code: 3, message } });
  }

  // Next not-yet-consumed response of the given type.
  next(type, timeoutMs = 5000) {
    const url = TYPES[type] || type;
    const take = () => {
      const i = this.responses.findIndex((r) => r.type_url === url);
      if (i >= 0) return this.responses.splice(i, 1)[0];
      return null;
    };
    let done = false;
    return withTimeout(new Promise((resolve, reject) => {
      const check = () => {
        if (done) return undefined; // timed out: leave responses for later callers
        const r = take();
        if (r) { done = true; return resolve(r); }
        if (this.status) { done = true; return reject(new Error(`stream ended: ${this.status.code} ${this.status.details}`)); }
        this.waiters.push(check);
        return undefined;
      };
      check();
    }), timeoutMs, `ADS response of ${url}`).finally(() => { done = true; });
  }

  // Resolves true if no response of that type arrives within ms.
  async quiet(type, ms = 600) {
    try {
      await this.next(type, ms);
      return false;
    } catch (e) {
      if (/timeout/.test(e.message)) return true;
      throw e;
    }
  }

  close() {
    try { this.stream.cancel(); } catch (e) { /* ignore */ }
    this.client.close();
  }
}

class LrsClient {
  constructor(target, creds = grpc.credentials.createInsecure()) {
    const pkg = clientPackage();
    this.client = new pkg.envoy.service.load_stats.v3.LoadReportingService(target, creds);
    this.responses = [];
    this.waiters = [];
    this.stream = this.client.StreamLoadStats();
    this.stream.on('data', (r) => { this.responses.push(r); const w = this.waiters; this.waiters = []; w.forEach((f) => f()); });
    this.stream.on('error', () => {});
  }

  send(req) { this.stream.write(req); }

  next(timeoutMs = 5000) {
    let done = false;
    return withTimeout(new Promise((resolve) => {
      const check = () => {
        if (done) return;
        if (this.responses.length) { done = true; resolve(this.responses.shift()); } else this.waiters.push(check);
      };
      check();
    }), timeoutMs, 'LRS response').finally(() => { done = true; });
  }

  close() {
    try { this.stream.cancel(); } catch (e) { /* ignore */ }
    this.client.close();
  }
}

// -------------------------------------------------------------- fixtures

function listener(name, routeConfigName) {
  return {
    '@type': TYPES.lds,
    name,
    apiListener: {
      apiListener: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
        rds: { routeConfigName, configSource: { ads: {}, resourceApiVersion: 'V3' } },
        httpFilters: [{ name: 'envoy.filters.http.router', typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
      },
    },
  };
}

function route(name, cluster, prefix = '/') {
  return {
    '@type': TYPES.rds,
    name,
    virtualHosts: [{ name: 'vh', domains: ['*'], routes: [{ match: { prefix }, route: { cluster, timeout: '2.5s' } }] }],
  };
}

function cluster(name) {
  return {
    '@type': TYPES.cds,
    name,
    type: 'EDS',
    edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' } },
    lbPolicy: 'ROUND_ROBIN',
    connectTimeout: '1s',
    lrsServer: { self: {} },
  };
}

function aggregateCluster(name, children) {
  return {
    '@type': TYPES.cds,
    name,
    clusterType: {
      name: 'envoy.clusters.aggregate',
      typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig', clusters: children },
    },
    lbPolicy: 'CLUSTER_PROVIDED',
  };
}

function endpoints(clusterName, ports) {
  return {
    '@type': TYPES.eds,
    clusterName,
    endpoints: [{
      locality: { region: 'r1', zone: 'z1' },
      loadBalancingWeight: 1,
      lbEndpoints: ports.map((p) => ({ endpoint: { address: { socketAddress: { address: '127.0.0.1', portValue: p } } }, healthStatus: 'HEALTHY' })),
    }],
  };
}

function baseResources() {
  return [
    listener('svc.test:443', 'route-a'),
    listener('other.test:443', 'route-b'),
    route('route-a', 'cluster-a'),
    route('route-b', 'cluster-b'),
    cluster('cluster-a'),
    cluster('cluster-b'),
    aggregateCluster('cluster-agg', ['cluster-a', 'cluster-b']),
    endpoints('cluster-a', [8001, 8002]),
    endpoints('cluster-b', [8003]),
  ];
}

function makeTestCa() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xds-selftest-ca-'));
  execFileSync(path.join(__dirname, '..', '..', 'make-test-ca.sh'), [dir], { stdio: 'ignore', timeout: 60000 });
  const f = (n) => fs.readFileSync(path.join(dir, n));
  return { dir, file: (n) => path.join(dir, n), read: f, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

module.exports = {
  TYPES, NODE, withTimeout, startServer, waitSeen, AdsClient, LrsClient, grpc,
  listener, route, cluster, aggregateCluster, endpoints, baseResources, makeTestCa,
};
