/**
 * CONTRACT §17, reports, against an oracle: for random hubs (messages of friends and of the account
 * interleaved, ties in time, a friend named You, contacts erased, messages unsent, retention
 * applied, zones with and without daylight saving time and one a quarter of an hour off), the
 * figures of GET /reports equal those computed from GET /messages's answer with §17's words, for
 * ranges across the zone's day boundaries; and a write shows in the next report. Then the checks.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../helpers.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

const ZONES = ['Asia/Tokyo', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'UTC'];
const DAY_MS = 86_400_000;

interface ReadContact {
  lineId: string;
  messages: Array<{ sender: string; createdAt: string }>;
}

interface Figures {
  fromFriends: number;
  fromAccount: number;
  contacts: number;
  newContacts: number;
  waits: number;
  answered: number;
  unanswered: number;
  responseSeconds: { median: number | null; p90: number | null };
}

/** The calendar day and the weekday/hour of an instant in a zone, as Intl says (the oracle's clock). */
function localOf(epochMs: number, timeZone: string): { day: string; weekday: number; hour: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      hourCycle: 'h23',
      weekday: 'short',
    })
      .formatToParts(epochMs)
      .map((p) => [p.type, p.value]),
  );
  const weekday = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(parts.weekday as string);
  return { day: `${parts.year}-${parts.month}-${parts.day}`, weekday, hour: Number(parts.hour) };
}

const rank = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? null : (sorted[Math.ceil(p * sorted.length) - 1] as number);
};

/** §17's figures, word for word, from the read API's answer (every message of the hub). */
function oracle(contacts: ReadContact[], from: string, to: string, timeZone: string) {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  const blank = (): Figures & { seconds: number[]; who: Set<string> } => ({
    fromFriends: 0,
    fromAccount: 0,
    contacts: 0,
    newContacts: 0,
    waits: 0,
    answered: 0,
    unanswered: 0,
    responseSeconds: { median: null, p90: null },
    seconds: [],
    who: new Set(),
  });
  const perDay = new Map(days.map((d) => [d, blank()]));
  const total = blank();
  const hours = Array.from({ length: 7 }, () => new Array<number>(24).fill(0));
  for (const contact of contacts) {
    const messages = contact.messages.map((m) => ({
      account: m.sender === 'You',
      at: Date.parse(m.createdAt),
      ...localOf(Date.parse(m.createdAt), timeZone),
    }));
    messages.forEach((m, i) => {
      const day = perDay.get(m.day);
      if (i === 0 && day) day.newContacts += 1;
      if (day) {
        if (m.account) day.fromAccount += 1;
        else {
          day.fromFriends += 1;
          (hours[m.weekday] as number[])[m.hour] = ((hours[m.weekday] as number[])[m.hour] ?? 0) + 1;
        }
        day.who.add(contact.lineId);
        total.who.add(contact.lineId);
      }
      // A wait: a friend's message that is the first or follows one from the account.
      const startsWait = !m.account && (i === 0 || messages[i - 1]?.account === true);
      if (startsWait && day) {
        day.waits += 1;
        const answer = messages.slice(i + 1).find((n) => n.account);
        if (answer && answer.day <= to) {
          day.answered += 1;
          day.seconds.push((answer.at - m.at) / 1000);
        }
      }
    });
  }
  const finish = (f: Figures & { seconds: number[]; who: Set<string> }): Figures => ({
    fromFriends: f.fromFriends,
    fromAccount: f.fromAccount,
    contacts: f.who.size,
    newContacts: f.newContacts,
    waits: f.waits,
    answered: f.answered,
    unanswered: f.waits - f.answered,
    responseSeconds: { median: rank(f.seconds, 0.5), p90: rank(f.seconds, 0.9) },
  });
  const dayRows = days.map((d) => ({ day: d, ...finish(perDay.get(d) as ReturnType<typeof blank>) }));
  const sum = (pick: (f: Figures) => number) => dayRows.reduce((n, d) => n + pick(d), 0);
  const seconds = days.flatMap((d) => (perDay.get(d) as ReturnType<typeof blank>).seconds);
  return {
    totals: {
      fromFriends: sum((f) => f.fromFriends),
      fromAccount: sum((f) => f.fromAccount),
      contacts: total.who.size,
      newContacts: sum((f) => f.newContacts),
      waits: sum((f) => f.waits),
      answered: sum((f) => f.answered),
      unanswered: sum((f) => f.unanswered),
      responseSeconds: { median: rank(seconds, 0.5), p90: rank(seconds, 0.9) },
    },
    days: dayRows,
    hours,
  };
}

let hubs = 0;
let readKey = '';
let adminKey = '';

async function get(path: string): Promise<{ status: number; json: unknown }> {
  const res = await server.request(path);
  return { status: res.status, json: await res.json() };
}

