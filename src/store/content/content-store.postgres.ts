/**
 * Content in PostgreSQL (CONTRACT §11, `CHATLOG_CONTENT_STORE=postgres`): a blob is its 256 KiB
 * chunks in `content_chunks` and one row in `content_blobs` (migration 8), so that several nodes
 * need no shared disk. Both ways stream: `put` inserts a chunk and waits for it before reading
 * more of the source; `read` fetches a few chunks when its consumer wants more.
 *
 * A put writes its chunks under a temporary key (`tmp-<ms>-<uuid>`), each chunk in a transaction
 * of its own, and names them by their hash in one short transaction at the end, with the blob's
 * row. One transaction for the whole put (minutes, for a large video at the download byte budget)
 * kept PostgreSQL from pruning the row versions that every webhook's commit leaves behind
 * (`hubs.last_seq`): webhook ingest beside ten 50 MB downloads went at 0.71-0.88 of its rate alone,
 * and one idle open transaction did the same (bench/results/2026-11-27-issue-17-serving.md). The
 * chunks of a put that failed are deleted; those of a crash, older than STALE_PUT_MS, when the store
 * opens and every STALE_PUT_MS after.
 *
 * Kept whole: the put's transactions, the reader's fetches and the chunks' COPY reader share one
 * table's layout and its invariants (a chunk named by its hash only once the blob's row is written).
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import pg from 'pg';
import { COPY_HEADER_BYTES, COPY_SIGNATURE } from '../postgres/postgres.copy-binary.js';
import { copyOut, eachPiece } from '../postgres/postgres.copy-out.js';
import type { ByteRange, ContentStore, StoredBlob } from './content-store.js';
import {
  asBuffer,
  checkHubId,
  checkRange,
  contentTooLarge,
  isSha256,
  putFrom,
  TOTAL_BYTES_TTL_MS,
} from './content-store.keys.js';

export const CHUNK_SIZE = 256 * 1024;
/** Chunks per fetch when reading: 1 MiB, a bounded amount in memory per stream. */
const CHUNKS_PER_FETCH = 4;
/** Blobs per query when listing a hub. */
const LIST_PAGE = 1_000;
/** A put's temporary chunks this old belong to no put still running (a download is cut at 30 min). */
export const STALE_PUT_MS = 60 * 60 * 1000;
/** The key a put's chunks are written under until their hash is known: it sorts by its time. */
const TEMPORARY = 'tmp-';
const temporaryKey = (now: number) => `${TEMPORARY}${String(now).padStart(13, '0')}-${randomUUID()}`;

/** BIGINT arrives as a string unless the pool parses it (the store's pools do; this one may not). */
function toNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

export class PostgresContentStore implements ContentStore {
  readonly kind = 'postgres' as const;
  private total: { bytes: number; at: number } | undefined;

  private readonly sweeper: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;

  /** Takes the pool (its search_path names the store's schema) and ends it on close. */
  constructor(private readonly pool: pg.Pool) {
    this.sweeping = this.removeStaleChunks();
    this.sweeper = setInterval(() => {
      this.sweeping ??= this.removeStaleChunks();
    }, STALE_PUT_MS).unref();
  }

  /** Deletes the chunks of puts that began over STALE_PUT_MS ago and never ended (a crash's). */
  async removeStaleChunks(now = Date.now()): Promise<void> {
    try {
      await this.pool.query('DELETE FROM content_chunks WHERE sha256 >= $1 AND sha256 < $2', [
        TEMPORARY,
        `${TEMPORARY}${String(Math.max(0, now - STALE_PUT_MS)).padStart(13, '0')}`,
      ]);
    } catch {
      // The next sweep tries again; a database that is down fails the puts and reads too.
    } finally {
      this.sweeping = undefined;
    }
  }

  /** A pool for content, from the same pg as the store's (this module is loaded only when used). */
  static pool(config: pg.PoolConfig): pg.Pool {
    return new pg.Pool(config);
  }

  put(hubId: string, source: Readable, options: { maxBytes?: number } = {}): Promise<StoredBlob> {
    return putFrom(source, () => this.write(hubId, source, options.maxBytes));
  }

