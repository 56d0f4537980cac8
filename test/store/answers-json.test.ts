/**
 * The read API's answer as the store writes it without the serializer (PostgreSQL's binary COPY
 * written as bytes, postgres.answers.ts; SQLite's own JSON for the answer threads, sqlite.answers.ts)
 * is byte for byte what the serializer writes from the store's rows: random hubs of hostile text
 * (quotes, backslashes, every control character, U+2028/9, emoji, BOM, U+FFFF, lone surrogates as
 * JavaScript holds them) and times from year 0 to 9999, before 1970 included, read whole and by
 * random ranges, both ways a range can be read, and answers of many chunks. With
 * CHATLOG_TEST_STORE=postgres on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { collectAnswer } from '../../src/modules/messages/messages.serializer.js';
import { SqliteAnswerReaders } from '../../src/store/sqlite/sqlite.answers.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite.store.js';
import type { AnswerCount, ImportMessage, MessageQuery } from '../../src/store/store.js';
import { createTestStore, storeMessages, type TestStore, testPostgresStore } from '../helpers.js';
import { hubRange, hubRows, storeHub, storeLongContact } from './answer-fixtures.js';

let t: TestStore;
before(async () => {
  t = await createTestStore();
});
after(() => t.close());

interface Plan {
  /** -1: contact by contact; else by time up to this many rows. */
  shortRangeMaxRows: number;
  /** SQLite: a contact's messages a piece at most. */
  pieceMessages: number;
}

/** The messages of an answer, counted in its JSON. */
function messagesIn(answer: Buffer): number {
  const contacts = JSON.parse(answer.toString('utf8')) as Array<{ messages: unknown[] }>;
  return contacts.reduce((n, contact) => n + contact.messages.length, 0);
}

/** The engine's own JSON for `query`, read the way `plan` forces, and the count it told. */
async function written(query: MessageQuery, plan: Plan): Promise<Buffer & { told: AnswerCount }> {
  const parts: Buffer[] = [];
  const told: AnswerCount = {};
  if (t.store instanceof SqliteStore) {
    const readers = new SqliteAnswerReaders(t.store.file, {
      shortRangeMaxRows: plan.shortRangeMaxRows,
      piece: { cap: plan.pieceMessages },
    });
    try {
      for await (const chunk of readers.json(query, undefined, told)) parts.push(chunk);
    } finally {
      readers.close();
    }
  } else {
    const store = testPostgresStore({
      connectionString: t.env.DATABASE_URL as string,
      schema: t.env.CHATLOG_PG_SCHEMA,
      shortRangeMaxRows: plan.shortRangeMaxRows,
    });
    try {
      assert.ok(store.messages.json, 'PostgreSQL writes the JSON');
      for await (const chunk of store.messages.json(query, told)) parts.push(chunk);
    } finally {
      await store.close();
    }
  }
  return Object.assign(Buffer.concat(parts), { told });
}

let hubNumber = 710_000;

test("the database's answer JSON is the serializer's, byte for byte, whatever the text, times, range and plan", async () => {
  await fc.assert(
    fc.asyncProperty(
      hubRows({ nul: false, maxLength: 25 }),
      hubRange,
      fc.record({
        shortRangeMaxRows: fc.constantFrom(-1, 1_000_000),
        pieceMessages: fc.integer({ min: 1, max: 4 }),
      }),
      async (rows, range, plan) => {
        const query = await storeHub(t, String(hubNumber++), rows, range);
        const expected = await collectAnswer(t.store.messages.stream(query));
        const actual = await written(query, plan);
        assert.equal(actual.toString('utf8'), expected.toString('utf8'));
        assert.ok(actual.equals(expected), 'the same bytes');
        // The audit's count (CONTRACT §13): the answer's messages, none told twice or missed.
        assert.equal(actual.told.messages, messagesIn(expected));
      },
    ),
    { numRuns: 60 },
  );
});

test('a contact of thousands of messages comes whole, in order, in chunks, by either plan', async () => {
  const long = 'x予"\\'.repeat(40);
  // One contact of 2,500 messages: three pieces of SQLite's 1,024; COPY's rows cut by its reads.
  for (const query of await storeLongContact(t, '710999', long)) {
    const expected = await collectAnswer(t.store.messages.stream(query));
    assert.ok(expected.length > 128 * 1024);
    for (const shortRangeMaxRows of [20_000, -1]) {
      const actual = await written(query, { shortRangeMaxRows, pieceMessages: 1_024 });
      assert.ok(actual.equals(expected), `${JSON.stringify(query)} ${shortRangeMaxRows}`);
      assert.equal(actual.told.messages, messagesIn(expected));
    }
  }
});

test('answers left after their first chunk give their connection back: the next answers still come whole', async () => {
  const hubId = '710998';
  await t.hubs.add(hubId, {});
  const messages: ImportMessage[] = Array.from({ length: 3_000 }, (_, i) => ({
    lineId: `U${i % 3}`,
    vid: '',
    name: 'n',
    sender: null,
    msg: `${i} ${'予'.repeat(100)}`,
    contentType: 'text',
    createdAt: 1_700_000_000_000 + i,
    sourceId: `l${i}`,
  }));
  await storeMessages(t.store, hubId, messages);
  const query: MessageQuery = { hubId, fromMs: undefined, toMsExclusive: undefined };
  const expected = await collectAnswer(t.store.messages.stream(query));
  const source = t.store instanceof SqliteStore ? new SqliteAnswerReaders(t.store.file) : undefined;
  const answer = (): AsyncIterable<Buffer> => {
    if (source) return source.json(query);
    assert.ok(t.store.messages.json);
    return t.store.messages.json(query);
  };
  try {
    // More than any pool holds (PostgreSQL's stream pool 10, SQLite's readers 16).
    for (let i = 0; i < 40; i++) {
      for await (const chunk of answer()) {
        assert.ok(chunk.length > 0);
        break;
      }
    }
    const parts: Buffer[] = [];
    for await (const chunk of answer()) parts.push(chunk);
    assert.ok(Buffer.concat(parts).equals(expected));
  } finally {
    source?.close();
  }
});
