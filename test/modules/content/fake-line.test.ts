/** The fake LINE content API (test/fixtures/fake-line.ts) answers as LINE documents it. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as WebStream } from 'node:stream/web';
import { after, before, test } from 'node:test';
import { type FakeLine, startFakeLine } from '../../fixtures/fake-line.js';

const TOKEN = 'channel-access-token-1';
const auth = { headers: { Authorization: `Bearer ${TOKEN}` } };

let line: FakeLine;
before(async () => {
  line = await startFakeLine({ token: TOKEN });
});
after(() => line.close());

const content = (id: string, init: RequestInit = auth) =>
  fetch(`${line.base}/v2/bot/message/${id}/content`, init);
/** A fetch body as a Node stream (read as it arrives). */
const bodyOf = (answer: Response) => Readable.fromWeb(answer.body as WebStream);
const transcoding = (id: string) => fetch(`${line.base}/v2/bot/message/${id}/content/transcoding`, auth);

test('answers the bytes with their type and length, to the right token only', async () => {
  const bytes = Buffer.from('\x89PNG fake image bytes');
  line.setContent('100001', { bytes, contentType: 'image/png' });
  const ok = await content('100001');
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('content-type'), 'image/png');
  assert.equal(ok.headers.get('content-length'), String(bytes.length));
  assert.deepEqual(Buffer.from(await ok.arrayBuffer()), bytes);
  assert.equal(line.expectedSha256('100001'), createHash('sha256').update(bytes).digest('hex'));

  const wrong = await content('100001', { headers: { Authorization: 'Bearer another' } });
  assert.equal(wrong.status, 401);
  assert.match(((await wrong.json()) as { message: string }).message, /^Authentication failed/);
  const none = await content('100001', {});
  assert.equal(none.status, 401);
  assert.match(((await none.json()) as { message: string }).message, /Authorization header required/);

  const missing = await content('999999');
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), { message: 'Not found' });
  line.deleteContent('100001');
  assert.equal((await content('100001')).status, 404, 'LINE no longer has it');

  const asked = line.requests.filter((r) => r.messageId === '100001');
  assert.deepEqual(
    asked.map((r) => [r.path, r.authorization, r.status]),
    [
      ['/v2/bot/message/100001/content', `Bearer ${TOKEN}`, 200],
      ['/v2/bot/message/100001/content', 'Bearer another', 401],
      ['/v2/bot/message/100001/content', undefined, 401],
      ['/v2/bot/message/100001/content', `Bearer ${TOKEN}`, 404],
    ],
  );
});

test('transcoding says processing for the given calls, then its outcome', async () => {
  line.setContent('200001', { bytes: Buffer.from('video'), contentType: 'video/mp4', transcodingCalls: 2 });
  line.setContent('200002', { bytes: Buffer.from('audio'), transcodingOutcome: 'failed' });
  const statuses = [];
  for (let i = 0; i < 3; i += 1)
    statuses.push(((await (await transcoding('200001')).json()) as { status: string }).status);
  assert.deepEqual(statuses, ['processing', 'processing', 'succeeded']);
  assert.deepEqual(await (await transcoding('200002')).json(), { status: 'failed' });
  // Set just before it is asked, with room for a machine busy with other test files.
  line.setContent('200003', { bytes: Buffer.from('later'), transcodingMs: 1_000 });
  assert.deepEqual(await (await transcoding('200003')).json(), { status: 'processing' });
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  assert.deepEqual(await (await transcoding('200003')).json(), { status: 'succeeded' });
  assert.equal((await transcoding('299999')).status, 404);
});

test('fails the first requests as asked (429 with LINE’s body, 5xx), then answers', async () => {
  line.setContent('300001', { bytes: Buffer.from('ok'), failFirst: { count: 2, status: 429 } });
  line.setContent('300002', { bytes: Buffer.from('ok'), failFirst: { count: 1, status: 503 } });
  const first = await content('300001');
  assert.equal(first.status, 429);
  assert.deepEqual(await first.json(), { message: 'Too Many Requests' });
  assert.equal((await content('300001')).status, 429);
  assert.equal(await (await content('300001')).text(), 'ok');
  assert.equal((await content('300002')).status, 503);
  assert.equal((await content('300002')).status, 200);
});

test('a large generated body streams as the client reads, and its SHA-256 is known ahead', async () => {
  const size = 50 * 1024 * 1024 + 123;
  line.setContent('400001', { size, seed: 42, contentType: 'video/mp4' });
  const answer = await content('400001');
  assert.equal(answer.headers.get('content-length'), String(size));
  const hash = createHash('sha256');
  let length = 0;
  for await (const part of bodyOf(answer)) {
    hash.update(part);
    length += part.length;
  }
  assert.equal(length, size);
  assert.equal(hash.digest('hex'), line.expectedSha256('400001'));
  line.setContent('400002', { size, seed: 43 });
  assert.notEqual(line.expectedSha256('400002'), line.expectedSha256('400001'), 'the seed matters');
});

test('a slow body takes its time; a body cut off midway fails the reader', async () => {
  line.setContent('500001', { bytes: Buffer.alloc(10_000, 7), trickleMs: 400 });
  const started = Date.now();
  const slow = Buffer.from(await (await content('500001')).arrayBuffer());
  assert.equal(slow.length, 10_000);
  assert.ok(Date.now() - started >= 300, `took ${Date.now() - started} ms`);

  line.setContent('500002', { size: 1_000_000, seed: 5, hangUpAfterBytes: 300_000 });
  const cut = await content('500002');
  assert.equal(cut.status, 200);
  assert.equal(cut.headers.get('content-length'), '1000000');
  let received = 0;
  await assert.rejects(async () => {
    for await (const part of bodyOf(cut)) received += (part as Buffer).length;
  });
  assert.ok(received <= 300_000, `received ${received} bytes`);
});