const dayOf = (epochMs: number) => new Date(epochMs).toISOString().slice(0, 10);

test('the figures equal an oracle over the read API, whatever the hub, the zone and the range', async () => {
  const base = Date.parse('2026-03-06T00:00:00Z'); // New York and Lord Howe change their clocks soon after
  const friends = ['Ua', 'Ub', 'Uc', 'Ud'];
  const event = fc.record({
    friend: fc.integer({ min: 0, max: friends.length - 1 }),
    account: fc.boolean(),
    // Quarter hours over ten days: many ties, and every hour of the day.
    at: fc.integer({ min: 0, max: 10 * 96 }),
  });
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...ZONES),
      fc.array(event, { minLength: 0, maxLength: 60 }),
      fc.record({
        namedYou: fc.boolean(),
        erase: fc.option(fc.integer({ min: 0, max: friends.length - 1 }), { nil: undefined }),
        unsend: fc.array(fc.nat(59), { maxLength: 4 }),
        retentionDays: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
        split: fc.integer({ min: 0, max: 70 }),
      }),
      fc.integer({ min: -1, max: 10 }),
      fc.integer({ min: 0, max: 11 }),
      fc.option(fc.constantFrom(...ZONES), { nil: undefined }),
      async (zone, events, writes, firstDay, length, tz) => {
        hubs += 1;
        const hubId = String(171_000 + hubs);
        await server.hubs.add(hubId, { timeZone: zone });
        readKey = (await server.keys.issue(hubId, 'read', '')).key;
        adminKey = (await server.keys.issue(hubId, 'admin', '')).key;
        const operations = events.map((e, i) => ({
          kind: 'message' as const,
          lineId: friends[e.friend] as string,
          sender: e.account ? 'You' : null,
          msg: `m${i}`,
          contentType: 'text',
          createdAt: base + e.at * 900_000,
          sourceId: `ingest:r${i}`,
          id: `r${i}`,
          sourceKind: null,
          sourceChatId: null,
        }));
        const from = dayOf(base + firstDay * DAY_MS);
        const to = dayOf(base + (firstDay + length) * DAY_MS);
        const tzParam = tz === undefined ? '' : `&tz=${encodeURIComponent(tz)}`;
        const check = async () => {
          const report = await get(
            `/api/line/${hubId}/reports?apikey=${readKey}&from=${from}&to=${to}${tzParam}`,
          );
          assert.equal(report.status, 200, JSON.stringify(report.json));
          const all = await get(`/api/line/${hubId}/messages?apikey=${readKey}`);
          const expected = oracle(all.json as ReadContact[], from, to, tz ?? zone);
          const got = report.json as ReturnType<typeof oracle> & {
            hubId: string;
            timeZone: string;
            from: string;
            to: string;
          };
          assert.deepEqual(
            { hubId: got.hubId, timeZone: got.timeZone, from: got.from, to: got.to },
            { hubId, timeZone: tz ?? (await server.store.hubs.get(hubId))?.timeZone, from, to },
          );
          assert.deepEqual(got.days, expected.days);
          assert.deepEqual(got.totals, expected.totals);
          assert.deepEqual(got.hours, expected.hours);
          return all.json as ReadContact[];
        };
        // Some messages at once, a report (the hub's columns read whole), then the rest one request
        // at a time in a random order of times, each followed by a report (each message taken in at
        // its place), then the changes of history (the columns read whole again).
        const split = Math.min(writes.split, operations.length);
        await server.store.messages.ingest(hubId, operations.slice(0, split), Date.now());
        await check();
        for (const operation of operations.slice(split)) {
          await server.store.messages.ingest(hubId, [operation], Date.now());
          await check();
        }
        // Each change of history, then a report: an unsend and a renamed contact take in that
        // contact's messages again, an erasure and retention read the hub whole.
        if (writes.namedYou) {
          await server.store.contacts.upsert(hubId, 'Ub', { name: 'You' }, Date.now());
          await check();
        }
        for (const n of writes.unsend) {
          if (n < events.length) {
            await server.store.messages.ingest(
              hubId,
              [{ kind: 'unsend', sourceId: `ingest:r${n}`, at: Date.now() }],
              Date.now(),
            );
            await check();
          }
        }
        if (writes.erase !== undefined) {
          await server.request(`/api/line/${hubId}/contacts/${friends[writes.erase]}?apikey=${adminKey}`, {
            method: 'DELETE',
          });
          await check();
        }
        if (writes.retentionDays !== undefined) {
          // Two batches, as a run of retention takes them: only the first is in the feed.
          for (const announce of [true, false]) {
            await server.store.retention.purgeBatch(
              hubId,
              base + writes.retentionDays * DAY_MS,
              Math.max(1, Math.ceil(events.length / 2)),
              Date.now(),
              announce,
            );
            await check();
          }
        }
        const contacts = await check();
        // Who waits now: a contact whose last message is the friend's, since the friend's first
        // message after the account's last (or its first), the longest wait first.
        const waiting = contacts
          .flatMap((c) => {
            const last = c.messages.at(-1);
            if (!last || last.sender === 'You') return [];
            const answeredAt = c.messages.findLastIndex((m) => m.sender === 'You');
            return [{ lineId: c.lineId, since: Date.parse(c.messages[answeredAt + 1]?.createdAt ?? '') }];
          })
          .sort((a, b) => a.since - b.since || (a.lineId < b.lineId ? -1 : 1));
        const now = await server.store.reports.waiting(hubId, 100);
        assert.deepEqual(
          now.contacts.map((c) => ({ lineId: c.lineId, since: c.since })),
          waiting,
        );
        assert.equal(now.total, waiting.length);
      },
    ),
    { numRuns: Number(process.env.CHATLOG_TEST_REPORT_RUNS ?? 60) },
  );
});

