/**
 * Content in PostgreSQL (CONTRACT §11, `CHATLOG_CONTENT_STORE=postgres`): a blob is its 256 KiB
 * chunks in `content_chunks` and one row in `content_blobs` (migration 8), so that several nodes
 * need no shared disk. Both ways stream: `put` inserts a chunk and waits for it before reading
 * more of the source; `read` fetches a few chunks when its consumer wants more.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { ByteRange, ContentStore, StoredBlob } from './content-store.js';
import {
  asBuffer,
  checkHubId,
  checkRange,
  contentTooLarge,
  isSha256,
  TOTAL_BYTES_TTL_MS,
} from './content-store.keys.js';

export const CHUNK_SIZE = 256 * 1024;
/** Chunks per fetch when reading: 1 MiB, a bounded amount in memory per stream. */
const CHUNKS_PER_FETCH = 4;
/** Blobs per query when listing a hub. */
const LIST_PAGE = 1_000;

/** BIGINT arrives as a string unless the pool parses it (the store's pools do; this one may not). */
function toNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

function ignore(): void {}

export class PostgresContentStore implements ContentStore {
  readonly kind = 'postgres' as const;
  private total: { bytes: number; at: number } | undefined;

  /** Takes the pool (its search_path names the store's schema) and ends it on close. */
  constructor(private readonly pool: pg.Pool) {}

  async put(hubId: string, source: Readable, options: { maxBytes?: number } = {}): Promise<StoredBlob> {
    // The source may fail while the store gets ready to read it: its error is kept (the loop
    // rethrows it) instead of being thrown as an uncaught exception.
    source.on('error', ignore);
    try {
      return await this.write(hubId, source, options.maxBytes);
    } catch (error) {
      // A source the store stopped reading (too large, a failed write) is not left open.
      if (!source.destroyed) source.destroy();
      throw error;
    } finally {
      source.off('error', ignore);
    }
  }

