/**
 * The account screen's webhooks page over HTTP, without a browser (webhooks.test.ts drives it in
 * Chromium): an account sees and changes only its own hubs' endpoints, every change needs a
 * same-origin post with the session's CSRF token, Remove asks first, a refused URL is a 400 page
 * saying why, and a secret is in no answer but the one that added its endpoint.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AccountClient } from '../fixtures/account-client.js';
import { rawRequest, startTestServer, type TestServer } from '../helpers.js';

const PASSWORD = 'webhooks access password';
const MINE = '7780001';
const THEIRS = '7780002';
let server: TestServer;
let theirAdmin: string;
let myAdmin: string;

/** The hub's endpoints as the admin API lists them. */
async function endpointsOf(hubId: string, admin: string): Promise<Array<{ id: string; url: string }>> {
  const res = await rawRequest(server.url, 'GET', `/api/line/${hubId}/webhooks`, {
    authorization: `Bearer ${admin}`,
  });
  assert.equal(res.status, 200);
  return JSON.parse(res.body.toString('utf8'));
}

async function addThroughApi(hubId: string, admin: string, url: string): Promise<string> {
  const res = await rawRequest(
    server.url,
    'POST',
    `/api/line/${hubId}/webhooks`,
    { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    JSON.stringify({ url }),
  );
  assert.equal(res.status, 201, res.body.toString('utf8'));
  return (JSON.parse(res.body.toString('utf8')) as { id: string }).id;
}

before(async () => {
  server = await startTestServer({ webhookAllowPrivate: true });
  await server.hubs.add(MINE, {});
  await server.hubs.add(THEIRS, {});
  await server.accounts.add('mine@example.com', [MINE], PASSWORD);
  await server.accounts.add('theirs@example.com', [THEIRS], PASSWORD);
  myAdmin = (await server.keys.issue(MINE, 'admin', '')).key;
  theirAdmin = (await server.keys.issue(THEIRS, 'admin', '')).key;
});
after(() => server?.close());

describe('the webhooks page of the account screen, over HTTP', () => {
  test("an account cannot see, add to or remove another account's hub's endpoints", async () => {
    const theirUrl = 'http://127.0.0.1:9/theirs-only';
    const theirId = await addThroughApi(THEIRS, theirAdmin, theirUrl);
    const client = new AccountClient(server.url, PASSWORD);
    await client.signIn('mine@example.com');
    const csrf = await client.csrf();

    const keys = await client.get('/account');
    assert.ok(keys.text.includes(`href="/account/hubs/${MINE}/webhooks"`), 'a link to my hub’s webhooks');
    assert.ok(!keys.text.includes(`/account/hubs/${THEIRS}/webhooks`), 'none to theirs');

    const look = await client.get(`/account/hubs/${THEIRS}/webhooks`);
    assert.equal(look.status, 404);
    assert.ok(!look.text.includes(theirUrl));
    const add = await client.post(`/account/hubs/${THEIRS}/webhooks`, {
      csrf,
      url: 'http://127.0.0.1:9/mine',
    });
    assert.equal(add.status, 404);
    assert.ok(!/whsec_/.test(add.text), 'no secret of an endpoint it may not add');
    for (const path of [
      `/account/hubs/${THEIRS}/webhooks/${theirId}/retry`,
      `/account/hubs/${MINE}/webhooks/${theirId}/retry`,
    ]) {
      const retry = await client.post(path, { csrf });
      assert.equal(retry.status, 404, path);
      assert.ok(!retry.text.includes(theirUrl));
    }
    for (const path of [
      `/account/hubs/${THEIRS}/webhooks/${theirId}/remove`,
      `/account/hubs/${MINE}/webhooks/${theirId}/remove`,
    ]) {
      const remove = await client.post(path, { csrf, confirm: 'yes' });
      assert.equal(remove.status, 404, path);
      assert.ok(!remove.text.includes(theirUrl));
      const ask = await client.post(path, { csrf });
      assert.equal(ask.status, 404, `${path}: not even the question`);
    }
    assert.deepEqual(
      (await endpointsOf(THEIRS, theirAdmin)).map((endpoint) => endpoint.url),
      [theirUrl],
      'theirs untouched, nothing added',
    );
    const mine = await client.get(`/account/hubs/${MINE}/webhooks`);
    assert.equal(mine.status, 200);
    assert.ok(!mine.text.includes(theirUrl), 'my page does not list theirs');
  });

  test('cross-site posts, posts without the token and signed-out requests change nothing', async () => {
    const client = new AccountClient(server.url, PASSWORD);
    await client.signIn('mine@example.com');
    const csrf = await client.csrf();
    const myId = await addThroughApi(MINE, myAdmin, 'http://127.0.0.1:9/kept');
    const before = await endpointsOf(MINE, myAdmin);
    const add = `/account/hubs/${MINE}/webhooks`;
    const remove = `/account/hubs/${MINE}/webhooks/${myId}/remove`;
    const attempts = [
      client.post(add, { csrf, url: 'http://127.0.0.1:9/evil' }, { origin: 'https://evil.example' }),
      client.post(add, { csrf, url: 'http://127.0.0.1:9/evil' }, { 'sec-fetch-site': 'cross-site' }),
      client.post(add, { url: 'http://127.0.0.1:9/no-token' }),
      client.post(add, { csrf: `${csrf}x`, url: 'http://127.0.0.1:9/wrong-token' }),
      client.post(remove, { csrf, confirm: 'yes' }, { origin: 'https://evil.example' }),
      client.post(remove, { confirm: 'yes' }),
      client.post(`${remove.replace(/remove$/, 'retry')}`, { csrf }, { origin: 'https://evil.example' }),
      client.post(`${remove.replace(/remove$/, 'retry')}`, {}),
    ];
    for (const attempt of await Promise.all(attempts)) {
      assert.equal(attempt.status, 403);
      assert.ok(!/whsec_/.test(attempt.text));
    }
    const stranger = new AccountClient(server.url, PASSWORD);
    assert.equal((await stranger.get(add)).status, 303, 'signed out: sent to sign in');
    assert.equal((await stranger.post(remove, { csrf, confirm: 'yes' })).status, 303);
    assert.deepEqual(await endpointsOf(MINE, myAdmin), before);
    assert.equal((await client.send('PUT', add)).status, 405);
    assert.equal((await client.get(remove)).status, 405);
    assert.equal((await client.get(remove.replace(/remove$/, 'retry'))).status, 405);
    // With its token, from the page's own site: done, and said (nothing was waiting here).
    const retried = await client.post(remove.replace(/remove$/, 'retry'), { csrf });
    assert.equal(retried.status, 303);
    assert.equal(retried.headers.location, `/account/hubs/${MINE}/webhooks?retried=0`);
    assert.match(
      (await client.get(retried.headers.location ?? '')).text,
      /No delivery was waiting for a later try\./,
    );
  });

  test('without JavaScript: the secret only in the answer that added it, Remove asks on a page first', async () => {
    const client = new AccountClient(server.url, PASSWORD);
    await client.signIn('mine@example.com');
    const csrf = await client.csrf();
    const url = 'http://127.0.0.1:9/no-script';
    const added = await client.post(`/account/hubs/${MINE}/webhooks`, { csrf, url });
    assert.equal(added.status, 200);
    const secret = /<code id="new-secret">(whsec_[^<]+)<\/code>/.exec(added.text)?.[1];
    assert.match(secret ?? '', /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.match(added.text, /It will not be shown again\./);
    assert.equal(added.headers['cache-control'], 'private, no-store');
    const id = (await endpointsOf(MINE, myAdmin)).find((endpoint) => endpoint.url === url)?.id ?? '';
    assert.ok(id);

    const page = await client.get(`/account/hubs/${MINE}/webhooks`);
    assert.ok(page.text.includes(url), 'listed');
    assert.ok(!/whsec_/.test(page.text), 'no secret on the page afterwards');
    const keys = (await client.get('/account')).text;
    assert.ok(!/whsec_/.test(keys));
    assert.match(keys, /Webhooks<\/a> \(\d+ endpoints?\)/, 'the keys page says how many');

    const ask = await client.post(`/account/hubs/${MINE}/webhooks/${id}/remove`, { csrf });
    assert.equal(ask.status, 200);
    assert.ok(ask.text.replaceAll('<wbr>', '').includes(`Remove the endpoint ${url}?`));
    assert.ok(
      (await endpointsOf(MINE, myAdmin)).some((endpoint) => endpoint.id === id),
      'not yet removed',
    );
    const removed = await client.post(`/account/hubs/${MINE}/webhooks/${id}/remove`, {
      csrf,
      confirm: 'yes',
    });
    assert.equal(removed.status, 303);
    assert.equal(removed.headers.location, `/account/hubs/${MINE}/webhooks?removed=1`);
    assert.ok(!(await endpointsOf(MINE, myAdmin)).some((endpoint) => endpoint.id === id), 'removed');
    assert.match((await client.get(removed.headers.location ?? '')).text, /Endpoint removed\./);
  });

  test('a refused URL is a page saying why (400, not a fault), and adds nothing', async () => {
    const client = new AccountClient(server.url, PASSWORD);
    await client.signIn('mine@example.com');
    const csrf = await client.csrf();
    const before = await endpointsOf(MINE, myAdmin);
    for (const [url, why] of [
      [
        'http://169.254.169.254/latest/meta-data/',
        /169\.254\.169\.254 is a link-local, metadata or reserved address/,
      ],
      ['ftp://files.example.com/', /must be https/],
      ['not a url', /not an absolute http or https URL/],
      [`https://example.com/${'x'.repeat(2100)}`, /longer than 2048 characters/],
    ] as const) {
      const res = await client.post(`/account/hubs/${MINE}/webhooks`, { csrf, url });
      assert.equal(res.status, 400, url.slice(0, 60));
      const alert =
        /<p class="error" id="endpoint-url-error" role="alert">([^<]*)<\/p>/.exec(res.text)?.[1] ?? '';
      assert.match(alert, /^This URL is refused: /);
      assert.match(alert, why);
      assert.ok(!/whsec_/.test(res.text));
    }
    assert.deepEqual(await endpointsOf(MINE, myAdmin), before);
  });

  test('a password written into an endpoint URL is not shown', async () => {
    const id = await addThroughApi(MINE, myAdmin, 'https://hook:s3cret-pass@127.0.0.1:9/with-password');
    const client = new AccountClient(server.url, PASSWORD);
    await client.signIn('mine@example.com');
    const page = await client.get(`/account/hubs/${MINE}/webhooks`);
    assert.ok(!page.text.includes('s3cret-pass'));
    assert.ok(page.text.includes('https://hook:••••@127.0.0.1:9/with-password'));
    const ask = await client.post(`/account/hubs/${MINE}/webhooks/${id}/remove`, {
      csrf: await client.csrf(),
    });
    assert.ok(!ask.text.includes('s3cret-pass'));
  });
});
