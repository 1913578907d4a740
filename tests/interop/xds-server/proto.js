'use strict';
// Loads the Envoy/xDS API protos shipped inside the @grpc/grpc-js-xds npm
// package through @grpc/proto-loader, and converts between proto3 JSON
// (with "@type" for Any) and protobuf wire bytes.
//
// proto-loader's public API only hands out gRPC package definitions; the
// protobufjs Root it builds is obtained from its loader helper
// (build/src/util.js, same code path as loadSync) so that one schema, loaded
// with the same include-dir resolution, drives both the gRPC services and the
// resource codec.

const fs = require('fs');
const path = require('path');
const protoLoader = require('@grpc/proto-loader');
const protoLoaderUtil = require('@grpc/proto-loader/build/src/util');

const TYPE_PREFIX = 'type.googleapis.com/';

function xdsProtoDirs() {
  const pkgDir = path.dirname(require.resolve('@grpc/grpc-js-xds/package.json'));
  const deps = path.join(pkgDir, 'deps');
  const dirs = ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(deps, d));
  for (const d of dirs) {
    if (!fs.existsSync(d)) throw new Error(`proto include dir missing: ${d}`);
  }
  return { deps, dirs };
}

function walkProtos(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walkProtos(p, out);
    else if (e.name.endsWith('.proto')) out.push(p);
  }
  return out;
}

// The package ships only part of the envoy tree: some files import protos that
// are not shipped (v2 APIs, opencensus, ...). Keep every file whose import
// closure is complete, so any extension config grpc-js-xds knows is loadable.
function loadableProtoFiles(dirs, roots) {
  const resolveRel = (rel) => {
    for (const d of dirs) {
      const p = path.join(d, rel);
      if (fs.existsSync(p)) return p;
    }
    return null;
  };
  const memo = new Map();
  const importRe = /^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;/gm;
  const ok = (rel, stack) => {
    if (memo.has(rel)) return memo.get(rel);
    if (stack.has(rel)) return true;
    stack.add(rel);
    const p = resolveRel(rel);
    let good = p !== null;
    if (good) {
      const src = fs.readFileSync(p, 'utf8');
      for (const m of src.matchAll(importRe)) {
        if (m[1].startsWith('google/protobuf/')) continue; // bundled with protobufjs
        if (!ok(m[1], stack)) { good = false; break; }
      }
    }
    stack.delete(rel);
    memo.set(rel, good);
    return good;
  };
  const files = [];
  for (const r of roots) {
    const base = dirs.find((d) => r.startsWith(d + path.sep));
    for (const f of walkProtos(r, [])) {
      const rel = path.relative(base, f).split(path.sep).join('/');
      if (ok(rel, new Set())) files.push(rel);
    }
  }
  return files.sort();
}

const LOADER_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true };

let cached = null;

function load() {
  if (cached) return cached;
  const { deps, dirs } = xdsProtoDirs();
  const files = loadableProtoFiles(dirs, [
    path.join(deps, 'envoy-api', 'envoy'),
    path.join(deps, 'xds', 'xds'),
    path.join(deps, 'xds', 'udpa'),
  ]);
  const root = protoLoaderUtil.loadProtosWithOptionsSync(files, { ...LOADER_OPTIONS, includeDirs: dirs });
  cached = { root, files, dirs, Long: protoLoader.Long };
  return cached;
}

