/**
 * The account screen's conversation reads (store.conversations), on SQLite and (CHATLOG_TEST_STORE=
 * postgres) on PostgreSQL: contacts newest activity first with their counts, paged by keyset to the
 * end without a repeat or a gap; one contact's messages newest page, older and newer pages, and the
 * page around a message; never another hub's contact or message.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ContactSummary, ConversationMessage } from '../../src/store/store.js';
import { createTestStore, message, storeMessages, type TestStore } from '../helpers.js';

let t: TestStore;
const HUB = '700';
const OTHER = '701';

before(async () => {
  t = await createTestStore();
  await t.hubs.add(HUB, {});
  await t.hubs.add(OTHER, {});
  // Ua: 3 messages, newest at 300; Ub: 40 messages, newest at 1039; Uc: 1 message at 300 (a tie
  // with Ua, seen later); Ud: no message (follow only).
  await storeMessages(t.store, HUB, [
    message({ lineId: 'Ua', name: 'Aiko', createdAt: 100, msg: 'a1' }),
    message({ lineId: 'Ua', createdAt: 200, msg: 'a2', sender: 'You' }),
    message({ lineId: 'Ua', createdAt: 300, msg: 'a3' }),
    ...Array.from({ length: 40 }, (_, i) =>
      message({ lineId: 'Ub', vid: '901', createdAt: 1000 + i, msg: `b${i}` }),
    ),
    message({ lineId: 'Uc', createdAt: 300, msg: 'c1' }),
  ]);
  await t.store.contacts.upsert(HUB, 'Ud', {}, Date.now());
  await storeMessages(t.store, OTHER, [message({ lineId: 'Ua', createdAt: 5000, msg: 'other hub' })]);
});
after(() => t.close());

async function allContacts(limit: number): Promise<{ contacts: ContactSummary[]; pages: number }> {
  const contacts: ContactSummary[] = [];
  let pages = 0;
  let afterKey: { lastAt: number; contactId: number } | undefined;
  for (;;) {
    const page = await t.store.conversations.contacts({ hubId: HUB, limit, after: afterKey });
    pages += 1;
    contacts.push(...page.contacts);
    const last = page.contacts.at(-1);
    if (!page.hasMore || !last) return { contacts, pages };
    afterKey = { lastAt: last.lastMessageAt ?? Number.MIN_SAFE_INTEGER, contactId: last.contactId };
  }
}

test('contacts come newest activity first, with name, vid, last message time and count', async () => {
  const page = await t.store.conversations.contacts({ hubId: HUB, limit: 10 });
  assert.equal(page.hasMore, false);
  assert.deepEqual(
    page.contacts.map(({ lineId, vid, name, lastMessageAt, messageCount }) => ({
      lineId,
      vid,
      name,
      lastMessageAt,
      messageCount,
    })),
    [
      { lineId: 'Ub', vid: '901', name: '', lastMessageAt: 1039, messageCount: 40 },
      // A tie on the newest message: the contact seen later first.
      { lineId: 'Uc', vid: '', name: '', lastMessageAt: 300, messageCount: 1 },
      { lineId: 'Ua', vid: '', name: 'Aiko', lastMessageAt: 300, messageCount: 3 },
      { lineId: 'Ud', vid: '', name: '', lastMessageAt: null, messageCount: 0 },
    ],
  );
});

test('contact pages follow each other to the end, each contact once', async () => {
  for (const limit of [1, 2, 3]) {
    const { contacts, pages } = await allContacts(limit);
    assert.deepEqual(
      contacts.map((c) => c.lineId),
      ['Ub', 'Uc', 'Ua', 'Ud'],
    );
    assert.equal(pages, Math.ceil(4 / limit));
  }
  const other = await t.store.conversations.contacts({ hubId: OTHER, limit: 10 });
  assert.deepEqual(
    other.contacts.map((c) => [c.lineId, c.messageCount]),
    [['Ua', 1]],
  );
});

const texts = (messages: ConversationMessage[]) => messages.map((m) => m.msg);

test('a conversation opens on its newest messages, oldest first, and pages older and newer', async () => {
  const newest = await t.store.conversations.messages({ hubId: HUB, lineId: 'Ub', limit: 15 });
  assert.ok(newest);
  assert.deepEqual(
    texts(newest.messages),
    Array.from({ length: 15 }, (_, i) => `b${25 + i}`),
  );
  assert.equal(newest.hasOlder, true);
  assert.equal(newest.hasNewer, false);
  const first = newest.messages[0];
  assert.ok(first);
  const older = await t.store.conversations.messages({
    hubId: HUB,
    lineId: 'Ub',
    limit: 15,
    at: { before: first },
  });
  assert.deepEqual(
    texts(older?.messages ?? []),
    Array.from({ length: 15 }, (_, i) => `b${10 + i}`),
  );
  assert.equal(older?.hasOlder, true);
  assert.equal(older?.hasNewer, true);
  const oldestFirst = older?.messages[0];
  assert.ok(oldestFirst);
  const oldest = await t.store.conversations.messages({
    hubId: HUB,
    lineId: 'Ub',
    limit: 15,
    at: { before: oldestFirst },
  });
  assert.deepEqual(
    texts(oldest?.messages ?? []),
    Array.from({ length: 10 }, (_, i) => `b${i}`),
  );
  assert.equal(oldest?.hasOlder, false);
  const last = oldest?.messages.at(-1);
  assert.ok(last);
  const back = await t.store.conversations.messages({
    hubId: HUB,
    lineId: 'Ub',
    limit: 15,
    at: { after: last },
  });
  assert.deepEqual(texts(back?.messages ?? []), texts(older?.messages ?? []));
});

test('a conversation opens around a message, and falls back to the newest for an unknown one', async () => {
  const newest = await t.store.conversations.messages({ hubId: HUB, lineId: 'Ub', limit: 10 });
  const all = [];
  for (let at: ConversationMessage | undefined, page = newest; page; ) {
    all.unshift(...page.messages);
    at = page.messages[0];
    page =
      page.hasOlder && at
        ? await t.store.conversations.messages({ hubId: HUB, lineId: 'Ub', limit: 10, at: { before: at } })
        : undefined;
  }
  assert.equal(all.length, 40);
  const target = all[20];
  assert.ok(target);
  const around = await t.store.conversations.messages({
    hubId: HUB,
    lineId: 'Ub',
    limit: 10,
    at: { around: target.id },
  });
  assert.equal(around?.found, true);
  assert.deepEqual(
    texts(around?.messages ?? []),
    Array.from({ length: 10 }, (_, i) => `b${16 + i}`),
  );
  assert.equal(around?.hasOlder, true);
  assert.equal(around?.hasNewer, true);

  // Another contact's message, another hub's, or no such id: the newest page, not found.
  const otherContact = (await t.store.conversations.messages({ hubId: HUB, lineId: 'Ua', limit: 5 }))
    ?.messages[0];
  assert.ok(otherContact);
  for (const id of [otherContact.id, 'nope']) {
    const page = await t.store.conversations.messages({
      hubId: HUB,
      lineId: 'Ub',
      limit: 10,
      at: { around: id },
    });
    assert.equal(page?.found, false);
    assert.deepEqual(texts(page?.messages ?? []), texts(newest?.messages ?? []));
  }
});

test('messages carry the sender as the read API renders it, and a range bounds the page', async () => {
  const page = await t.store.conversations.messages({ hubId: HUB, lineId: 'Ua', limit: 10 });
  assert.deepEqual(
    page?.messages.map((m) => [m.sender, m.msg, m.contentType, m.createdAt, m.content]),
    [
      ['Aiko', 'a1', 'text', 100, null],
      ['You', 'a2', 'text', 200, null],
      ['Aiko', 'a3', 'text', 300, null],
    ],
  );
  const ranged = await t.store.conversations.messages({
    hubId: HUB,
    lineId: 'Ua',
    limit: 10,
    fromMs: 150,
    toMsExclusive: 300,
  });
  assert.deepEqual(texts(ranged?.messages ?? []), ['a2']);
  assert.equal(ranged?.hasOlder, false);
  assert.equal(ranged?.hasNewer, false);
});

test('another hub has no such contact', async () => {
  assert.equal(await t.store.conversations.messages({ hubId: OTHER, lineId: 'Ub', limit: 10 }), undefined);
  assert.equal(await t.store.conversations.messages({ hubId: HUB, lineId: 'Unknown', limit: 10 }), undefined);
  const theirs = await t.store.conversations.messages({ hubId: OTHER, lineId: 'Ua', limit: 10 });
  assert.deepEqual(texts(theirs?.messages ?? []), ['other hub']);
});

test('contact pages, by their newest message, for random hubs: ties, busy contacts, silent ones, any page size (against a plain oracle)', async () => {
  const fc = (await import('fast-check')).default;
  let hubNumber = 7_100;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ contact: fc.integer({ min: 0, max: 40 }), at: fc.integer({ min: 0, max: 60 }) }), {
        minLength: 0,
        maxLength: 1500,
        // Up to 1,500 for real (fast-check keeps arrays short by default): more than a round's read.
        size: 'max',
      }),
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 1, max: 25 }),
      // A search among the contacts: a digit of lineIds, a full-width one, silent ones, none.
      fc.constantFrom('1', 'U2', 'ｕ3', 'SILENT', 'silent1', 'nobody'),
      async (sent, silentCount, limit, matching) => {
        const hubId = String(hubNumber++);
        await t.hubs.add(hubId, {});
        // A busy contact: hundreds of messages, so a page reads more than one round of them.
        await storeMessages(
          t.store,
          hubId,
          sent.map((m, i) =>
            message({ lineId: `U${m.contact}`, createdAt: 10_000 + m.at * 7, msg: `m${i}` }),
          ),
        );
        for (let i = 0; i < silentCount; i++)
          await t.store.contacts.upsert(hubId, `Usilent${i}`, {}, Date.now());
        const pages: ContactSummary[] = [];
        let afterKey: { lastAt: number; contactId: number } | undefined;
        for (let n = 0; n < 200; n++) {
          const page = await t.store.conversations.contacts({ hubId, limit, after: afterKey });
          pages.push(...page.contacts);
          const last = page.contacts.at(-1);
          if (!page.hasMore || !last) break;
          afterKey = { lastAt: last.lastMessageAt ?? Number.MIN_SAFE_INTEGER, contactId: last.contactId };
        }
        // The oracle: every contact once, by its newest message's time, then the newest contact first.
        const newest = new Map<string, number>();
        const counts = new Map<string, number>();
        for (const m of sent) {
          const lineId = `U${m.contact}`;
          newest.set(lineId, Math.max(newest.get(lineId) ?? Number.MIN_SAFE_INTEGER, 10_000 + m.at * 7));
          counts.set(lineId, (counts.get(lineId) ?? 0) + 1);
        }
        const idOf = new Map(pages.map((c) => [c.lineId, c.contactId]));
        const expected = [
          ...new Set([...newest.keys(), ...Array.from({ length: silentCount }, (_, i) => `Usilent${i}`)]),
        ]
          .map((lineId) => ({
            lineId,
            at: newest.get(lineId) ?? Number.MIN_SAFE_INTEGER,
            id: idOf.get(lineId) ?? -1,
          }))
          .sort((a, b) => b.at - a.at || b.id - a.id);
        assert.deepEqual(
          pages.map((c) => c.lineId),
          expected.map((e) => e.lineId),
        );
        for (const contact of pages) {
          assert.equal(contact.messageCount, counts.get(contact.lineId) ?? 0);
          assert.equal(contact.lastMessageAt, newest.get(contact.lineId) ?? null);
        }
        // With a search: the same contacts in the same order, those whose name, lineId or vid holds it.
        const folded = (text: string) => text.normalize('NFKC').toLowerCase();
        const found: ContactSummary[] = [];
        afterKey = undefined;
        for (let n = 0; n < 200; n++) {
          const page = await t.store.conversations.contacts({ hubId, limit, after: afterKey, matching });
          found.push(...page.contacts);
          const last = page.contacts.at(-1);
          if (!page.hasMore || !last) break;
          afterKey = { lastAt: last.lastMessageAt ?? Number.MIN_SAFE_INTEGER, contactId: last.contactId };
        }
        assert.deepEqual(
          found,
          pages.filter((c) =>
            [c.name, c.lineId, c.vid].some((text) => folded(text).includes(folded(matching))),
          ),
        );
      },
    ),
    { numRuns: 25 },
  );
});
