/** For random messages and random ranges, the answer equals a plain in-memory filter of the same messages. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { ImportMessage } from '../../src/store/store.js';
import { startTestServer, type TestServer } from '../helpers.js';

let server: TestServer;
let nextHub = 5000;
before(async () => {
  server = await startTestServer({ logLevel: 'warn' });
});
after(() => server?.close());

const ZONES = [
  'UTC',
  'Asia/Tokyo',
  'America/Los_Angeles',
  'Europe/London',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
];
const WINDOW_START = Date.UTC(2024, 2, 1);
const WINDOW_END = Date.UTC(2024, 2, 20);
const CONTACTS = [
  { lineId: 'Ua', vid: '1', name: 'Aiko' },
  { lineId: 'Ub', vid: '', name: '' },
  { lineId: 'Uc', vid: '300', name: 'Chris "C" \\o/' },
  { lineId: 'Ud', vid: '', name: 'Dai 🐉' },
];

function localDay(t: number, zone: string): string {
  // An independent way to name a local day: the en-CA format is YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(t);
}

const dayArb = fc
  .integer({ min: 0, max: 21 })
  .map((d) => new Date(Date.UTC(2024, 1, 29) + d * 86_400_000).toISOString().slice(0, 10));

test('answer = in-memory filter, for random messages, zones and ranges', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          contact: fc.integer({ min: 0, max: CONTACTS.length - 1 }),
          createdAt: fc.integer({ min: WINDOW_START, max: WINDOW_END }),
          fromFriend: fc.boolean(),
          msg: fc.string({ unit: 'grapheme', maxLength: 12 }),
        }),
        { maxLength: 40 },
      ),
      fc.constantFrom(...ZONES),
      fc.option(dayArb, { nil: undefined }),
      fc.option(dayArb, { nil: undefined }),
      async (drafts, zone, fromDay, toDay) => {
        const [from, to] = fromDay && toDay && fromDay > toDay ? [toDay, fromDay] : [fromDay, toDay];
        nextHub += 1;
        const hubId = String(nextHub);
        await server.hubs.add(hubId, { timeZone: zone });
        const { key } = await server.keys.issue(hubId, 'read', '');
        const messages: ImportMessage[] = drafts.map((d, i) => {
          const contact = CONTACTS[d.contact] ?? CONTACTS[0]!;
          return {
            ...contact,
            sender: d.fromFriend ? null : 'You',
            msg: d.msg,
            contentType: 'text',
            createdAt: d.createdAt,
            sourceId: `p${i}`,
          };
        });
        async function* once() {
          yield messages;
        }
        await server.store.messages.importAll(hubId, once(), 0);

        const firstSeen: string[] = [];
        for (const m of messages) if (!firstSeen.includes(m.lineId)) firstSeen.push(m.lineId);
        const inRange = messages
          .map((m, arrival) => ({ m, arrival }))
          .filter(
            ({ m }) =>
              (!from || localDay(m.createdAt, zone) >= from) && (!to || localDay(m.createdAt, zone) <= to),
          );
        const expected = firstSeen
          .map((lineId) => {
            const contact = CONTACTS.find((c) => c.lineId === lineId)!;
            const own = inRange
              .filter(({ m }) => m.lineId === lineId)
              .sort((a, b) => a.m.createdAt - b.m.createdAt || a.arrival - b.arrival)
              .map(({ m }) => ({
                sender: m.sender ?? (contact.name || 'User'),
                msg: m.msg,
                contentType: 'text',
                createdAt: new Date(m.createdAt).toISOString(),
              }));
            return { lineId, vid: contact.vid, name: contact.name, messages: own };
          })
          .filter((c) => c.messages.length > 0);

        const query = new URLSearchParams({ apikey: key });
        if (from) query.set('from', from);
        if (to) query.set('to', to);
        const response = await server.request(`/api/line/${hubId}/messages?${query}`);
        assert.equal(response.status, 200);
        assert.deepEqual(await response.json(), expected);
      },
    ),
    { numRuns: 60 },
  );
});
