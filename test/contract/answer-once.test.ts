/**
 * Many clients asking for the same answer at once (a dashboard's "yesterday" on 32 screens) cost one
 * read of the store: the others wait for it and are answered from the answer cache, byte for byte
 * the same, in every encoding.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { answersEncodedHere } from '../../src/modules/messages/messages.usecases.js';
import type { AnswerSource } from '../../src/store/store.js';
import { message, startTestServer, storeMessages, type TestServer } from '../helpers.js';

let server: TestServer;
let reads = 0;
let key = '';

before(async () => {
  server = await startTestServer({
    answers: (store): AnswerSource => {
      const here = answersEncodedHere(store);
      return {
        json: (range) => {
          reads += 1;
          return here.json(range);
        },
      };
    },
  });
  await server.hubs.add('100', { timeZone: 'Asia/Tokyo' });
  key = (await server.keys.issue('100', 'read', '')).key;
  const day = Date.parse('2024-02-05T00:00:00+09:00');
  await storeMessages(
    server.store,
    '100',
    Array.from({ length: 3_000 }, (_, i) =>
      message({
        lineId: `U${i % 40}`,
        msg: `メッセージ ${i} ${'x'.repeat(i % 50)}`,
        createdAt: day + i * 1_000,
      }),
    ),
  );
});

after(() => server?.close());

test('32 requests for the same day at once read it once, and all get the same bytes', async () => {
  for (const encoding of ['identity', 'gzip', 'br']) {
    reads = 0;
    const answers = await Promise.all(
      Array.from({ length: 32 }, async () => {
        const response = await server.request(
          `/api/line/100/messages?apikey=${key}&from=2024-02-05&to=2024-02-05`,
          {
            headers: { 'accept-encoding': encoding },
          },
        );
        assert.equal(response.status, 200);
        return Buffer.from(await response.arrayBuffer());
      }),
    );
    assert.equal(reads, 1, `${encoding}: the day was read ${reads} times`);
    for (const body of answers) assert.ok(body.equals(answers[0] as Buffer));
    const messages = (
      JSON.parse((answers[0] as Buffer).toString('utf8')) as Array<{ messages: unknown[] }>
    ).flatMap((contact) => contact.messages);
    assert.equal(messages.length, 3_000);
  }
});
