/** A page of the feed as JSON (CONTRACT §9): keys in the contract's order, seq a decimal string. */
import { formatTimestamp } from '../../lib/calendar.js';
import type { Change } from '../../store/store.js';
import type { ChangesPage } from './changes.usecases.js';

const str = JSON.stringify;

/** One change, as the feed serves it and as an outgoing webhook's `data` carries it. */
export function serializeChange(change: Change): string {
  const head = `{"seq":"${change.seq}","type":"${change.type}","at":"${formatTimestamp(change.at)}"`;
  switch (change.type) {
    case 'message.created': {
      const { message } = change;
      const body =
        `${head},"id":${str(change.id)},"lineId":${str(change.lineId)},"vid":${str(change.vid)},"name":${str(change.name)}` +
        `,"message":{"sender":${str(message.sender)},"msg":${str(message.msg)},"contentType":${str(message.contentType)},"createdAt":"${formatTimestamp(message.createdAt)}"}`;
      // `line` was stored as JSON.stringify made it: valid JSON, embedded as it is.
      return change.line === null ? `${body}}` : `${body},"line":${change.line}}`;
    }
    case 'message.deleted':
      return `${head},"id":${str(change.id)},"lineId":${str(change.lineId)},"reason":${str(change.reason)}}`;
    case 'contact.updated':
      return `${head},"lineId":${str(change.lineId)},"vid":${str(change.vid)},"name":${str(change.name)}}`;
    case 'contact.erased':
      return `${head},"lineId":${str(change.lineId)}}`;
    case 'retention.applied':
      return `${head},"before":"${formatTimestamp(change.before)}"}`;
  }
}

/**
 * The page's answer: its changes as the store or an answer thread made them (FeedJsonPage, the
 * same bytes as serializeChange writes), between the page's opening and its cursor.
 */
export function serializePage(page: ChangesPage): Buffer {
  return Buffer.concat([
    OPENING,
    page.body,
    Buffer.from(`],"cursor":${str(page.cursor)},"hasMore":${page.hasMore}}`, 'utf8'),
  ]);
}

const OPENING = Buffer.from('{"changes":[', 'utf8');