function lookupType(name) {
  const { root } = load();
  const n = name.startsWith(TYPE_PREFIX) ? name.slice(TYPE_PREFIX.length) : name.replace(/^.*\//, '');
  try {
    return root.lookupType(n.startsWith('.') ? n : '.' + n);
  } catch (e) {
    throw new Error(`unknown message type ${JSON.stringify(name)}`);
  }
}

// ---------------------------------------------------------------- JSON -> proto

function lowerCamel(name) {
  return name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

function jsonName(field) {
  return (field.options && field.options.json_name) || lowerCamel(field.name);
}

class JsonError extends Error {}

function fail(where, msg) {
  throw new JsonError(`${where || '<root>'}: ${msg}`);
}

const INT64_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT32_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

function parseDuration(s, where) {
  if (typeof s !== 'string') fail(where, 'Duration must be a string like "1.5s"');
  const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(s);
  if (!m) fail(where, `bad Duration ${JSON.stringify(s)}`);
  const sign = m[1] ? -1 : 1;
  const nanos = m[3] ? Number(m[3].padEnd(9, '0')) : 0;
  return { seconds: m[1] ? '-' + m[2] : m[2], nanos: sign * nanos };
}

function parseTimestamp(s, where) {
  if (typeof s !== 'string') fail(where, 'Timestamp must be an RFC 3339 string');
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) fail(where, `bad Timestamp ${JSON.stringify(s)}`);
  const ms = Date.parse(m[1] + m[3]);
  if (Number.isNaN(ms)) fail(where, `bad Timestamp ${JSON.stringify(s)}`);
  return { seconds: String(Math.floor(ms / 1000)), nanos: m[2] ? Number(m[2].padEnd(9, '0')) : 0 };
}

// google.protobuf.Value comes from protobufjs' bundled descriptors, whose
// field names are camelCase whatever keepCase says: resolve the real name.
let valueFieldNames = null;
function vf(snake) {
  if (!valueFieldNames) {
    const t = lookupType('google.protobuf.Value');
    valueFieldNames = {};
    for (const n of ['null_value', 'number_value', 'string_value', 'bool_value', 'struct_value', 'list_value']) {
      valueFieldNames[n] = t.fields[n] ? n : lowerCamel(n);
    }
  }
  return valueFieldNames[snake];
}

function valueToObject(v, where) {
  if (v === null) return { [vf('null_value')]: 'NULL_VALUE' };
  if (typeof v === 'number') return { [vf('number_value')]: v };
  if (typeof v === 'string') return { [vf('string_value')]: v };
  if (typeof v === 'boolean') return { [vf('bool_value')]: v };
  if (Array.isArray(v)) return { [vf('list_value')]: { values: v.map((x, i) => valueToObject(x, `${where}[${i}]`)) } };
  if (typeof v === 'object') return { [vf('struct_value')]: structToObject(v, where) };
  return fail(where, 'bad google.protobuf.Value');
}

function structToObject(v, where) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(where, 'Struct must be a JSON object');
  const fields = {};
  for (const [k, x] of Object.entries(v)) fields[k] = valueToObject(x, `${where}.${k}`);
  return { fields };
}

function scalarFromJson(type, v, where) {
  if (INT64_TYPES.has(type)) {
    if (typeof v === 'number' && Number.isInteger(v)) return String(v);
    if (typeof v === 'string' && /^-?\d+$/.test(v)) return v;
    return fail(where, `expected ${type} (integer or decimal string)`);
  }
  if (INT32_TYPES.has(type)) {
    const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n)) fail(where, `expected ${type}`);
    if (type.startsWith('u') || type === 'fixed32') {
      if (n < 0 || n > 0xffffffff) fail(where, `${type} out of range`);
    } else if (n < -0x80000000 || n > 0x7fffffff) fail(where, `${type} out of range`);
    return n;
  }
  switch (type) {
    case 'double':
    case 'float':
      if (typeof v === 'number') return v;
      if (v === 'NaN') return NaN;
      if (v === 'Infinity') return Infinity;
      if (v === '-Infinity') return -Infinity;
      if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
      return fail(where, `expected ${type}`);
    case 'bool':
      if (typeof v !== 'boolean') fail(where, 'expected bool');
      return v;
    case 'string':
      if (typeof v !== 'string') fail(where, 'expected string');
      return v;
    case 'bytes':
      if (typeof v !== 'string') fail(where, 'expected base64 string');
      return Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    default:
      return fail(where, `unsupported scalar type ${type}`);
  }
}

function enumFromJson(enumType, v, where) {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && Object.prototype.hasOwnProperty.call(enumType.values, v)) return enumType.values[v];
  return fail(where, `bad ${enumType.name} value ${JSON.stringify(v)}`);
}

function fieldValueFromJson(field, v, where) {
  field.resolve();
  const rt = field.resolvedType;
  if (rt && rt.constructor.name === 'Enum') {
    if (v === null && rt.fullName === '.google.protobuf.NullValue') return 0;
    return enumFromJson(rt, v, where);
  }
  if (rt) return messageFromJson(rt, v, where);
  return scalarFromJson(field.type, v, where);
}

const WRAPPERS = {
  '.google.protobuf.DoubleValue': 'double',
  '.google.protobuf.FloatValue': 'float',
  '.google.protobuf.Int64Value': 'int64',
  '.google.protobuf.UInt64Value': 'uint64',
  '.google.protobuf.Int32Value': 'int32',
  '.google.protobuf.UInt32Value': 'uint32',
  '.google.protobuf.BoolValue': 'bool',
  '.google.protobuf.StringValue': 'string',
  '.google.protobuf.BytesValue': 'bytes',
};

