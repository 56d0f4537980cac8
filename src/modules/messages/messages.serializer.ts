/**
 * Turns rows (grouped by contact, in answer order) into the JSON answer, in chunks of about
 * 64 KiB (`count` told the rows once all are written). Keys in the contract's order, vid always a string, createdAt 24 characters.
 */
import { formatTimestamp } from '../../lib/calendar.js';
import { type AnswerCount, countAnswer, type MessageRow } from '../../store/store.js';

const CHUNK_BYTES = 64 * 1024;

export async function* serializeMessages(
  batches: AsyncIterable<MessageRow[]>,
  count?: AnswerCount,
): AsyncGenerator<Buffer> {
  let out = '[';
  let rows = 0;
  let currentContact: number | undefined;
  // A contact's messages mostly share one sender, and content types are few: encode each once.
  let sender: string | undefined;
  let senderJson = '';
  const contentTypeJson = new Map<string, string>();
  for await (const batch of batches) {
    rows += batch.length;
    for (const row of batch) {
      if (row.contactId !== currentContact) {
        out += currentContact === undefined ? '{' : ']},{';
        out += `"lineId":${JSON.stringify(row.lineId)},"vid":${JSON.stringify(row.vid)},"name":${JSON.stringify(row.name)},"messages":[{"sender":`;
        currentContact = row.contactId;
      } else {
        out += ',{"sender":';
      }
      if (row.sender !== sender) {
        sender = row.sender;
        senderJson = JSON.stringify(sender);
      }
      let contentType = contentTypeJson.get(row.contentType);
      if (contentType === undefined) {
        contentType = JSON.stringify(row.contentType);
        if (contentTypeJson.size < 64) contentTypeJson.set(row.contentType, contentType);
      }
      out += `${senderJson},"msg":${JSON.stringify(row.msg)},"contentType":${contentType},"createdAt":"${formatTimestamp(row.createdAt)}"}`;
    }
    if (out.length >= CHUNK_BYTES) {
      yield Buffer.from(out, 'utf8');
      out = '';
    }
  }
  out += currentContact === undefined ? ']' : ']}]';
  yield Buffer.from(out, 'utf8');
  countAnswer(count, rows);
}

/** The whole answer as one buffer: for exports to files and tests. */
export async function collectAnswer(batches: AsyncIterable<MessageRow[]>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of serializeMessages(batches)) chunks.push(chunk);
  return Buffer.concat(chunks);
}
