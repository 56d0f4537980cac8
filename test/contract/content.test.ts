/**
 * CONTRACT §11: media LINE holds are downloaded from (a local fake of) LINE's content API and
 * served back, on a real listening server; on SQLite with files and on PostgreSQL with its chunks.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { PER_HUB } from '../../src/modules/content/content.worker.js';
import { type FakeLine, startFakeLine } from '../fixtures/fake-line.js';
import { body, messageEvent, SAMPLE_MESSAGES, signed, USER } from '../fixtures/line.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

const SECRET = 'f3b1c0ffee0ddba11deadbeef0123456';
const TOKEN = 'test-channel-access-token-0123';
let server: TestServer;
let line: FakeLine;
let hub = 900;
let messageCounter = 500_000_000_000_000_000n;

async function newHub(options: { token?: string | null } = {}) {
  hub += 1;
  const hubId = String(hub);
  await server.hubs.add(hubId, {
    timeZone: 'Asia/Tokyo',
    lineChannelSecret: SECRET,
    lineChannelAccessToken: options.token === null ? undefined : (options.token ?? TOKEN),
  });
  const { key } = await server.keys.issue(hubId, 'read', '');
  return { hubId, key };
}

function lineId(): string {
  messageCounter += 1n;
  return String(messageCounter);
}

async function send(hubId: string, message: Record<string, unknown>) {
  const raw = body([messageEvent(message)]);
  const res = await rawRequest(server.url, 'POST', `/webhooks/line/${hubId}`, signed(SECRET, raw), raw);
  assert.equal(res.status, 200, res.body.toString());
}

function unsend(hubId: string, messageId: string) {
  const raw = body([
    {
      type: 'unsend',
      mode: 'active',
      timestamp: 1462629479859,
      source: { type: 'user', userId: USER },
      webhookEventId: `01UNSEND${messageId}`,
      deliveryContext: { isRedelivery: false },
      unsend: { messageId },
    },
  ]);
  return rawRequest(server.url, 'POST', `/webhooks/line/${hubId}`, signed(SECRET, raw), raw);
}

function content(hubId: string, key: string, messageId: string, headers: Record<string, string> = {}) {
  return rawRequest(server.url, 'GET', `/api/line/${hubId}/content/${messageId}`, {
    authorization: `Bearer ${key}`,
    ...headers,
  });
}

/** Asks until the answer is no longer 202 (the worker's download is done, or given up). */
async function settled(hubId: string, key: string, messageId: string, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await content(hubId, key, messageId);
    if (res.status !== 202 || Date.now() > deadline) return res;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const bytesOf = (n: number, seed: number) =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255));

before(async () => {
  line = await startFakeLine({ token: TOKEN });
  server = await startTestServer({ lineApiDataBaseUrl: line.base });
});
after(async () => {
  await server.close();
  await line.close();
});

describe('an image LINE holds', () => {
  let hubId: string;
  let key: string;
  const id = lineId();
  const bytes = bytesOf(50_000, 7);

  before(async () => {
    ({ hubId, key } = await newHub());
    line.setContent(id, { bytes, contentType: 'image/jpeg' });
    await send(hubId, { ...SAMPLE_MESSAGES.image?.message, id });
  });

  test('is downloaded with the access token and served with its type, length, strong ETag and no-store', async () => {
    const res = await settled(hubId, key, id);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, bytes);
    assert.equal(res.headers['content-type'], 'image/jpeg');
    assert.equal(res.headers['content-length'], String(bytes.length));
    assert.equal(res.headers.etag, `"${sha256(bytes)}"`);
    assert.equal(res.headers['cache-control'], 'private, no-store');
    assert.equal(res.headers['accept-ranges'], 'bytes');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['content-disposition'], undefined, 'only files are attachments');
    const asked = line.requests.filter((r) => r.path === `/v2/bot/message/${id}/content`);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.authorization, `Bearer ${TOKEN}`);
  });

  test('If-None-Match with its ETag is 304; the key also goes in apikey (not both)', async () => {
    const etag = `"${sha256(bytes)}"`;
    const res = await content(hubId, key, id, { 'if-none-match': etag });
    assert.equal(res.status, 304);
    assert.equal(res.body.length, 0);
    const inQuery = await rawRequest(server.url, 'GET', `/api/line/${hubId}/content/${id}?apikey=${key}`);
    assert.equal(inQuery.status, 200);
    const both = await rawRequest(server.url, 'GET', `/api/line/${hubId}/content/${id}?apikey=${key}`, {
      authorization: `Bearer ${key}`,
    });
    assert.equal(both.status, 400);
    assert.equal(JSON.parse(both.body.toString()).error.code, 'ambiguous_credentials');
  });

  test('byte ranges: the first bytes, the last bytes, a middle range, one past the end (416)', async () => {
    const first = await content(hubId, key, id, { range: 'bytes=0-99' });
    assert.equal(first.status, 206);
    assert.deepEqual(first.body, bytes.subarray(0, 100));
    assert.equal(first.headers['content-range'], `bytes 0-99/${bytes.length}`);
    const last = await content(hubId, key, id, { range: 'bytes=-10' });
    assert.equal(last.status, 206);
    assert.deepEqual(last.body, bytes.subarray(bytes.length - 10));
    const middle = await content(hubId, key, id, { range: 'bytes=1000-20999' });
    assert.deepEqual(middle.body, bytes.subarray(1000, 21_000));
    assert.equal(middle.headers['content-length'], '20000');
    const open = await content(hubId, key, id, { range: `bytes=${bytes.length - 5}-` });
    assert.deepEqual(open.body, bytes.subarray(bytes.length - 5));
    const past = await content(hubId, key, id, { range: `bytes=${bytes.length}-` });
    assert.equal(past.status, 416);
    assert.equal(past.headers['content-range'], `bytes */${bytes.length}`);
    assert.equal(JSON.parse(past.body.toString()).error.code, 'range_not_satisfiable');
    const stale = await content(hubId, key, id, { range: 'bytes=0-9', 'if-range': '"another"' });
    assert.equal(stale.status, 200, 'If-Range naming other bytes: the whole content');
  });

  test('another hub, another key or no key never reaches it', async () => {
    const other = await newHub();
    assert.equal((await content(other.hubId, other.key, id)).status, 404);
    assert.equal((await content(hubId, other.key, id)).status, 403);
    const none = await rawRequest(server.url, 'GET', `/api/line/${hubId}/content/${id}`);
    assert.equal(none.status, 401);
  });
});

