/**
 * The COPY stream that hands the socket's pieces on unjoined (src/store/postgres/postgres.copy-out.ts)
 * yields exactly the bytes pg-copy-streams' own stream does, whatever the rows' sizes, on a real
 * PostgreSQL; its errors and the reader's end the read. PostgreSQL pass only (it opens a test store
 * for its schema's connection).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { BinaryCopyRows } from '../../src/store/content/content-store.postgres.js';
import { copyOut, eachPiece } from '../../src/store/postgres/postgres.copy-out.js';
import { createTestStore, TEST_STORE_KIND } from '../helpers.js';

test('copyOut yields the bytes of pg-copy-streams, in pieces, for rows of any size', {
  skip: TEST_STORE_KIND !== 'postgres' && 'PostgreSQL pass only',
}, async () => {
  const t = await createTestStore();
  const client = new pg.Client({ connectionString: t.env.DATABASE_URL });
  await client.connect();
  const read = async (stream: NodeJS.ReadableStream) => {
    const parts: Buffer[] = [];
    for await (const part of stream) parts.push(part as Buffer);
    return parts;
  };
  try {
    await fc.assert(
      fc.asyncProperty(
        // Row sizes from empty to several socket reads (64 KiB), so that messages end inside reads.
        fc.array(fc.oneof(fc.nat({ max: 300 }), fc.integer({ min: 60_000, max: 300_000 })), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.integer({ min: 1, max: 255 }),
        async (sizes, seed) => {
          const sql = `COPY (SELECT n::int, substring(decode(repeat(lpad(to_hex((n * ${seed}) % 256), 2, '0') || 'a5c3', 300000), 'hex') FROM 1 FOR size)
            FROM unnest('{${sizes.join(',')}}'::int[]) WITH ORDINALITY AS t(size, n) ORDER BY n) TO STDOUT (FORMAT binary)`;
          const expected = Buffer.concat(await read(client.query(copyTo(sql))));
          const pieces: Buffer[] = [];
          await eachPiece(client.query(copyOut(sql)), (piece) => pieces.push(piece));
          assert.ok(pieces.every((piece) => Buffer.isBuffer(piece)));
          assert.ok(Buffer.concat(pieces).equals(expected), 'the same bytes');
          const rows = new BinaryCopyRows();
          const got = pieces.flatMap((piece) =>
            rows.write(piece).map((row) => Buffer.concat(row.pieces).length),
          );
          rows.end();
          assert.deepEqual(got, sizes);
        },
      ),
      { numRuns: 25 },
    );
    // PostgreSQL's error midway and the reader's own error both end the read with that error.
    await assert.rejects(
      eachPiece(
        client.query(
          copyOut('COPY (SELECT 1 / (3 - g) FROM generate_series(1, 5) g) TO STDOUT (FORMAT binary)'),
        ),
        () => {},
      ),
      /division by zero/,
    );
    const refused = new Error('the reader refused a piece');
    const sql = 'COPY (SELECT g FROM generate_series(1, 5) g) TO STDOUT (FORMAT binary)';
    await assert.rejects(
      eachPiece(client.query(copyOut(sql)), () => {
        throw refused;
      }),
      (error) => error === refused,
    );
  } finally {
    await client.end();
    await t.close();
  }
});
