'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const h = require('./helpers');

let srv;
before(async () => { srv = await h.startServer(['--lrs-interval-ms', '1500']); });
after(async () => { if (srv) assert.equal(await srv.stop(), 0); });

test('LRS: first request answered with clusters + interval, reports recorded, config pushed', async () => {
  const cfg = await srv.control('PUT', '/lrs-config', { send_all_clusters: false, clusters: ['cluster-a'], interval_ms: 250 });
  assert.equal(cfg.status, 200);
  assert.deepEqual(cfg.body.clusters, ['cluster-a']);
  const c = new h.LrsClient(srv.target);
  try {
    c.send({ node: { ...h.NODE, client_features: ['envoy.lrs.supports_send_all_clusters'] } });
    const r1 = await c.next();
    assert.deepEqual(r1.clusters, ['cluster-a']);
    assert.ok(!r1.send_all_clusters);
    assert.equal(Number(r1.load_reporting_interval.seconds || 0), 0);
    assert.equal(r1.load_reporting_interval.nanos, 250000000);

    c.send({
      cluster_stats: [{
        cluster_name: 'cluster-a',
        cluster_service_name: 'cluster-a',
        upstream_locality_stats: [{
          locality: { region: 'r1', zone: 'z1' },
          total_successful_requests: 5,
          total_requests_in_progress: 0,
          total_error_requests: 1,
          total_issued_requests: 6,
          load_metric_stats: [{ metric_name: 'cpu', num_requests_finished_with_metric: 5, total_metric_value: 1.5 }],
        }],
        total_dropped_requests: 2,
        dropped_requests: [{ category: 'throttle', dropped_count: 2 }],
        load_report_interval: { seconds: 0, nanos: 250000000 },
      }],
    });
    let reports;
    const deadline = Date.now() + 5000;
    do {
      reports = (await srv.control('GET', '/lrs')).body.reports;
      if (reports.length >= 2) break;
      await new Promise((r) => setTimeout(r, 20));
    } while (Date.now() < deadline);
    assert.equal(reports.length, 2);
    assert.equal(reports[0].node.id, h.NODE.id);
    assert.deepEqual(reports[0].cluster_stats, []);
    const cs = reports[1].cluster_stats[0];
    assert.equal(cs.clusterName, 'cluster-a');
    assert.equal(cs.totalDroppedRequests, '2');
    assert.equal(cs.loadReportInterval, '0.250s');
    assert.deepEqual(cs.droppedRequests, [{ category: 'throttle', droppedCount: '2' }]);
    const ls = cs.upstreamLocalityStats[0];
    assert.deepEqual(ls.locality, { region: 'r1', zone: 'z1' });
    assert.equal(ls.totalSuccessfulRequests, '5');
    assert.equal(ls.totalIssuedRequests, '6');
    assert.equal(ls.totalErrorRequests, '1');
    assert.equal(ls.loadMetricStats[0].totalMetricValue, 1.5);
    assert.equal(reports[1].stream_id, reports[0].stream_id);

    const streams = (await srv.control('GET', '/streams?kind=lrs')).body.streams;
    assert.equal(streams.length, 1);
    assert.equal(streams[0].node_id, h.NODE.id);

    // Changing the config pushes a new LoadStatsResponse on open streams.
    await srv.control('PUT', '/lrs-config', { send_all_clusters: true, interval_ms: 1500 });
    const r2 = await c.next();
    assert.equal(r2.send_all_clusters, true);
    assert.equal(String(r2.load_reporting_interval.seconds), '1');
    assert.equal(r2.load_reporting_interval.nanos, 500000000);
  } finally {
    c.close();
  }
});