test('a message, an unsend and an erasure show in the next report, as soon as their request was answered', async () => {
  const hubId = '171999';
  await server.hubs.add(hubId, { timeZone: 'Asia/Tokyo' });
  const read = (await server.keys.issue(hubId, 'read', '')).key;
  const ingest = (await server.keys.issue(hubId, 'ingest', '')).key;
  const admin = (await server.keys.issue(hubId, 'admin', '')).key;
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Tokyo' }).format(Date.now());
  const totals = async () =>
    (
      (await get(`/api/line/${hubId}/reports?apikey=${read}&from=${today}&to=${today}`)).json as {
        totals: Figures;
      }
    ).totals;
  const post = (body: unknown) =>
    server.request(`/ingest/line/${hubId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ingest}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  assert.equal(
    (await post([{ lineId: 'Ufresh', msg: '予約したいです', sender: 'Ken', id: 'f1' }])).status,
    200,
  );
  assert.deepEqual(
    { ...(await totals()), responseSeconds: undefined },
    {
      fromFriends: 1,
      fromAccount: 0,
      contacts: 1,
      newContacts: 1,
      waits: 1,
      answered: 0,
      unanswered: 1,
      responseSeconds: undefined,
    },
  );
  const asked = Date.now();
  assert.equal(
    (
      await post([
        { lineId: 'Ufresh', msg: 'どうぞ', id: 'f2', createdAt: new Date(asked + 90_000).toISOString() },
      ])
    ).status,
    200,
  );
  const answered = await totals();
  assert.equal(answered.answered, 1);
  assert.ok((answered.responseSeconds.median ?? 0) > 0);
  const erased = await server.request(`/api/line/${hubId}/contacts/Ufresh?apikey=${admin}`, {
    method: 'DELETE',
  });
  assert.equal(erased.status, 200);
  assert.deepEqual((await totals()).contacts, 0);
});

test('refusals after the key checks, each its code; a key of another scope is refused', async () => {
  const hubId = '171998';
  await server.hubs.add(hubId, { timeZone: 'Asia/Tokyo' });
  const read = (await server.keys.issue(hubId, 'read', '')).key;
  const ingest = (await server.keys.issue(hubId, 'ingest', '')).key;
  const cases: Array<[string, number, string]> = [
    ['to=2026-11-28', 400, 'invalid_date'],
    ['from=2026-11-01', 400, 'invalid_date'],
    ['from=2026-02-30&to=2026-03-01', 400, 'invalid_date'],
    ['from=2026-11-28&to=2026-11-01', 400, 'invalid_range'],
    ['from=2025-11-01&to=2026-11-02', 400, 'range_too_long'],
    ['from=2025-11-01&to=2026-11-01&tz=JST', 400, 'invalid_time_zone'],
    ['from=2026-11-01&from=2026-11-02&to=2026-11-03', 400, 'duplicate_parameter'],
  ];
  for (const [query, status, code] of cases) {
    const res = await get(`/api/line/${hubId}/reports?apikey=${read}&${query}`);
    assert.deepEqual(
      [res.status, (res.json as { error: { code: string } }).error.code],
      [status, code],
      query,
    );
  }
  // 366 days, both counted, is the most; the zone as the tz database spells it.
  const longest = await get(
    `/api/line/${hubId}/reports?apikey=${read}&from=2025-11-02&to=2026-11-02&tz=asia/kathmandu`,
  );
  assert.equal(longest.status, 200);
  const body = longest.json as { days: unknown[]; timeZone: string };
  assert.equal(body.days.length, 366);
  assert.equal(body.timeZone, 'Asia/Kathmandu');
  const wrongScope = await get(`/api/line/${hubId}/reports?apikey=${ingest}&from=2026-11-01&to=2026-11-02`);
  assert.equal(wrongScope.status, 403);
});
