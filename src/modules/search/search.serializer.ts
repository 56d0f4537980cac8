/** A page of search results as JSON (CONTRACT §12): keys in the contract's order, `message` as §3 renders it. */
import { formatTimestamp } from '../../lib/calendar.js';
import type { SearchPage } from './search.usecases.js';

const str = JSON.stringify;

export function serializeSearchPage(page: SearchPage): string {
  let out = '{"results":[';
  page.results.forEach((hit, i) => {
    const { message } = hit;
    if (i > 0) out += ',';
    out +=
      `{"id":${str(hit.id)},"lineId":${str(hit.lineId)},"vid":${str(hit.vid)},"name":${str(hit.name)}` +
      `,"message":{"sender":${str(message.sender)},"msg":${str(message.msg)},"contentType":${str(message.contentType)},"createdAt":"${formatTimestamp(message.createdAt)}"}}`;
  });
  return `${out}],"cursor":${str(page.cursor)},"hasMore":${page.hasMore}}`;
}
