/**
 * `chatlog demo`: a demo hub with realistic LINE conversations, and everything needed to look
 * around, printed: a curl line for the read API, a login for the account screen, /docs, and a
 * webhook signed with the demo hub's channel secret.
 */
import { randomBytes } from 'node:crypto';
import { parseTimestamp } from '../lib/calendar.js';
import { randomBase62 } from '../modules/keys/keys.format.js';
import type { ImportMessage } from '../store/store.js';
import type { Runtime } from './runtime.js';

export const DEMO_HUB_ID = '6662225';
const DEMO_KEY_LABEL = 'demo';
/** The demo's login. Its password is made afresh by every run (never a fixed, guessable one). */
export const DEMO_EMAIL = 'demo@example.com';

interface DemoContact {
  lineId: string;
  vid: string;
  name: string;
  /** [local time in Asia/Tokyo, from the friend?, contentType, msg] */
  messages: Array<[string, boolean, string, string]>;
}

const CONTACTS: DemoContact[] = [
  {
    lineId: 'U4af4980629a0d8f0f1b1d9a3e8b1c2d3',
    vid: '101',
    name: 'shinobu',
    messages: [
      ['2019-11-03T10:02:11.120', true, 'text', 'こんにちは！予約の変更をお願いしたいです🙏'],
      [
        '2019-11-03T10:03:40.501',
        false,
        'text',
        'shinobu様、ご連絡ありがとうございます。\nご希望の日時を教えていただけますか？',
      ],
      ['2019-11-03T10:05:02.000', true, 'text', '11/10の14時は空いていますか？'],
      [
        '2019-11-03T10:06:30.250',
        false,
        'text',
        'はい、11月10日14:00でお取りしました。当日お待ちしております😊',
      ],
      ['2019-11-03T10:06:45.000', false, 'sticker', '[Sticker]\nID: 1'],
      ['2019-11-04T09:15:00.000', true, 'image', '[Image]\nID: 10849128300317'],
      ['2019-11-04T09:16:12.730', false, 'text', '写真ありがとうございます！確認しますね。'],
    ],
  },
  {
    lineId: 'U9c1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a',
    vid: '102',
    name: '田中 花子',
    messages: [
      ['2019-11-03T21:48:09.004', true, 'text', '営業時間は何時までですか？'],
      ['2019-11-03T21:50:33.812', false, 'text', '平日は20時まで、土日祝は18時までです。'],
      [
        '2019-11-04T08:01:00.000',
        true,
        'location',
        '[Location]\nID: 10849128300999\n渋谷駅\n東京都渋谷区道玄坂1丁目\n35.658034,139.701636',
      ],
      ['2019-11-04T08:02:20.000', false, 'text', '渋谷駅からは徒歩5分です🚶‍♀️ お気をつけてお越しください。'],
    ],
  },
  {
    lineId: 'Ub2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7',
    vid: '',
    name: 'Ken',
    messages: [
      ['2019-11-02T18:30:00.000', true, 'text', 'Hi! Do you ship to Osaka?'],
      [
        '2019-11-04T12:00:05.333',
        false,
        'text',
        'Hello Ken, yes we do: 2-3 business days.\nShipping is free over ¥5,000.',
      ],
      ['2019-11-04T12:01:47.900', true, 'text', 'Great, thanks 👍'],
      ['2019-11-05T09:00:00.000', true, 'file', '[File]\nID: 10849128301234\nName: order-4411.pdf'],
    ],
  },
];

function demoMessages(): ImportMessage[] {
  const out: ImportMessage[] = [];
  for (const contact of CONTACTS) {
    for (const [local, fromFriend, contentType, msg] of contact.messages) {
      const createdAt = parseTimestamp(`${local}+09:00`);
      if (createdAt === undefined) throw new Error(`bad demo time ${local}`);
      out.push({
        lineId: contact.lineId,
        vid: contact.vid,
        name: contact.name,
        sender: fromFriend ? null : 'You',
        msg,
        contentType,
        createdAt,
        sourceId: `demo:${contact.lineId}:${local}`,
      });
    }
  }
  return out;
}

/** What the demo made: its hub's read key, login and channel secret, to print once the port is known. */
export interface DemoSetup {
  contacts: number;
  messages: number;
  readKey: string;
  password: string;
  channelSecret: string;
}

