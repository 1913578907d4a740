#!/usr/bin/env node
'use strict';
// Independent xDS management server for xlb's interop tests.
// ADS (state of the world) + LRS over @grpc/grpc-js, Envoy API protos from
// @grpc/grpc-js-xds, and a loopback-only JSON control API for the tests.
// See ../README.md for the protocol rules it follows and the control API.

const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const grpc = require('@grpc/grpc-js');
const proto = require('./proto');

const T = proto.TYPE_PREFIX;
const TYPE_ALIASES = {
  lds: T + 'envoy.config.listener.v3.Listener',
  rds: T + 'envoy.config.route.v3.RouteConfiguration',
  cds: T + 'envoy.config.cluster.v3.Cluster',
  eds: T + 'envoy.config.endpoint.v3.ClusterLoadAssignment',
};
// Types for which an empty first request means a wildcard subscription and for
// which a SotW response carries the full set (absence = deletion).
const FULL_STATE_TYPES = new Set([TYPE_ALIASES.lds, TYPE_ALIASES.cds]);
const WILDCARD = '*';
const RESOURCE_WRAPPER_URL = `${T}envoy.service.discovery.v3.Resource`;

function resolveTypeUrl(t) {
  if (!t) return null;
  if (TYPE_ALIASES[t.toLowerCase()]) return TYPE_ALIASES[t.toLowerCase()];
  if (t.includes('/')) return t;
  return T + t;
}

function log(...args) {
  if (process.env.XDS_SERVER_QUIET) return;
  process.stderr.write(`[xds-server ${new Date().toISOString()}] ${args.join(' ')}\n`);
}

// ---------------------------------------------------------------- resource store

class ResourceStore {
  constructor() {
    this.byType = new Map(); // typeUrl -> Map(name -> {json, any})
    this.versions = new Map(); // typeUrl -> integer
    this.digests = new Map(); // typeUrl -> content digest
  }

  static resourceName(typeUrl, json) {
    if (typeUrl === TYPE_ALIASES.eds) return json.clusterName ?? json.cluster_name;
    return json.name;
  }

  // Converts and validates a full resource list; throws on any error.
  static compile(list) {
    if (!Array.isArray(list)) throw new proto.JsonError('"resources" must be an array');
    const byType = new Map();
    list.forEach((json, i) => {
      if (json === null || typeof json !== 'object' || typeof json['@type'] !== 'string') {
        throw new proto.JsonError(`resources[${i}]: needs "@type"`);
      }
      const typeUrl = json['@type'];
      let any;
      try {
        any = proto.encodeAny(json);
      } catch (e) {
        throw new proto.JsonError(`resources[${i}] (${typeUrl}): ${e.message}`);
      }
      const name = ResourceStore.resourceName(typeUrl, json);
      if (typeof name !== 'string' || name === '') throw new proto.JsonError(`resources[${i}]: resource has no name`);
      if (!byType.has(typeUrl)) byType.set(typeUrl, new Map());
      const m = byType.get(typeUrl);
      if (m.has(name)) throw new proto.JsonError(`resources[${i}]: duplicate ${typeUrl} named ${JSON.stringify(name)}`);
      m.set(name, { json, any });
    });
    return byType;
  }

  static digest(m) {
    const h = crypto.createHash('sha256');
    for (const name of [...m.keys()].sort()) {
      h.update(name).update('\0').update(m.get(name).any.value).update('\0');
    }
    return h.digest('hex');
  }

  version(typeUrl) {
    return String(this.versions.get(typeUrl) || 1);
  }

  // Replaces everything; returns the list of type URLs whose content changed.
  replace(byType) {
    const changed = [];
    const types = new Set([...this.byType.keys(), ...byType.keys()]);
    for (const t of types) {
      const m = byType.get(t) || new Map();
      const d = ResourceStore.digest(m);
      if (d !== (this.digests.get(t) || ResourceStore.digest(new Map()))) {
        this.versions.set(t, (this.versions.get(t) || 1) + 1);
        changed.push(t);
      }
      this.digests.set(t, d);
    }
    this.byType = byType;
    return changed;
  }

