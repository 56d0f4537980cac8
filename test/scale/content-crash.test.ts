/**
 * CONTRACT §11, "survives restarts" and "the bytes of an unfinished download are never kept":
 * `chatlog serve` is killed with SIGKILL in the middle of a large, slow download; the content
 * store then holds nothing for the hub and the API says the content is still to come; once
 * restarted (the dead node's lease lapsed) the item is downloaded again, whole, and served with
 * exactly LINE's bytes. Runs on either store (files under a SQLite data directory, or PostgreSQL).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { openContentStore } from '../../src/store/content/open.js';
import { type FakeLine, startFakeLine } from '../fixtures/fake-line.js';
import { body, messageEvent, signed } from '../fixtures/line.js';
import { killHard, startServe, stop } from '../fixtures/serve.js';
import { createTestStore, freePort, rawRequest, type TestStore, withoutSettings } from '../helpers.js';

const HUB = '4301';
const SECRET = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const TOKEN = 'crash-test-channel-access-token';
const LINE_ID = '600000000000000001';
const SIZE = 60 * 1024 * 1024;
const SEED = 97;
let t: TestStore;
let line: FakeLine;
let read = '';
const stderr: string[] = [];

function startNode(port: number): Promise<ChildProcess> {
  return startServe({
    port,
    env: { ...withoutSettings(), ...t.env, LINE_API_DATA_BASE_URL: line.base },
    stderr,
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The content's answer: status and (for 200) the SHA-256 and length of the body, read as a stream. */
interface Answer {
  status: number;
  code?: string | undefined;
  sha256?: string;
  size?: number;
}

async function contentOf(
  port: number,
): Promise<{ status: number; code?: string; sha256?: string; size?: number }> {
  const res = await fetch(`http://127.0.0.1:${port}/api/line/${HUB}/content/${LINE_ID}`, {
    headers: { authorization: `Bearer ${read}` },
  });
  if (res.status !== 200) {
    const text = await res.text();
    return { status: res.status, code: (JSON.parse(text) as { error?: { code?: string } }).error?.code };
  }
  const hash = createHash('sha256');
  let size = 0;
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(part);
    size += part.length;
  }
  return { status: 200, sha256: hash.digest('hex'), size };
}

/** The fake's content requests for the message, in order. */
const contentRequests = () => line.requests.filter((r) => r.kind === 'content' && r.messageId === LINE_ID);

before(async () => {
  t = await createTestStore();
  line = await startFakeLine({ token: TOKEN });
  await t.hubs.add(HUB, { lineChannelSecret: SECRET, lineChannelAccessToken: TOKEN });
  read = (await t.keys.issue(HUB, 'read', '')).key;
});
after(async () => {
  await line.close();
  await t.close();
});

test('Crash in the middle of a large download: after restart the item completes, no partial file is ever served', async () => {
  // About 20 s for the whole body: the kill comes well before its end.
  line.setContent(LINE_ID, { size: SIZE, seed: SEED, contentType: 'video/mp4', trickleMs: 20_000 });
  const expected = line.expectedSha256(LINE_ID);
  const port = await freePort();
  let server = await startNode(port);
  try {
    const raw = body([messageEvent({ id: LINE_ID, type: 'file', fileName: 'big.bin', fileSize: SIZE })]);
    const res = await rawRequest(
      `http://127.0.0.1:${port}`,
      'POST',
      `/webhooks/line/${HUB}`,
      signed(SECRET, raw),
      raw,
    );
    assert.equal(res.status, 200, res.body.toString());

    const deadline = Date.now() + 30_000;
    while ((contentRequests()[0]?.bytesSent ?? 0) < SIZE / 3 && Date.now() < deadline) await sleep(50);
    const first = contentRequests()[0];
    assert.ok(
      first && first.bytesSent >= SIZE / 3,
      `the fake sent ${first?.bytesSent} bytes before the kill`,
    );
    assert.ok(first.bytesSent < SIZE, 'the kill comes before the end of the body');
    await killHard(server);

    // Nothing of the half-downloaded body is kept under any hash.
    const blobs = await openContentStore({
      contentStore: undefined,
      databaseUrl: t.env.DATABASE_URL,
      pgSchema: t.env.CHATLOG_PG_SCHEMA,
      dataDir: t.dir,
    });
    try {
      const kept = [];
      for await (const blob of blobs.list(HUB)) kept.push(blob);
      assert.deepEqual(kept, [], 'no blob of the hub after the kill');
    } finally {
      await blobs.close();
    }

    // LINE is quick now; the restarted node takes the item once the dead node's lease lapses (15 s).
    line.setContent(LINE_ID, { size: SIZE, seed: SEED, contentType: 'video/mp4' });
    server = await startNode(port);
    const pending = await contentOf(port);
    assert.deepEqual(pending, { status: 202, code: 'content_pending' }, 'still to come, never partial bytes');

    let answer: Answer = pending;
    const until = Date.now() + 45_000;
    while (answer.status === 202 && Date.now() < until) {
      await sleep(250);
      answer = await contentOf(port);
      // Whatever is answered meanwhile is either "pending" or the whole content.
      assert.ok(answer.status === 202 || answer.status === 200, `answered ${answer.status} ${answer.code}`);
    }
    assert.equal(answer.status, 200, 'downloaded after the restart');
    assert.equal(answer.size, SIZE);
    assert.ok(answer.sha256 === expected, 'the bytes are those LINE sent');
    assert.ok(contentRequests().length >= 2, 'asked LINE again after the restart');
  } catch (error) {
    console.error(stderr.join(''));
    throw error;
  } finally {
    await stop(server);
  }
});
