import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import {
  type ImportProgress,
  ImportValidationError,
  importFile,
} from '../../../src/modules/ingest/import.usecases.js';
import { collectAnswer } from '../../../src/modules/messages/messages.serializer.js';
import { assertStoreSound, createTestStore, type TestStore } from '../../helpers.js';

let t: TestStore;
let hub = 0;
let hubId = '';
const silent: ImportProgress = { start: () => undefined, update: () => undefined, stop: () => undefined };

before(async () => {
  t = await createTestStore();
});
beforeEach(async () => {
  hub += 1;
  hubId = String(hub);
  await t.hubs.add(hubId, {});
});
after(() => t.close());

function write(name: string, content: string): string {
  const file = path.join(t.dir, name);
  fs.writeFileSync(file, content);
  return file;
}

async function answer(id = hubId): Promise<string> {
  return (await collectAnswer(t.store.messages.stream({ hubId: id }))).toString('utf8');
}

const TRICKY = [
  'line one\nline two\r\nline three',
  'emoji 😀 family 👨‍👩‍👧‍👦 flag 🇯🇵 skin 👍🏽',
  'quotes " and backslash \\ and tab \t',
  'separators \u2028 and \u2029 and NUL-free controls \u0001\u001f',
  '日本語のテキスト、半角ｶﾅ、記号〜',
  '',
  '[Sticker]\nID: 1',
];

test('a JSON array in the answer shape comes back byte-exact, Unicode and all', async () => {
  const document = [
    {
      lineId: 'U1',
      vid: '101',
      name: 'shinobu',
      messages: TRICKY.map((msg, i) => ({
        sender: i % 2 ? 'You' : 'shinobu',
        msg,
        contentType: i === TRICKY.length - 1 ? 'sticker' : 'text',
        createdAt: new Date(Date.UTC(2019, 10, 3, 1, 0, i)).toISOString(),
      })),
    },
    {
      lineId: 'U2',
      vid: '',
      name: '',
      messages: [{ sender: 'User', msg: 'hi', contentType: 'text', createdAt: '2019-11-04T00:00:00.000Z' }],
    },
  ];
  const text = JSON.stringify(document);
  const outcome = await importFile(t.store, hubId, write('tricky.json', text), silent);
  assert.deepEqual(outcome, { received: 8, inserted: 8, duplicates: 0, contactsCreated: 2 });
  assert.equal(await answer(), text);
});

test('NDJSON: one message per line, defaults for sender and contentType', async () => {
  const lines = [
    JSON.stringify({
      lineId: 'U1',
      vid: 7,
      name: 'Ken',
      sender: 'Ken',
      msg: 'hello',
      contentType: 'text',
      createdAt: '2019-11-03T10:00:00.000Z',
    }),
    '',
    JSON.stringify({ lineId: 'U1', msg: 'reply', createdAt: '2019-11-03T19:00:00+09:00' }),
  ];
  await importFile(t.store, hubId, write('m.ndjson', `${lines.join('\n')}\n`), silent);
  assert.equal(
    await answer(),
    '[{"lineId":"U1","vid":"7","name":"Ken","messages":[{"sender":"Ken","msg":"hello","contentType":"text","createdAt":"2019-11-03T10:00:00.000Z"},{"sender":"You","msg":"reply","contentType":"text","createdAt":"2019-11-03T10:00:00.000Z"}]}]',
  );
});

test('createdAt: any RFC 3339 date-time, stored to the millisecond (extra digits truncated)', async () => {
  const lines = [
    { lineId: 'U1', msg: 'python', createdAt: '2019-11-03T19:00:00.123456+09:00' },
    { lineId: 'U1', msg: 'go', createdAt: '2019-11-03t10:00:01.999999999z' },
  ].map((m) => JSON.stringify(m));
  await importFile(t.store, hubId, write('times.ndjson', `${lines.join('\n')}\n`), silent);
  assert.match(await answer(), /"msg":"python","contentType":"text","createdAt":"2019-11-03T10:00:00.123Z"/);
  assert.match(await answer(), /"msg":"go","contentType":"text","createdAt":"2019-11-03T10:00:01.999Z"/);
  const refused = write(
    'space.ndjson',
    `${JSON.stringify({ lineId: 'U2', msg: 'x', createdAt: '2019-11-03 10:00:00Z' })}\n`,
  );
  await assert.rejects(
    importFile(t.store, hubId, refused, silent),
    /createdAt: must be an RFC 3339 date-time/,
  );
});

