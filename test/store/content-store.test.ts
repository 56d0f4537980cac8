/**
 * Both content stores (CONTRACT §11) against one oracle, a plain Buffer: the files store always,
 * the PostgreSQL one on the PostgreSQL pass (a schema of its own from createTestStore).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { ContentStore } from '../../src/store/content/content-store.js';
import { openContentStore } from '../../src/store/content/open.js';
import { createTestStore, TEST_STORE_KIND, tempDir } from '../helpers.js';

/** A hub per test: each test's leftovers are its own. */
const PROPERTY = '11';
const FAILING = '12';
const LIMITS = '13';
const REMOVAL = '14';
const OTHER = '15';
const LARGE = '16';
const CHECKS = '17';
const PUTS = '18';
const HUBS = [PROPERTY, FAILING, LIMITS, REMOVAL, OTHER, LARGE, CHECKS, PUTS];
const CHUNK = 256 * 1024;

interface Subject {
  store: ContentStore;
  /** What is left of a hub's bytes outside the store's API: files (temporary ones too) or chunk rows. */
  leftovers(hubId: string): Promise<number>;
  /** How many copies of one blob are kept: files, or chunk rows. */
  copies(hubId: string, sha256: string): Promise<number>;
  /** PostgreSQL: a statement on a connection of the test's own; its row count. */
  sql?: (text: string, params: unknown[]) => Promise<number>;
  close(): Promise<void>;
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

async function openFiles(): Promise<Subject> {
  const dir = tempDir('chatlog-content-');
  const contentDir = path.join(dir, 'content');
  const store = await openContentStore({
    contentStore: 'files',
    databaseUrl: undefined,
    pgSchema: undefined,
    dataDir: dir,
  });
  return {
    store,
    leftovers: async (hubId) =>
      filesUnder(path.join(contentDir, hubId)).length + filesUnder(path.join(contentDir, '.tmp')).length,
    copies: async (hubId, sha256) =>
      filesUnder(path.join(contentDir, hubId)).filter((file) => path.basename(file) === sha256).length,
    close: async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(): Promise<Subject> {
  const t = await createTestStore();
  for (const hubId of HUBS) await t.hubs.add(hubId, {});
  const config = { databaseUrl: t.env.DATABASE_URL, pgSchema: t.env.CHATLOG_PG_SCHEMA, dataDir: t.dir };
  const store = await openContentStore({ ...config, contentStore: 'postgres' });
  // A pool of the test's own to look at the rows (loaded here: the SQLite pass needs no pg).
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max: 1,
    options: `-c search_path=${config.pgSchema}`,
  });
  const count = async (sql: string, params: string[]) =>
    Number((await pool.query<{ n: string }>(sql, params)).rows[0]!.n);
  return {
    store,
    leftovers: (hubId) => count('SELECT COUNT(*) AS n FROM content_chunks WHERE hub_id = $1', [hubId]),
    copies: (hubId, sha256) =>
      count('SELECT COUNT(*) AS n FROM content_chunks WHERE hub_id = $1 AND sha256 = $2', [hubId, sha256]),
    sql: async (text, params) => (await pool.query(text, params)).rowCount ?? 0,
    close: async () => {
      await pool.end();
      await store.close();
      await t.close();
    },
  };
}

/** Deterministic pseudo-random bytes (xorshift32), fast enough for hundreds of megabytes. */
function pseudoRandom(seed: number, length: number): Buffer {
  const words = new Uint32Array(Math.ceil(length / 4));
  let x = seed >>> 0 || 0x9e3779b9;
  for (let i = 0; i < words.length; i += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  return Buffer.from(words.buffer, 0, length);
}

/** The bytes as a source that gives them in pieces of the given sizes (the rest in one). */
function sourceOf(bytes: Buffer, pieces: number[] = []): Readable {
  const parts: Buffer[] = [];
  let offset = 0;
  for (const piece of pieces) {
    if (offset >= bytes.length) break;
    parts.push(bytes.subarray(offset, offset + piece));
    offset += piece;
  }
  if (offset < bytes.length) parts.push(bytes.subarray(offset));
  return Readable.from(parts, { objectMode: false });
}

/** Gives `bytes`, then fails as a connection that drops does (or ends without an error). */
function failingSource(bytes: Buffer, ending: 'error' | 'early' = 'error'): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (sent) {
        this.destroy(ending === 'error' ? new Error('connection reset by LINE') : undefined);
      } else {
        sent = true;
        this.push(bytes);
      }
    },
  });
}

