/**
 * What an integrator does with the document: generate types with openapi-typescript (its default
 * settings), call chatlog with openapi-fetch, compile under `tsc --strict` with no cast, and run it.
 * The program makes every request the README shows (the minimal ingest body `{lineId, msg}`
 * included), reads the change feed (key in Authorization, then following the cursor) and adds,
 * lists and removes an outgoing webhook endpoint with an admin key, against a live server; the types
 * are generated afresh from the served document.
 */
// sqlite-only: the generated types and openapi-fetch check the served document, which does not depend on the
// store; every request it makes is a contract test's too, and those run on both stores
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type Receiver, startReceiver } from '../fixtures/receiver.js';
import { startTestServer, type TestServer } from '../helpers.js';
import { REPO_ROOT, runTool, type ServedDocument, servedDocument, TOOL_ENV } from './document.js';

/**
 * The integrator's program. It is compiled as written here (no `as`, no `any`, no `!`): each
 * request's parameters, body and answer are typed by the generated `paths`.
 */
const PROGRAM = `
import { createHmac } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { components, paths } from './chatlog-api.js';

const [baseUrl = '', hubId = '', readKey = '', ingestKey = '', channelSecret = '', adminKey = '', receiverUrl = ''] =
  process.argv.slice(2);
const client = createClient<paths>({ baseUrl });
const auth = { Authorization: \`Bearer \${ingestKey}\` };
const lineId = 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3';
const out: Record<string, unknown> = {};

// The README's ingest example, then the minimal body: lineId and msg only.
const recorded = await client.POST('/ingest/line/{hubId}/messages', {
  params: { path: { hubId } },
  headers: auth,
  body: [{ lineId, msg: 'Thanks, see you on the 10th!', id: 'crm-8812', createdAt: '2019-11-03T10:15:00.123456Z' }],
});
const stored: number | undefined = recorded.data?.stored;
out.recorded = { status: recorded.response.status, stored, duplicates: recorded.data?.duplicates };
const minimal = await client.POST('/ingest/line/{hubId}/messages', {
  params: { path: { hubId } },
  headers: auth,
  body: [{ lineId, msg: 'hi' }],
});
out.minimal = { status: minimal.response.status, stored: minimal.data?.stored };

// Linking the friend to a HubSpot contact.
const linked = await client.PUT('/ingest/line/{hubId}/contacts/{lineId}', {
  params: { path: { hubId, lineId } },
  headers: auth,
  body: { vid: '101', name: 'shinobu' },
});
const contact: components['schemas']['ContactLink'] | undefined = linked.data;
out.linked = { status: linked.response.status, contact };

// The LINE webhook, signed as LINE signs it.
const webhookBody = {
  destination: 'U0123456789abcdef0123456789abcdef',
  events: [
    {
      type: 'message',
      timestamp: Date.UTC(2019, 10, 3, 1, 2, 11, 120),
      source: { type: 'user', userId: lineId },
      message: { id: '444573844083572737', type: 'text', text: 'こんにちは！' },
    },
  ],
};
const signature = createHmac('sha256', channelSecret).update(JSON.stringify(webhookBody)).digest('base64');
const delivered = await client.POST('/webhooks/line/{hubId}', {
  params: { path: { hubId }, header: { 'x-line-signature': signature } },
  body: webhookBody,
});
out.webhook = { status: delivered.response.status };

// The README's read: a range of days, then the same in another time zone, then HEAD.
const read = await client.GET('/api/line/{hubId}/messages', {
  params: { path: { hubId }, query: { apikey: readKey, from: '2019-11-03', to: '2019-11-04' } },
});
const contacts: components['schemas']['Contact'][] = read.data ?? [];
out.read = {
  status: read.response.status,
  etag: read.response.headers.get('etag'),
  messages: contacts.flatMap((c) => c.messages.map((m) => [c.name, m.sender, m.msg, m.createdAt])),
};
const inTokyo = await client.GET('/api/line/{hubId}/messages', {
  params: { path: { hubId }, query: { apikey: readKey, from: '2019-11-03', to: '2019-11-03', tz: 'Asia/Tokyo' } },
});
out.inTokyo = { status: inTokyo.response.status, contacts: inTokyo.data?.length };
const head = await client.HEAD('/api/line/{hubId}/messages', {
  params: { path: { hubId }, query: { apikey: readKey } },
});
out.head = { status: head.response.status, cacheControl: head.response.headers.get('cache-control') };

// An error: its body is typed with the codes that status can carry.
const refused = await client.GET('/api/line/{hubId}/messages', {
  params: { path: { hubId }, query: { apikey: readKey, from: '2019-11-05', to: '2019-11-04' } },
});
const code: string | undefined = refused.error?.error.code;
out.refused = { status: refused.response.status, code };

// The change feed: the key in Authorization (or apikey, never both), then following the cursor.
const bearerRead = { Authorization: \`Bearer \${readKey}\` };
const changes = await client.GET('/api/line/{hubId}/changes', {
  params: { path: { hubId }, query: { limit: 1000 } },
  headers: bearerRead,
});
const feed = changes.data?.changes ?? [];
const cursor: string | undefined = changes.data?.cursor;
const caughtUp = await client.GET('/api/line/{hubId}/changes', {
  params: { path: { hubId }, query: { apikey: readKey, cursor, wait: 1 } },
});
const both = await client.GET('/api/line/{hubId}/changes', {
  params: { path: { hubId }, query: { apikey: readKey } },
  headers: bearerRead,
});
out.changes = {
  status: changes.response.status,
  types: feed.map((c) => c.type),
  created: feed.flatMap((c) => (c.type === 'message.created' ? [[c.id, c.message?.msg]] : [])),
  hasMore: changes.data?.hasMore,
  caughtUp: {
    status: caughtUp.response.status,
    changes: caughtUp.data?.changes.length,
    sameCursor: caughtUp.data?.cursor === cursor,
  },
  both: { status: both.response.status, code: both.error?.error.code },
};

// Outgoing webhooks, managed with an admin key: add (the secret is shown this once), list, remove.
const bearerAdmin = { Authorization: \`Bearer \${adminKey}\` };
const added = await client.POST('/api/line/{hubId}/webhooks', {
  params: { path: { hubId } },
  headers: bearerAdmin,
  body: { url: receiverUrl, events: ['message.created', 'message.deleted'] },
});
const endpointId: string = added.data?.id ?? '';
const secret: string | undefined = added.data?.secret;
const listed = await client.GET('/api/line/{hubId}/webhooks', {
  params: { path: { hubId }, query: { apikey: adminKey } },
});
const endpoints = listed.data ?? [];
const removed = await client.DELETE('/api/line/{hubId}/webhooks/{webhookId}', {
  params: { path: { hubId, webhookId: endpointId } },
  headers: bearerAdmin,
});
const removedAgain = await client.DELETE('/api/line/{hubId}/webhooks/{webhookId}', {
  params: { path: { hubId, webhookId: endpointId } },
  headers: bearerAdmin,
});
const metadata = await client.POST('/api/line/{hubId}/webhooks', {
  params: { path: { hubId } },
  headers: bearerAdmin,
  body: { url: 'http://169.254.169.254/latest/meta-data/' },
});
const afterwards = await client.GET('/api/line/{hubId}/webhooks', {
  params: { path: { hubId } },
  headers: bearerAdmin,
});
out.webhooks = {
  added: { status: added.response.status, url: added.data?.url, events: added.data?.events },
  secret: secret?.startsWith('whsec_'),
  listed: {
    status: listed.response.status,
    endpoints: endpoints.map((e) => [e.id === endpointId, e.url, e.events, e.disabledAt]),
    secretShown: JSON.stringify(endpoints).includes('whsec_'),
  },
  removed: removed.response.status,
  removedAgain: { status: removedAgain.response.status, code: removedAgain.error?.error.code },
  metadata: { status: metadata.response.status, code: metadata.error?.error.code },
  afterwards: afterwards.data?.length,
};

// Health checks.
const health = await client.GET('/healthz');
const ready = await client.GET('/readyz');
out.health = { healthz: health.data?.status, readyz: ready.data?.status };

console.log(JSON.stringify(out));
`;

