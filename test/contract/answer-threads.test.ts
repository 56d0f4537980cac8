// sqlite-only: the answer threads read SQLite's file; PostgreSQL's answers are encoded on the event loop
/**
 * The read API's answers made on the answer threads (src/store/sqlite/answers/): the same bytes as the
 * serializer's in every encoding, one at a time (its two halves read at once on the two threads)
 * and many at once, and a client that leaves mid-answer frees its thread's cursor without
 * disturbing the others.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { collectAnswer } from '../../src/modules/messages/messages.serializer.js';
import { answersEncodedHere } from '../../src/modules/messages/messages.usecases.js';
import { AnswerThreads } from '../../src/store/sqlite/answers/answers.threads.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite.store.js';
import type { AnswerCount, FeedJsonPage } from '../../src/store/store.js';
import { message, startTestServer, storeMessages, type TestServer } from '../helpers.js';

let server: TestServer;
let threads: AnswerThreads;
let key = '';
const DAY = Date.parse('2024-02-05T00:00:00+09:00');
const HOSTILE = ['"', '\\', '\u0000', '\u001f', '\u007f', '\u2028', '\ufeff', '\uffff', '😀', '予約', '\n\t'];

before(async () => {
  server = await startTestServer({
    answers: (store) => {
      assert.ok(store instanceof SqliteStore);
      // As app.ts makes them: an answer asked while both threads are idle is read in two halves.
      threads = new AnswerThreads(
        { file: store.file },
        2,
        answersEncodedHere(store),
        store.changes,
        (hubId) => store.contactIdRange(hubId),
      );
      return threads;
    },
  });
  await server.hubs.add('100', { timeZone: 'Asia/Tokyo' });
  key = (await server.keys.issue('100', 'read', '')).key;
  await storeMessages(
    server.store,
    '100',
    Array.from({ length: 6_000 }, (_, i) =>
      message({
        lineId: `U${i % 97}`,
        name: i % 3 === 0 ? `名前${HOSTILE[i % HOSTILE.length]}` : '',
        msg: `${i} ${HOSTILE[i % HOSTILE.length]} ${'x'.repeat(i % 200)}`,
        createdAt: DAY - 3 * 86_400_000 + i * 60_000,
      }),
    ),
  );
  await threads.whenReady();
});

after(() => server?.close());

const url = (query: string) => `/api/line/100/messages?apikey=${key}${query}`;

test('answers made on the threads are the serializer bytes, plain and compressed', async () => {
  for (const [query, from, to] of [
    ['', undefined, undefined],
    [
      '&from=2024-02-03&to=2024-02-03',
      Date.parse('2024-02-03T00:00:00+09:00'),
      Date.parse('2024-02-04T00:00:00+09:00'),
    ],
  ] as const) {
    const expected = await collectAnswer(
      server.store.messages.stream({ hubId: '100', fromMs: from, toMsExclusive: to }),
    );
    const plain = Buffer.from(await (await server.request(url(query))).arrayBuffer());
    assert.ok(plain.equals(expected), `identity ${query}`);
    const gzip = await new Promise<Buffer>((resolve, reject) => {
      http
        .get(`${server.url}${url(query)}`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (chunk: Buffer) => parts.push(chunk));
          res.on('end', () => resolve(Buffer.concat(parts)));
        })
        .on('error', reject);
    });
    assert.ok(gunzipSync(gzip).equals(expected), `gzip ${query}`);
  }
});

test('twenty whole answers at once, and clients that leave mid-answer, leave nothing streaming', async () => {
  const expected = await collectAnswer(
    server.store.messages.stream({ hubId: '100', fromMs: undefined, toMsExclusive: undefined }),
  );
  const leaving = Array.from(
    { length: 6 },
    () =>
      new Promise<void>((resolve) => {
        const request = http.get(`${server.url}${url('')}`, (res) => {
          res.once('data', () => {
            request.destroy();
            resolve();
          });
        });
        request.on('error', () => resolve());
      }),
  );
  const whole = Array.from({ length: 20 }, async () =>
    Buffer.from(await (await server.request(url(''))).arrayBuffer()),
  );
  await Promise.all(leaving);
  for (const body of await Promise.all(whole)) assert.ok(body.equals(expected));
  for (let i = 0; i < 200 && threads.streaming > 0; i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(threads.streaming, 0);
});

test('with both threads idle, a range is read in two halves at once; a client that leaves frees both', async () => {
  const range = '&from=2024-02-02&to=2024-02-05';
  const expected = await collectAnswer(
    server.store.messages.stream({
      hubId: '100',
      fromMs: Date.parse('2024-02-02T00:00:00+09:00'),
      toMsExclusive: Date.parse('2024-02-06T00:00:00+09:00'),
    }),
  );
  assert.equal(threads.streaming, 0);
  const before = threads.answersInHalves;
  const whole = Buffer.from(await (await server.request(url(range))).arrayBuffer());
  assert.ok(whole.equals(expected));
  assert.equal(threads.answersInHalves, before + 1);
  // A client that reads the first bytes and leaves (the halves may still be streaming, or done).
  await new Promise<void>((resolve) => {
    const request = http.get(`${server.url}${url(range)}`, (res) => {
      res.once('data', () => {
        request.destroy();
        resolve();
      });
    });
    request.on('error', () => resolve());
  });
  assert.equal(threads.answersInHalves, before + 2);
  for (let i = 0; i < 200 && threads.streaming > 0; i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(threads.streaming, 0);
});

test('pages of the change feed read on the threads are the pages the store reads, many at once', async () => {
  const expected: Array<{ after: number; page: FeedJsonPage }> = [];
  for (let after = 0; ; ) {
    const page = await server.store.changes.pageJson('100', after, 700);
    expected.push({ after, page });
    if (!page.hasMore) break;
    after = page.lastSeq ?? after;
  }
  assert.ok(expected.length >= 9);
  const served = await Promise.all(expected.map(({ after }) => threads.pageJson('100', after, 700)));
  served.forEach((page, i) => {
    const want = expected[i]?.page;
    assert.ok(want && Buffer.from(page.body).equals(Buffer.from(want.body)), `page ${i}`);
    assert.deepEqual({ ...page, body: undefined }, { ...want, body: undefined });
  });
  assert.equal(threads.streaming, 0);
});

test("an answer tells how many messages it held (the audit's count), read whole, in halves or on several threads at once", async () => {
  const counted = async (fromMs: number | undefined, toMsExclusive: number | undefined) => {
    const count: AnswerCount = {};
    const parts: Buffer[] = [];
    for await (const chunk of threads.json({ hubId: '100', fromMs, toMsExclusive }, count)) parts.push(chunk);
    const contacts = JSON.parse(Buffer.concat(parts).toString('utf8')) as Array<{ messages: unknown[] }>;
    return { told: count.messages, held: contacts.reduce((n, c) => n + c.messages.length, 0) };
  };
  const before = threads.answersInHalves;
  const range = [Date.parse('2024-02-02T00:00:00+09:00'), Date.parse('2024-02-06T00:00:00+09:00')] as const;
  assert.deepEqual(await counted(...range), { told: 5_760, held: 5_760 });
  assert.equal(threads.answersInHalves, before + 1, 'read in two halves');
  assert.deepEqual(await counted(undefined, undefined), { told: 6_000, held: 6_000 });
  const day = [Date.parse('2024-02-03T00:00:00+09:00'), Date.parse('2024-02-04T00:00:00+09:00')] as const;
  const many = await Promise.all([counted(...day), counted(...range), counted(undefined, undefined)]);
  assert.deepEqual(
    many.map((m) => m.told),
    [1_440, 5_760, 6_000],
  );
});

test('just after a start, a whole hub waits for a thread; a range is answered at once on this thread', async () => {
  const store = server.store as SqliteStore;
  const here = answersEncodedHere(store);
  let madeHere = 0;
  const counted: typeof here = {
    json: (query, count) => {
      madeHere += 1;
      return here.json(query, count);
    },
  };
  const read = async (source: AsyncIterable<Buffer>) => {
    const chunks: Buffer[] = [];
    for await (const chunk of source) chunks.push(chunk);
    return Buffer.concat(chunks);
  };
  for (const [query, expectedHere] of [
    [{ hubId: '100' }, 0],
    [{ hubId: '100', fromMs: DAY, toMsExclusive: DAY + 86_400_000 }, 1],
  ] as const) {
    madeHere = 0;
    // Threads not started yet, as just after a start.
    const fresh = new AnswerThreads({ file: store.file }, 2, counted, store.changes);
    try {
      const answer = await read(fresh.json(query));
      assert.ok(answer.equals(await collectAnswer(store.messages.stream(query))));
      assert.equal(madeHere, expectedHere, JSON.stringify(query));
    } finally {
      await fresh.close();
    }
  }
});