  list() {
    const out = [];
    for (const m of this.byType.values()) for (const r of m.values()) out.push(r.json);
    return out;
  }

  get(typeUrl) {
    return this.byType.get(typeUrl) || new Map();
  }

  versionsObject() {
    const o = {};
    for (const t of new Set([...Object.values(TYPE_ALIASES), ...this.byType.keys()])) o[t] = this.version(t);
    return o;
  }
}

// ---------------------------------------------------------------- server

class XdsServer {
  constructor() {
    this.store = new ResourceStore();
    this.streams = new Map(); // id -> stream info
    this.nextStreamId = 1;
    this.nextNonce = 1;
    this.requests = [];
    this.responses = [];
    this.lrsReports = [];
    this.seq = 0;
    this.lrsConfig = { send_all_clusters: true, clusters: [], interval_ms: 1000, report_endpoint_granularity: false };
    const { root } = proto.load();
    this.DiscoveryRequest = root.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
    this.DiscoveryResponse = root.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
    this.LoadStatsRequest = root.lookupType('envoy.service.load_stats.v3.LoadStatsRequest');
    // --wrap-resources / PUT /options: send each resource inside an
    // envoy.service.discovery.v3.Resource (xds.config.resource-in-sotw).
    this.Resource = root.lookupType('envoy.service.discovery.v3.Resource');
    this.wrapResources = false;
    this.LoadStatsResponse = root.lookupType('envoy.service.load_stats.v3.LoadStatsResponse');
  }

  serviceDefinitions() {
    const { root } = proto.load();
    const mk = (serviceName, methodName, reqType, resType, handler) => {
      const svc = root.lookupService(serviceName);
      const m = svc.methods[methodName];
      if (!m || !m.requestStream || !m.responseStream) throw new Error(`${serviceName}.${methodName} is not a bidi method`);
      return {
        def: {
          [methodName]: {
            path: `/${serviceName}/${methodName}`,
            requestStream: true,
            responseStream: true,
            requestSerialize: (msg) => Buffer.from(reqType.encode(msg).finish()),
            requestDeserialize: (buf) => reqType.decode(buf),
            responseSerialize: (obj) => Buffer.from(resType.encode(resType.fromObject(obj)).finish()),
            responseDeserialize: (buf) => resType.decode(buf),
            originalName: methodName,
          },
        },
        impl: { [methodName]: handler },
      };
    };
    return [
      mk('envoy.service.discovery.v3.AggregatedDiscoveryService', 'StreamAggregatedResources',
        this.DiscoveryRequest, this.DiscoveryResponse, (call) => this.handleAds(call)),
      mk('envoy.service.load_stats.v3.LoadReportingService', 'StreamLoadStats',
        this.LoadStatsRequest, this.LoadStatsResponse, (call) => this.handleLrs(call)),
    ];
  }

  newStream(kind, call) {
    const id = this.nextStreamId++;
    let peerCert = null;
    try {
      const auth = call.getAuthContext && call.getAuthContext();
      if (auth && auth.sslPeerCertificate && auth.sslPeerCertificate.subject) {
        peerCert = { subject: auth.sslPeerCertificate.subject, fingerprint256: auth.sslPeerCertificate.fingerprint256 };
      }
    } catch (e) { /* no TLS */ }
    const s = {
      id, kind, call, peer: call.getPeer(), node: null, started_at: new Date().toISOString(),
      ended_at: null, open: true, peer_certificate: peerCert, types: new Map(),
    };
    this.streams.set(id, s);
    log(`${kind} stream ${id} opened from ${s.peer}`);
    const close = (why) => {
      if (!s.open) return;
      s.open = false;
      s.ended_at = new Date().toISOString();
      log(`${kind} stream ${id} closed (${why})`);
    };
    call.on('end', () => { close('client half-close'); try { call.end(); } catch (e) { /* already ended */ } });
    call.on('cancelled', () => close('cancelled'));
    call.on('error', (e) => close(`error: ${e && e.message}`));
    call.on('close', () => close('closed'));
    call.on('finish', () => close('finished'));
    return s;
  }

