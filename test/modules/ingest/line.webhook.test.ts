import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isValidLineSignature, lineSignature } from '../../../src/modules/ingest/line.signature.js';
import {
  heldContent,
  InvalidWebhookBody,
  renderLineMessage,
  translateWebhook,
} from '../../../src/modules/ingest/line.webhook.js';
import { GROUP, messageEvent, ROOM, SAMPLE_MESSAGES, USER } from '../../fixtures/line.js';

test('each LINE message type renders as CONTRACT §3 says', () => {
  for (const [type, sample] of Object.entries(SAMPLE_MESSAGES)) {
    assert.deepEqual(renderLineMessage(sample.message), { contentType: type, msg: sample.msg }, type);
  }
});

test('absent values leave their line out; numbers are written as JavaScript writes them', () => {
  assert.equal(
    renderLineMessage({ id: '1', type: 'location', latitude: 35.68, longitude: 139.7 }).msg,
    '[Location]\nID: 1\n35.68,139.7',
  );
  assert.equal(
    renderLineMessage({ id: '1', type: 'location', title: 'T', latitude: 1e-7, longitude: -0.5 }).msg,
    '[Location]\nID: 1\nT\n1e-7,-0.5',
  );
  assert.equal(renderLineMessage({ id: '2', type: 'file' }).msg, '[File]\nID: 2');
  assert.equal(renderLineMessage({ id: '3', type: 'sticker' }).msg, '[Sticker]');
});

test('a message type chatlog does not know yet is kept with its type name', () => {
  assert.deepEqual(renderLineMessage({ id: '99', type: 'hologram', depth: 3 }), {
    contentType: 'hologram',
    msg: '[Hologram]\nID: 99',
  });
});

test('signature: base64 HMAC-SHA256 of the raw bytes; any one-byte change fails it', () => {
  const secret = 'channel-secret-123';
  const raw = Buffer.from(JSON.stringify({ destination: 'U1', events: [] }));
  const signature = lineSignature(secret, raw);
  assert.ok(isValidLineSignature(secret, raw, signature));
  fc.assert(
    fc.property(fc.nat(raw.length - 1), fc.integer({ min: 1, max: 255 }), (position, delta) => {
      const changed = Buffer.from(raw);
      changed[position] = ((changed[position] ?? 0) + delta) % 256;
      assert.equal(isValidLineSignature(secret, changed, signature), false);
    }),
  );
  for (const bad of [
    undefined,
    '',
    'abc',
    signature.slice(0, -4),
    signature.toLowerCase(),
    lineSignature('other-secret', raw),
  ]) {
    assert.equal(isValidLineSignature(secret, raw, bad), false, String(bad));
  }
});

test('events become operations: messages, follow, unfollow, unsend; others are ignored', () => {
  const { operations } = translateWebhook(
    {
      destination: 'U0',
      events: [
        messageEvent(SAMPLE_MESSAGES.text!.message, { timestamp: 1000 }),
        messageEvent(
          { id: 'g1', type: 'text', text: 'in a group' },
          { source: { type: 'group', groupId: GROUP, userId: USER } },
        ),
        messageEvent(
          { id: 'r1', type: 'text', text: 'in a room, no user' },
          { source: { type: 'room', roomId: ROOM } },
        ),
        {
          type: 'follow',
          timestamp: 5,
          source: { type: 'user', userId: USER },
          follow: { isUnblocked: false },
        },
        { type: 'unfollow', timestamp: 6, source: { type: 'user', userId: USER } },
        {
          type: 'unsend',
          timestamp: 7,
          source: { type: 'user', userId: USER },
          unsend: { messageId: '444573844083572737' },
        },
        { type: 'postback', timestamp: 8, postback: { data: 'x' } },
        { type: 'somethingNew', surprise: true },
      ],
    },
    42,
  );
  assert.deepEqual(operations, [
    {
      kind: 'message',
      lineId: USER,
      sender: null,
      msg: SAMPLE_MESSAGES.text!.msg,
      contentType: 'text',
      createdAt: 1000,
      sourceId: 'line:444573844083572737',
      id: '444573844083572737',
      line: JSON.stringify({
        source: { type: 'user', userId: USER },
        message: SAMPLE_MESSAGES.text!.message,
      }),
      sourceKind: 'user',
      sourceChatId: null,
    },
    {
      kind: 'message',
      lineId: USER,
      sender: null,
      msg: 'in a group',
      contentType: 'text',
      createdAt: 1462629479859,
      sourceId: 'line:g1',
      id: 'g1',
      line: JSON.stringify({
        source: { type: 'group', groupId: GROUP, userId: USER },
        message: { id: 'g1', type: 'text', text: 'in a group' },
      }),
      sourceKind: 'group',
      sourceChatId: GROUP,
    },
    {
      kind: 'message',
      lineId: ROOM,
      sender: null,
      msg: 'in a room, no user',
      contentType: 'text',
      createdAt: 1462629479859,
      sourceId: 'line:r1',
      id: 'r1',
      line: JSON.stringify({
        source: { type: 'room', roomId: ROOM },
        message: { id: 'r1', type: 'text', text: 'in a room, no user' },
      }),
      sourceKind: 'room',
      sourceChatId: ROOM,
    },
    { kind: 'follow', lineId: USER, at: 5 },
    { kind: 'unfollow', lineId: USER, at: 6 },
    { kind: 'unsend', sourceId: 'line:444573844083572737', at: 7 },
  ]);
  assert.deepEqual(translateWebhook({ destination: 'U0', events: [] }, 0).operations, []);
});

test('a body that is not LINE shaped is refused; any JSON is either translated or refused, never a crash', () => {
  for (const bad of [
    null,
    [],
    'x',
    {},
    { events: {} },
    { events: [1] },
    { events: [{ type: 'message' }] },
    { events: [{ type: 'unsend' }] },
  ]) {
    assert.throws(() => translateWebhook(bad, 0), InvalidWebhookBody);
  }
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      try {
        translateWebhook({ events: [value, { type: 'message', message: value }] }, 0);
      } catch (error) {
        assert.ok(error instanceof InvalidWebhookBody);
      }
    }),
  );
});

test('media whose content LINE holds are queued for download; content held elsewhere and other types are not', () => {
  const cases: Array<[Record<string, unknown>, unknown]> = [
    [
      { id: '1', type: 'image', contentProvider: { type: 'line' } },
      { lineMessageId: '1', kind: 'image', fileName: null },
    ],
    [
      { id: '2', type: 'video' },
      { lineMessageId: '2', kind: 'video', fileName: null },
    ],
    [
      { id: '3', type: 'audio', contentProvider: { type: 'line' } },
      { lineMessageId: '3', kind: 'audio', fileName: null },
    ],
    [
      { id: '4', type: 'file', fileName: '見積書.pdf' },
      { lineMessageId: '4', kind: 'file', fileName: '見積書.pdf' },
    ],
    [
      { id: '5', type: 'image', contentProvider: { type: 'external', originalContentUrl: 'https://x' } },
      undefined,
    ],
    [{ id: '6', type: 'text', text: 'hi' }, undefined],
    [{ id: '7', type: 'sticker', stickerId: '1' }, undefined],
    [{ id: '8', type: 'hologram' }, undefined],
  ];
  for (const [message, expected] of cases)
    assert.deepEqual(heldContent(message), expected, JSON.stringify(message));
});
