/**
 * The messages port (store.ts): the read API's versions and answers, bulk import and live writes
 * (webhooks, the ingest API). The SQL is in answers.ts, hubs.ts and ingest.ts; what an engine reads
 * or writes its own way (the streamed answer, its JSON, a bulk import, the group commit) it gives here.
 */
import type {
  AnswerCount,
  ImportMessage,
  ImportOutcome,
  IngestOperation,
  IngestOutcome,
  MessageQuery,
  MessageRow,
  MessagesPort,
} from '../store.js';
import { latestMessageAt } from './answers.js';
import type { FeedClock } from './changes.js';
import type { Engine } from './engine.js';
import type { Transaction } from './executor.js';
import { answerVersions } from './hubs.js';

export interface MessageEngine {
  stream(query: MessageQuery): AsyncIterable<MessageRow[]>;
  /** The read API's answer written by the database, where the engine does (PostgreSQL). */
  json?: ((query: MessageQuery, count?: AnswerCount) => AsyncIterable<Buffer>) | undefined;
  /** Call inside `writeChanges` (the hub is locked; number the messages with `clock`). */
  importMessages(
    tx: Transaction,
    clock: FeedClock,
    hubId: string,
    batches: AsyncIterable<readonly ImportMessage[]>,
    now: number,
  ): Promise<ImportOutcome>;
  /** A live write, committed with others of its moment (ingest.ts GroupCommit). */
  ingest(hubId: string, operations: readonly IngestOperation[], now: number): Promise<IngestOutcome>;
}

export function messagesPort(engine: Engine, own: MessageEngine): MessagesPort {
  const json = own.json;
  return engine.port(
    'messages',
    {
      versions: (hubId) => answerVersions(engine.answerReads, hubId),
      latestAt: (hubId) => latestMessageAt(engine.answerReads, hubId),
      stats: async (hubId) => {
        const row = await engine.reads.get<{
          contacts: number;
          messages: number;
          first_at: number | null;
          last_at: number | null;
        }>(
          `SELECT (SELECT COUNT(*) FROM contacts WHERE hub_id = ?) AS contacts,
                  (SELECT COUNT(*) FROM messages WHERE hub_id = ?) AS messages,
                  (SELECT MIN(created_at) FROM messages WHERE hub_id = ?) AS first_at,
                  (SELECT MAX(created_at) FROM messages WHERE hub_id = ?) AS last_at`,
          [hubId, hubId, hubId, hubId],
        );
        const time = (value: number | null | undefined) =>
          value === null || value === undefined ? null : Number(value);
        return {
          contacts: Number(row?.contacts ?? 0),
          messages: Number(row?.messages ?? 0),
          firstAt: time(row?.first_at),
          lastAt: time(row?.last_at),
        };
      },
      stream: (query) => own.stream(query),
      ...(json && { json: (query: MessageQuery, count?: AnswerCount) => json(query, count) }),
      // Not a write the engine may move: it reads the caller's batches, where they are.
      importAll: (hubId, batches, now) =>
        engine.writeChanges([hubId], (tx, clock) => own.importMessages(tx, clock, hubId, batches, now), {
          readsCallersBatches: true,
        }),
      ingest: (hubId, operations, now) => own.ingest(hubId, operations, now),
    },
    ['ingest'],
  );
}