test("each media type of LINE's schema: content on LINE is kept, content held elsewhere is not asked for", async () => {
  const { hubId, key } = await newHub();
  const cases = [
    { type: 'image', provider: { type: 'line' }, media: 'image/png' },
    { type: 'video', provider: { type: 'line' }, media: 'video/mp4' },
    { type: 'audio', provider: undefined, media: 'audio/x-m4a' },
    { type: 'file', provider: undefined, media: 'application/pdf' },
  ];
  const kept: Array<{ id: string; bytes: Buffer; media: string }> = [];
  for (const [i, c] of cases.entries()) {
    const id = lineId();
    const bytes = bytesOf(1000 + i, i);
    line.setContent(id, { bytes, contentType: c.media });
    await send(hubId, {
      id,
      type: c.type,
      ...(c.provider ? { contentProvider: c.provider } : {}),
      ...(c.type === 'file' ? { fileName: 'a.pdf', fileSize: bytes.length } : {}),
      ...(c.type === 'video' || c.type === 'audio' ? { duration: 1000 } : {}),
    });
    kept.push({ id, bytes, media: c.media });
  }
  const external: string[] = [];
  for (const type of ['image', 'video', 'audio']) {
    const id = lineId();
    external.push(id);
    await send(hubId, {
      id,
      type,
      contentProvider: {
        type: 'external',
        originalContentUrl: 'https://example.com/x',
        previewImageUrl: 'https://example.com/p',
      },
    });
  }
  for (const { id, bytes, media } of kept) {
    const res = await settled(hubId, key, id);
    assert.equal(res.status, 200, `${id}: ${res.body.toString().slice(0, 200)}`);
    assert.deepEqual(res.body, bytes);
    assert.equal(res.headers['content-type'], media);
  }
  for (const id of external) {
    const res = await content(hubId, key, id);
    assert.equal(res.status, 404);
    assert.equal(JSON.parse(res.body.toString()).error.code, 'content_not_found');
    assert.equal(line.requests.filter((r) => r.path.includes(`/${id}/`)).length, 0, 'LINE never asked');
  }
  // Text and stickers have no content.
  const text = lineId();
  await send(hubId, { id: text, type: 'text', text: 'hi' });
  assert.equal((await content(hubId, key, text)).status, 404);
});

test('video waits for LINE to finish preparing it; a file keeps its Japanese name', async () => {
  const { hubId, key } = await newHub();
  const video = lineId();
  line.setContent(video, { bytes: bytesOf(3000, 1), contentType: 'video/mp4', transcodingCalls: 2 });
  await send(hubId, { id: video, type: 'video', duration: 1000, contentProvider: { type: 'line' } });
  const file = lineId();
  line.setContent(file, { bytes: bytesOf(100, 2), contentType: 'application/pdf' });
  await send(hubId, { id: file, type: 'file', fileName: '見積書 (2026).pdf', fileSize: 100 });

  const res = await settled(hubId, key, video);
  assert.equal(res.status, 200);
  const paths = line.requests.filter((r) => r.path.includes(`/${video}/`)).map((r) => r.path);
  assert.ok(paths.filter((p) => p.endsWith('/transcoding')).length >= 3, 'asked until succeeded');
  assert.equal(paths.at(-1), `/v2/bot/message/${video}/content`, 'content asked for last');
  assert.equal(paths.filter((p) => p.endsWith('/content')).length, 1);

  const named = await settled(hubId, key, file);
  assert.equal(named.status, 200);
  assert.equal(
    named.headers['content-disposition'],
    `attachment; filename="___ (2026).pdf"; filename*=UTF-8''%E8%A6%8B%E7%A9%8D%E6%9B%B8%20%282026%29.pdf`,
  );
});