const HUB = '6662225';
const CHANNEL_SECRET = 'openapi-typescript-test-channel-secret';
let server: TestServer;
let served: ServedDocument;
let readKey: string;
let ingestKey: string;
let adminKey: string;
let receiver: Receiver;

before(async () => {
  receiver = await startReceiver();
  // The receiver listens on 127.0.0.1: allowed as with CHATLOG_WEBHOOK_ALLOW_PRIVATE=true.
  server = await startTestServer({ webhookAllowPrivate: true });
  await server.hubs.add(HUB, { lineChannelSecret: CHANNEL_SECRET });
  readKey = (await server.keys.issue(HUB, 'read', 'openapi-fetch')).key;
  ingestKey = (await server.keys.issue(HUB, 'ingest', 'openapi-fetch')).key;
  adminKey = (await server.keys.issue(HUB, 'admin', 'openapi-fetch')).key;
  served = await servedDocument();
  // The program's directory resolves openapi-fetch, tsx and @types/node from the repository's.
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(served.dir, 'node_modules'), 'dir');
  fs.writeFileSync(path.join(served.dir, 'package.json'), '{"type":"module","private":true}\n');
  fs.writeFileSync(path.join(served.dir, 'client.ts'), PROGRAM);
});
after(async () => {
  served?.cleanUp();
  await server?.close();
  await receiver?.close();
});

