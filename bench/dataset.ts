/**
 * The benchmark dataset, deterministic from a seed: one large hub (20,000 contacts, 2,000,000
 * messages over two years with a daily rhythm in Asia/Tokyo: busier evenings, quieter nights),
 * Japanese and English text of varied length with emoji and line breaks, about 5% stickers and 3%
 * images; plus 1,000 small hubs of 50 to 500 messages. Loaded through the store's own bulk path.
 *
 * And the export hub of bench/export-rss.ts: N messages over 2,000 contacts, longer texts (20 to
 * 300 code points) with the characters JSON must escape. Its own corpus, kept as it was measured
 * with, so that its figures stay comparable with the earlier runs; both use the same PRNG.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ImportMessage, Store } from '../src/store/store.js';

export const LARGE_HUB = '900000';
export const SMALL_HUB_BASE = 800_000;
export const START_MS = Date.UTC(2023, 0, 1) - 9 * 3_600_000; // 2023-01-01T00:00 in Asia/Tokyo
export const DAYS = 731;

export interface DatasetSize {
  messages: number;
  contacts: number;
  smallHubs: number;
  seed: number;
}

export const FULL_SIZE: DatasetSize = {
  messages: 2_000_000,
  contacts: 20_000,
  smallHubs: 1_000,
  seed: 20261122,
};

export type Random = () => number;

/** mulberry32: small, fast, deterministic. */
export function prng(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const JA = [
  'こんにちは！',
  '予約の変更をお願いしたいです',
  'ありがとうございます。',
  '明日の14時は空いていますか？',
  '本日は誠にありがとうございました',
  '商品の発送はいつ頃になりますか',
  '了解しました！',
  '少し遅れます、すみません🙏',
  '駐車場はありますか？',
  'ご来店お待ちしております😊',
  '在庫を確認してご連絡いたします。',
  'クーポンは使えますか',
];
const EN = [
  'Hi there!',
  'Can I change my booking to Friday?',
  'Thanks so much 👍',
  'Is the shop open on Sunday?',
  'Your order has been shipped.',
  'See you tomorrow at 2pm',
  'Could you send me the invoice, please?',
  'Sorry, running 10 minutes late',
  'Great, thank you!',
  'Do you deliver to Osaka?',
];
const EMOJI = ['😀', '🙏', '👍', '🎉', '❤️', '👨‍👩‍👧‍👦', '🇯🇵', '✨', '🍣', '😂'];
const NAMES = ['しのぶ', '田中 花子', 'Ken', '佐藤', 'Aiko', 'Yuki 🌸', 'Taro', 'Emma', '鈴木 一郎', ''];

/** Hour weights of a day in Tokyo: quiet nights, a lunch bump, busy evenings. */
const HOUR_WEIGHTS = [2, 1, 1, 1, 1, 1, 2, 4, 6, 7, 7, 8, 10, 9, 7, 7, 8, 9, 11, 13, 14, 13, 9, 5];
const HOUR_TOTAL = HOUR_WEIGHTS.reduce((a, b) => a + b, 0);

function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

function text(random: Random): string {
  const parts: string[] = [];
  const count = 1 + Math.floor(random() * random() * 8);
  for (let i = 0; i < count; i++) {
    parts.push(random() < 0.6 ? pick(random, JA) : pick(random, EN));
    if (random() < 0.25) parts.push(pick(random, EMOJI));
    if (random() < 0.15) parts.push('\n');
  }
  return parts.join(random() < 0.5 ? '' : ' ');
}

function hourOfDay(random: Random): number {
  let x = random() * HOUR_TOTAL;
  for (let h = 0; h < 24; h++) {
    x -= HOUR_WEIGHTS[h] ?? 0;
    if (x <= 0) return h;
  }
  return 23;
}

interface Contact {
  lineId: string;
  vid: string;
  name: string;
}

function contacts(random: Random, count: number, prefix: string): Contact[] {
  return Array.from({ length: count }, (_, i) => ({
    lineId: `U${prefix}${i.toString(16).padStart(31 - prefix.length, '0')}`,
    vid: random() < 0.7 ? String(100 + i) : '',
    name: pick(random, NAMES),
  }));
}

/** A message's kind and text from a draw `kind` in [0, 1): 5% stickers, 3% images, the rest text. */
function textOfKind(random: Random, kind: number): { contentType: string; msg: string } {
  if (kind < 0.05)
    return { contentType: 'sticker', msg: `[Sticker]\nID: ${1 + Math.floor(random() * 52002800)}` };
  if (kind < 0.08) return { contentType: 'image', msg: `[Image]\nID: ${Math.floor(random() * 1e15)}` };
  return { contentType: 'text', msg: text(random) };
}

/** One message's kind and text as the large hub has them (bench/search-tokens.ts). */
export const messageText = (random: Random) => textOfKind(random, random());

function message(random: Random, contact: Contact, createdAt: number, sourceId: string): ImportMessage {
  const kind = random();
  const fromFriend = random() < 0.55;
  const { contentType, msg } = textOfKind(random, kind);
  return { ...contact, sender: fromFriend ? null : 'You', msg, contentType, createdAt, sourceId };
}

/** The large hub's messages in arrival order, in batches; contacts chosen with a skew (some chat a lot). */
export async function* largeHubBatches(
  size: DatasetSize,
  batchSize = 5_000,
): AsyncGenerator<ImportMessage[]> {
  const random = prng(size.seed);
  const people = contacts(random, size.contacts, 'a');
  const perDay = size.messages / DAYS;
  let produced = 0;
  let batch: ImportMessage[] = [];
  for (let day = 0; day < DAYS && produced < size.messages; day++) {
    const today = day === DAYS - 1 ? size.messages - produced : Math.round(perDay * (0.7 + random() * 0.6));
    const times: number[] = [];
    for (let i = 0; i < today && produced + times.length < size.messages; i++) {
      times.push(
        START_MS + day * 86_400_000 + hourOfDay(random) * 3_600_000 + Math.floor(random() * 3_600_000),
      );
    }
    times.sort((a, b) => a - b);
    for (const t of times) {
      const contact = people[Math.floor(random() ** 2 * people.length)] as Contact;
      batch.push(message(random, contact, t, `bench:${produced}`));
      produced += 1;
      if (batch.length >= batchSize) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

export function smallHubMessages(size: DatasetSize, index: number): ImportMessage[] {
  const random = prng(size.seed + 1 + index);
  const people = contacts(random, 5 + Math.floor(random() * 20), `s${index}x`);
  const count = 50 + Math.floor(random() * 451);
  const times = Array.from({ length: count }, () => START_MS + Math.floor(random() * DAYS * 86_400_000)).sort(
    (a, b) => a - b,
  );
  return times.map((t, i) => message(random, pick(random, people), t, `bench:${index}:${i}`));
}

/** Loads the whole dataset; reports progress and how long loading took. */
export async function loadDataset(
  store: Store,
  addHub: (hubId: string) => Promise<void>,
  size: DatasetSize,
  report: (line: string) => void,
): Promise<{ seconds: number; messages: number }> {
  const started = performance.now();
  await addHub(LARGE_HUB);
  let loaded = 0;
  async function* counted() {
    for await (const batch of largeHubBatches(size)) {
      loaded += batch.length;
      if (loaded % 200_000 < batch.length) {
        report(
          `  large hub: ${loaded.toLocaleString('en-US')} messages (${((performance.now() - started) / 1000).toFixed(1)} s)`,
        );
      }
      yield batch;
    }
  }
  await store.messages.importAll(LARGE_HUB, counted(), Date.now());
  let small = 0;
  for (let i = 0; i < size.smallHubs; i++) {
    const hubId = String(SMALL_HUB_BASE + i);
    await addHub(hubId);
    const messages = smallHubMessages(size, i);
    small += messages.length;
    async function* once() {
      yield messages;
    }
    await store.messages.importAll(hubId, once(), Date.now());
  }
  report(`  ${size.smallHubs} small hubs: ${small.toLocaleString('en-US')} messages`);
  return { seconds: (performance.now() - started) / 1000, messages: loaded + small };
}

// ---------------------------------------------------------------------------------------------
// The export hub (bench/export-rss.ts)

export const EXPORT_SEED = 0x5eed_c4a7;
const EXPORT_CONTACTS = 2_000;
const EXPORT_BATCH = 5_000;

const JA_FRAGMENTS = [
  'こんにちは！',
  'お世話になっております。',
  '予約の変更をお願いしたいです',
  '明日の14時は空いていますか？',
  'ありがとうございます',
  '承知しました。',
  '少々お待ちください。',
  '確認してご連絡いたします。',
  '商品はいつ届きますか？',
  '在庫はありますか',
  '駐車場はありますか？',
  'よろしくお願いします',
  '渋谷駅から徒歩5分です。',
  '了解です',
  '申し訳ございません、',
  '本日は定休日です。',
  'クーポンは使えますか？',
  '「ポイントカード」を忘れてしまいました',
  '写真を送りますね',
  '11月10日の午後でお願いします',
  'キャンセル料はかかりますか？',
  'またのご来店をお待ちしております。',
  'サイズはMとLがございます。',
  '送料は¥500です（税込）',
  'お問い合わせ番号：A-10294',
  '営業時間は平日10:00〜20:00、土日祝は18:00までです。',
];

const EN_FRAGMENTS = [
  'Hi!',
  'Thanks a lot',
  'Do you ship to Osaka?',
  'Can I change my booking to Friday?',
  'Sure, see you at 3pm.',
  'Order #4411 arrived today.',
  'Sorry for the late reply.',
  'I said "OK" to the new price.',
  'Price is ¥5,000 incl. tax',
  'The file is in C:\\Users\\ken\\Downloads',
  'Is there parking nearby?',
  'Could you send me the invoice?',
  'We are closed on Mondays.',
  'Let me check and get back to you.',
  'tab\tseparated\tvalues',
  'Great, thanks!',
  'What time do you open tomorrow?',
  'Please bring your membership card.',
];

const EXPORT_EMOJI = ['😊', '🙏', '👍', '🎉', '🚶‍♀️', '❤️', '😂', '🍣', '🌸', '✨', '📦', '🙇‍♂️', '👨‍👩‍👧'];
const SEPARATORS = [' ', ' ', ' ', '\n', '\n', '\n\n', '、', '。'];

const JA_FAMILY = ['田中', '佐藤', '鈴木', '高橋', '伊藤', '渡辺', '山本', '中村', '小林', '加藤'];
const JA_GIVEN = ['花子', '太郎', 'みき', '翔', 'さくら', '健', '由美', '大輔', 'あおい', '蓮'];
const EN_GIVEN = ['Ken', 'Emily', 'John', 'Yuki', 'Maria', 'Alex', 'Sam', 'Lisa', 'Tom', 'Aiko'];
const EN_FAMILY = ['Clark', 'Smith', 'Tanaka', 'Brown', 'Lee', 'Garcia', 'Sato', "O'Neil"];
const STAFF = ['You', 'You', 'You', 'You', 'You', 'You', 'You', '佐藤 (staff)', 'Support', 'Mika'];

interface ExportContact {
  lineId: string;
  vid: string;
  name: string;
  /** 0: Japanese, 1: English, 2: both. */
  language: 0 | 1 | 2;
}

function exportContacts(random: Random): ExportContact[] {
  const contacts: ExportContact[] = [];
  for (let i = 0; i < EXPORT_CONTACTS; i++) {
    let lineId = 'U';
    for (let k = 0; k < 32; k++) lineId += Math.floor(random() * 16).toString(16);
    const vid = random() < 0.7 ? String(100_000 + i) : '';
    const kind = random();
    let name: string;
    if (kind < 0.5) name = `${pick(random, JA_FAMILY)} ${pick(random, JA_GIVEN)}`;
    else if (kind < 0.8) name = `${pick(random, EN_GIVEN)} ${pick(random, EN_FAMILY)}`;
    else if (kind < 0.95) name = `${pick(random, EXPORT_EMOJI)}${pick(random, JA_GIVEN)}`;
    else if (kind < 0.99) name = pick(random, EN_GIVEN);
    else name = '';
    const language = random() < 0.55 ? 0 : random() < 0.6 ? 1 : 2;
    contacts.push({ lineId, vid, name, language });
  }
  return contacts;
}

/** A text of `length` code points (20-300) in the contact's language(s), with emoji and line breaks. */
function exportText(random: Random, language: ExportContact['language']): string {
  const length = 20 + Math.floor(281 * random() * random());
  let text = '';
  let codePoints = 0;
  while (codePoints < length) {
    const useJapanese = language === 0 || (language === 2 && random() < 0.5);
    let fragment = useJapanese ? pick(random, JA_FRAGMENTS) : pick(random, EN_FRAGMENTS);
    if (random() < 0.25) fragment += pick(random, EXPORT_EMOJI);
    if (text !== '') fragment = pick(random, SEPARATORS) + fragment;
    text += fragment;
    codePoints += [...fragment].length;
  }
  return codePoints === length ? text : [...text].slice(0, length).join('');
}

/**
 * The export hub's messages in batches of 5,000, oldest first, spread evenly over two years;
 * adds the index of every contact it writes for to `contactsUsed`; `onProgress` after each batch.
 */
export async function* exportHubBatches(
  messages: number,
  options: { contactsUsed: Set<number>; signal: AbortSignal; onProgress: (done: number) => void },
): AsyncGenerator<ImportMessage[]> {
  const { contactsUsed, signal, onProgress } = options;
  const random = prng(EXPORT_SEED);
  const contacts = exportContacts(random);
  // Heavy talkers are spread over the contact list, not bunched at its start.
  const order = contacts.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const a = order[i] ?? 0;
    order[i] = order[j] ?? 0;
    order[j] = a;
  }
  for (let start = 0; start < messages; start += EXPORT_BATCH) {
    signal.throwIfAborted();
    const batch: ImportMessage[] = [];
    const end = Math.min(messages, start + EXPORT_BATCH);
    for (let i = start; i < end; i++) {
      const index = order[Math.floor(EXPORT_CONTACTS * random() * random())] ?? 0;
      const contact = contacts[index];
      if (!contact) throw new Error('contact out of range');
      contactsUsed.add(index);
      const fromFriend = random() < 0.55;
      const sticker = random() < 0.05;
      batch.push({
        lineId: contact.lineId,
        vid: contact.vid,
        name: contact.name,
        sender: fromFriend ? null : pick(random, STAFF),
        msg: sticker
          ? `[Sticker]\nID: ${1 + Math.floor(random() * 50_000)}`
          : exportText(random, contact.language),
        contentType: sticker ? 'sticker' : 'text',
        // Oldest first, spread evenly over two years, with a little jitter that keeps the order.
        createdAt: START_MS + Math.floor(((i + random()) * (DAYS * 86_400_000)) / messages),
        sourceId: `bench:${i}`,
      });
    }
    yield batch;
    onProgress(end);
    // A turn of the event loop, so the deadline timer can fire during a long load.
    await yieldToEventLoop();
  }
}
