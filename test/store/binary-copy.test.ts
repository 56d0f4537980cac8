/**
 * The reader of PostgreSQL's binary COPY that serves content kept in PostgreSQL: however the data is
 * split into parts (as the socket delivers it), it yields the tuples a plain reader of the whole
 * buffer finds, bytes intact; cut or malformed data is an error, never fewer bytes. On PostgreSQL,
 * the COPY stream that hands the socket's pieces on unjoined (copyOut) yields exactly the bytes
 * pg-copy-streams' own stream does, whatever the rows' sizes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { BinaryCopyRows } from '../../src/store/content/content-store.postgres.js';
import { copyOut, eachPiece } from '../../src/store/postgres/postgres.copy-out.js';
import { TEST_DATABASE_URL, TEST_STORE_KIND } from '../helpers.js';

/** What PostgreSQL sends for `COPY (SELECT n, bytes …) TO STDOUT (FORMAT binary)`. */
function copyData(rows: Array<{ n: number; bytes: Buffer }>, extension: Buffer): Buffer {
  const head = Buffer.alloc(19);
  Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1').copy(head);
  head.writeUInt32BE(extension.length, 15);
  const tuples = rows.map(({ n, bytes }) => {
    const fields = Buffer.alloc(14);
    fields.writeInt16BE(2, 0);
    fields.writeInt32BE(4, 2);
    fields.writeInt32BE(n, 6);
    fields.writeInt32BE(bytes.length, 10);
    return Buffer.concat([fields, bytes]);
  });
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1, 0);
  return Buffer.concat([head, extension, ...tuples, trailer]);
}

/** `data` cut at the given points. */
function split(data: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (data.length + 1)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let from = 0;
  for (const point of [...points, data.length]) {
    if (point > from) parts.push(data.subarray(from, point));
    from = Math.max(from, point);
  }
  return parts;
}

const rowsArb = fc.array(
  fc.record({
    n: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    bytes: fc.uint8Array({ maxLength: 600 }).map((array) => Buffer.from(array)),
  }),
  { maxLength: 6 },
);

test('any tuples, split anywhere: the same tuples, every byte in order', () => {
  fc.assert(
    fc.property(
      rowsArb,
      fc.uint8Array({ maxLength: 8 }),
      fc.array(fc.nat(), { maxLength: 40 }),
      (rows, extension, cuts) => {
        const reader = new BinaryCopyRows();
        const got: Array<{ n: number; bytes: Buffer }> = [];
        for (const part of split(copyData(rows, Buffer.from(extension)), cuts)) {
          for (const row of reader.write(part)) got.push({ n: row.n, bytes: Buffer.concat(row.pieces) });
        }
        reader.end();
        assert.deepEqual(
          got,
          rows.map(({ n, bytes }) => ({ n, bytes })),
        );
      },
    ),
  );
});

test('data cut short, a wrong signature or bytes after the trailer are errors', () => {
  fc.assert(
    fc.property(rowsArb, fc.nat(), (rows, cut) => {
      const data = copyData(rows, Buffer.alloc(0));
      const short = data.subarray(0, cut % data.length);
      const reader = new BinaryCopyRows();
      assert.throws(() => {
        reader.write(short);
        reader.end();
      });
    }),
  );
  const data = copyData([{ n: 1, bytes: Buffer.from('x') }], Buffer.alloc(0));
  const forged = Buffer.from(data);
  forged[0] = 0x51;
  assert.throws(() => new BinaryCopyRows().write(forged), /malformed COPY/);
  assert.throws(() => new BinaryCopyRows().write(Buffer.concat([data, Buffer.from([0])])), /malformed COPY/);
});

test('copyOut yields the bytes of pg-copy-streams, in pieces, for rows of any size', {
  skip: TEST_STORE_KIND !== 'postgres' && 'PostgreSQL pass only',
}, async () => {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
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
  }
});
