/**
 * CONTRACT §15, as a property on either store: for random hubs (contacts, days, words), ranges,
 * queries and limits, and results bounded small enough to be cut often, following each tool's cursor
 * to its end gives exactly what sections 3 and 12 answer for the same hub and range, each item once,
 * and no result's text is longer than the bound.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import fc from 'fast-check';
import { message, rawRequest, startTestServer, storeMessages, type TestServer } from '../helpers.js';

const MAX_CHARS = 1500;
const WORDS = ['予約', '変更', 'キャンセル', '明日', 'ありがとう', 'price', '東京'];
const FIRST_DAY = Date.parse('2026-11-01T00:00:00+09:00');
const DAY_MS = 86_400_000;
let server: TestServer;
let hubNumber = 1_610_000;

before(async () => {
  server = await startTestServer({ mcpMaxChars: MAX_CHARS });
});
after(() => server?.close());

const day = (n: number) => new Date(FIRST_DAY + n * DAY_MS + 9 * 3_600_000).toISOString().slice(0, 10);

async function pages(client: Client, name: string, args: Record<string, unknown>, key: string) {
  const items: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 500; page++) {
    const result = await client.callTool({ name, arguments: { ...args, ...(cursor && { cursor }) } });
    const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
    assert.ok(!result.isError, text);
    assert.ok(text.length <= MAX_CHARS, `${name}: a result of ${text.length} characters`);
    const structured = result.structuredContent as Record<string, unknown> & {
      cursor: string | null;
      hasMore: boolean;
    };
    items.push(...(structured[key] as unknown[]));
    if (!structured.hasMore) return items;
    cursor = structured.cursor ?? undefined;
  }
  throw new Error(`${name}: the cursor never ended`);
}

const hubArbitrary = fc.record({
  messages: fc.array(
    fc.record({
      contact: fc.integer({ min: 0, max: 3 }),
      day: fc.integer({ min: 0, max: 13 }),
      minute: fc.integer({ min: 0, max: 1439 }),
      words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
      pad: fc.integer({ min: 0, max: 120 }),
    }),
    { minLength: 1, maxLength: 60 },
  ),
  range: fc
    .tuple(fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 13 }))
    .map(([a, b]) => [Math.min(a, b), Math.max(a, b)]),
  limit: fc.integer({ min: 1, max: 30 }),
  word: fc.constantFrom(...WORDS),
});

test('the tools, cursor after cursor, answer what §3 and §12 answer, within the bound', async () => {
  await fc.assert(
    fc.asyncProperty(hubArbitrary, async ({ messages, range, limit, word }) => {
      const hubId = String(hubNumber++);
      await server.hubs.add(hubId, { timeZone: 'Asia/Tokyo' });
      const key = (await server.keys.issue(hubId, 'read', '')).key;
      await storeMessages(
        server.store,
        hubId,
        messages.map((m, i) =>
          message({
            lineId: `U${m.contact}`,
            name: m.contact % 2 === 0 ? `名前${m.contact}` : '',
            msg: `${m.words.join(' ')} ${'x'.repeat(m.pad)} ${i}`,
            createdAt: FIRST_DAY + m.day * DAY_MS + m.minute * 60_000 + (i % 7),
          }),
        ),
      );
      const [from, to] = [day(range[0] as number), day(range[1] as number)];
      const client = new Client({ name: 'property', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      try {
        // §3: the range's answer, contact by contact.
        const res = await server.request(`/api/line/${hubId}/messages?apikey=${key}&from=${from}&to=${to}`);
        const answer = (await res.json()) as Array<{ lineId: string; messages: unknown[] }>;
        for (const contact of answer) {
          const got = (await pages(
            client,
            'get_conversation',
            { lineId: contact.lineId, from, to, limit },
            'messages',
          )) as Array<Record<string, unknown>>;
          assert.deepEqual(
            got.map(({ sender, msg, contentType, createdAt }) => ({ sender, msg, contentType, createdAt })),
            contact.messages,
          );
          assert.equal(new Set(got.map((m) => m.id)).size, got.length, 'each message once');
        }
        // §12: every result of the search, in its order.
        const api = await rawRequest(
          server.url,
          'GET',
          `/api/line/${hubId}/search?q=${encodeURIComponent(word)}&from=${from}&to=${to}&limit=100`,
          { authorization: `Bearer ${key}` },
        );
        const expected = JSON.parse(api.body.toString('utf8')).results as unknown[];
        const found = await pages(
          client,
          'search_messages',
          { query: word, from, to, limit: Math.min(limit, 100) },
          'results',
        );
        assert.deepEqual(found, expected);
        // Every contact once, the most recent conversation first.
        const contacts = (await pages(client, 'list_contacts', { limit }, 'contacts')) as Array<{
          lineId: string;
          messages: number;
        }>;
        assert.equal(new Set(contacts.map((c) => c.lineId)).size, contacts.length);
        assert.equal(
          contacts.reduce((n, c) => n + c.messages, 0),
          messages.length,
        );
      } finally {
        await client.close();
      }
    }),
    { numRuns: 20 },
  );
});