test('openapi-typescript (default settings) generates types, and an openapi-fetch program using them compiles under tsc --strict with no cast', async () => {
  const generated = await runTool('openapi-typescript', [served.file, '-o', 'chatlog-api.d.ts'], served.dir);
  assert.equal(generated.code, 0, `openapi-typescript failed: ${generated.stderr}${generated.stdout}`);
  const types = fs.readFileSync(path.join(served.dir, 'chatlog-api.d.ts'), 'utf8');
  assert.match(types, /export interface paths/);
  // Optional request fields stay optional: the minimal body {lineId, msg} must be a valid request.
  assert.match(types, /contentType\?: string \| null;/);
  assert.match(types, /sender\?: string \| null;/);
  const code = PROGRAM.replace(/\/\/.*$/gm, '');
  assert.doesNotMatch(code, /\bas [A-Za-z{[]|\bany\b|[\w)\]]!(?=[.;,)[])/, 'the program uses no cast');
  const compiled = await runTool(
    'tsc',
    [
      '--strict',
      '--noEmit',
      '--target',
      'es2023',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--types',
      'node',
      '--noUncheckedIndexedAccess',
      'client.ts',
    ],
    served.dir,
  );
  assert.equal(compiled.code, 0, `tsc --strict refused the program:\n${compiled.stdout}${compiled.stderr}`);
});

test('the versions the client README tells integrators to use are the ones this test generates, compiles and runs with', () => {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'clients', 'typescript', 'README.md'), 'utf8');
  const installed = (name: string) =>
    (
      JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  const npx = /^npx -y -p openapi-typescript@(\S+) -p typescript@(\S+) openapi-typescript /m.exec(readme);
  assert.ok(npx, 'the README generates with npx -p openapi-typescript@… -p typescript@…');
  assert.deepEqual([npx[1], npx[2]], [installed('openapi-typescript'), installed('typescript')]);
  assert.equal(/^npm install openapi-fetch@(\S+)$/m.exec(readme)?.[1], installed('openapi-fetch'));
  // TypeScript 5, the line openapi-typescript 7 runs on (its peer dependency).
  const peer = (
    JSON.parse(
      fs.readFileSync(path.join(REPO_ROOT, 'node_modules', 'openapi-typescript', 'package.json'), 'utf8'),
    ) as {
      peerDependencies: Record<string, string>;
    }
  ).peerDependencies.typescript;
  assert.equal(peer, '^5.x');
  assert.match(npx[2] ?? '', /^5\./);
});

test('the openapi-fetch program runs against a live server: every request the README shows does what the README says', async () => {
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [
        '--import',
        'tsx',
        'client.ts',
        server.url,
        HUB,
        readKey,
        ingestKey,
        CHANNEL_SECRET,
        adminKey,
        `${receiver.url}/chatlog`,
      ],
      { cwd: served.dir, env: TOOL_ENV, timeout: 60_000 },
      (error, out, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(out)),
    ),
  );
  const out = JSON.parse(stdout);
  assert.deepEqual(out.recorded, { status: 200, stored: 1, duplicates: 0 });
  assert.deepEqual(out.minimal, { status: 200, stored: 1 });
  assert.deepEqual(out.linked, {
    status: 200,
    contact: { lineId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3', vid: '101', name: 'shinobu' },
  });
  assert.deepEqual(out.webhook, { status: 200 });
  assert.equal(out.read.status, 200);
  assert.match(out.read.etag, /^W\//);
  assert.deepEqual(out.read.messages, [
    ['shinobu', 'shinobu', 'こんにちは！', '2019-11-03T01:02:11.120Z'],
    ['shinobu', 'You', 'Thanks, see you on the 10th!', '2019-11-03T10:15:00.123Z'],
  ]);
  assert.deepEqual(out.inTokyo, { status: 200, contacts: 1 });
  assert.deepEqual(out.head, { status: 200, cacheControl: 'private, no-store' });
  assert.deepEqual(out.refused, { status: 400, code: 'invalid_range' });
  assert.equal(out.changes.status, 200);
  assert.ok(out.changes.types.includes('contact.updated'), 'the link is a contact change');
  assert.deepEqual(out.changes.created.at(0), ['crm-8812', 'Thanks, see you on the 10th!']);
  assert.deepEqual(out.changes.created.at(-1), ['444573844083572737', 'こんにちは！']);
  assert.equal(out.changes.created.length, 3);
  assert.equal(out.changes.hasMore, false);
  assert.deepEqual(out.changes.caughtUp, { status: 200, changes: 0, sameCursor: true });
  assert.deepEqual(out.changes.both, { status: 400, code: 'ambiguous_credentials' });
  assert.deepEqual(out.webhooks, {
    added: { status: 201, url: `${receiver.url}/chatlog`, events: ['message.created', 'message.deleted'] },
    secret: true,
    listed: {
      status: 200,
      endpoints: [[true, `${receiver.url}/chatlog`, ['message.created', 'message.deleted'], null]],
      secretShown: false,
    },
    removed: 204,
    removedAgain: { status: 404, code: 'not_found' },
    metadata: { status: 400, code: 'invalid_url' },
    afterwards: 0,
  });
  assert.deepEqual(out.health, { healthz: 'ok', readyz: 'ready' });
});
