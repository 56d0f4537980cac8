/**
 * CONTRACT §15: chatlog as an MCP server over Streamable HTTP, driven by the official SDK's own
 * client, on either store: the tools listed with their schemas and annotations; each tool's answer
 * is what sections 3, 9 and 12 answer for the same hub and range; following a cursor gives each item
 * once; a result is never longer than CHATLOG_MCP_MAX_CHARS; wrong arguments are tool errors;
 * the key is checked before any message is read; each call is one audit record.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import fc from 'fast-check';
import type { AuditRecord } from '../../src/store/store.js';
import { body, messageEvent, signed } from '../fixtures/line.js';
import { message, rawRequest, startTestServer, storeMessages, type TestServer } from '../helpers.js';

const HUB = '1500150';
const OTHER = '1500151';
const DAY = Date.parse('2026-11-20T00:00:00+09:00');
let server: TestServer;
let read = '';
let ingest = '';
let otherRead = '';

before(async () => {
  server = await startTestServer({ mcpMaxChars: 4000 });
  await server.hubs.add(HUB, { timeZone: 'Asia/Tokyo' });
  await server.hubs.add(OTHER, { timeZone: 'UTC' });
  read = (await server.keys.issue(HUB, 'read', 'assistant')).key;
  ingest = (await server.keys.issue(HUB, 'ingest', '')).key;
  otherRead = (await server.keys.issue(OTHER, 'read', '')).key;
  await storeMessages(server.store, HUB, [
    ...Array.from({ length: 30 }, (_, i) =>
      message({
        lineId: `U${i % 3}`,
        name: ['山田', 'Sato', ''][i % 3] ?? '',
        msg: `${i % 2 === 0 ? 'ご予約' : 'お問い合わせ'} ${i} ${'あ'.repeat(i * 10)}`,
        createdAt: DAY + i * 3_600_000,
      }),
    ),
    message({ lineId: 'Ulong', msg: '長'.repeat(100_000), createdAt: DAY + 40 * 3_600_000 }),
  ]);
  await storeMessages(server.store, OTHER, [
    message({ lineId: 'Uother', msg: 'ご予約 other hub', createdAt: DAY }),
  ]);
});
after(() => server?.close());

async function connect(key: string, modern = false): Promise<Client> {
  const client = new Client(
    { name: 'chatlog-test', version: '1.0.0' },
    // The newest revision is opt-in for the SDK's client (it probes with server/discover first).
    modern ? { versionNegotiation: { mode: 'auto' } } : undefined,
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

type Structured = Record<string, unknown> & { cursor: string | null; hasMore: boolean };

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? '';
  return { result, text, structured: result.structuredContent as Structured };
}

/** Every page of a tool, following its cursor: the items of `key`, and each page's text length. */
async function all(client: Client, name: string, args: Record<string, unknown>, key: string, maxPages = 200) {
  const items: unknown[] = [];
  const lengths: number[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const { structured, text, result } = await call(client, name, { ...args, ...(cursor && { cursor }) });
    assert.ok(!result.isError, text);
    lengths.push(text.length);
    items.push(...(structured[key] as unknown[]));
    if (!structured.hasMore) return { items, lengths };
    cursor = structured.cursor ?? undefined;
    assert.ok(cursor, 'a page with more has a cursor');
  }
  throw new Error('the cursor never ended');
}

test('the tools are listed, read-only, each with input and output schemas', async () => {
  const client = await connect(read);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [
    'get_changes',
    'get_conversation',
    'get_hub',
    'list_contacts',
    'search_messages',
  ]);
  for (const tool of tools) {
    assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
    assert.equal(tool.annotations?.openWorldHint, false, tool.name);
    assert.equal(tool.inputSchema.type, 'object', tool.name);
    assert.equal(tool.outputSchema?.type, 'object', tool.name);
  }
  await client.close();
});

