/**
 * File import (CONTRACT §6.3): a JSON array in the answer's shape, or NDJSON with one message
 * per line. Every record is validated; one bad record and nothing is stored. Each message gets
 * a source id derived from its content, so importing the same file again changes nothing.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import readline from 'node:readline';
import { parseTimestamp, TIMESTAMP_RULE } from '../../lib/calendar.js';
import { AppError } from '../../lib/errors.js';
import { impossibleDay, notARealDate } from '../../lib/real-date.js';
import type { ImportMessage, ImportOutcome, Store } from '../../store/store.js';
import { importErrors } from './ingest.errors.js';

const BATCH_SIZE = 1000;
const MAX_REPORTED_PROBLEMS = 20;
const MAX_TEXT_LENGTH = 1_000_000;

/** Where a text that JSON.parse refused goes wrong; the scanner is loaded only for such a file. */
async function findJsonProblem(text: string) {
  return (await import('./import.json.js')).findJsonProblem(text);
}

/**
 * The file is read twice, so progress comes in two passes, each from 0 to the same total (the
 * file's messages or bytes): checking every record, then storing them.
 */
export interface ImportProgress {
  /** `pass` names what this pass does (`checking`, `storing`; `copying` for a backup). */
  start(total: number, unit: 'bytes' | 'records', pass?: string): void;
  update(done: number): void;
  /** The pass is over (called after each; once more is harmless). */
  stop(): void;
}

export class ImportValidationError extends AppError {
  constructor(
    readonly problems: string[],
    readonly total: number,
  ) {
    super(
      'invalid_body',
      `${total} invalid record${total === 1 ? '' : 's'}; nothing was imported:\n  ${problems.join('\n  ')}${
        total > problems.length ? `\n  ... and ${total - problems.length} more` : ''
      }`,
    );
  }
}