/** Fills the demo hub (again: nothing is stored twice) and makes its key, login and channel secret. */
export async function prepareDemo(runtime: Runtime): Promise<DemoSetup> {
  const { hub } = await runtime.hubs.add(DEMO_HUB_ID, { timeZone: 'Asia/Tokyo' });
  // The hub's own channel secret when it has one (a run before this one set it), else a new one.
  let channelSecret = hub.lineChannelSecretEncrypted
    ? runtime.secrets.decrypt(hub.lineChannelSecretEncrypted)
    : undefined;
  if (channelSecret === undefined) {
    channelSecret = randomBytes(16).toString('hex');
    await runtime.hubs.add(DEMO_HUB_ID, { lineChannelSecret: channelSecret });
  }
  const messages = demoMessages();
  async function* once() {
    yield messages;
  }
  await runtime.store.messages.importAll(DEMO_HUB_ID, once(), Date.now());

  let readKey: string | undefined;
  for (const summary of await runtime.keys.list(DEMO_HUB_ID)) {
    if (summary.label === DEMO_KEY_LABEL && summary.scope === 'read' && summary.revokedAt === null) {
      readKey = await runtime.keys.reveal(summary.id);
      if (readKey) break;
    }
  }
  readKey ??= (await runtime.keys.issue(DEMO_HUB_ID, 'read', DEMO_KEY_LABEL)).key;

  const password = randomBase62(16);
  await runtime.accounts.add(DEMO_EMAIL, [DEMO_HUB_ID], password);
  return { contacts: CONTACTS.length, messages: messages.length, readKey, password, channelSecret };
}

/** A word for the shell, quoted so that it stays one word whatever it holds. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A LINE webhook body: one text message from the demo's first friend, on 4 November 2019 in Tokyo. */
export function demoWebhookBody(): string {
  const contact = CONTACTS[0] as DemoContact;
  return JSON.stringify({
    destination: 'Udeadbeefdeadbeefdeadbeefdeadbeef',
    events: [
      {
        type: 'message',
        mode: 'active',
        timestamp: parseTimestamp('2019-11-04T14:30:00.000+09:00'),
        source: { type: 'user', userId: contact.lineId },
        webhookEventId: '01DEMOWEBHOOK0000000000001',
        deliveryContext: { isRedelivery: false },
        replyToken: '0f3779fba3b349968c5d07db31eab56f',
        message: {
          id: '10849128309999',
          type: 'text',
          quoteToken: 'demo',
          text: 'Sent through the signed webhook',
        },
      },
    ],
  });
}

/**
 * What `chatlog demo` prints, for a server at baseUrl. The webhook line signs the body the way
 * LINE does (HMAC-SHA256 under the channel secret, base64) with openssl.
 */
export function demoText(setup: DemoSetup, baseUrl: string, serving: boolean): string {
  const readUrl = `${baseUrl}/api/line/${DEMO_HUB_ID}/messages?apikey=${setup.readKey}&from=2019-11-03&to=2019-11-04`;
  const signature = `$(printf %s "$body" | openssl dgst -sha256 -hmac ${shellQuote(setup.channelSecret)} -binary | base64)`;
  const webhook = `body=${shellQuote(demoWebhookBody())}; curl ${shellQuote(`${baseUrl}/webhooks/line/${DEMO_HUB_ID}`)} -H 'Content-Type: application/json' -H "X-Line-Signature: ${signature}" --data-raw "$body"`;
  return [
    `Demo hub ${DEMO_HUB_ID} is ready: ${setup.contacts} contacts, ${setup.messages} messages, time zone Asia/Tokyo.`,
    serving
      ? `The server is listening on ${baseUrl} (Ctrl-C stops it). In another terminal:`
      : 'Once the server is up (./bin/chatlog serve), in another terminal:',
    '',
    'Read the messages of 3 and 4 November 2019:',
    `  curl '${readUrl}'`,
    '',
    'Issue, copy and revoke keys on the account screen:',
    `  ${baseUrl}/account`,
    `  email ${DEMO_EMAIL}, password ${setup.password}   (made for this demo; a new one at every run)`,
    '',
    `The API reference: ${baseUrl}/docs`,
    '',
    "Send a message as LINE would, signed with the demo hub's channel secret, then read again:",
    `  ${webhook}`,
    '',
  ].join('\n');
}