// Returns a plain object acceptable to Type.fromObject for `type`.
function messageFromJson(type, v, where) {
  const full = type.fullName;
  if (WRAPPERS[full]) return { value: scalarFromJson(WRAPPERS[full], v, where) };
  switch (full) {
    case '.google.protobuf.Duration': return parseDuration(v, where);
    case '.google.protobuf.Timestamp': return parseTimestamp(v, where);
    case '.google.protobuf.Struct': return structToObject(v, where);
    case '.google.protobuf.Value': return valueToObject(v, where);
    case '.google.protobuf.ListValue':
      if (!Array.isArray(v)) fail(where, 'ListValue must be an array');
      return { values: v.map((x, i) => valueToObject(x, `${where}[${i}]`)) };
    case '.google.protobuf.FieldMask':
      if (typeof v !== 'string') fail(where, 'FieldMask must be a string');
      return { paths: v === '' ? [] : v.split(',').map((p) => p.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())) };
    case '.google.protobuf.Any':
      return anyFromJson(v, where);
    default:
      break;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(where, `${full.slice(1)} must be a JSON object`);
  const byJson = new Map();
  for (const f of type.fieldsArray) {
    byJson.set(jsonName(f), f);
    byJson.set(f.name, f);
  }
  const out = {};
  const oneofSeen = new Map();
  for (const [k, val] of Object.entries(v)) {
    const f = byJson.get(k);
    const w = where ? `${where}.${k}` : k;
    if (!f) fail(w, `unknown field of ${full.slice(1)}`);
    if (val === null && !(f.resolvedType && ['.google.protobuf.Value', '.google.protobuf.NullValue'].includes(f.resolvedType.fullName))) {
      continue; // null means default
    }
    if (f.partOf && !f.partOf.name.startsWith('_')) { // real oneof (proto3 optional uses a synthetic "_x")
      const prev = oneofSeen.get(f.partOf.name);
      if (prev && prev !== f.name) fail(w, `oneof ${f.partOf.name} already set by ${prev}`);
      oneofSeen.set(f.partOf.name, f.name);
    }
    if (f.map) {
      if (typeof val !== 'object' || Array.isArray(val)) fail(w, 'map must be a JSON object');
      const m = {};
      for (const [mk, mv] of Object.entries(val)) m[mk] = fieldValueFromJson(f, mv, `${w}[${mk}]`);
      out[f.name] = m;
    } else if (f.repeated) {
      if (!Array.isArray(val)) fail(w, 'repeated field must be an array');
      out[f.name] = val.map((x, i) => fieldValueFromJson(f, x, `${w}[${i}]`));
    } else {
      out[f.name] = fieldValueFromJson(f, val, w);
    }
  }
  return out;
}

// {"@type": url, ...fields} -> {type_url, value: Buffer}
function anyFromJson(v, where) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(where, 'Any must be a JSON object');
  const url = v['@type'];
  if (typeof url !== 'string' || !url) fail(where, 'Any needs "@type"');
  let t;
  try { t = lookupType(url); } catch (e) { fail(where, e.message); }
  const rest = { ...v };
  delete rest['@type'];
  const wkt = t.fullName.startsWith('.google.protobuf.') &&
    (WRAPPERS[t.fullName] || ['Duration', 'Timestamp', 'Struct', 'Value', 'ListValue', 'FieldMask', 'Any'].includes(t.name));
  const inner = wkt ? messageFromJson(t, rest.value, `${where}.value`) : messageFromJson(t, rest, where);
  return { type_url: url, value: Buffer.from(t.encode(t.fromObject(inner)).finish()) };
}

// proto3 JSON of a message with "@type" -> {type_url, value, typeName}
function encodeAny(json) {
  return anyFromJson(json, '');
}

// Encode a message given by type name from proto3 JSON.
function encodeMessage(typeName, json) {
  const t = lookupType(typeName);
  return Buffer.from(t.encode(t.fromObject(messageFromJson(t, json, ''))).finish());
}

// ---------------------------------------------------------------- proto -> JSON

function longToString(v, unsigned) {
  if (v === undefined || v === null) return '0';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return v;
  const { Long } = load();
  const l = Long.fromValue(v);
  return (unsigned ? l.toUnsigned() : l).toString();
}

function isDefault(f, val) {
  if (val === undefined || val === null) return true;
  if (f.repeated) return val.length === 0;
  if (f.map) return Object.keys(val).length === 0;
  if (f.resolvedType && f.resolvedType.constructor.name !== 'Enum') return false;
  if (typeof val === 'number') return val === 0;
  if (typeof val === 'boolean') return !val;
  if (typeof val === 'string') return val === '';
  if (Buffer.isBuffer(val) || val instanceof Uint8Array) return val.length === 0;
  if (typeof val === 'object' && 'low' in val) return val.low === 0 && val.high === 0;
  return false;
}

function scalarToJson(type, v) {
  if (INT64_TYPES.has(type)) return longToString(v, type.startsWith('u') || type === 'fixed64');
  if (type === 'bytes') return Buffer.from(v).toString('base64');
  if ((type === 'double' || type === 'float') && !Number.isFinite(v)) return String(v);
  return v;
}