  // -------------------------------------------------------------- ADS

  handleAds(call) {
    const s = this.newStream('ads', call);
    call.on('data', (msg) => {
      try {
        this.onDiscoveryRequest(s, msg);
      } catch (e) {
        log(`ads stream ${s.id}: internal error ${e.stack}`);
        call.emit('error', { code: grpc.status.INTERNAL, details: String(e.message) });
      }
    });
  }

  onDiscoveryRequest(s, msg) {
    const json = proto.messageToJson(this.DiscoveryRequest, msg);
    if (json.node) s.node = json.node;
    const typeUrl = json.typeUrl || '';
    const names = json.resourceNames || [];
    const nonce = json.responseNonce || '';
    const rec = {
      seq: ++this.seq,
      time: new Date().toISOString(),
      stream_id: s.id,
      type_url: typeUrl,
      version_info: json.versionInfo || '',
      response_nonce: nonce,
      resource_names: names,
      node: json.node || null,
      error_detail: json.errorDetail || null,
      kind: null,
    };
    this.requests.push(rec);
    if (!typeUrl) {
      rec.kind = 'invalid';
      log(`ads stream ${s.id}: request without type_url ignored`);
      return;
    }
    let st = s.types.get(typeUrl);
    const first = !st;
    if (first) {
      st = {
        names: new Set(), wildcard: false, legacyWildcard: false,
        lastNonce: null, sentVersion: null, sentKey: null, sentAny: false,
        nonceVersion: new Map(), ackedVersion: null, lastNack: null,
      };
      s.types.set(typeUrl, st);
    }
    // A nonce names a response of this stream: one in a request that comes before
    // this stream sent any response of the type was carried over from another
    // stream (a client bug). Servers that drop stale nonces ignore such a request,
    // and so does this one; it is recorded as 'foreign_nonce' for tests to find.
    if (nonce && st.lastNonce === null) {
      rec.kind = 'foreign_nonce';
      if (first) s.types.delete(typeUrl);
      log(`ads stream ${s.id}: ${typeUrl} request with nonce ${nonce} this stream never sent: ignored`);
      return;
    }
    // Nonce check: only a request carrying the most recent nonce of this type
    // on this stream (or any request before the first response) is acted on.
    if (st.lastNonce !== null && nonce !== st.lastNonce) {
      rec.kind = 'stale';
      return;
    }
    if (nonce) {
      if (rec.error_detail) {
        rec.kind = 'nack';
        st.lastNack = { nonce, version_info: rec.version_info, error_detail: rec.error_detail };
        log(`ads stream ${s.id}: NACK ${typeUrl} nonce ${nonce}: ${JSON.stringify(rec.error_detail)}`);
      } else {
        rec.kind = 'ack';
        st.ackedVersion = rec.version_info;
      }
    } else {
      rec.kind = 'initial';
    }
    const before = JSON.stringify([st.wildcard, [...st.names].sort()]);
    this.updateSubscription(typeUrl, st, names, first);
    const namesChanged = before !== JSON.stringify([st.wildcard, [...st.names].sort()]);
    rec.names_changed = namesChanged;
    rec.wildcard = st.wildcard;
    this.maybeSend(s, typeUrl, first || namesChanged);
  }

  updateSubscription(typeUrl, st, names, first) {
    const wildcardCapable = FULL_STATE_TYPES.has(typeUrl);
    if (first && names.length === 0 && wildcardCapable) {
      st.legacyWildcard = true; // legacy wildcard: first request names nothing
      st.wildcard = true;
      st.names = new Set();
      return;
    }
    if (st.legacyWildcard && names.length === 0) return; // stays wildcard
    st.legacyWildcard = false;
    st.wildcard = wildcardCapable && names.includes(WILDCARD);
    st.names = new Set(names.filter((n) => n !== WILDCARD));
  }