test("while the download is to come: 202 content_pending with Retry-After; LINE's 404: content_not_found", async () => {
  const { hubId, key } = await newHub();
  const slow = lineId();
  line.setContent(slow, {
    bytes: bytesOf(2000, 3),
    contentType: 'image/jpeg',
    failFirst: { count: 1, status: 503 },
  });
  const missing = lineId();
  await send(hubId, { id: slow, type: 'image', contentProvider: { type: 'line' } });
  await send(hubId, { id: missing, type: 'image', contentProvider: { type: 'line' } });
  const pending = await content(hubId, key, slow);
  assert.equal(pending.status, 202);
  assert.equal(JSON.parse(pending.body.toString()).error.code, 'content_pending');
  assert.match(String(pending.headers['retry-after']), /^\d+$/);
  const gone = await settled(hubId, key, missing);
  assert.equal(gone.status, 404);
  assert.match(JSON.parse(gone.body.toString()).error.message, /LINE no longer had/);
  // The 503 is retried (about 5 s later) and the image arrives.
  const res = await settled(hubId, key, slow, 30_000);
  assert.equal(res.status, 200);
});

test('a hub without an access token downloads nothing: 404 that says why', async () => {
  const { hubId, key } = await newHub({ token: null });
  const id = lineId();
  line.setContent(id, { bytes: bytesOf(10, 4), contentType: 'image/jpeg' });
  await send(hubId, { id, type: 'image', contentProvider: { type: 'line' } });
  const res = await content(hubId, key, id);
  assert.equal(res.status, 404);
  assert.match(JSON.parse(res.body.toString()).error.message, /no LINE channel access token/);
  assert.equal(line.requests.filter((r) => r.path.includes(`/${id}/`)).length, 0);
});

test('the same bytes in two messages are kept once; an unsend keeps them for the other, the last one deletes them', async () => {
  const { hubId, key } = await newHub();
  const bytes = bytesOf(4096, 9);
  const [a, b] = [lineId(), lineId()];
  for (const id of [a, b]) {
    line.setContent(id, { bytes, contentType: 'image/jpeg' });
    await send(hubId, { id, type: 'image', contentProvider: { type: 'line' } });
  }
  for (const id of [a, b]) assert.equal((await settled(hubId, key, id)).status, 200);
  const blobs = [];
  for await (const blob of server.blobs.list(hubId)) blobs.push(blob);
  assert.deepEqual(blobs, [{ sha256: sha256(bytes), size: bytes.length }]);

  assert.equal((await unsend(hubId, a)).status, 200);
  assert.equal((await content(hubId, key, a)).status, 404);
  const still = await content(hubId, key, b);
  assert.equal(still.status, 200);
  assert.deepEqual(still.body, bytes);

  assert.equal((await unsend(hubId, b)).status, 200);
  assert.equal((await content(hubId, key, b)).status, 404);
  const deadline = Date.now() + 10_000;
  while ((await server.blobs.stat(hubId, sha256(bytes))) !== undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(await server.blobs.stat(hubId, sha256(bytes)), undefined, 'the bytes are deleted');
});

test('while more downloads wait than may run, the worker waits for one to end instead of asking the store again and again', async () => {
  const { hubId, key } = await newHub();
  const ids = Array.from({ length: PER_HUB + 2 }, () => lineId());
  for (const id of ids) {
    line.setContent(id, { bytes: bytesOf(20_000, 5), contentType: 'image/jpeg', trickleMs: 1_500 });
    await send(hubId, { id, type: 'image', contentProvider: { type: 'line' } });
  }
  // PER_HUB of them run (the hub's limit) and the others wait for a turn: a slot ending looks again.
  const running = () =>
    line.requests.filter((r) => ids.includes(r.messageId ?? '') && r.endedAt === undefined).length;
  const deadline = Date.now() + 10_000;
  while (running() < PER_HUB && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(running(), PER_HUB);
  const { content: queue } = server.store;
  const nextDue = queue.nextDue;
  let looks = 0;
  queue.nextDue = () => {
    looks += 1;
    return nextDue.call(queue);
  };
  try {
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(running(), PER_HUB, 'the downloads were still running');
    // A look or two after each commit (the webhooks), not one after another (475 in 500 ms before).
    assert.ok(looks <= 10, `the queue was looked at ${looks} times in 500 ms`);
  } finally {
    queue.nextDue = nextDue;
  }
  for (const id of ids) assert.equal((await settled(hubId, key, id)).status, 200);
});