function valueToJson(v) {
  if (!v) return null;
  const has = (k) => Object.prototype.hasOwnProperty.call(v, k) && v[k] !== undefined && v[k] !== null;
  if (has(vf('number_value'))) return v[vf('number_value')];
  if (has(vf('string_value'))) return v[vf('string_value')];
  if (has(vf('bool_value'))) return v[vf('bool_value')];
  if (has(vf('struct_value'))) return structToJson(v[vf('struct_value')]);
  if (has(vf('list_value'))) return (v[vf('list_value')].values || []).map(valueToJson);
  return null;
}

function structToJson(s) {
  const out = {};
  for (const [k, x] of Object.entries((s && s.fields) || {})) out[k] = valueToJson(x);
  return out;
}

function fieldToJson(f, v) {
  f.resolve();
  const rt = f.resolvedType;
  if (rt && rt.constructor.name === 'Enum') {
    if (rt.fullName === '.google.protobuf.NullValue') return null;
    return rt.valuesById[v] !== undefined ? rt.valuesById[v] : v;
  }
  if (rt) return messageToJson(rt, v);
  return scalarToJson(f.type, v);
}

// proto3 JSON: 0, 3, 6 or 9 fractional digits, as precision requires.
function fracDigits(nanos) {
  const d = String(nanos).padStart(9, '0');
  if (d.endsWith('000000')) return d.slice(0, 3);
  if (d.endsWith('000')) return d.slice(0, 6);
  return d;
}

function messageToJson(type, msg) {
  const full = type.fullName;
  if (WRAPPERS[full]) return scalarToJson(WRAPPERS[full], msg.value === undefined ? (WRAPPERS[full] === 'string' ? '' : 0) : msg.value);
  switch (full) {
    case '.google.protobuf.Duration': {
      const s = BigInt(longToString(msg.seconds, false));
      const n = msg.nanos || 0;
      const neg = s < 0n || n < 0;
      const abs = (s < 0n ? -s : s).toString();
      const frac = n ? '.' + fracDigits(Math.abs(n)) : '';
      return `${neg ? '-' : ''}${abs}${frac}s`;
    }
    case '.google.protobuf.Timestamp': {
      const ms = Number(longToString(msg.seconds, false)) * 1000;
      const iso = new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
      return msg.nanos ? iso.replace('Z', '.' + fracDigits(msg.nanos) + 'Z') : iso;
    }
    case '.google.protobuf.Struct': return structToJson(msg);
    case '.google.protobuf.Value': return valueToJson(msg);
    case '.google.protobuf.ListValue': return (msg.values || []).map(valueToJson);
    case '.google.protobuf.FieldMask': return (msg.paths || []).map(lowerCamel).join(',');
    case '.google.protobuf.Any': return anyToJson(msg);
    default: break;
  }
  const out = {};
  for (const f of type.fieldsArray) {
    const has = Object.prototype.hasOwnProperty.call(msg, f.name);
    if (!has) continue;
    const val = msg[f.name];
    const inOneof = !!f.partOf; // presence-tracked: set on the wire means set
    if (!inOneof && isDefault(f, val)) continue;
    if (f.map) {
      const m = {};
      for (const [k, x] of Object.entries(val)) m[k] = fieldToJson(f, x);
      out[jsonName(f)] = m;
    } else if (f.repeated) {
      out[jsonName(f)] = val.map((x) => fieldToJson(f, x));
    } else {
      out[jsonName(f)] = fieldToJson(f, val);
    }
  }
  return out;
}

function anyToJson(msg) {
  const url = msg.type_url || '';
  let t = null;
  try { t = lookupType(url); } catch (e) { t = null; }
  const bytes = Buffer.from(msg.value || []);
  if (!t) return { '@type': url, value: bytes.toString('base64') };
  const inner = messageToJson(t, t.decode(bytes));
  if (t.fullName.startsWith('.google.protobuf.') && (typeof inner !== 'object' || inner === null || Array.isArray(inner) || WRAPPERS[t.fullName] || ['Struct', 'Any'].includes(t.name))) {
    return { '@type': url, value: inner };
  }
  return { '@type': url, ...inner };
}

// Decode wire bytes of `typeName` into proto3 JSON.
function decodeToJson(typeName, buf) {
  const t = lookupType(typeName);
  return messageToJson(t, t.decode(buf));
}

module.exports = {
  TYPE_PREFIX,
  JsonError,
  load,
  lookupType,
  encodeAny,
  encodeMessage,
  decodeToJson,
  messageToJson,
  messageFromJson,
};
