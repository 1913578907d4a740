'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const proto = require('../proto');

test('proto3 JSON round trip: WKTs, nested Any, enums, int64, maps, Struct', () => {
  const cluster = {
    '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
    name: 'c',
    connect_timeout: '0.250s', // original field names are accepted too
    lbPolicy: 'RING_HASH',
    ringHashLbConfig: { minimumRingSize: '1024', hashFunction: 'MURMUR_HASH_2' },
    maxRequestsPerConnection: 7,
    metadata: { filterMetadata: { x: { a: 1, b: [true, null, 's', { q: 0 }] } } },
    typedExtensionProtocolOptions: {
      d: { '@type': 'type.googleapis.com/google.protobuf.Duration', value: '3s' },
      agg: { '@type': 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig', clusters: ['a'] },
    },
  };
  const any = proto.encodeAny(cluster);
  assert.equal(any.type_url, cluster['@type']);
  const back = proto.decodeToJson(any.type_url, any.value);
  assert.deepEqual(back, {
    name: 'c',
    connectTimeout: '0.250s',
    lbPolicy: 'RING_HASH',
    ringHashLbConfig: { minimumRingSize: '1024', hashFunction: 'MURMUR_HASH_2' },
    maxRequestsPerConnection: 7,
    metadata: { filterMetadata: { x: { a: 1, b: [true, null, 's', { q: 0 }] } } },
    typedExtensionProtocolOptions: {
      d: { '@type': 'type.googleapis.com/google.protobuf.Duration', value: '3s' },
      agg: { '@type': 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig', clusters: ['a'] },
    },
  });
});

test('errors name the offending field', () => {
  const bad = (j, re) => assert.throws(() => proto.encodeAny(j), re);
  const C = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
  bad({ '@type': C, name: 'c', connectTimeout: 5 }, /connectTimeout: Duration/);
  bad({ '@type': C, name: 'c', lbPolicy: 'NOPE' }, /lbPolicy: bad LbPolicy/);
  bad({ '@type': C, name: 'c', type: 'EDS', clusterType: { name: 'x' } }, /oneof cluster_discovery_type/);
  bad({ '@type': C, name: 'c', transportSocket: { name: 't', typedConfig: { value: 'x' } } }, /needs "@type"/);
  bad({ '@type': 'type.googleapis.com/nope.Nope' }, /unknown message type/);
});