test('a byte-order mark at the start of an NDJSON file is ignored', async () => {
  const line = JSON.stringify({ lineId: 'U1', msg: 'bom', createdAt: '2019-11-03T10:00:00.000Z' });
  assert.equal(
    (await importFile(t.store, hubId, write('bom.ndjson', `\uFEFF${line}\n`), silent)).inserted,
    1,
  );
});

test('re-importing the same file, or an overlapping one, never duplicates; true repeats are kept', async () => {
  const repeat = { sender: 'You', msg: 'ok', contentType: 'text', createdAt: '2019-11-03T10:00:00.000Z' };
  const file = write(
    'r.json',
    JSON.stringify([{ lineId: 'U1', vid: '', name: '', messages: [repeat, repeat] }]),
  );
  assert.equal((await importFile(t.store, hubId, file, silent)).inserted, 2);
  const again = await importFile(t.store, hubId, file, silent);
  assert.deepEqual([again.inserted, again.duplicates], [0, 2]);
  const exported = write('e.json', await answer());
  assert.equal((await importFile(t.store, hubId, exported, silent)).inserted, 0);
  assert.equal(JSON.parse(await answer())[0].messages.length, 2);
});

test('a bad record names its line or index and field, and nothing is stored', async () => {
  const good = JSON.stringify({ lineId: 'U1', msg: 'fine', createdAt: '2019-11-03T10:00:00.000Z' });
  const ndjson = [
    good,
    good.replace('fine', 'fine too'),
    JSON.stringify({ lineId: 'U1', msg: 5, createdAt: '2019-11-03T10:00:00.000Z' }),
    '{not json',
    JSON.stringify({ lineId: '', msg: 'x', createdAt: '2019-02-30T00:00:00Z' }),
  ];
  const error = await importFile(t.store, hubId, write('bad.ndjson', ndjson.join('\n')), silent).catch(
    (e: unknown) => e,
  );
  assert.ok(error instanceof ImportValidationError);
  assert.match(error.message, /line 3: msg: must be a string/);
  assert.match(
    error.message,
    /line 4, column 2: not valid JSON: expected a property name in double quotes, found 'n'/,
  );
  assert.match(error.message, /line 5: lineId: must not be empty/);
  assert.match(error.message, /line 5: createdAt: 2019-02-30 is not a real date/);
  assert.equal(await answer(), '[]');

  const array = [
    {
      lineId: 'U1',
      vid: '',
      name: '',
      messages: [
        { sender: 'You', msg: 'ok', createdAt: '2019-11-03T10:00:00.000Z' },
        { sender: 'You', msg: 'ok', createdAt: 'yesterday' },
      ],
    },
  ];
  await assert.rejects(
    importFile(t.store, hubId, write('bad.json', JSON.stringify(array)), silent),
    /\[0\]\.messages\[1\]: createdAt/,
  );
  assert.equal(await answer(), '[]');
});

