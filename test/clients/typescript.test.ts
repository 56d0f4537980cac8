/** clients/typescript against a live server, and against the OpenAPI document it follows. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FromSchema } from 'json-schema-to-ts';
import {
  ChatlogClient,
  ChatlogError,
  type Contact,
  ERROR_CODES,
  type MessagesQuery,
  type Report,
  type ReportQuery,
} from '../../clients/typescript/chatlog-client.js';
import type { ERROR_CODES as SERVER_ERROR_CODES } from '../../src/lib/errors.js';
import type { contactSchema, messagesRouteSchema } from '../../src/modules/messages/messages.schemas.js';
import type { reportRouteSchema } from '../../src/modules/reports/reports.schemas.js';
import { message, rawRequest, startTestServer, storeMessages, type TestServer } from '../helpers.js';

/**
 * Checked when the tests are type-checked (npm test runs tsc first): the client's types are exactly
 * the ones the route schema (which the OpenAPI document is made of) describes.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type ContactOfTheDocument = FromSchema<typeof contactSchema>;
type QueryParameters = typeof messagesRouteSchema.querystring.properties;
type QueryOfTheDocument = Pick<FromSchema<typeof messagesRouteSchema.querystring>, keyof MessagesQuery>;
const typesAgree: [
  Same<Contact, ContactOfTheDocument>,
  Same<keyof MessagesQuery, Exclude<keyof QueryParameters, 'apikey'>>,
  Same<MessagesQuery, QueryOfTheDocument>,
  Same<(typeof ERROR_CODES)[number], (typeof SERVER_ERROR_CODES)[number]>,
  Same<Report, FromSchema<(typeof reportRouteSchema.response)[200]>>,
  Same<ReportQuery, Pick<FromSchema<typeof reportRouteSchema.querystring>, keyof ReportQuery>>,
] = [true, true, true, true, true, true];

let server: TestServer;
let key: string;

before(async () => {
  server = await startTestServer();
  await server.hubs.add('4242', { timeZone: 'Asia/Tokyo' });
  key = (await server.keys.issue('4242', 'read', 'client')).key;
  await storeMessages(server.store, '4242', [
    message({
      lineId: 'U-a',
      vid: '7',
      name: 'あい',
      msg: 'おはよう 🌅\nline 2',
      createdAt: Date.UTC(2024, 4, 1, 1),
    }),
    message({ lineId: 'U-a', sender: 'You', msg: 'hi', createdAt: Date.UTC(2024, 4, 1, 2) }),
    message({ lineId: 'U-b', msg: 'next day', createdAt: Date.UTC(2024, 4, 2, 2) }),
  ]);
});
after(() => server?.close());

test('the client returns exactly what the API answers', async () => {
  const client = new ChatlogClient({ baseUrl: `${server.url}/`, apiKey: key });
  const day = await client.messages('4242', { from: '2024-05-01', to: '2024-05-01' });
  const raw = await rawRequest(
    server.url,
    'GET',
    `/api/line/4242/messages?apikey=${key}&from=2024-05-01&to=2024-05-01`,
  );
  assert.deepEqual(day, JSON.parse(raw.body.toString('utf8')));
  assert.equal(day.length, 1);
  assert.deepEqual(
    day[0]?.messages.map((m) => [m.sender, m.msg]),
    [
      ['あい', 'おはよう 🌅\nline 2'],
      ['You', 'hi'],
    ],
  );
  assert.equal((await client.messages('4242')).length, 2);
});

test("the client's report is the API's, and its refusals are ChatlogErrors", async () => {
  const client = new ChatlogClient({ baseUrl: server.url, apiKey: key });
  const report = await client.report('4242', { from: '2024-05-01', to: '2024-05-02', tz: 'UTC' });
  const raw = await rawRequest(
    server.url,
    'GET',
    `/api/line/4242/reports?apikey=${key}&from=2024-05-01&to=2024-05-02&tz=UTC`,
  );
  assert.deepEqual(report, JSON.parse(raw.body.toString('utf8')));
  assert.deepEqual(
    report.days.map((d) => [d.day, d.fromFriends, d.fromAccount, d.answered]),
    [
      ['2024-05-01', 1, 1, 1],
      ['2024-05-02', 1, 0, 0],
    ],
  );
  assert.equal(report.totals.responseSeconds.median, 3600);
  await assert.rejects(client.report('4242', { from: '2024-01-01', to: '2025-01-01' }), {
    code: 'range_too_long',
    status: 400,
  });
});

test('errors become ChatlogError with the status and the stable code', async () => {
  const client = new ChatlogClient({ baseUrl: server.url, apiKey: key });
  await assert.rejects(client.messages('4242', { from: '2024-02-30' }), (error: unknown) => {
    assert.ok(error instanceof ChatlogError);
    assert.equal(error.status, 400);
    assert.equal(error.code, 'invalid_date');
    return true;
  });
  await assert.rejects(client.messages('1'), { code: 'forbidden', status: 403 });
  const stranger = new ChatlogClient({ baseUrl: server.url, apiKey: 'chl_0000000000000000000000000000' });
  await assert.rejects(stranger.messages('4242'), { code: 'invalid_api_key', status: 401 });
});

test('the client follows the OpenAPI document: error codes and the fields of contacts and messages', async () => {
  assert.deepEqual(typesAgree, [true, true, true, true, true, true]);
  const document = JSON.parse((await rawRequest(server.url, 'GET', '/openapi.json')).body.toString('utf8'));
  const schemas = document.components.schemas;
  assert.deepEqual([...ERROR_CODES].sort(), [...schemas.Error.properties.error.properties.code.enum].sort());
  const client = new ChatlogClient({ baseUrl: server.url, apiKey: key });
  const [contact] = await client.messages('4242');
  assert.ok(contact);
  assert.deepEqual(Object.keys(contact).sort(), [...schemas.Contact.required].sort());
  assert.deepEqual(Object.keys(contact.messages[0] ?? {}).sort(), [...schemas.Message.required].sort());
});

test('example.ts prints the messages of the days asked, and says when there are none (never silence)', async () => {
  const { execFile } = await import('node:child_process');
  const run = (env: Record<string, string>) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'clients/typescript/example.ts'],
        { env: { ...process.env, CHATLOG_URL: server.url, CHATLOG_KEY: key, CHATLOG_HUB: '4242', ...env } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  const days = await run({ CHATLOG_FROM: '2024-05-01', CHATLOG_TO: '2024-05-02' });
  assert.equal(days.code, 0, days.stderr);
  assert.deepEqual(
    days.stdout.trim().split('\n'),
    [
      '2024-05-01T01:00:00.000Z  あい  あい: おはよう 🌅\nline 2',
      '2024-05-01T02:00:00.000Z  あい  You: hi',
      '2024-05-02T02:00:00.000Z  U-b  User: next day',
    ].flatMap((line) => line.split('\n')),
  );
  assert.match(days.stderr, /3 messages of hub 4242 from 2024-05-01 to 2024-05-02/);
  // The demo's days by default: this hub has nothing then, and it says so.
  const none = await run({});
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, '');
  assert.match(
    none.stderr,
    /hub 4242 has no message from 2019-11-03 to 2019-11-04: set CHATLOG_FROM and CHATLOG_TO/,
  );
});