  // Resources this stream should currently have for a type.
  selection(typeUrl, st) {
    const all = this.store.get(typeUrl);
    const out = [];
    for (const [name, r] of [...all.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      if (st.wildcard || st.names.has(name)) out.push({ name, any: r.any });
    }
    return out;
  }

  // One resource of a response: its Any, or that Any wrapped in a Resource named after it.
  wireResource(r, version) {
    const any = { type_url: r.any.type_url, value: r.any.value };
    if (!this.wrapResources) return any;
    const w = this.Resource.fromObject({ name: r.name, version, resource: any });
    return { type_url: RESOURCE_WRAPPER_URL, value: Buffer.from(this.Resource.encode(w).finish()) };
  }

  maybeSend(s, typeUrl, subscriptionChanged) {
    const st = s.types.get(typeUrl);
    if (!st || !s.open) return;
    const fullState = FULL_STATE_TYPES.has(typeUrl);
    const sel = this.selection(typeUrl, st);
    const key = crypto.createHash('sha256');
    for (const r of sel) key.update(r.name).update('\0').update(r.any.value).update('\0');
    const contentKey = key.digest('hex');
    let send;
    if (!st.sentAny) {
      // First response of this type on this stream: always for LDS/CDS (an
      // empty SotW tells the client the names do not exist), for other types
      // only once something subscribed exists.
      send = fullState ? (st.wildcard || st.names.size > 0) : sel.length > 0;
    } else if (contentKey !== st.sentKey) {
      send = fullState || sel.length > 0;
    } else {
      send = fullState && subscriptionChanged && (st.wildcard || st.names.size > 0);
    }
    if (!send) return;
    const version = this.store.version(typeUrl);
    const nonce = String(this.nextNonce++);
    const resp = {
      version_info: version,
      resources: sel.map((r) => this.wireResource(r, version)),
      type_url: typeUrl,
      nonce,
      control_plane: { identifier: 'xlb-interop-xds-server' },
    };
    st.lastNonce = nonce;
    st.sentVersion = version;
    st.sentKey = contentKey;
    st.sentAny = true;
    this.responses.push({
      seq: ++this.seq, time: new Date().toISOString(), stream_id: s.id, type_url: typeUrl,
      version_info: version, nonce, resource_names: sel.map((r) => r.name),
    });
    log(`ads stream ${s.id}: send ${typeUrl} v${version} nonce ${nonce} [${sel.map((r) => r.name).join(',')}]`);
    s.call.write(resp);
  }

  setResources(list) {
    const compiled = ResourceStore.compile(list);
    const changed = this.store.replace(compiled);
    for (const t of changed) {
      for (const s of this.streams.values()) {
        if (s.kind === 'ads' && s.open && s.types.has(t)) this.maybeSend(s, t, false);
      }
    }
    return changed;
  }

  patchResources(upsert, remove) {
    const cur = new Map();
    for (const j of this.store.list()) cur.set(`${j['@type']}\0${ResourceStore.resourceName(j['@type'], j)}`, j);
    for (const r of remove || []) {
      const t = resolveTypeUrl(r.type_url || r.type);
      if (!t || typeof r.name !== 'string') throw new proto.JsonError('remove entries need "type" and "name"');
      cur.delete(`${t}\0${r.name}`);
    }
    for (const j of upsert || []) {
      if (!j || typeof j['@type'] !== 'string') throw new proto.JsonError('upsert entries need "@type"');
      cur.set(`${j['@type']}\0${ResourceStore.resourceName(j['@type'], j)}`, j);
    }
    return this.setResources([...cur.values()]);
  }

  // -------------------------------------------------------------- LRS

  lrsResponse() {
    const ms = Math.max(0, Math.floor(Number(this.lrsConfig.interval_ms) || 0));
    return {
      clusters: this.lrsConfig.send_all_clusters ? [] : this.lrsConfig.clusters,
      send_all_clusters: !!this.lrsConfig.send_all_clusters,
      load_reporting_interval: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 },
      report_endpoint_granularity: !!this.lrsConfig.report_endpoint_granularity,
    };
  }

