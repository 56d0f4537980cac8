/** `chatlog backup <file>`: the file made here (new, private), the copy made by the store. */
import fs from 'node:fs';
import { UserError } from '../lib/errors.js';
import type { Store } from '../store/store.js';

export async function backupTo(file: string, store: Pick<Store, 'backup'>): Promise<number> {
  if (!store.backup) {
    throw new UserError(
      'the store is PostgreSQL: back it up with pg_dump --format=custom (README, "Backup and restore")',
    );
  }
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new UserError(`${file} already exists: remove it or choose another name`);
    }
    throw new UserError(`cannot write ${file}: ${(error as Error).message}`);
  }
  const { createProgress } = await import('./progress.js');
  const progress = createProgress('backup');
  let started = false;
  try {
    return await store.backup(file, (done, total) => {
      if (!started) progress.start(total, 'bytes', 'copying');
      started = true;
      progress.update(done);
    });
  } catch (error) {
    fs.rmSync(file, { force: true });
    throw error;
  } finally {
    progress.stop();
  }
}