test('a corrupt or truncated file changes nothing', async () => {
  const file = write(
    'ok.json',
    JSON.stringify([
      {
        lineId: 'U1',
        vid: '',
        name: '',
        messages: [{ sender: 'You', msg: 'kept', createdAt: '2019-11-03T10:00:00.000Z' }],
      },
    ]),
  );
  await importFile(t.store, hubId, file, silent);
  const before = await answer();
  const full = JSON.stringify([
    {
      lineId: 'U2',
      vid: '',
      name: '',
      messages: [{ sender: 'You', msg: 'lost', createdAt: '2019-11-03T10:00:00.000Z' }],
    },
  ]);
  await assert.rejects(
    importFile(t.store, hubId, write('cut.json', full.slice(0, -5)), silent),
    /not valid JSON/,
  );
  await assert.rejects(
    importFile(t.store, hubId, write('bin.json', '\u0000\u0001binary'), silent),
    /neither a JSON array/,
  );
  await assert.rejects(importFile(t.store, hubId, write('empty.json', '  \n'), silent), /is empty/);
  await assert.rejects(importFile(t.store, hubId, path.join(t.dir, 'missing.json'), silent), /cannot read/);
  await assert.rejects(
    importFile(t.store, hubId, write('obj.json', '[1, 2]'), silent),
    /\[0\]: contact: must be a JSON object/,
  );
  assert.equal(await answer(), before);
  await assertStoreSound(t.store);
});

/** Every call a progress receives, in order. */
function recordingProgress() {
  const calls: Array<[string, ...unknown[]]> = [];
  const progress: ImportProgress = {
    start: (total, unit, pass) => calls.push(['start', total, unit, pass]),
    update: (done) => calls.push(['update', done]),
    stop: () => calls.push(['stop']),
  };
  return { calls, progress };
}

/** Each pass: its start, then updates rising to the total and never past it. */
function passes(calls: Array<[string, ...unknown[]]>) {
  const found: Array<{ total: number; unit: unknown; pass: unknown; last: number }> = [];
  for (const [kind, ...args] of calls) {
    if (kind === 'start') found.push({ total: args[0] as number, unit: args[1], pass: args[2], last: 0 });
    if (kind === 'update') {
      const current = found.at(-1);
      assert.ok(current, 'an update before any start');
      const done = args[0] as number;
      assert.ok(done >= current.last && done <= current.total, `${done} of ${current.total}`);
      current.last = done;
    }
  }
  return found;
}

test('progress: two passes (checking, storing), each over the file itself, not double it', async () => {
  const lines = Array.from({ length: 50 }, (_, i) =>
    JSON.stringify({ lineId: 'U1', msg: `m${i}`, createdAt: '2019-11-03T10:00:00.000Z' }),
  );
  // No line break after the last line: its bytes still end the pass at 100%, not past it.
  const file = write('p.ndjson', lines.join('\n'));
  const ndjson = recordingProgress();
  await importFile(t.store, hubId, file, ndjson.progress);
  const size = fs.statSync(file).size;
  assert.deepEqual(passes(ndjson.calls), [
    { total: size, unit: 'bytes', pass: 'checking', last: size },
    { total: size, unit: 'bytes', pass: 'storing', last: size },
  ]);
  assert.deepEqual(ndjson.calls.at(-1), ['stop']);

  const contacts = [3, 0, 4].map((count, c) => ({
    lineId: `U${c}`,
    vid: '',
    name: '',
    messages: Array.from({ length: count }, (_, i) => ({
      msg: `m${i}`,
      createdAt: '2019-11-03T10:00:00.000Z',
    })),
  }));
  const array = recordingProgress();
  await importFile(t.store, hubId, write('p.json', JSON.stringify(contacts)), array.progress);
  assert.deepEqual(passes(array.calls), [
    { total: 7, unit: 'records', pass: 'checking', last: 7 },
    { total: 7, unit: 'records', pass: 'storing', last: 7 },
  ]);
});

test('a JSON array that is not JSON is refused with its line and column', async () => {
  const file = write('broken.json', '[\n  {"lineId": "U1", "messages": []}\n  {"lineId": "U2"}\n]');
  await assert.rejects(importFile(t.store, hubId, file, silent), (error: Error) => {
    assert.equal(
      error.message,
      `${file} is not valid JSON: line 3, column 3: expected ',' or ']' after an element, found '{'`,
    );
    return true;
  });
});