test('get_hub and get_conversation answer what the read API answers, page after page, within the bound', async () => {
  const client = await connect(read);
  const hub = (await call(client, 'get_hub', {})).structured;
  assert.deepEqual(hub, {
    hubId: HUB,
    timeZone: 'Asia/Tokyo',
    contacts: 4,
    messages: 31,
    firstMessageAt: new Date(DAY).toISOString(),
    lastMessageAt: new Date(DAY + 40 * 3_600_000).toISOString(),
  });
  const res = await server.request(`/api/line/${HUB}/messages?apikey=${read}&from=2026-11-20&to=2026-11-20`);
  const answer = (await res.json()) as Array<{
    lineId: string;
    messages: Array<{ msg: string; createdAt: string; sender: string }>;
  }>;
  for (const contact of answer) {
    const { items, lengths } = await all(
      client,
      'get_conversation',
      { lineId: contact.lineId, from: '2026-11-20', to: '2026-11-20', limit: 7 },
      'messages',
    );
    assert.deepEqual(
      (items as Array<{ msg: string; createdAt: string; sender: string }>).map(
        ({ msg, createdAt, sender }) => ({
          sender,
          msg,
          createdAt,
        }),
      ),
      contact.messages.map(({ msg, createdAt, sender }) => ({ sender, msg, createdAt })),
      contact.lineId,
    );
    for (const length of lengths) assert.ok(length <= 4000, `a page of ${length} characters`);
  }
  // A message longer than the bound is shown cut, and says so.
  const long = await call(client, 'get_conversation', { lineId: 'Ulong' });
  assert.ok(long.text.length <= 4000);
  const [cut] = long.structured.messages as Array<{ msg: string; truncated?: boolean }>;
  assert.equal(cut?.truncated, true);
  assert.ok(cut && cut.msg.length > 1000 && '長'.repeat(100_000).startsWith(cut.msg));
  await client.close();
});

test('search_messages and get_changes answer what §12 and §9 answer; list_contacts finds by part of a name', async () => {
  const client = await connect(read);
  const { items } = await all(client, 'search_messages', { query: 'ご予約', limit: 4 }, 'results');
  const api = await rawRequest(
    server.url,
    'GET',
    `/api/line/${HUB}/search?q=${encodeURIComponent('ご予約')}&limit=100`,
    {
      authorization: `Bearer ${read}`,
    },
  );
  const expected = JSON.parse(api.body.toString('utf8')).results as unknown[];
  assert.equal(items.length, 15);
  assert.deepEqual(items, expected);

  const changes = await all(client, 'get_changes', { limit: 9 }, 'changes');
  const feed = await rawRequest(server.url, 'GET', `/api/line/${HUB}/changes?limit=1000`, {
    authorization: `Bearer ${read}`,
  });
  const expectedChanges = (
    JSON.parse(feed.body.toString('utf8')).changes as Array<Record<string, unknown>>
  ).map((change) => {
    // A change longer than the bound comes cut: compare what both show.
    const message = change.message as { msg: string } | undefined;
    return message && message.msg.length > 3000 ? { ...change, seq: change.seq } : change;
  });
  assert.equal(changes.items.length, expectedChanges.length);
  assert.deepEqual(
    (changes.items as Array<{ seq: string }>).map((c) => c.seq),
    expectedChanges.map((c) => c.seq),
  );

  const yamada = (await call(client, 'list_contacts', { query: '山田' })).structured;
  assert.deepEqual(
    (yamada.contacts as Array<{ lineId: string; name: string; messages: number }>).map((c) => [
      c.lineId,
      c.name,
      c.messages,
    ]),
    [['U0', '山田', 10]],
  );
  const everyone = await all(client, 'list_contacts', { limit: 1 }, 'contacts');
  assert.deepEqual(
    (everyone.items as Array<{ lineId: string }>).map((c) => c.lineId),
    ['Ulong', 'U2', 'U1', 'U0'],
    'the most recent conversation first',
  );
  await client.close();
});

test('wrong arguments are tool errors that say what to change; another hub is out of reach', async () => {
  const client = await connect(read);
  const unknown = await call(client, 'get_conversation', { lineId: 'Uother' });
  assert.equal(unknown.result.isError, true);
  assert.match(unknown.text, /no contact with lineId Uother/);
  const reversed = await call(client, 'get_conversation', {
    lineId: 'U0',
    from: '2026-11-21',
    to: '2026-11-20',
  });
  assert.equal(reversed.result.isError, true);
  assert.match(reversed.text, /from \(2026-11-21\) is after to/);
  const foreign = await call(client, 'get_conversation', { lineId: 'U0', cursor: 'eyJ2IjoxfQ' });
  assert.equal(foreign.result.isError, true);
  const search = await call(client, 'search_messages', { query: 'other' });
  assert.deepEqual(search.structured.results, [], "the other hub's message is not found");
  await client.close();
});

