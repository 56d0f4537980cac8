/** /metrics: what an operator scrapes, labelled by route pattern only, never by hub or key. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig, metricsEnabled } from '../../src/config.js';
import { Metrics } from '../../src/lib/metrics.js';
import { ReportColumns } from '../../src/modules/reports/reports.columns.js';
import { startFakeLine } from '../fixtures/fake-line.js';
import { body, messageEvent, signed } from '../fixtures/line.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

const TOKEN = 'metrics-token-0123456789';
const CHANNEL_SECRET = 'metrics-channel-secret-000001';

test('requests, latency, stored messages, signature failures and pools, labelled by route pattern only', async () => {
  let local: TestServer | undefined;
  const metrics = new Metrics(() => local?.store.poolState() ?? []);
  local = await startTestServer({ metrics });
  try {
    await local.hubs.add('777', { lineChannelSecret: CHANNEL_SECRET });
    const key = (await local.keys.issue('777', 'read', '')).key;
    for (let i = 0; i < 3; i++) {
      assert.equal((await rawRequest(local.url, 'GET', `/api/line/777/messages?apikey=${key}`)).status, 200);
    }
    assert.equal((await rawRequest(local.url, 'GET', '/api/line/777/messages?apikey=nope')).status, 401);
    const raw = body([messageEvent({ id: 'm-1', type: 'text', text: 'hello' })]);
    const ok = await rawRequest(local.url, 'POST', '/webhooks/line/777', signed(CHANNEL_SECRET, raw), raw);
    assert.equal(ok.status, 200);
    const forged = await rawRequest(local.url, 'POST', '/webhooks/line/777', signed('wrong', raw), raw);
    assert.equal(forged.status, 401);
    for (const hub of ['778', '779']) {
      assert.equal(
        (await rawRequest(local.url, 'POST', `/webhooks/line/${hub}`, signed('x', raw), raw)).status,
        401,
      );
    }
    await rawRequest(local.url, 'GET', '/no/such/path');

    const scraped = await rawRequest(local.url, 'GET', '/metrics');
    assert.equal(scraped.status, 200);
    assert.match(String(scraped.headers['content-type']), /^text\/plain/);
    const text = scraped.body.toString('utf8');
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN);
    assert.equal(
      value(
        /chatlog_http_requests_total\{route="\/api\/line\/:hubId\/messages",method="GET",status="200"\} (\d+)/,
      ),
      3,
    );
    assert.equal(
      value(
        /chatlog_http_requests_total\{route="\/api\/line\/:hubId\/messages",method="GET",status="401"\} (\d+)/,
      ),
      1,
    );
    assert.match(
      text,
      /chatlog_http_request_duration_seconds_bucket\{le="0.005",route="\/api\/line\/:hubId\/messages"/,
    );
    assert.equal(value(/chatlog_messages_stored_total\{source="webhook"\} (\d+)/), 1);
    assert.equal(value(/chatlog_webhook_signature_failures_total\{reason="wrong_signature"\} (\d+)/), 1);
    assert.equal(value(/chatlog_webhook_signature_failures_total\{reason="unknown_hub"\} (\d+)/), 2);
    assert.match(text, /route="unmatched"/);
    assert.match(text, /chatlog_store_connections\{pool="[a-z]+",state="idle"\} \d+/);
    assert.match(text, /nodejs_eventloop_lag_seconds \d/);
    // Never a hub id, a key or a URL in a label.
    const labels = [...text.matchAll(/="([^"]*)"/g)].map((m) => m[1] ?? '');
    assert.ok(labels.length > 20);
    for (const label of labels) {
      assert.ok(!label.includes('777') && !label.includes('no/such'), `label ${label}`);
    }
    assert.ok(!text.includes(key) && !text.includes('chl_'), 'no key');
  } finally {
    await local.close();
  }
});

test('with a token, /metrics answers only to it; bound beyond localhost without one, it is off', async () => {
  const off = await startTestServer();
  try {
    assert.equal((await rawRequest(off.url, 'GET', '/metrics')).status, 404, 'no metrics: no route');
  } finally {
    await off.close();
  }
  const guarded = await startTestServer({ metrics: new Metrics(), metricsToken: TOKEN });
  try {
    assert.equal((await rawRequest(guarded.url, 'GET', '/metrics')).status, 403);
    const wrong = await rawRequest(guarded.url, 'GET', '/metrics', { authorization: 'Bearer nope' });
    assert.equal(wrong.status, 403);
    assert.ok(!wrong.body.toString().includes(TOKEN));
    const right = await rawRequest(guarded.url, 'GET', '/metrics', { authorization: `Bearer ${TOKEN}` });
    assert.equal(right.status, 200);
  } finally {
    await guarded.close();
  }
  assert.equal(metricsEnabled(loadConfig({ HOST: '127.0.0.1' })), true);
  assert.equal(metricsEnabled(loadConfig({ HOST: '0.0.0.0' })), false);
  assert.equal(metricsEnabled(loadConfig({ HOST: '0.0.0.0', CHATLOG_METRICS_TOKEN: TOKEN })), true);
  assert.throws(() => loadConfig({ CHATLOG_METRICS_TOKEN: 'short' }), /at least 16 characters/);
});

test('media downloads: outcomes, bytes downloaded, the queue and the bytes kept, never by hub or message', async () => {
  const token = 'metrics-line-access-token-0001';
  const line = await startFakeLine({ token });
  let local: TestServer | undefined;
  const metrics = new Metrics(() => local?.store.poolState() ?? [], {
    downloadQueue: async () => (local ? local.store.content.queueDepth() : 0),
    contentBytes: async () => (local ? local.blobs.totalBytes() : 0),
  });
  local = await startTestServer({ metrics, lineApiDataBaseUrl: line.base });
  try {
    const hubId = '8675309';
    await local.hubs.add(hubId, { lineChannelSecret: CHANNEL_SECRET, lineChannelAccessToken: token });
    const key = (await local.keys.issue(hubId, 'read', '')).key;
    const kept = '918273645546372819';
    const waiting = '918273645546372820';
    const bytes = Buffer.alloc(12_345, 9);
    line.setContent(kept, { bytes, contentType: 'image/jpeg' });
    // LINE answers 503 for long enough that this one stays queued (retried in 5 s, then 30 s).
    line.setContent(waiting, { bytes, contentType: 'image/jpeg', failFirst: { count: 10, status: 503 } });
    for (const id of [kept, waiting]) {
      const raw = body([messageEvent({ id, type: 'image', contentProvider: { type: 'line' } })]);
      const res = await rawRequest(
        local.url,
        'POST',
        `/webhooks/line/${hubId}`,
        signed(CHANNEL_SECRET, raw),
        raw,
      );
      assert.equal(res.status, 200);
    }
    // Until the kept one is served and the worker has counted the 503's outcome: LINE being asked
    // is not enough, the outcome is counted once LINE's answer is in (a metric read before it is
    // written failed on a loaded machine).
    const deadline = Date.now() + 20_000;
    let text = '';
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN);
    for (;;) {
      const res = await rawRequest(local.url, 'GET', `/api/line/${hubId}/content/${kept}?apikey=${key}`);
      text = (await rawRequest(local.url, 'GET', '/metrics')).body.toString('utf8');
      const counted = value(/^chatlog_content_downloads_total\{outcome="pending"\} (\d+)$/m) >= 1;
      if ((res.status === 200 && counted) || Date.now() > deadline) {
        assert.equal(res.status, 200);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    assert.equal(value(/^chatlog_content_downloads_total\{outcome="done"\} (\d+)$/m), 1);
    assert.equal(
      value(/^chatlog_content_downloads_total\{outcome="pending"\} (\d+)$/m),
      1,
      'the 503, to retry',
    );
    assert.equal(value(/^chatlog_content_downloaded_bytes_total (\d+)$/m), bytes.length);
    assert.equal(value(/^chatlog_content_downloads_queued (\d+)$/m), 1);
    assert.equal(value(/^chatlog_content_stored_bytes (\d+)$/m), bytes.length);
    const labels = [...text.matchAll(/="([^"]*)"/g)].map((m) => m[1] ?? '');
    for (const label of labels) {
      for (const id of [hubId, kept, waiting]) assert.ok(!label.includes(id), `label ${label} holds ${id}`);
    }
  } finally {
    await local.close();
    await line.close();
  }
});

test("the messages held in memory for reports: none before a report, the hub's after one", async () => {
  let reports: ReportColumns | undefined;
  const metrics = new Metrics(() => [], {
    downloadQueue: async () => 0,
    contentBytes: async () => 0,
    reportMessagesHeld: () => reports?.held ?? 0,
  });
  const local = await startTestServer({
    metrics,
    reports: (store) => {
      reports = new ReportColumns(store);
      return reports;
    },
  });
  try {
    await local.hubs.add('780', {});
    const key = (await local.keys.issue('780', 'read', '')).key;
    const at = Date.parse('2026-11-02T03:00:00Z');
    await local.store.messages.ingest(
      '780',
      [0, 1, 2].map((i) => ({
        kind: 'message' as const,
        lineId: 'Ua',
        sender: i === 1 ? 'You' : null,
        msg: `m${i}`,
        contentType: 'text',
        createdAt: at + i * 60_000,
        sourceId: `ingest:h${i}`,
        id: `h${i}`,
        sourceKind: null,
        sourceChatId: null,
      })),
      Date.now(),
    );
    const held = async () => {
      const text = (await rawRequest(local.url, 'GET', '/metrics')).body.toString('utf8');
      return Number(/^chatlog_report_messages_held (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
    };
    assert.equal(await held(), 0);
    const report = await rawRequest(
      local.url,
      'GET',
      `/api/line/780/reports?apikey=${key}&from=2026-11-01&to=2026-11-03`,
    );
    assert.equal(report.status, 200);
    assert.equal(await held(), 3);
  } finally {
    await local.close();
  }
});