  private async write(hubId: string, source: Readable, maxBytes: number | undefined): Promise<StoredBlob> {
    checkHubId(hubId);
    const client = await this.pool.connect();
    const pendingKey = temporaryKey(Date.now());
    const hash = createHash('sha256');
    let size = 0;
    let n = 0;
    let wrote = false;
    let releaseError: Error | undefined;
    const deleteChunks = () =>
      client.query('DELETE FROM content_chunks WHERE hub_id = $1 AND sha256 = $2', [hubId, pendingKey]);
    // Each chunk commits without waiting for the disk: the last transaction, which names the
    // chunks by their hash, waits, and PostgreSQL writes its log in order, so a blob is never
    // named before its chunks are durable.
    const insertChunk = async (bytes: Buffer): Promise<void> => {
      wrote = true;
      await client.query('INSERT INTO content_chunks (hub_id, sha256, n, bytes) VALUES ($1, $2, $3, $4)', [
        hubId,
        pendingKey,
        n,
        bytes,
      ]);
      n += 1;
    };
    try {
      await client.query('SET synchronous_commit = off');
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
      await client.query('BEGIN');
      await client.query('SET LOCAL synchronous_commit = on');
      // The row first: a concurrent put of the same bytes waits here for the other's commit, then
      // finds the row and keeps nothing (instead of failing on the chunks' key).
      const inserted = await client.query(
        `INSERT INTO content_blobs (hub_id, sha256, size, chunk_size, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (hub_id, sha256) DO NOTHING`,
        [hubId, sha256, size, CHUNK_SIZE, Date.now()],
      );
      const kept = inserted.rowCount !== 0;
      if (!kept) await deleteChunks();
      else {
        await client.query('UPDATE content_chunks SET sha256 = $3 WHERE hub_id = $1 AND sha256 = $2', [
          hubId,
          pendingKey,
          sha256,
        ]);
      }
      await client.query('COMMIT');
      wrote = false;
      if (kept) this.total = undefined;
      await client.query('RESET synchronous_commit').catch((resetError: Error) => {
        releaseError = resetError;
      });
      return { sha256, size };
    } catch (error) {
      try {
        await client.query('ROLLBACK');
        await client.query('RESET synchronous_commit');
        // The chunks written so far, each committed: deleted (a crash's wait for the sweep).
        if (wrote) await deleteChunks();
      } catch (cleanupError) {
        // A connection that cannot clean up is not given back to the pool.
        releaseError = cleanupError as Error;
      }
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
    clearInterval(this.sweeper);
    await this.sweeping;
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
    let expected = first;
    // Each chunk's bytes are pushed as they arrive (no copy), after its number is checked.
    await copyChunks(this.pool, this.hubId, this.sha256, first, upTo, (row) => {
      if (row.n !== expected) throw this.lostChunks();
      expected += 1;
      if (this.destroyed) return;
      let offset = row.n * this.chunkSize;
      for (const piece of row.pieces) {
        const from = Math.max(this.range.start - offset, 0);
        const to = Math.min(this.range.end - offset + 1, piece.length);
        if (to > from) this.push(piece.subarray(from, to));
        offset += piece.length;
      }
    });
    if (this.destroyed) return;
    if (expected !== upTo + 1) throw this.lostChunks();
    this.next = upTo + 1;
    this.fetching = false;
    if (this.next > this.last) this.push(null);
    // The pushes above found a fetch under way: ask again if the consumer wants more.
    else if (this.readableLength < this.readableHighWaterMark) this._read();
  }

  private lostChunks(): Error {
    return new Error(`content ${this.sha256} of hub ${this.hubId} lost chunks while it was read`);
  }
}

const EMPTY = Buffer.alloc(0);

/** One (n integer, bytes bytea) tuple of a binary COPY: its bytes as the pieces they came in. */
export interface CopyRow {
  n: number;
  pieces: Buffer[];
}

/**
 * Reads the (n integer, bytes bytea) tuples of a binary COPY (postgres.copy-binary.ts) as its parts
 * arrive, handing each tuple's bytes on as slices of the parts (never copied), however many parts a
 * chunk of 256 KiB spans: readTuple wants a tuple whole in one buffer, which here would mean a copy
 * of every chunk. Only the few bytes of a header split between two parts are joined.
 */
export class BinaryCopyRows {
  private state: 'signature' | 'extension' | 'count' | 'fields' | 'bytes' | 'end' = 'signature';
  private pending: Buffer = EMPTY;
  private skip = 0;
  private row: (CopyRow & { left: number }) | undefined;

