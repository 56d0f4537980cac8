/**
 * A hub's report columns (src/modules/reports/reports.columns.ts): messages put in one at a time,
 * in any order, hold the same columns as the same messages read whole in section 3's order (time,
 * then id): the same order, and each message's side before it of its contact, which is what a
 * report reads of a contact's history. Against a plain oracle, for random messages with many ties.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { HubColumns } from '../../../src/modules/reports/reports.columns.js';
import type { ReportMessage } from '../../../src/store/store.js';

const message = fc.record({
  contact: fc.integer({ min: 1, max: 5 }),
  createdAt: fc.integer({ min: 0, max: 12 }),
  fromAccount: fc.boolean(),
});

/** Each message's contact, time, id, side, and the side of its contact's message before it. */
function oracle(messages: readonly ReportMessage[]) {
  const sorted = [...messages].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
  const last = new Map<number, number>();
  return sorted.map((m) => {
    const previous = last.get(m.contact) ?? -1;
    last.set(m.contact, m.fromAccount ? 1 : 0);
    return { contact: m.contact, createdAt: m.createdAt, id: m.id, fromAccount: m.fromAccount, previous };
  });
}

function held(hub: HubColumns, contactIds: Map<number, number>) {
  const rows = [];
  for (let i = 0; i < hub.count; i++) {
    rows.push({
      contact: contactIds.get(hub.contact[i] as number),
      createdAt: hub.createdAt[i],
      id: hub.id[i],
      fromAccount: hub.fromAccount[i] === 1,
      previous: hub.previous[i],
    });
  }
  return rows;
}

test('messages put in one at a time or together, in any order, are held as the same messages read whole', () => {
  fc.assert(
    fc.property(
      fc.array(message, { maxLength: 40 }),
      fc.nat(40),
      fc.func(fc.integer()),
      fc.boolean(),
      (drawn, wholeCount, shuffleKey, together) => {
        const messages: ReportMessage[] = drawn.map((m, i) => ({ ...m, id: i + 1, seq: i + 1 }));
        const sorted = [...messages].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
        // Some read whole first (in order), the rest put in one at a time in a random order.
        const whole = sorted.slice(0, Math.min(wholeCount, sorted.length));
        const rest = sorted.slice(whole.length).sort((a, b) => shuffleKey(a.id) - shuffleKey(b.id));
        const hub = new HubColumns(0, 0);
        hub.pushInOrder(whole);
        // One at a time, or all those stored since together (more than a few before the newest
        // held go in one pass over the columns).
        if (together) hub.insertAll(rest);
        else for (const m of rest) hub.insert(m);
        // Put in twice: held once.
        for (const m of rest.slice(0, 3)) hub.insert(m);
        // The dense index of each contact, back to its row id.
        const contactIds = new Map<number, number>();
        for (let i = 0; i < hub.count; i++) {
          const id = messages.find((m) => m.id === hub.id[i])?.contact as number;
          contactIds.set(hub.contact[i] as number, id);
        }
        assert.deepEqual(held(hub, contactIds), oracle(messages));
        // A range is the messages created in it.
        const input = hub.slice(3, 9);
        assert.equal(
          input.end - input.start,
          messages.filter((m) => m.createdAt >= 3 && m.createdAt < 9).length,
        );
      },
    ),
    { numRuns: 500 },
  );
});

test("a contact's messages read again (an unsend, a new name) replace those held, the others' as they were", () => {
  fc.assert(
    fc.property(
      fc.array(message, { maxLength: 40 }),
      fc.subarray([1, 2, 3, 4, 5, 6]),
      fc.array(message, { maxLength: 15 }),
      (drawn, replacedContacts, fresh) => {
        const messages: ReportMessage[] = drawn.map((m, i) => ({ ...m, id: i + 1, seq: i + 1 }));
        const hub = new HubColumns(0, 0);
        hub.pushInOrder([...messages].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id));
        const replaced = new Set(replacedContacts);
        // The replaced contacts' messages now: some of the old ones (others unsent), some new ones.
        const now = [
          ...messages.filter((m) => replaced.has(m.contact) && m.id % 2 === 0),
          ...fresh
            .filter((m) => replaced.has(m.contact))
            .map((m, i) => ({ ...m, id: 1000 + i, seq: 1000 + i })),
        ].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
        hub.replaceContacts(replacedContacts, now);
        const after = [...messages.filter((m) => !replaced.has(m.contact)), ...now];
        const contactIds = new Map<number, number>();
        for (let i = 0; i < hub.count; i++) {
          const id = after.find((m) => m.id === hub.id[i])?.contact as number;
          contactIds.set(hub.contact[i] as number, id);
        }
        assert.deepEqual(held(hub, contactIds), oracle(after));
        // What comes next is put after them with the side before it right.
        const next = {
          contact: replacedContacts[0] ?? 1,
          createdAt: 99,
          fromAccount: true,
          id: 5000,
          seq: 5000,
        };
        hub.insert(next);
        contactIds.set(hub.contact[hub.count - 1] as number, next.contact);
        assert.deepEqual(held(hub, contactIds), oracle([...after, next]));
      },
    ),
    { numRuns: 500 },
  );
});

test('many messages stored since, before the newest held, go in together and are held as read whole', () => {
  fc.assert(
    fc.property(fc.array(message, { minLength: 40, maxLength: 120 }), (drawn) => {
      const messages: ReportMessage[] = drawn.map((m, i) => ({ ...m, id: i + 1, seq: i + 1 }));
      const sorted = [...messages].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
      // Every other message held, the rest (spread over the whole range) and a few held ones again.
      const hub = new HubColumns(0, 0);
      hub.pushInOrder(sorted.filter((_, i) => i % 2 === 1));
      hub.insertAll([...sorted.filter((_, i) => i % 2 === 0), ...sorted.slice(0, 5)]);
      const contactIds = new Map<number, number>();
      for (let i = 0; i < hub.count; i++) {
        const id = messages.find((m) => m.id === hub.id[i])?.contact as number;
        contactIds.set(hub.contact[i] as number, id);
      }
      assert.deepEqual(held(hub, contactIds), oracle(messages));
    }),
    { numRuns: 300 },
  );
});
