/**
 * Content as files under the data directory (CONTRACT §11): `<dir>/<hubId>/<sha[0..2]>/<sha256>`.
 * A blob is written to a temporary file under `<dir>/.tmp/`, hashed as it is written, fsynced, and
 * renamed to its hash (then its directory fsynced): a crash leaves at most a temporary file, never
 * half a blob under a hash. Temporary files older than an hour (a crash's leftovers) are removed
 * when the store opens.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
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

const TMP = '.tmp';
/** A temporary file this old belongs to no put still running (a put writes as its source gives). */
const STALE_TMP_MS = 60 * 60 * 1000;

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class FileContentStore implements ContentStore {
  readonly kind = 'files' as const;
  private readonly sweeping: Promise<void>;
  private total: { bytes: number; at: number } | undefined;

  /** `dir` is `<dataDir>/content`; it is created as blobs arrive. */
  constructor(private readonly dir: string) {
    this.sweeping = this.removeStaleTemporaryFiles().catch(() => undefined);
  }

  put(hubId: string, source: Readable, options: { maxBytes?: number } = {}): Promise<StoredBlob> {
    return putFrom(source, () => this.write(hubId, source, options.maxBytes));
  }

  private async write(hubId: string, source: Readable, maxBytes: number | undefined): Promise<StoredBlob> {
    const hubDir = this.hubDir(hubId);
    const tmpDir = path.join(this.dir, TMP);
    await fs.mkdir(tmpDir, { recursive: true });
    const tmp = path.join(tmpDir, randomUUID());
    const file = await fs.open(tmp, 'wx');
    const hash = createHash('sha256');
    let size = 0;
    let closed = false;
    try {
      // One awaited write per chunk: the source is read only as fast as the disk takes it.
      for await (const chunk of source) {
        const bytes = asBuffer(chunk);
        size += bytes.length;
        if (maxBytes !== undefined && size > maxBytes) throw contentTooLarge(maxBytes);
        hash.update(bytes);
        await file.write(bytes);
      }
      await file.sync();
      await file.close();
      closed = true;
      const sha256 = hash.digest('hex');
      const shard = path.join(hubDir, sha256.slice(0, 2));
      const target = path.join(shard, sha256);
      await fs.mkdir(shard, { recursive: true });
      if (await exists(target)) {
        await fs.unlink(tmp);
      } else {
        await fs.rename(tmp, target);
        await fsyncDirectory(shard);
        this.total = undefined;
      }
      return { sha256, size };
    } catch (error) {
      if (!closed) await file.close().catch(() => undefined);
      await fs.unlink(tmp).catch(() => undefined);
      throw error;
    }
  }

  async stat(hubId: string, sha256: string): Promise<number | undefined> {
    const file = this.blobPath(hubId, sha256);
    if (!file) return undefined;
    try {
      return (await fs.stat(file)).size;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async read(hubId: string, sha256: string, range?: ByteRange): Promise<Readable | undefined> {
    const file = this.blobPath(hubId, sha256);
    if (!file) return undefined;
    // Open first: a blob removed after this is still read whole from the open file.
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    try {
      if (range) checkRange(range, (await handle.stat()).size);
    } catch (error) {
      await handle.close();
      throw error;
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async remove(hubId: string, sha256: string): Promise<void> {
    const file = this.blobPath(hubId, sha256);
    if (!file) return;
    try {
      await fs.unlink(file);
      this.total = undefined;
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }

  async *list(hubId: string): AsyncIterable<StoredBlob> {
    const hubDir = this.hubDir(hubId);
    for (const shard of await entries(hubDir)) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const name of await entries(path.join(hubDir, shard))) {
        if (!isSha256(name) || !name.startsWith(shard)) continue;
        const size = await this.stat(hubId, name);
        if (size !== undefined) yield { sha256: name, size };
      }
    }
  }

  async totalBytes(): Promise<number> {
    if (this.total && Date.now() - this.total.at < TOTAL_BYTES_TTL_MS) return this.total.bytes;
    let bytes = 0;
    for (const hubId of await entries(this.dir)) {
      if (!/^[0-9]{1,20}$/.test(hubId)) continue;
      for await (const blob of this.list(hubId)) bytes += blob.size;
    }
    this.total = { bytes, at: Date.now() };
    return bytes;
  }

  async close(): Promise<void> {
    await this.sweeping;
  }

  private hubDir(hubId: string): string {
    return path.join(this.dir, checkHubId(hubId));
  }

  private blobPath(hubId: string, sha256: string): string | undefined {
    const hubDir = this.hubDir(hubId);
    return isSha256(sha256) ? path.join(hubDir, sha256.slice(0, 2), sha256) : undefined;
  }

  private async removeStaleTemporaryFiles(): Promise<void> {
    const tmpDir = path.join(this.dir, TMP);
    const before = Date.now() - STALE_TMP_MS;
    for (const name of await entries(tmpDir)) {
      const file = path.join(tmpDir, name);
      const stats = await fs.stat(file).catch(() => undefined);
      if (stats?.isFile() && stats.mtimeMs < before) await fs.unlink(file).catch(() => undefined);
    }
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.stat(file);
    return true;
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

/** A directory's names, none when it does not exist. */
async function entries(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}