  /** The tuples `part` completes, in order. */
  write(part: Buffer): CopyRow[] {
    const rows: CopyRow[] = [];
    let at = 0;
    // `size` contiguous bytes, or undefined when the part ends first (kept for the next part).
    const take = (size: number): Buffer | undefined => {
      if (this.pending.length === 0 && part.length - at >= size) {
        at += size;
        return part.subarray(at - size, at);
      }
      const piece = part.subarray(at, at + size - this.pending.length);
      at += piece.length;
      this.pending = Buffer.concat([this.pending, piece]);
      if (this.pending.length < size) return undefined;
      const whole = this.pending;
      this.pending = EMPTY;
      return whole;
    };
    while (at < part.length) {
      if (this.state === 'bytes') {
        const row = this.row as CopyRow & { left: number };
        const piece = part.subarray(at, at + row.left);
        at += piece.length;
        row.left -= piece.length;
        row.pieces.push(piece);
        if (row.left === 0) {
          rows.push({ n: row.n, pieces: row.pieces });
          this.state = 'count';
        }
      } else if (this.state === 'signature') {
        const header = take(COPY_HEADER_BYTES);
        if (!header) break;
        if (!header.subarray(0, COPY_SIGNATURE.length).equals(COPY_SIGNATURE)) throw malformedCopy();
        this.skip = header.readUInt32BE(COPY_SIGNATURE.length + 4);
        this.state = 'extension';
      } else if (this.state === 'extension') {
        const skipped = Math.min(this.skip, part.length - at);
        at += skipped;
        this.skip -= skipped;
        if (this.skip === 0) this.state = 'count';
      } else if (this.state === 'count') {
        const count = take(2);
        if (!count) break;
        const fields = count.readInt16BE(0);
        if (fields === -1) this.state = 'end';
        else if (fields === 2) this.state = 'fields';
        else throw malformedCopy();
      } else if (this.state === 'fields') {
        const fields = take(12);
        if (!fields) break;
        const length = fields.readInt32BE(8);
        if (fields.readInt32BE(0) !== 4 || length < 0) throw malformedCopy();
        this.row = { n: fields.readInt32BE(4), pieces: [], left: length };
        if (length === 0) {
          rows.push({ n: this.row.n, pieces: [] });
          this.state = 'count';
        } else this.state = 'bytes';
      } else throw malformedCopy(); // bytes after the trailer
    }
    if (this.state === 'extension' && this.skip === 0) this.state = 'count';
    return rows;
  }

  /** Throws unless the COPY ended with its trailer. */
  end(): void {
    if (this.state !== 'end') throw malformedCopy();
  }
}

function malformedCopy(): Error {
  return new Error('content chunks: malformed COPY data');
}

/**
 * Chunks `first` to `upTo` of a blob, each handed to `onRow` as it arrives. Read through `COPY …
 * TO STDOUT (FORMAT binary)`: PostgreSQL sends each `bytea` as it is, where a query's answer would
 * carry it as hex text that node-postgres turns into a string and back into bytes (its binary
 * results decode every field as UTF-8 first, which changes bytes that are not UTF-8). Measured
 * here: 2.5 to 4 times the bytes per second of the query. COPY takes no parameters: the values are
 * checked (hub id, SHA-256, integers) and quoted. An error of `onRow` ends the COPY.
 */
async function copyChunks(
  pool: pg.Pool,
  hubId: string,
  sha256: string,
  first: number,
  upTo: number,
  onRow: (row: CopyRow) => void,
): Promise<void> {
  checkHubId(hubId);
  if (!isSha256(sha256) || !Number.isSafeInteger(first) || !Number.isSafeInteger(upTo)) {
    throw new Error('copyChunks: not a blob');
  }
  const client = await pool.connect();
  let releaseError: Error | undefined;
  try {
    const stream = client.query(
      copyOut(
        `COPY (SELECT n, bytes FROM content_chunks WHERE hub_id = ${client.escapeLiteral(hubId)}
           AND sha256 = ${client.escapeLiteral(sha256)} AND n BETWEEN ${first} AND ${upTo} ORDER BY n)
         TO STDOUT (FORMAT binary)`,
      ),
    );
    const rows = new BinaryCopyRows();
    await eachPiece(stream, (part) => {
      for (const row of rows.write(part)) onRow(row);
    });
    rows.end();
  } catch (error) {
    // A COPY cut off midway leaves the connection in an unknown state: it is not reused.
    releaseError = error as Error;
    throw error;
  } finally {
    client.release(releaseError);
  }
}
