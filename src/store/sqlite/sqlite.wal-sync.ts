/**
 * Durability without holding the writer: SQLite runs with `synchronous = NORMAL` (in WAL mode a
 * COMMIT then writes its frames to the WAL file but does not wait for the disk), and every write
 * waits, before it resolves, for an fdatasync of the WAL file that began after its COMMIT. The sync
 * runs on libuv's thread pool while the writer goes on with the next transaction, and one sync
 * covers every commit made before it began (group commit across transactions).
 *
 * That is what `synchronous = FULL` gives, a sync of the WAL after each commit, without waiting
 * for it in turn; checkpoints are synced by SQLite itself under NORMAL (the WAL before it is copied
 * into the database, the database before the WAL is reused). SQLite keeps the WAL file (one inode)
 * while any connection is open, and the store holds its connections open, so one descriptor does.
 */
import fs from 'node:fs';
import { promisify } from 'node:util';

const fdatasync = promisify(fs.fdatasync);

export class WalSync {
  private fd: number | undefined;
  /** The sync that is running, if any. */
  private running: Promise<void> | undefined;
  /** The one that will start when it ends, for the commits made while it runs. */
  private queued: Promise<void> | undefined;

  constructor(private readonly walFile: string) {}

  /** Resolves once every commit made before the call is on disk. */
  sync(): Promise<void> {
    if (!this.running) {
      const running = this.syncNow().finally(() => {
        if (this.running === running) this.running = undefined;
      });
      this.running = running;
      return running;
    }
    // The running sync may have begun before this commit: wait for the next one.
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.sync();
      });
    return this.queued;
  }

  async close(): Promise<void> {
    await this.queued?.catch(() => undefined);
    await this.running?.catch(() => undefined);
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private async syncNow(): Promise<void> {
    // Opened at the first sync: by then a commit has made the file.
    this.fd ??= fs.openSync(this.walFile, 'r');
    await fdatasync(this.fd);
  }
}
