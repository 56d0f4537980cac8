/** `chatlog demo`: a demo hub with realistic LINE conversations, a read key, and a curl line. */
import { publicBaseUrl } from '../config.js';
import { parseTimestamp } from '../lib/calendar.js';
import type { ImportMessage } from '../store/store.js';
import type { Runtime } from './runtime.js';

export const DEMO_HUB_ID = '6662225';
const DEMO_KEY_LABEL = 'demo';

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

export async function runDemo(runtime: Runtime): Promise<string> {
  await runtime.hubs.add(DEMO_HUB_ID, { timeZone: 'Asia/Tokyo' });
  const messages = demoMessages();
  async function* once() {
    yield messages;
  }
  await runtime.store.messages.importAll(DEMO_HUB_ID, once(), Date.now());

  let key: string | undefined;
  for (const summary of await runtime.keys.list(DEMO_HUB_ID)) {
    if (summary.label === DEMO_KEY_LABEL && summary.scope === 'read' && summary.revokedAt === null) {
      key = await runtime.keys.reveal(summary.id);
      if (key) break;
    }
  }
  key ??= (await runtime.keys.issue(DEMO_HUB_ID, 'read', DEMO_KEY_LABEL)).key;

  const url = `${publicBaseUrl(runtime.config)}/api/line/${DEMO_HUB_ID}/messages?apikey=${key}&from=2019-11-03&to=2019-11-04`;
  return [
    `Demo hub ${DEMO_HUB_ID} is ready: ${CONTACTS.length} contacts, ${messages.length} messages, time zone Asia/Tokyo.`,
    'Once the server is up, ask for the messages of 3 and 4 November 2019:',
    '',
    `  curl '${url}'`,
    '',
  ].join('\n');
}