async function readAll(stream: Readable | undefined): Promise<Buffer | undefined> {
  if (!stream) return undefined;
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const kinds: ['files' | 'postgres', () => Promise<Subject>][] = [['files', openFiles]];
if (TEST_STORE_KIND === 'postgres') kinds.push(['postgres', openPostgres]);

for (const [kind, open] of kinds) {
  describe(`the ${kind} content store`, () => {
    let s: Subject;
    before(async () => {
      s = await open();
    });
    after(() => s.close());

    test('reads back any bytes, whole or any range, as a Buffer slice does; the same bytes are kept once', async () => {
      // Sizes around the 256 KiB chunk boundaries, and plain random arrays.
      const bytesArb = fc.oneof(
        fc.uint8Array({ maxLength: 300 }).map((array) => Buffer.from(array)),
        fc
          .tuple(fc.nat(), fc.oneof(fc.nat(3 * CHUNK + 10), fc.integer({ min: CHUNK - 3, max: CHUNK + 3 })))
          .map(([seed, length]) => pseudoRandom(seed, length)),
      );
      await fc.assert(
        fc.asyncProperty(
          bytesArb,
          fc.array(fc.integer({ min: 1, max: 100_000 }), { maxLength: 6 }),
          fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }),
          async (bytes, pieces, ranges) => {
            const stored = await s.store.put(PROPERTY, sourceOf(bytes, pieces));
            assert.deepEqual(stored, { sha256: sha(bytes), size: bytes.length });
            const again = await s.store.put(PROPERTY, sourceOf(bytes, [7]));
            assert.deepEqual(again, stored);
            const expectedCopies = kind === 'files' ? 1 : Math.ceil(bytes.length / CHUNK);
            assert.equal(await s.copies(PROPERTY, stored.sha256), expectedCopies);
            assert.equal(await s.store.stat(PROPERTY, stored.sha256), bytes.length);
            assert.deepEqual(await readAll(await s.store.read(PROPERTY, stored.sha256)), bytes);
            if (bytes.length === 0) return;
            for (const [a, b] of ranges) {
              const start = Math.min(a, b) % bytes.length;
              const end = start + ((Math.max(a, b) - Math.min(a, b)) % (bytes.length - start));
              const part = await readAll(await s.store.read(PROPERTY, stored.sha256, { start, end }));
              assert.deepEqual(
                part,
                bytes.subarray(start, end + 1),
                `bytes ${start}-${end} of ${bytes.length}`,
              );
            }
          },
        ),
        { numRuns: kind === 'files' ? 60 : 40 },
      );
      const listed = [];
      for await (const blob of s.store.list(PROPERTY)) listed.push(blob.sha256);
      assert.equal(new Set(listed).size, listed.length, 'each blob is listed once');
    });

    test('a source that fails or ends early leaves nothing under any hash', async () => {
      const bytes = pseudoRandom(7, 600 * 1024);
      await assert.rejects(s.store.put(FAILING, failingSource(bytes)), /connection reset by LINE/);
      await assert.rejects(s.store.put(FAILING, failingSource(bytes, 'early')), {
        code: 'ERR_STREAM_PREMATURE_CLOSE',
      });
      // A source that fails before the store reads it (while it opens its file or connection).
      const early = failingSource(bytes);
      early.destroy(new Error('refused at once'));
      await assert.rejects(s.store.put(FAILING, early), /refused at once/);
      assert.equal(await s.store.stat(FAILING, sha(bytes)), undefined);
      assert.equal(await s.store.read(FAILING, sha(bytes)), undefined);
      assert.equal(await s.leftovers(FAILING), 0);
      const listed = [];
      for await (const blob of s.store.list(FAILING)) listed.push(blob);
      assert.deepEqual(listed, []);
    });

    test('maxBytes refuses a larger source and keeps nothing; a source of exactly maxBytes is kept', async () => {
      const bytes = pseudoRandom(8, 300 * 1024);
      await assert.rejects(s.store.put(LIMITS, sourceOf(bytes, [1000]), { maxBytes: bytes.length - 1 }), {
        code: 'ECONTENTTOOLARGE',
      });
      assert.equal(await s.store.stat(LIMITS, sha(bytes)), undefined);
      assert.equal(await s.leftovers(LIMITS), 0);
      const stored = await s.store.put(LIMITS, sourceOf(bytes), { maxBytes: bytes.length });
      assert.equal(stored.size, bytes.length);
    });

    test('remove deletes one hub’s blob only, and removing it again is no error', async () => {
      const bytes = pseudoRandom(9, CHUNK + 5);
      const { sha256 } = await s.store.put(REMOVAL, sourceOf(bytes));
      await s.store.put(OTHER, sourceOf(bytes));
      const before = await s.store.totalBytes();
      assert.ok(before >= 2 * bytes.length);
      await s.store.remove(REMOVAL, sha256);
      await s.store.remove(REMOVAL, sha256);
      assert.equal(await s.store.stat(REMOVAL, sha256), undefined);
      assert.equal(await s.store.read(REMOVAL, sha256), undefined);
      assert.equal(await s.leftovers(REMOVAL), 0);
      assert.deepEqual(
        await readAll(await s.store.read(OTHER, sha256)),
        bytes,
        'the other hub keeps its copy',
      );
    });

    test('a hub never reads another’s blob; a hub id that is not digits is refused before any path or query', async () => {
      const bytes = Buffer.from('only for hub 17');
      const { sha256 } = await s.store.put(CHECKS, sourceOf(bytes));
      assert.equal(await s.store.stat(PROPERTY, sha256), undefined);
      assert.equal(await s.store.read(PROPERTY, sha256), undefined);
      assert.equal(await s.store.stat(CHECKS, '../../etc/passwd'), undefined);
      for (const hubId of ['../17', '17/..', '', 'abc', '1 7']) {
        await assert.rejects(s.store.stat(hubId, sha256), Error);
        await assert.rejects(s.store.put(hubId, sourceOf(bytes)), Error);
      }
    });

    test('the same bytes put at once by two downloads are kept once, and both resolve', async () => {
      const bytes = pseudoRandom(10, 2 * CHUNK + 17);
      const [a, b] = await Promise.all([
        s.store.put(CHECKS, sourceOf(bytes, [100_000])),
        s.store.put(CHECKS, sourceOf(bytes, [3])),
      ]);
      assert.deepEqual(a, { sha256: sha(bytes), size: bytes.length });
      assert.deepEqual(b, a);
      assert.equal(await s.copies(CHECKS, a.sha256), kind === 'files' ? 1 : 3);
      assert.deepEqual(await readAll(await s.store.read(CHECKS, a.sha256)), bytes);
    });

    test('a reader the consumer drops midway gives its resources back', async () => {
      const bytes = pseudoRandom(11, 20 * CHUNK);
      const { sha256 } = await s.store.put(CHECKS, sourceOf(bytes));
      for (let i = 0; i < 10; i += 1) {
        const stream = (await s.store.read(CHECKS, sha256, { start: 5, end: bytes.length - 5 }))!;
        const first = await new Promise<Buffer>((resolve) => stream.once('data', resolve));
        assert.deepEqual(first, bytes.subarray(5, 5 + first.length));
        stream.destroy();
      }
      // Ten dropped readers later, the store still reads and writes (no connection or file kept).
      assert.deepEqual(
        await readAll(await s.store.read(CHECKS, sha256, { start: 0, end: 9 })),
        bytes.subarray(0, 10),
      );
      await s.store.remove(CHECKS, sha256);
      assert.equal(await s.store.stat(CHECKS, sha256), undefined);
    });

    if (kind === 'postgres') {
      test('a put keeps no transaction open while it waits for its source: each chunk is committed as it is written', async () => {
        const bytes = pseudoRandom(12, 3 * CHUNK + 10);
        let release: () => void = () => undefined;
        const waiting = new Promise<void>((resolve) => {
          release = resolve;
        });
        // Two chunks, then a wait (a slow LINE), then the rest.
        const source = Readable.from(
          (async function* () {
            yield bytes.subarray(0, 2 * CHUNK);
            await waiting;
            yield bytes.subarray(2 * CHUNK);
          })(),
          { objectMode: false },
        );
        const put = s.store.put(PUTS, source);
        const sql = s.sql!;
        const committed = () =>
          sql("SELECT 1 FROM content_chunks WHERE hub_id = $1 AND sha256 LIKE 'tmp-%'", [PUTS]);
        const deadline = Date.now() + 10_000;
        while ((await committed()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.equal(await committed(), 2, 'another connection sees the chunks written so far');
        assert.equal(await s.store.stat(PUTS, sha(bytes)), undefined, 'no blob before its last chunk');
        release();
        assert.deepEqual(await put, { sha256: sha(bytes), size: bytes.length });
        assert.equal(await committed(), 0, 'named by their hash at the end');
        assert.equal(await s.copies(PUTS, sha(bytes)), 4);
        assert.deepEqual(await readAll(await s.store.read(PUTS, sha(bytes))), bytes);
      });

      test('the chunks a crashed put left are removed once older than an hour, not before', async () => {
        const sql = s.sql!;
        const key = (ms: number) =>
          `tmp-${String(ms).padStart(13, '0')}-00000000-0000-4000-8000-000000000000`;
        const now = Date.now();
        const stale = key(now - 61 * 60_000);
        const running = key(now - 59 * 60_000);
        for (const sha256 of [stale, running]) {
          await sql("INSERT INTO content_chunks (hub_id, sha256, n, bytes) VALUES ($1, $2, 0, '\\x00')", [
            PUTS,
            sha256,
          ]);
        }
        const { PostgresContentStore } = await import('../../src/store/content/content-store.postgres.js');
        await (s.store as InstanceType<typeof PostgresContentStore>).removeStaleChunks(now);
        const left = (sha256: string) =>
          sql('SELECT 1 FROM content_chunks WHERE hub_id = $1 AND sha256 = $2', [PUTS, sha256]);
        assert.equal(await left(stale), 0);
        assert.equal(await left(running), 1, 'a put under an hour old may still be running');
        await sql('DELETE FROM content_chunks WHERE hub_id = $1 AND sha256 = $2', [PUTS, running]);
      });
    }

    test('200 MB stream through put and back with bounded memory', { timeout: 120_000 }, async () => {
      const total = 200 * 1024 * 1024;
      const piece = 64 * 1024;
      const hash = createHash('sha256');
      let sent = 0;
      let seed = 1;
      const source = new Readable({
        read() {
          if (sent >= total) {
            this.push(null);
            return;
          }
          const bytes = pseudoRandom(seed++, piece);
          hash.update(bytes);
          sent += bytes.length;
          this.push(bytes);
        },
      });
      const baseline = process.memoryUsage().rss;
      let peak = baseline;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 20);
      try {
        const started = Date.now();
        const stored = await s.store.put(LARGE, source);
        const putMs = Date.now() - started;
        assert.deepEqual(stored, { sha256: hash.digest('hex'), size: total });
        const readStarted = Date.now();
        const back = createHash('sha256');
        let length = 0;
        for await (const part of (await s.store.read(LARGE, stored.sha256))!) {
          back.update(part as Buffer);
          length += (part as Buffer).length;
        }
        assert.equal(length, total);
        assert.equal(back.digest('hex'), stored.sha256);
        const growth = (peak - baseline) / 1024 / 1024;
        process.stdout.write(
          `# ${kind}: put 200 MB in ${putMs} ms, read in ${Date.now() - readStarted} ms, RSS growth ${growth.toFixed(1)} MB\n`,
        );
        assert.ok(growth < 100, `RSS grew ${growth.toFixed(1)} MB`);
      } finally {
        clearInterval(sampler);
        for await (const blob of s.store.list(LARGE)) await s.store.remove(LARGE, blob.sha256);
      }
    });
  });
}

test('the files store removes a crash’s temporary files older than an hour when it opens, not newer ones', async () => {
  const dir = tempDir('chatlog-content-');
  const tmp = path.join(dir, 'content', '.tmp');
  fs.mkdirSync(tmp, { recursive: true });
  const old = path.join(tmp, 'left-by-a-crash');
  const recent = path.join(tmp, 'a-put-still-running');
  fs.writeFileSync(old, 'half a video');
  fs.writeFileSync(recent, 'half a photo');
  const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  fs.utimesSync(old, twoHoursAgo, twoHoursAgo);
  const store = await openContentStore({
    contentStore: 'files',
    databaseUrl: undefined,
    pgSchema: undefined,
    dataDir: dir,
  });
  await store.close();
  assert.deepEqual(fs.readdirSync(tmp), ['a-put-still-running']);
  fs.rmSync(dir, { recursive: true, force: true });
});