test('the key is checked before any MCP message is read: none or a bad one 401 with a Bearer challenge, another scope 403', async () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const none = await rawRequest(server.url, 'POST', '/mcp', headers, initialize);
  assert.equal(none.status, 401);
  assert.match(String(none.headers['www-authenticate']), /^Bearer/);
  assert.equal(JSON.parse(none.body.toString('utf8')).error.code, 'missing_api_key');
  const bad = await rawRequest(
    server.url,
    'POST',
    '/mcp',
    { ...headers, authorization: 'Bearer chl_wrong' },
    initialize,
  );
  assert.equal(bad.status, 401);
  const inQuery = await rawRequest(server.url, 'POST', `/mcp?apikey=${read}`, headers, initialize);
  assert.equal(inQuery.status, 401, 'the query parameter is not taken');
  const other = await rawRequest(
    server.url,
    'POST',
    '/mcp',
    { ...headers, authorization: `Bearer ${ingest}` },
    initialize,
  );
  assert.equal(other.status, 403);
  assert.equal(JSON.parse(other.body.toString('utf8')).error.code, 'insufficient_scope');
  const ok = await rawRequest(
    server.url,
    'POST',
    '/mcp',
    { ...headers, authorization: `Bearer ${otherRead}` },
    initialize,
  );
  assert.equal(ok.status, 200, ok.body.toString('utf8'));
  for (const res of [none, bad, other, ok]) assert.ok(!res.body.toString('utf8').includes(read));
});

test('each tool call is one audit record, mcp:<tool>, with the messages it returned', async () => {
  const client = await connect(read);
  await call(client, 'get_conversation', { lineId: 'U1', limit: 3 });
  await call(client, 'get_hub', {});
  // Refused by the schema (a limit over 100), before the tool runs: a record all the same.
  const refused = await client.callTool({
    name: 'search_messages',
    arguments: { query: 'audit-me', limit: 1000 },
  });
  assert.equal(refused.isError, true);
  assert.match(JSON.stringify(refused.content), /Invalid arguments for tool search_messages.*limit/);
  const deadline = Date.now() + 10_000;
  let records: AuditRecord[] = [];
  const isThisCall = (r: AuditRecord) => r.endpoint === 'mcp:get_conversation' && r.messages === 3;
  const isRefused = (r: AuditRecord) => r.endpoint === 'mcp:search_messages' && r.query?.includes('audit-me');
  // Written within a second (the recorder batches them): wait for this test's own calls.
  while (Date.now() < deadline) {
    records = (await server.store.audit.list({ hubId: HUB, limit: 500 })).filter((r) =>
      r.endpoint.startsWith('mcp:'),
    );
    if (records.some(isThisCall) && records.some(isRefused)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const conversation = records.find(isThisCall);
  assert.ok(conversation, JSON.stringify(records.slice(0, 3)));
  assert.equal(conversation.status, 200);
  const refusedRecord = records.find(isRefused);
  assert.ok(refusedRecord, 'the refused call is a record');
  assert.equal(refusedRecord.status, 400);
  assert.equal(refusedRecord.messages, null);
  assert.ok(!JSON.stringify(records).includes(read), 'no key in a record');
  await client.close();
});

test('/docs lists the tools with their arguments, in English and in Japanese', async () => {
  for (const [language, words] of [
    ['en', ['Arguments of get_conversation', "the friend's lineId (list_contacts)"]],
    ['ja', ['get_conversation の引数', '友だちの lineId(list_contacts で分かります)']],
  ] as const) {
    const res = await rawRequest(server.url, 'GET', '/docs', { 'accept-language': language });
    const html = res.body.toString('utf8');
    for (const tool of ['get_hub', 'list_contacts', 'get_conversation', 'search_messages', 'get_changes'])
      assert.ok(html.includes(`id="mcp-${tool}"`), tool);
    for (const word of words) assert.ok(html.includes(word.replaceAll("'", '&#39;')), word);
  }
  const { MCP_JA, mcpToolList } = await import('../../src/modules/mcp/mcp.server.js');
  const texts = mcpToolList().flatMap((tool) => [
    tool.description,
    ...Object.values(
      (tool.input as { properties: Record<string, { description?: string }> }).properties,
    ).flatMap((p) => (p.description ? [p.description] : [])),
  ]);
  assert.deepEqual(
    texts.filter((t) => !(t in MCP_JA)),
    [],
    'every text of the tools has its Japanese (mcp.server.ts MCP_JA)',
  );
});

test('a web page of another site is refused before the key is looked at (DNS rebinding); this machine and CHATLOG_PUBLIC_URL are not', async () => {
  const headers = {
    authorization: `Bearer ${read}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const ping = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
  });
  const evil = await rawRequest(
    server.url,
    'POST',
    '/mcp',
    { ...headers, host: 'evil.example.com', origin: 'http://evil.example.com' },
    ping,
  );
  assert.equal(evil.status, 403);
  assert.equal(JSON.parse(evil.body.toString('utf8')).error.code, 'forbidden');
  const local = await rawRequest(server.url, 'POST', '/mcp', { ...headers, origin: server.url }, ping);
  assert.equal(local.status, 200);
});

test('a key of one hub reaches nothing of another through any argument; no answer holds a stack, SQL or a key (fuzz)', async () => {
  const SECRET = 'SECRET-OF-THE-OTHER-HUB';
  await storeMessages(server.store, OTHER, [
    message({ lineId: 'Uvictim', name: 'Victim', msg: `${SECRET} 予約`, createdAt: DAY + 5_000 }),
  ]);
  // Cursors the other hub's key was given: valid, but not this hub's.
  const other = await connect(otherRead);
  const foreignCursors: string[] = [];
  for (const [name, args] of [
    ['get_conversation', { lineId: 'Uvictim', limit: 1 }],
    ['list_contacts', { limit: 1 }],
    ['search_messages', { query: '予約', limit: 1 }],
    ['get_changes', { limit: 1 }],
  ] as const) {
    const structured = (await call(other, name, args)).structured;
    if (structured.cursor) foreignCursors.push(structured.cursor);
  }
  await other.close();
  const client = await connect(read);
  const text = fc.oneof(
    // Never the other hub's words themselves: an answer may say back what it was given.
    fc.constantFrom(
      'Uvictim',
      OTHER,
      'SECRET',
      '予約',
      'victim',
      "' OR 1=1 --",
      '%',
      '_',
      '\u0000',
      '../',
      '',
    ),
    fc.string({ maxLength: 30 }),
  );
  const args = fc.record(
    {
      lineId: text,
      query: text,
      from: fc.oneof(text, fc.constantFrom('2026-11-20', '2026-02-30', '0000-01-01')),
      to: fc.oneof(text, fc.constantFrom('2026-11-21', '9999-12-31')),
      cursor: fc.oneof(text, fc.constantFrom(...foreignCursors), fc.base64String({ maxLength: 60 })),
      limit: fc.oneof(fc.integer({ min: -5, max: 600 }), fc.constant(1)),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('get_hub', 'list_contacts', 'get_conversation', 'search_messages', 'get_changes'),
      args,
      async (name, given) => {
        let answer: string;
        try {
          const result = await client.callTool({ name, arguments: given });
          answer = JSON.stringify(result);
        } catch (error) {
          // A schema the arguments break: the SDK's JSON-RPC error.
          answer = String((error as Error).message);
        }
        assert.ok(
          !answer.includes(SECRET),
          `${name} ${JSON.stringify(given)} reached the other hub: ${answer.slice(0, 300)}`,
        );
        assert.ok(!answer.includes('Victim'), `${name}: the other hub's contact`);
        assert.ok(
          !/\n\s+at |SELECT |sqlite|postgres/i.test(answer),
          `${name}: internals in ${answer.slice(0, 300)}`,
        );
        assert.ok(!answer.includes(read) && !answer.includes(otherRead), 'no key');
      },
    ),
    { numRuns: 200 },
  );
  await client.close();
  const logged = server.logs.lines.join('\n');
  for (const key of [read, otherRead]) assert.ok(!logged.includes(key), 'no key in a log line');
});

