/**
 * Turns rows (grouped by contact, in answer order) into the JSON answer, in chunks of about
 * 64 KiB. Keys in the contract's order, vid always a string, createdAt 24 characters.
 */
import { formatTimestamp } from '../../lib/calendar.js';
import type { MessageRow } from '../../store/store.js';

const CHUNK_BYTES = 64 * 1024;

export async function* serializeMessages(batches: AsyncIterable<MessageRow[]>): AsyncGenerator<Buffer> {
  let out = '[';
  let currentContact: number | undefined;
  for await (const batch of batches) {
    for (const row of batch) {
      if (row.contactId !== currentContact) {
        out += currentContact === undefined ? '{' : ']},{';
        out += `"lineId":${JSON.stringify(row.lineId)},"vid":${JSON.stringify(row.vid)},"name":${JSON.stringify(row.name)},"messages":[`;
        currentContact = row.contactId;
      } else {
        out += ',';
      }
      out += `{"sender":${JSON.stringify(row.sender)},"msg":${JSON.stringify(row.msg)},"contentType":${JSON.stringify(row.contentType)},"createdAt":"${formatTimestamp(row.createdAt)}"}`;
    }
    if (out.length >= CHUNK_BYTES) {
      yield Buffer.from(out, 'utf8');
      out = '';
    }
  }
  out += currentContact === undefined ? ']' : ']}]';
  yield Buffer.from(out, 'utf8');
}

/** The whole answer as one buffer: for exports to files and tests. */
export async function collectAnswer(batches: AsyncIterable<MessageRow[]>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of serializeMessages(batches)) chunks.push(chunk);
  return Buffer.concat(chunks);
}
