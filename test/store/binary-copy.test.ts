/**
 * The reader of PostgreSQL's binary COPY that serves content kept in PostgreSQL: however the data is
 * split into parts (as the socket delivers it), it yields the tuples a plain reader of the whole
 * buffer finds, bytes intact; cut or malformed data is an error, never fewer bytes. The COPY stream
 * itself, on PostgreSQL: copy-out.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BinaryCopyRows } from '../../src/store/content/content-store.postgres.js';

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