test('a contact of 50,000 messages: every result bounded, the conversation followed to its end', async () => {
  const BIG = '1500152';
  await server.hubs.add(BIG, { timeZone: 'UTC' });
  const key = (await server.keys.issue(BIG, 'read', '')).key;
  await storeMessages(
    server.store,
    BIG,
    Array.from({ length: 50_000 }, (_, i) =>
      message({ lineId: 'Umany', name: '多', msg: `注文 ${i}`, createdAt: DAY + i * 1000 }),
    ),
  );
  const client = await connect(key);
  const first = await call(client, 'get_conversation', { lineId: 'Umany', limit: 500 });
  assert.ok(first.text.length <= 4000);
  assert.equal(first.structured.hasMore, true);
  const contacts = await call(client, 'list_contacts', {});
  assert.deepEqual(contacts.structured.contacts, [
    {
      lineId: 'Umany',
      vid: '',
      name: '多',
      messages: 50_000,
      lastMessageAt: new Date(DAY + 49_999_000).toISOString(),
    },
  ]);
  for (const [name, args] of [
    ['get_changes', { limit: 500 }],
    ['search_messages', { query: '注文', limit: 100 }],
    ['get_hub', {}],
  ] as const) {
    const { text } = await call(client, name, args);
    assert.ok(text.length <= 4000, `${name}: ${text.length}`);
  }
  // A day of it, followed to its end: each message once, in order.
  const { items } = await all(
    client,
    'get_conversation',
    { lineId: 'Umany', from: '2026-11-20', to: '2026-11-20', limit: 500 },
    'messages',
    1000,
  );
  // The hub reads days in UTC: the messages from 2026-11-20T00:00Z on.
  const firstOfDay = Math.ceil((Date.parse('2026-11-20T00:00:00Z') - DAY) / 1000);
  const msgs = (items as Array<{ msg: string }>).map((m) => Number(m.msg.split(' ')[1]));
  assert.deepEqual(
    msgs,
    Array.from({ length: 50_000 - firstOfDay }, (_, i) => firstOfDay + i),
  );
  await client.close();
});