/** Collects problems as "where: field: what is wrong" (or "where: what is wrong" for a whole record). */
class Problems {
  readonly list: string[] = [];
  count = 0;
  add(where: string, field: string, what: string): void {
    this.count += 1;
    if (this.list.length < MAX_REPORTED_PROBLEMS)
      this.list.push(field === '' ? `${where}: ${what}` : `${where}: ${field}: ${what}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(
  record: Record<string, unknown>,
  field: string,
  where: string,
  problems: Problems,
  options: { required: boolean; nonEmpty?: boolean; fallback?: string; numberAllowed?: boolean },
): string | undefined {
  const value = record[field];
  if (value === undefined || value === null) {
    if (options.required) problems.add(where, field, 'is required');
    return options.fallback;
  }
  if (options.numberAllowed && typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
    return String(value);
  }
  if (typeof value !== 'string') {
    problems.add(where, field, `must be a string, got ${Array.isArray(value) ? 'an array' : typeof value}`);
    return undefined;
  }
  if (options.nonEmpty && value === '') {
    problems.add(where, field, 'must not be empty');
    return undefined;
  }
  if (value.length > MAX_TEXT_LENGTH) {
    problems.add(where, field, `is longer than ${MAX_TEXT_LENGTH} characters`);
    return undefined;
  }
  return value;
}

interface Draft {
  lineId: string;
  vid: string;
  name: string;
  sender: string;
  msg: string;
  contentType: string;
  createdAt: number;
}

function readMessageFields(
  record: Record<string, unknown>,
  where: string,
  problems: Problems,
): Omit<Draft, 'lineId' | 'vid' | 'name'> | undefined {
  const before = problems.count;
  const sender = text(record, 'sender', where, problems, { required: false, fallback: 'You' });
  const msg = text(record, 'msg', where, problems, { required: true });
  const contentType = text(record, 'contentType', where, problems, {
    required: false,
    nonEmpty: true,
    fallback: 'text',
  });
  const createdAtText = text(record, 'createdAt', where, problems, { required: true });
  let createdAt: number | undefined;
  if (createdAtText !== undefined) {
    createdAt = parseTimestamp(createdAtText);
    if (createdAt === undefined) {
      // An impossible day is named as such, in the words the read API and `chatlog export` use.
      const day = impossibleDay(createdAtText);
      if (day !== undefined) problems.add(where, '', notARealDate('createdAt', day));
      else problems.add(where, 'createdAt', `${TIMESTAMP_RULE}, got "${createdAtText.slice(0, 40)}"`);
    }
  }
  if (problems.count > before || sender === undefined || msg === undefined || contentType === undefined)
    return undefined;
  if (createdAt === undefined) return undefined;
  return { sender, msg, contentType, createdAt };
}

function readContactFields(record: Record<string, unknown>, where: string, problems: Problems) {
  const lineId = text(record, 'lineId', where, problems, { required: true, nonEmpty: true });
  const vid = text(record, 'vid', where, problems, { required: false, fallback: '', numberAllowed: true });
  const name = text(record, 'name', where, problems, { required: false, fallback: '' });
  if (lineId !== undefined && lineId.length > 200)
    problems.add(where, 'lineId', 'is longer than 200 characters');
  return { lineId, vid, name };
}

/** Drafts of an NDJSON file, one message per line. */
async function* ndjsonDrafts(
  file: string,
  problems: Problems,
  onBytes: (n: number) => void,
): AsyncGenerator<Draft> {
  const input = fs.createReadStream(file, { encoding: 'utf8' });
  const lines = readline.createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNumber = 0;
  let bytes = 0;
  for await (let line of lines) {
    lineNumber += 1;
    bytes += Buffer.byteLength(line) + 1;
    onBytes(bytes);
    if (lineNumber === 1) line = line.replace(/^\uFEFF/, '');
    if (line.trim() === '') continue;
    const where = `line ${lineNumber}`;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      const problem = await findJsonProblem(line);
      problems.add(
        problem ? `${where}, column ${problem.column}` : where,
        '',
        `not valid JSON: ${problem?.what ?? 'JSON.parse refused it'}`,
      );
      continue;
    }
    if (!isObject(record)) {
      problems.add(where, 'record', 'must be a JSON object');
      continue;
    }
    const contact = readContactFields(record, where, problems);
    const message = readMessageFields(record, where, problems);
    if (contact.lineId === undefined || contact.vid === undefined || contact.name === undefined || !message)
      continue;
    yield { lineId: contact.lineId, vid: contact.vid, name: contact.name, ...message };
  }
}

/** Drafts of a JSON array in the answer's shape: contacts, each with its messages. */
function* arrayDrafts(
  document: unknown,
  problems: Problems,
  onRecord: (n: number) => void,
): Generator<Draft> {
  if (!Array.isArray(document)) {
    problems.add('file', 'root', 'must be a JSON array of contacts');
    return;
  }
  let done = 0;
  for (const [i, record] of document.entries()) {
    const where = `[${i}]`;
    if (!isObject(record)) {
      problems.add(where, 'contact', 'must be a JSON object');
      continue;
    }
    const contact = readContactFields(record, where, problems);
    const messages = record.messages;
    if (!Array.isArray(messages)) {
      problems.add(where, 'messages', 'must be an array');
      continue;
    }
    for (const [j, item] of messages.entries()) {
      const messageWhere = `[${i}].messages[${j}]`;
      done += 1;
      onRecord(done);
      if (!isObject(item)) {
        problems.add(messageWhere, 'message', 'must be a JSON object');
        continue;
      }
      const message = readMessageFields(item, messageWhere, problems);
      if (contact.lineId === undefined || contact.vid === undefined || contact.name === undefined || !message)
        continue;
      yield { lineId: contact.lineId, vid: contact.vid, name: contact.name, ...message };
    }
  }
}

function countMessages(document: unknown): number {
  if (!Array.isArray(document)) return 0;
  let total = 0;
  for (const record of document) {
    if (isObject(record) && Array.isArray(record.messages)) total += record.messages.length;
  }
  return total;
}

/** Source ids: a hash of the message's content plus its occurrence, so true repeats are kept. */
class SourceIds {
  private readonly seen = new Map<string, number>();
  next(draft: Draft): string {
    const digest = createHash('sha256')
      .update(
        [draft.lineId, String(draft.createdAt), draft.sender, draft.contentType, draft.msg].join('\u0000'),
        'utf8',
      )
      .digest('base64url')
      .slice(0, 32);
    const occurrence = this.seen.get(digest) ?? 0;
    this.seen.set(digest, occurrence + 1);
    return `import:${digest}:${occurrence}`;
  }
}

async function firstSignificantCharacter(file: string): Promise<string | undefined> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    for (let position = 0; ; ) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) return undefined;
      const chunk = buffer
        .subarray(0, bytesRead)
        .toString('utf8')
        .replace(/^\uFEFF/, '');
      const match = /\S/.exec(chunk);
      if (match) return match[0];
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

export async function importFile(
  store: Pick<Store, 'messages'>,
  hubId: string,
  file: string,
  progress: ImportProgress,
  options: { clock?: () => number; beforeWrite?: () => Promise<void> } = {},
): Promise<ImportOutcome> {
  const clock = options.clock ?? Date.now;
  let size: number;
  try {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile()) throw importErrors.notAFile(file);
    size = stat.size;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw importErrors.cannotRead(file, (error as NodeJS.ErrnoException).code ?? 'error');
  }
  const first = await firstSignificantCharacter(file);
  if (first === undefined) throw importErrors.empty(file);
  if (first !== '[' && first !== '{') {
    throw importErrors.neitherJsonNorNdjson(file);
  }

  // Two passes over the file: check every record first, without touching the store, then store
  // them all in one transaction. Live writes wait only for the second pass.
  let document: unknown;
  let total: number;
  const unit = first === '[' ? 'records' : 'bytes';
  if (first === '[') {
    const text = (await fs.promises.readFile(file, 'utf8')).replace(/^\uFEFF/, '');
    try {
      document = JSON.parse(text);
    } catch (error) {
      const problem = await findJsonProblem(text);
      throw importErrors.notValidJson(
        file,
        problem
          ? `line ${problem.line}, column ${problem.column}: ${problem.what}`
          : (error as Error).message,
      );
    }
    total = countMessages(document);
  } else {
    total = size;
  }
  // Each pass counts from 0 to the total; the bytes of a last line without its line break, or of
  // a file that grew since, do not push it past 100%.
  const readDrafts = (problems: Problems): AsyncIterable<Draft> | Iterable<Draft> =>
    first === '['
      ? arrayDrafts(document, problems, (n) => progress.update(Math.min(n, total)))
      : ndjsonDrafts(file, problems, (n) => progress.update(Math.min(n, total)));

  try {
    const problems = new Problems();
    progress.start(total, unit, 'checking');
    for await (const _draft of readDrafts(problems)) {
      // Checking only.
    }
    // The checking pass is over (its bar drawn at 100%) before anything else is said.
    progress.stop();
    if (problems.count > 0) throw new ImportValidationError(problems.list, problems.count);
    await options.beforeWrite?.();

    const sourceIds = new SourceIds();
    const again = new Problems();
    progress.start(total, unit, 'storing');
    const drafts = readDrafts(again);
    async function* batches(): AsyncGenerator<ImportMessage[]> {
      let batch: ImportMessage[] = [];
      for await (const draft of drafts) {
        batch.push({
          lineId: draft.lineId,
          vid: draft.vid,
          name: draft.name,
          sender: draft.sender,
          msg: draft.msg,
          contentType: draft.contentType,
          createdAt: draft.createdAt,
          sourceId: sourceIds.next(draft),
        });
        if (batch.length >= BATCH_SIZE) {
          yield batch;
          batch = [];
        }
      }
      // The file changed between the passes: store nothing.
      if (again.count > 0) throw new ImportValidationError(again.list, again.count);
      if (batch.length > 0) yield batch;
    }
    return await store.messages.importAll(hubId, batches(), clock());
  } finally {
    progress.stop();
  }
}
