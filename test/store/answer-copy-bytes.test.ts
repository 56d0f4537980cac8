/**
 * PostgreSQL's answers are written from its binary COPY's bytes (postgres.answers.ts), which come
 * in whatever pieces the socket read them: rows of any text, cut anywhere, give the serializer's
 * answer for the same rows, byte for byte; bytes that are not the answer's rows are an error, never
 * a different answer. The COPY here is made as PostgreSQL's documentation describes its binary
 * format (signature, flags, header extension; per row a field count and each field's length and
 * bytes; -1 at the end), so this runs without a database; test/store/answers-json.test.ts reads
 * real COPYs.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from '../../src/lib/calendar.js';
import { collectAnswer } from '../../src/modules/messages/messages.serializer.js';
import { answerFromCopy } from '../../src/store/postgres/postgres.answers.js';
import type { MessageRow } from '../../src/store/store.js';

function int64(value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(BigInt(value));
  return bytes;
}

function field(value: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(value.length);
  return Buffer.concat([length, value]);
}

/** The binary COPY of answer rows (answer.COLUMNS' order), as PostgreSQL sends it. */
function binaryCopy(rows: MessageRow[], extension = 0): Buffer {
  const header = Buffer.alloc(19 + extension);
  Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1').copy(header);
  header.writeUInt32BE(extension, 15);
  const parts: Buffer[] = [header];
  for (const row of rows) {
    const count = Buffer.alloc(2);
    count.writeInt16BE(8);
    parts.push(
      count,
      field(int64(row.contactId)),
      ...[row.lineId, row.vid, row.name, row.sender, row.msg, row.contentType].map((text) =>
        field(Buffer.from(text, 'utf8')),
      ),
      field(int64(row.createdAt)),
    );
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

/** `bytes` cut at `cuts` (any positions), as a stream of those pieces. */
function piecesOf(bytes: Buffer, cuts: number[]): Readable {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    pieces.push(bytes.subarray(from, cut));
    from = cut;
  }
  return Readable.from(pieces, { objectMode: false });
}

async function written(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of answerFromCopy(stream)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

// What PostgreSQL's text holds: anything but NUL (lone surrogates never reach it).
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', '\\', '\n', '\u0001', '\u001f', '\u007f', '\u2028', '😀', '予', 'é'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => c !== '\u0000'),
  ),
  maxLength: 40,
});
const contactArb = fc.record({ lineId: text, vid: text, name: text });
const messageArb = fc.record({
  contact: fc.integer({ min: 0, max: 4 }),
  sender: text,
  msg: text,
  contentType: fc.constantFrom('text', 'image'),
  createdAt: fc.oneof(
    fc.integer({ min: MIN_TIMESTAMP_MS, max: MAX_TIMESTAMP_MS }),
    fc.constantFrom(MIN_TIMESTAMP_MS, MAX_TIMESTAMP_MS, -1, 0),
  ),
});

test('rows of any text, cut anywhere, are written as the serializer writes them', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(contactArb, { minLength: 5, maxLength: 5 }),
      fc.array(messageArb, { maxLength: 20 }),
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.integer({ min: 0, max: 3 }),
      async (contacts, messages, cuts, extension) => {
        // In answer order: by contact (ids beyond 2^32 too), each row with its contact's fields.
        const rows: MessageRow[] = [...messages]
          .sort((a, b) => a.contact - b.contact)
          .map(({ contact, ...message }) => ({
            ...message,
            ...(contacts[contact] as { lineId: string; vid: string; name: string }),
            contactId: contact * 2 ** 40 + 7,
          }));
        async function* batches() {
          yield rows;
        }
        const expected = await collectAnswer(batches());
        const actual = await written(piecesOf(binaryCopy(rows, extension), cuts));
        assert.equal(actual.toString('utf8'), expected.toString('utf8'));
        assert.ok(actual.equals(expected));
      },
    ),
    { numRuns: 300 },
  );
});

test('a long answer comes in chunks of about 64 KiB, the same bytes', async () => {
  const rows: MessageRow[] = Array.from({ length: 3_000 }, (_, i) => ({
    contactId: Math.floor(i / 700),
    lineId: `U${Math.floor(i / 700)}`,
    vid: '',
    name: '予',
    sender: 'User',
    msg: `${i} ${'x予"'.repeat(30)}`,
    contentType: 'text',
    createdAt: 1_700_000_000_000 + i,
  }));
  async function* batches() {
    yield rows;
  }
  const expected = await collectAnswer(batches());
  const chunks: Buffer[] = [];
  for await (const chunk of answerFromCopy(piecesOf(binaryCopy(rows), [1, 7, 1_000, 99_999]))) {
    chunks.push(chunk);
  }
  assert.ok(Buffer.concat(chunks).equals(expected));
  assert.ok(chunks.length > 4);
  for (const chunk of chunks.slice(0, -1)) assert.ok(chunk.length >= 64 * 1024 && chunk.length < 96 * 1024);
});

test('bytes that are not an answer COPY are an error, not an answer', async () => {
  const good = binaryCopy([
    {
      contactId: 1,
      lineId: 'U1',
      vid: '',
      name: 'a',
      sender: 'a',
      msg: 'hi',
      contentType: 'text',
      createdAt: 0,
    },
  ]);
  const cases: Buffer[] = [
    Buffer.from('not a copy at all, long enough to hold a header'),
    // Cut before its end marker: the COPY ended early.
    good.subarray(0, good.length - 2),
    // Cut inside a row.
    good.subarray(0, good.length - 10),
    // Seven columns where the answer has eight.
    Buffer.concat([good.subarray(0, 19), Buffer.from([0, 7]), good.subarray(21)]),
    // Bytes after the end marker.
    Buffer.concat([good, Buffer.from([0])]),
  ];
  for (const bytes of cases) {
    await assert.rejects(written(piecesOf(bytes, [5])), /malformed|before its end/);
  }
});
