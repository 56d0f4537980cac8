import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { message, startTestServer, storeMessages, type TestServer } from '../helpers.js';

let server: TestServer;
let key: string;

before(async () => {
  server = await startTestServer();
  await server.hubs.add('6662225', { timeZone: 'Asia/Tokyo' });
  key = (await server.keys.issue('6662225', 'read', 'smoke')).key;
  await storeMessages(server.store, '6662225', [
    message({
      lineId: 'U1',
      vid: '101',
      name: 'shinobu',
      sender: 'You',
      msg: '[Sticker]\nID: 1',
      contentType: 'sticker',
      createdAt: Date.parse('2019-11-03T01:00:00.000Z'),
    }),
  ]);
});
after(() => server?.close());

test('a listening server answers the sample request with the contact and its message', async () => {
  const response = await server.request(
    `/api/line/6662225/messages?apikey=${key}&from=2019-11-03&to=2019-11-04`,
  );
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.deepEqual(await response.json(), [
    {
      lineId: 'U1',
      vid: '101',
      name: 'shinobu',
      messages: [
        {
          sender: 'You',
          msg: '[Sticker]\nID: 1',
          contentType: 'sticker',
          createdAt: '2019-11-03T01:00:00.000Z',
        },
      ],
    },
  ]);
});

test('gzip is negotiated and decompresses to the same body', async () => {
  const plain = await (await server.request(`/api/line/6662225/messages?apikey=${key}`)).text();
  const { request } = await import('node:http');
  const body = await new Promise<Buffer>((resolve, reject) => {
    request(
      `${server.url}/api/line/6662225/messages?apikey=${key}`,
      { headers: { 'accept-encoding': 'gzip' } },
      (res) => {
        assert.equal(res.headers['content-encoding'], 'gzip');
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      },
    )
      .on('error', reject)
      .end();
  });
  assert.equal(gunzipSync(body).toString('utf8'), plain);
});
