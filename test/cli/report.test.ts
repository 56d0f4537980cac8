/**
 * `./bin/chatlog report` (CONTRACT §17 from the command line), on a store no server serves: its
 * `--json` is what the API's figures are (the store's own report of the same range), its `--csv` is
 * the days with a byte order mark, its text says the totals in words; a bad range is exit 1 with
 * the reason, and the two formats at once are refused.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { ReportColumns } from '../../src/modules/reports/reports.columns.js';
import { buildReport } from '../../src/modules/reports/reports.usecases.js';
import { BIN } from '../fixtures/serve.js';
import { createTestStore, message, storeMessages, type TestStore, withoutSettings } from '../helpers.js';

const HUB = '4701';
let t: TestStore;

before(async () => {
  t = await createTestStore();
  await t.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  const at = (iso: string) => Date.parse(iso);
  await storeMessages(t.store, HUB, [
    message({ lineId: 'Ua', name: '山田', msg: '予約できますか', createdAt: at('2026-11-02T01:00:00Z') }),
    message({ lineId: 'Ua', sender: 'You', msg: 'はい', createdAt: at('2026-11-02T01:02:00Z') }),
    message({ lineId: 'Ub', msg: 'こんにちは', createdAt: at('2026-11-03T23:30:00Z') }),
  ]);
});
after(() => t?.close());

function report(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'report', HUB, ...args],
      { env: { ...withoutSettings(), ...t.env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('chatlog report: --json is the report, --csv its days, the text its totals in words', async () => {
  const json = await report('--from', '2026-11-01', '--to', '2026-11-04', '--json');
  assert.equal(json.code, 0, json.stderr);
  const expected = await buildReport(new ReportColumns(t.store), {
    hubId: HUB,
    from: { year: 2026, month: 11, day: 1 },
    to: { year: 2026, month: 11, day: 4 },
    timeZone: 'Asia/Tokyo',
  });
  assert.deepEqual(JSON.parse(json.stdout), expected);
  assert.deepEqual(
    expected.days.map((d) => [d.day, d.fromFriends, d.answered, d.responseSeconds.median]),
    [
      ['2026-11-01', 0, 0, null],
      ['2026-11-02', 1, 1, 120],
      ['2026-11-03', 0, 0, null],
      ['2026-11-04', 1, 0, null], // 08:30 on the 4th in Tokyo
    ],
  );
  const csv = await report('--from', '2026-11-01', '--to', '2026-11-04', '--csv');
  assert.equal(csv.code, 0, csv.stderr);
  const lines = csv.stdout.split('\r\n');
  assert.ok(lines[0]?.startsWith('\uFEFFday,fromFriends,fromAccount,'));
  assert.equal(lines[2], '2026-11-02,1,1,1,1,1,1,0,120,120');
  const text = await report('--from', '2026-11-01', '--to', '2026-11-04');
  assert.match(text.stdout, /2 messages from friends, 1 from the account; 2 contacts \(2 new\)/);
  assert.match(
    text.stdout,
    /2 waits: 1 answered \(median 2\.0 min, p90 2\.0 min\), 1 not answered by the end of 2026-11-04/,
  );
});

test('chatlog report: a bad range is exit 1 with its reason; --json and --csv at once are refused', async () => {
  const long = await report('--from', '2025-11-01', '--to', '2026-11-04');
  assert.equal(long.code, 1);
  assert.match(long.stderr, /at most 366 days/);
  const zone = await report('--from', '2026-11-01', '--to', '2026-11-04', '--tz', 'JST');
  assert.equal(zone.code, 1);
  assert.match(zone.stderr, /--tz must be a time zone name/);
  const both = await report('--from', '2026-11-01', '--to', '2026-11-04', '--json', '--csv');
  assert.equal(both.code, 1);
  assert.match(both.stderr, /choose one/);
});