  handleLrs(call) {
    const s = this.newStream('lrs', call);
    s.responded = false;
    call.on('data', (msg) => {
      const json = proto.messageToJson(this.LoadStatsRequest, msg);
      if (json.node) s.node = json.node;
      this.lrsReports.push({
        seq: ++this.seq,
        time: new Date().toISOString(),
        stream_id: s.id,
        node: json.node || null,
        cluster_stats: json.clusterStats || [],
      });
      if (!s.responded) {
        s.responded = true;
        this.sendLrs(s);
      }
    });
  }

  sendLrs(s) {
    if (!s.open) return;
    const r = this.lrsResponse();
    log(`lrs stream ${s.id}: send ${JSON.stringify(r)}`);
    s.call.write(r);
  }

  setLrsConfig(cfg) {
    const c = { ...this.lrsConfig };
    if ('send_all_clusters' in cfg) c.send_all_clusters = !!cfg.send_all_clusters;
    if ('clusters' in cfg) {
      if (!Array.isArray(cfg.clusters) || !cfg.clusters.every((x) => typeof x === 'string')) {
        throw new proto.JsonError('"clusters" must be an array of strings');
      }
      c.clusters = cfg.clusters;
    }
    if ('interval_ms' in cfg) {
      if (!Number.isFinite(cfg.interval_ms) || cfg.interval_ms < 0) throw new proto.JsonError('"interval_ms" must be >= 0');
      c.interval_ms = cfg.interval_ms;
    }
    if ('report_endpoint_granularity' in cfg) c.report_endpoint_granularity = !!cfg.report_endpoint_granularity;
    this.lrsConfig = c;
    // Push the new settings to LRS streams that already got their first answer.
    for (const s of this.streams.values()) if (s.kind === 'lrs' && s.open && s.responded) this.sendLrs(s);
    return c;
  }

  // -------------------------------------------------------------- control

  streamInfo(s) {
    const subs = {};
    for (const [t, st] of s.types) {
      subs[t] = {
        wildcard: st.wildcard,
        resource_names: [...st.names].sort(),
        last_sent_version: st.sentVersion,
        last_nonce: st.lastNonce,
        acked_version: st.ackedVersion,
        last_nack: st.lastNack,
      };
    }
    return {
      id: s.id, kind: s.kind, peer: s.peer, node_id: s.node ? s.node.id || '' : null, node: s.node,
      open: s.open, started_at: s.started_at, ended_at: s.ended_at,
      peer_certificate: s.peer_certificate, subscriptions: s.kind === 'ads' ? subs : undefined,
    };
  }

  closeStreams(kind, code) {
    const ids = [];
    for (const s of this.streams.values()) {
      if (!s.open || (kind && s.kind !== kind)) continue;
      ids.push(s.id);
      if (code === grpc.status.OK) s.call.end();
      else s.call.emit('error', { code, details: 'closed by xds-server control API' });
      s.open = false;
      s.ended_at = new Date().toISOString();
    }
    return ids;
  }
}

// ---------------------------------------------------------------- control API

function readBody(req, limit = 64 * 1024 * 1024) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let n = 0;
    req.on('data', (c) => {
      n += c.length;
      if (n > limit) { reject(new proto.JsonError('body too large')); req.destroy(); return; }
      chunks.push(c);
    });
    req.on('end', () => {
      const txt = Buffer.concat(chunks).toString('utf8');
      if (txt.trim() === '') return resolve({});
      try { resolve(JSON.parse(txt)); } catch (e) { reject(new proto.JsonError(`bad JSON: ${e.message}`)); }
    });
    req.on('error', reject);
  });
}

