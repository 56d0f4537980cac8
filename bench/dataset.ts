/**
 * The benchmark dataset, deterministic from a seed: one large hub (20,000 contacts, 2,000,000
 * messages over two years with a daily rhythm in Asia/Tokyo: busier evenings, quieter nights),
 * Japanese and English text of varied length with emoji and line breaks, about 5% stickers and 3%
 * images; plus 1,000 small hubs of 50 to 500 messages. Loaded through the store's own bulk path.
 */
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

/** mulberry32: small, fast, deterministic. */
export function prng(seed: number): () => number {
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

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function text(random: () => number): string {
  const parts: string[] = [];
  const count = 1 + Math.floor(random() * random() * 8);
  for (let i = 0; i < count; i++) {
    parts.push(random() < 0.6 ? pick(random, JA) : pick(random, EN));
    if (random() < 0.25) parts.push(pick(random, EMOJI));
    if (random() < 0.15) parts.push('\n');
  }
  return parts.join(random() < 0.5 ? '' : ' ');
}

function hourOfDay(random: () => number): number {
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

function contacts(random: () => number, count: number, prefix: string): Contact[] {
  return Array.from({ length: count }, (_, i) => ({
    lineId: `U${prefix}${i.toString(16).padStart(31 - prefix.length, '0')}`,
    vid: random() < 0.7 ? String(100 + i) : '',
    name: pick(random, NAMES),
  }));
}

function message(random: () => number, contact: Contact, createdAt: number, sourceId: string): ImportMessage {
  const kind = random();
  const fromFriend = random() < 0.55;
  let msg: string;
  let contentType = 'text';
  if (kind < 0.05) {
    contentType = 'sticker';
    msg = `[Sticker]\nID: ${1 + Math.floor(random() * 52002800)}`;
  } else if (kind < 0.08) {
    contentType = 'image';
    msg = `[Image]\nID: ${Math.floor(random() * 1e15)}`;
  } else {
    msg = text(random);
  }
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