  private async write(hubId: string, source: Readable, maxBytes: number | undefined): Promise<StoredBlob> {
    checkHubId(hubId);
    const client = await this.pool.connect();
    // The chunks are written under a key of their own until the hash is known; the transaction
    // keeps them from anyone else, and a failure rolls them back with it.
    const pendingKey = `tmp-${randomUUID()}`;
    const hash = createHash('sha256');
    let size = 0;
    let n = 0;
    let releaseError: Error | undefined;
    const insertChunk = async (bytes: Buffer): Promise<void> => {
      await client.query('INSERT INTO content_chunks (hub_id, sha256, n, bytes) VALUES ($1, $2, $3, $4)', [
        hubId,
        pendingKey,
        n,
        bytes,
      ]);
      n += 1;
    };
    try {
      await client.query('BEGIN');
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for await (const chunk of source) {
        const bytes = asBuffer(chunk);
        size += bytes.length;
        if (maxBytes !== undefined && size > maxBytes) throw contentTooLarge(maxBytes);
        hash.update(bytes);
        pending.push(bytes);
        pendingBytes += bytes.length;
        if (pendingBytes < CHUNK_SIZE) continue;
        const joined = Buffer.concat(pending, pendingBytes);
        let offset = 0;
        for (; joined.length - offset >= CHUNK_SIZE; offset += CHUNK_SIZE) {
          await insertChunk(joined.subarray(offset, offset + CHUNK_SIZE));
        }
        pending = offset < joined.length ? [joined.subarray(offset)] : [];
        pendingBytes = joined.length - offset;
      }
      if (pendingBytes > 0) await insertChunk(Buffer.concat(pending, pendingBytes));
      const sha256 = hash.digest('hex');
      // The row first: a concurrent put of the same bytes waits here for the other's commit, then
      // finds the row and keeps nothing (instead of failing on the chunks' key).
      const inserted = await client.query(
        `INSERT INTO content_blobs (hub_id, sha256, size, chunk_size, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (hub_id, sha256) DO NOTHING`,
        [hubId, sha256, size, CHUNK_SIZE, Date.now()],
      );
      if (inserted.rowCount === 0) {
        await client.query('ROLLBACK');
        return { sha256, size };
      }
      await client.query('UPDATE content_chunks SET sha256 = $3 WHERE hub_id = $1 AND sha256 = $2', [
        hubId,
        pendingKey,
        sha256,
      ]);
      await client.query('COMMIT');
      this.total = undefined;
      return { sha256, size };
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        // A connection that cannot roll back is not given back to the pool.
        releaseError = rollbackError;
      });
      throw error;
    } finally {
      client.release(releaseError);
    }
  }

  async stat(hubId: string, sha256: string): Promise<number | undefined> {
    const blob = await this.blob(hubId, sha256);
    return blob?.size;
  }

  async read(hubId: string, sha256: string, range?: ByteRange): Promise<Readable | undefined> {
    const blob = await this.blob(hubId, sha256);
    if (!blob) return undefined;
    if (range) checkRange(range, blob.size);
    if (blob.size === 0) return Readable.from([]);
    return new ChunkStream(
      this.pool,
      hubId,
      sha256,
      blob.chunkSize,
      range ?? { start: 0, end: blob.size - 1 },
    );
  }

  async remove(hubId: string, sha256: string): Promise<void> {
    checkHubId(hubId);
    if (!isSha256(sha256)) return;
    const client = await this.pool.connect();
    let releaseError: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query('DELETE FROM content_chunks WHERE hub_id = $1 AND sha256 = $2', [hubId, sha256]);
      await client.query('DELETE FROM content_blobs WHERE hub_id = $1 AND sha256 = $2', [hubId, sha256]);
      await client.query('COMMIT');
      this.total = undefined;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        releaseError = rollbackError;
      });
      throw error;
    } finally {
      client.release(releaseError);
    }
  }

  async *list(hubId: string): AsyncIterable<StoredBlob> {
    checkHubId(hubId);
    let after = '';
    for (;;) {
      const { rows } = await this.pool.query<{ sha256: string; size: unknown }>(
        `SELECT sha256, size FROM content_blobs WHERE hub_id = $1 AND sha256 > $2 ORDER BY sha256 LIMIT $3`,
        [hubId, after, LIST_PAGE],
      );
      for (const row of rows) yield { sha256: row.sha256, size: toNumber(row.size) };
      if (rows.length < LIST_PAGE) return;
      after = rows[rows.length - 1]!.sha256;
    }
  }

  async totalBytes(): Promise<number> {
    if (this.total && Date.now() - this.total.at < TOTAL_BYTES_TTL_MS) return this.total.bytes;
    const { rows } = await this.pool.query<{ bytes: unknown }>(
      'SELECT COALESCE(SUM(size), 0) AS bytes FROM content_blobs',
    );
    const bytes = toNumber(rows[0]?.bytes ?? 0);
    this.total = { bytes, at: Date.now() };
    return bytes;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async blob(
    hubId: string,
    sha256: string,
  ): Promise<{ size: number; chunkSize: number } | undefined> {
    checkHubId(hubId);
    if (!isSha256(sha256)) return undefined;
    const { rows } = await this.pool.query<{ size: unknown; chunk_size: number }>(
      'SELECT size, chunk_size FROM content_blobs WHERE hub_id = $1 AND sha256 = $2',
      [hubId, sha256],
    );
    const row = rows[0];
    return row ? { size: toNumber(row.size), chunkSize: row.chunk_size } : undefined;
  }
}

/**
 * One blob's bytes (or a range of them), a few chunks per query, fetched only when the consumer
 * wants more. Each fetch takes a pooled connection for one query and gives it back: a slow
 * consumer holds no connection while it reads. A blob removed while it is read ends the stream
 * with an error (its chunks are gone), never with silently missing bytes.
 */
