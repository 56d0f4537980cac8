// sqlite-only: the answer threads' readers (SqliteAnswerReaders: halves, pieces, compressed answers); PostgreSQL's own answer JSON is tested in answers-json.test.ts
/**
 * The read API's JSON as SQLite writes it for the answer threads (store/sqlite/sqlite.answers.ts)
 * must be byte for byte what the serializer writes from the same rows: random hubs of hostile text
 * (every control character, quotes and backslashes, U+2028/9, emoji, BOM, U+FFFF, lone surrogates
 * as JavaScript would store them) and times from year 0 to 9999, before 1970 included, read whole
 * and by random ranges, both ways a range can be read, a contact's messages in pieces of any size.
 */
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import fc from 'fast-check';
import { compressorInput, createCompressor } from '../../src/lib/http.js';
import { collectAnswer, serializeMessages } from '../../src/modules/messages/messages.serializer.js';
import { type ContactIds, SqliteAnswerReaders } from '../../src/store/sqlite/sqlite.answers.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite.store.js';
import type { MessageQuery } from '../../src/store/store.js';
import { createTestStore } from '../helpers.js';
import { hubRange, hubRows, storeHub, storeLongContact } from './answer-fixtures.js';

async function chunks(source: AsyncIterable<Buffer>): Promise<number[]> {
  const sizes: number[] = [];
  for await (const chunk of source) sizes.push(chunk.length);
  return sizes;
}

async function json(readers: SqliteAnswerReaders, query: MessageQuery, part?: ContactIds): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of readers.json(query, part)) parts.push(chunk);
  return Buffer.concat(parts);
}

test('SQLite writes the read API JSON byte for byte as the serializer does', async () => {
  const t = await createTestStore();
  try {
    assert.ok(t.store instanceof SqliteStore);
    const file = t.store.file;
    let hubNumber = 700_000;
    await fc.assert(
      fc.asyncProperty(
        // NUL too: SQLite holds it.
        hubRows({ nul: true, maxLength: 30 }),
        hubRange,
        fc.record({ cap: fc.integer({ min: 1, max: 4 }), bytes: fc.constantFrom(1, 100, 64 * 1024) }),
        fc.nat(),
        async (rows, range, piece, split) => {
          const query = await storeHub(t, String(hubNumber++), rows, range);
          // By time and sorted (a short range), and contact by contact (the whole hub's way).
          for (const shortRangeMaxRows of [1_000_000, -1]) {
            const readers = new SqliteAnswerReaders(file, { shortRangeMaxRows, piece });
            try {
              const expected = await collectAnswer(readers.stream(query));
              const contactIds = [0];
              for await (const batch of readers.stream(query))
                for (const row of batch) contactIds.push(row.contactId);
              const actual = await json(readers, query);
              // In two halves by contact id, anywhere (the answer threads' split), joined.
              const middle = contactIds[split % contactIds.length] ?? 0;
              const halves = Buffer.concat([
                await json(readers, query, { from: Number.MIN_SAFE_INTEGER, to: middle }),
                await json(readers, query, { from: middle + 1, to: Number.MAX_SAFE_INTEGER }),
              ]);
              const joined =
                halves.length === 0
                  ? Buffer.from('[]')
                  : Buffer.concat([Buffer.from('['), halves.subarray(3), Buffer.from(']}]')]);
              assert.ok(joined.equals(expected), 'two halves');
              assert.equal(actual.toString('utf8'), expected.toString('utf8'));
              assert.ok(actual.equals(expected));
            } finally {
              readers.close();
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  } finally {
    await t.close();
  }
});

/** The bytes a client gets in `encoding`, compressed as the read API compresses them. */
async function compressed(source: AsyncIterable<Buffer>, encoding: 'br' | 'gzip'): Promise<Buffer> {
  const compressor = createCompressor(encoding);
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(
      compressorInput(source, () => compressor.flush()),
      { objectMode: false },
    ),
    compressor,
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        out.push(chunk);
        done();
      },
    }),
  );
  return Buffer.concat(out);
}

test("compressed, its answers are the serializer's bytes too; a contact of many messages comes in pieces", async () => {
  const t = await createTestStore();
  try {
    assert.ok(t.store instanceof SqliteStore);
    const long = 'x予'.repeat(150);
    // One contact of 2,500 messages: more than one piece of a long range (1,024 messages).
    const queries = await storeLongContact(t, '700999', long);
    for (const shortRangeMaxRows of [20_000, -1]) {
      const readers = new SqliteAnswerReaders(t.store.file, { shortRangeMaxRows });
      try {
        for (const query of queries) {
          const sizes = await chunks(readers.json(query));
          assert.ok(sizes.length > 1);
          // Contact by contact, no piece holds more than 1,024 messages (under 700 bytes each here), and
          // a chunk is one piece or pieces joined up to 64 KiB.
          if (shortRangeMaxRows < 0) {
            const largest = Math.max(...sizes);
            assert.ok(largest < 1_024 * 700 + 64 * 1_024, `a chunk of ${largest} bytes`);
          }
          for (const encoding of ['gzip', 'br'] as const) {
            const want = await compressed(serializeMessages(readers.stream(query)), encoding);
            const got = await compressed(readers.json(query), encoding);
            assert.ok(got.equals(want), `${encoding}, ${JSON.stringify(query)}, short ${shortRangeMaxRows}`);
          }
          assert.ok((await json(readers, query)).equals(await collectAnswer(readers.stream(query))));
        }
      } finally {
        readers.close();
      }
    }
  } finally {
    await t.close();
  }
});