test("an assistant's session: what did 山田さん ask about, and who is still waiting for an answer", async () => {
  const client = await connect(read);
  // "What did 山田さん ask about last week?"
  const found = await call(client, 'list_contacts', { query: '山田' });
  const [yamada] = found.structured.contacts as Array<{ lineId: string }>;
  assert.ok(yamada);
  const asked = await call(client, 'get_conversation', {
    lineId: yamada.lineId,
    from: '2026-11-20',
    to: '2026-11-26',
  });
  assert.ok(asked.text.length <= 4000);
  assert.ok((asked.structured.messages as unknown[]).length > 0);
  // "Which friends are still waiting for an answer?": each friend's last message is not the business's.
  const { items } = await all(client, 'list_contacts', { limit: 100 }, 'contacts');
  const waiting: string[] = [];
  for (const contact of items as Array<{ lineId: string; lastMessageAt: string | null }>) {
    if (!contact.lastMessageAt) continue;
    const day = contact.lastMessageAt.slice(0, 10);
    const last = await call(client, 'get_conversation', {
      lineId: contact.lineId,
      from: day,
      to: day,
      limit: 500,
    });
    const messages = last.structured.messages as Array<{ sender: string }>;
    if (messages.at(-1)?.sender !== 'You') waiting.push(contact.lineId);
  }
  assert.ok(waiting.length > 0);
  await client.close();
});

test('the official client speaks the newest revision (2026-07-28) with /mcp, and every tool answers on it', async () => {
  const client = await connect(read, true);
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  for (const [name, args] of [
    ['get_hub', {}],
    ['list_contacts', { limit: 2 }],
    ['get_conversation', { lineId: 'U1', limit: 2 }],
    ['search_messages', { query: 'ご予約', limit: 2 }],
    ['get_changes', { limit: 2 }],
  ] as const) {
    const { result, text } = await call(client, name, args);
    assert.ok(!result.isError, `${name}: ${text}`);
  }
  const unknown = await call(client, 'search_messages', { query: 'ご予約', lineId: 'Unobody' });
  assert.equal(unknown.result.isError, true, 'a lineId the hub lacks is an error for search too');
  await client.close();
});

test("a long LINE message in the feed keeps as much of its text as the bound allows (LINE's own JSON goes first)", async () => {
  const LINE_HUB = '1500153';
  const SECRET = 'c0ffeec0ffeec0ffeec0ffeec0ffee00';
  await server.hubs.add(LINE_HUB, { timeZone: 'Asia/Tokyo', lineChannelSecret: SECRET });
  const key = (await server.keys.issue(LINE_HUB, 'read', '')).key;
  for (const length of [2500, 3500, 5000]) {
    const raw = body([
      messageEvent({ id: `4000${length}`, type: 'text', quoteToken: 'q', text: '話'.repeat(length) }),
    ]);
    const res = await rawRequest(server.url, 'POST', `/webhooks/line/${LINE_HUB}`, signed(SECRET, raw), raw);
    assert.equal(res.status, 200);
  }
  const client = await connect(key);
  const { items } = await all(client, 'get_changes', { limit: 10 }, 'changes');
  const messages = (
    items as Array<{ message?: { msg: string; truncated?: boolean }; line?: unknown }>
  ).flatMap((c) => (c.message ? [c] : []));
  assert.equal(messages.length, 3);
  for (const change of messages) {
    const msg = change.message as { msg: string; truncated?: boolean };
    // Whole, or cut to most of the bound: never emptied.
    assert.ok(msg.msg.length >= 2500 || msg.msg.length > 2000, `${msg.msg.length} characters left`);
  }
  await client.close();
});