class ChunkStream extends Readable {
  private next: number;
  private readonly last: number;
  private fetching = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly hubId: string,
    private readonly sha256: string,
    private readonly chunkSize: number,
    private readonly range: ByteRange,
  ) {
    // The next fetch starts while a fetch's worth is still buffered, so PostgreSQL and the client
    // overlap (about two fetches of memory a stream).
    super({ highWaterMark: CHUNKS_PER_FETCH * chunkSize });
    this.next = Math.floor(range.start / chunkSize);
    this.last = Math.floor(range.end / chunkSize);
  }

  override _read(): void {
    if (this.fetching || this.next > this.last) return;
    this.fetching = true;
    this.fetch().catch((error: Error) => this.destroy(error));
  }

  private async fetch(): Promise<void> {
    const first = this.next;
    const upTo = Math.min(first + CHUNKS_PER_FETCH - 1, this.last);
    const rows = await copyChunks(this.pool, this.hubId, this.sha256, first, upTo);
    if (this.destroyed) return;
    if (rows.length !== upTo - first + 1 || rows.some((row, i) => row.n !== first + i)) {
      throw new Error(`content ${this.sha256} of hub ${this.hubId} lost chunks while it was read`);
    }
    // Settled before pushing: a push may ask for more at once, and that fetch starts after these.
    this.next = upTo + 1;
    this.fetching = false;
    for (const row of rows) {
      const offset = row.n * this.chunkSize;
      const from = Math.max(this.range.start - offset, 0);
      const to = Math.min(this.range.end - offset + 1, row.bytes.length);
      this.push(row.bytes.subarray(from, to));
    }
    if (this.next > this.last) this.push(null);
  }
}

/** The signature, flags and header-extension length that open PostgreSQL's binary COPY format. */
const COPY_HEADER = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * Chunks `first` to `upTo` of a blob, as their raw bytes. Read through `COPY … TO STDOUT (FORMAT
 * binary)`: PostgreSQL sends each `bytea` as it is, where a query's answer would carry it as hex
 * text that node-postgres turns into a string and back into bytes (its binary results decode every
 * field as UTF-8 first, which changes bytes that are not UTF-8). Measured here: 2.5 to 4 times the
 * bytes per second of the query. COPY takes no parameters: the values are checked (hub id,
 * SHA-256, integers) and quoted.
 */
async function copyChunks(
  pool: pg.Pool,
  hubId: string,
  sha256: string,
  first: number,
  upTo: number,
): Promise<{ n: number; bytes: Buffer }[]> {
  checkHubId(hubId);
  if (!isSha256(sha256) || !Number.isSafeInteger(first) || !Number.isSafeInteger(upTo)) {
    throw new Error('copyChunks: not a blob');
  }
  const client = await pool.connect();
  let releaseError: Error | undefined;
  try {
    const stream = client.query(
      copyTo(
        `COPY (SELECT n, bytes FROM content_chunks WHERE hub_id = ${client.escapeLiteral(hubId)}
           AND sha256 = ${client.escapeLiteral(sha256)} AND n BETWEEN ${first} AND ${upTo} ORDER BY n)
         TO STDOUT (FORMAT binary)`,
      ),
    );
    const parts: Buffer[] = [];
    for await (const part of stream) parts.push(part as Buffer);
    return parseBinaryCopy(Buffer.concat(parts));
  } catch (error) {
    // A COPY cut off midway leaves the connection in an unknown state: it is not reused.
    releaseError = error as Error;
    throw error;
  } finally {
    client.release(releaseError);
  }
}

/** The (n integer, bytes bytea) tuples of a binary COPY. */
export function parseBinaryCopy(data: Buffer): { n: number; bytes: Buffer }[] {
  const malformed = (): Error => new Error('content chunks: malformed COPY data');
  if (data.length < COPY_HEADER.length + 8 || !data.subarray(0, COPY_HEADER.length).equals(COPY_HEADER)) {
    throw malformed();
  }
  let offset = COPY_HEADER.length + 4;
  offset += 4 + data.readUInt32BE(offset);
  const rows: { n: number; bytes: Buffer }[] = [];
  for (;;) {
    if (offset + 2 > data.length) throw malformed();
    const fields = data.readInt16BE(offset);
    offset += 2;
    if (fields === -1) return rows;
    if (fields !== 2 || offset + 8 + 4 > data.length || data.readInt32BE(offset) !== 4) throw malformed();
    const n = data.readInt32BE(offset + 4);
    const length = data.readInt32BE(offset + 8);
    offset += 12;
    if (length < 0 || offset + length > data.length) throw malformed();
    rows.push({ n, bytes: data.subarray(offset, offset + length) });
    offset += length;
  }
}