function controlHandler(x, shutdown) {
  return async (req, res) => {
    const send = (code, obj) => {
      const body = JSON.stringify(obj, null, 1) + '\n';
      res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const url = new URL(req.url, 'http://localhost');
    const q = url.searchParams;
    const route = `${req.method} ${url.pathname.replace(/\/+$/, '') || '/'}`;
    const filterStream = (arr) => {
      let out = arr;
      const t = resolveTypeUrl(q.get('type'));
      if (t) out = out.filter((r) => r.type_url === t);
      if (q.get('stream')) out = out.filter((r) => r.stream_id === Number(q.get('stream')));
      if (q.get('since')) out = out.filter((r) => r.seq > Number(q.get('since')));
      if (q.get('kind')) out = out.filter((r) => r.kind === q.get('kind'));
      return out;
    };
    try {
      switch (route) {
        case 'GET /healthz':
          return send(200, { ok: true });
        case 'GET /resources':
          return send(200, { versions: x.store.versionsObject(), resources: x.store.list() });
        case 'PUT /resources': {
          const b = await readBody(req);
          const changed = x.setResources(Array.isArray(b) ? b : b.resources);
          return send(200, { versions: x.store.versionsObject(), changed_types: changed });
        }
        case 'PATCH /resources': {
          const b = await readBody(req);
          const changed = x.patchResources(b.upsert, b.remove);
          return send(200, { versions: x.store.versionsObject(), changed_types: changed });
        }
        case 'GET /requests':
          return send(200, { requests: filterStream(x.requests) });
        case 'GET /responses':
          return send(200, { responses: filterStream(x.responses) });
        case 'GET /lrs':
          return send(200, { reports: filterStream(x.lrsReports), config: x.lrsConfig });
        case 'GET /options':
          return send(200, { wrap_resources: x.wrapResources });
        case 'PUT /options': {
          const b = await readBody(req);
          if (b.wrap_resources !== undefined) x.wrapResources = !!b.wrap_resources;
          return send(200, { wrap_resources: x.wrapResources });
        }
        case 'GET /lrs-config':
          return send(200, x.lrsConfig);
        case 'PUT /lrs-config':
          return send(200, x.setLrsConfig(await readBody(req)));
        case 'GET /streams': {
          let list = [...x.streams.values()];
          if (q.get('all') !== '1') list = list.filter((s) => s.open);
          if (q.get('kind')) list = list.filter((s) => s.kind === q.get('kind'));
          return send(200, { streams: list.map((s) => x.streamInfo(s)) });
        }
        case 'POST /close-streams': {
          const b = await readBody(req);
          const code = b.code === undefined ? grpc.status.UNAVAILABLE
            : (typeof b.code === 'string' ? grpc.status[b.code] : b.code);
          if (code === undefined) throw new proto.JsonError(`unknown status code ${JSON.stringify(b.code)}`);
          return send(200, { closed: x.closeStreams(b.kind, code) });
        }
        case 'POST /reset-log':
          x.requests = [];
          x.responses = [];
          x.lrsReports = [];
          return send(200, { ok: true });
        case 'POST /shutdown':
          send(200, { ok: true });
          setImmediate(shutdown);
          return undefined;
        default:
          return send(404, { error: `no route ${route}` });
      }
    } catch (e) {
      if (e instanceof proto.JsonError) return send(400, { error: e.message });
      log(`control API error: ${e.stack}`);
      return send(500, { error: String(e.message) });
    }
  };
}

// ---------------------------------------------------------------- CLI

function usage(msg) {
  if (msg) process.stderr.write(`error: ${msg}\n`);
  process.stderr.write('usage: server.js --port P [--host 127.0.0.1|::1] --control-port C\n' +
    '                 [--tls-cert F --tls-key F] [--client-ca F] [--resources FILE]\n' +
    '                 [--lrs-interval-ms N] [--wrap-resources] [--quiet]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { wrapResources: false, port: null, host: '127.0.0.1', controlPort: null, tlsCert: null, tlsKey: null, clientCa: null, resources: null, lrsIntervalMs: null };
  const need = (i) => { if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`); return argv[i + 1]; };
  const num = (v, name) => { const n = Number(v); if (!Number.isInteger(n) || n < 0 || n > 65535) usage(`bad ${name}`); return n; };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--port': o.port = num(need(i), a); i++; break;
      case '--host': o.host = need(i); i++; break;
      case '--control-port': o.controlPort = num(need(i), a); i++; break;
      case '--tls-cert': o.tlsCert = need(i); i++; break;
      case '--tls-key': o.tlsKey = need(i); i++; break;
      case '--client-ca': o.clientCa = need(i); i++; break;
      case '--resources': o.resources = need(i); i++; break;
      case '--lrs-interval-ms': o.lrsIntervalMs = Number(need(i)); i++; break;
      case '--wrap-resources': o.wrapResources = true; break;
      case '--quiet': process.env.XDS_SERVER_QUIET = '1'; break;
      case '-h': case '--help': usage(); break;
      default: usage(`unknown argument ${a}`);
    }
  }
  if (o.port === null) usage('--port is required');
  if (o.controlPort === null) usage('--control-port is required');
  if (!['127.0.0.1', '::1', 'localhost'].includes(o.host)) usage('--host must be a loopback address (127.0.0.1, ::1 or localhost)');
  if (!!o.tlsCert !== !!o.tlsKey) usage('--tls-cert and --tls-key go together');
  if (o.clientCa && !o.tlsCert) usage('--client-ca needs --tls-cert/--tls-key');
  return o;
}

function hostPort(host, port) {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const x = new XdsServer();
  x.wrapResources = o.wrapResources;
  if (o.lrsIntervalMs !== null) x.setLrsConfig({ interval_ms: o.lrsIntervalMs });
  if (o.resources) {
    const j = JSON.parse(fs.readFileSync(o.resources, 'utf8'));
    x.setResources(Array.isArray(j) ? j : j.resources);
  }

  let creds;
  if (o.tlsCert) {
    creds = grpc.ServerCredentials.createSsl(
      o.clientCa ? fs.readFileSync(o.clientCa) : null,
      [{ cert_chain: fs.readFileSync(o.tlsCert), private_key: fs.readFileSync(o.tlsKey) }],
      !!o.clientCa,
    );
  } else {
    creds = grpc.ServerCredentials.createInsecure();
  }
  const server = new grpc.Server({ 'grpc.keepalive_permit_without_calls': 1 });
  for (const { def, impl } of x.serviceDefinitions()) server.addService(def, impl);
  const xdsPort = await new Promise((resolve, reject) => {
    server.bindAsync(hostPort(o.host, o.port), creds, (err, port) => (err ? reject(err) : resolve(port)));
  });

  let shuttingDown = false;
  const control = http.createServer();
  const shutdown = () => {
    if (shuttingDown) return;
    shuttingDown = true;
    log('shutting down');
    x.closeStreams(null, grpc.status.UNAVAILABLE);
    server.forceShutdown();
    control.close();
    setTimeout(() => process.exit(0), 50).unref();
  };
  control.on('request', controlHandler(x, shutdown));
  const controlHost = o.host === 'localhost' ? '127.0.0.1' : o.host;
  const controlPort = await new Promise((resolve, reject) => {
    control.once('error', reject);
    control.listen(o.controlPort, controlHost, () => resolve(control.address().port));
  });

  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.stdout.write(`READY xds=${xdsPort} control=${controlPort}\n`);
  log(`listening xds=${hostPort(o.host, xdsPort)} (${o.tlsCert ? (o.clientCa ? 'mTLS' : 'TLS') : 'insecure'}) control=${hostPort(controlHost, controlPort)}`);
}

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(`xds-server: ${e.stack || e}\n`);
    process.exit(1);
  });
}

module.exports = { XdsServer, ResourceStore, TYPE_ALIASES, resolveTypeUrl };
