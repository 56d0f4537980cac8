/**
 * A person's data as a ZIP (CONTRACT §13; APPI art. 33, GDPR art. 15 and 20): `messages.json`, the
 * contact as the read API renders it with no range and each message with its `id`, and
 * `content/<messageId>` for each media item chatlog keeps. Written with yazl and streamed: the
 * messages are read a page at a time (twice: once for the media to add, once into messages.json),
 * each media item is opened only when the ZIP reaches it, so neither a long history nor large
 * media is ever held in memory.
 */
import { Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import { formatTimestamp } from '../../lib/calendar.js';
import type { ContentStore } from '../../store/content/content-store.js';
import type { Contact, Store } from '../../store/store.js';
import { contactMessagePages } from './contacts.pages.js';

const CHUNK_CHARS = 64 * 1024;

export interface PersonalDataDeps {
  store: Pick<Store, 'conversations' | 'content'>;
  blobs: ContentStore;
}

/** messages.json: `{"lineId","vid","name","messages":[{"id","sender","msg","contentType","createdAt"}]}`. */
async function* messagesJson(
  store: Pick<Store, 'conversations' | 'content'>,
  hubId: string,
  contact: Contact,
): AsyncGenerator<Buffer> {
  let out = `{"lineId":${JSON.stringify(contact.lineId)},"vid":${JSON.stringify(contact.vid)},"name":${JSON.stringify(contact.name)},"messages":[`;
  let first = true;
  for await (const page of contactMessagePages(store, hubId, contact.lineId)) {
    for (const m of page.messages) {
      out += `${first ? '' : ','}{"id":${JSON.stringify(m.id)},"sender":${JSON.stringify(m.sender)},"msg":${JSON.stringify(m.msg)},"contentType":${JSON.stringify(m.contentType)},"createdAt":"${formatTimestamp(m.createdAt)}"}`;
      first = false;
    }
    if (out.length >= CHUNK_CHARS) {
      yield Buffer.from(out, 'utf8');
      out = '';
    }
  }
  yield Buffer.from(`${out}]}`, 'utf8');
}

/**
 * The ZIP of the contact's data, as a stream; undefined when the hub has no such contact. An error
 * reading a media item ends the stream with that error (the archive is then incomplete, and says
 * so by being cut: a ZIP reader refuses it).
 */
export async function personalDataZip(
  deps: PersonalDataDeps,
  hubId: string,
  lineId: string,
): Promise<{ contact: Contact; zip: Readable } | undefined> {
  const first = await deps.store.conversations.messages({ hubId, lineId, at: undefined, limit: 1 });
  if (!first) return undefined;
  const contact = first.contact;
  // The media kept: every message whose content is downloaded.
  const media: string[] = [];
  for await (const page of contactMessagePages(deps.store, hubId, lineId)) {
    for (const m of page.messages) if (m.content?.state === 'done') media.push(m.id);
  }
  const zip = new ZipFile();
  const modified = new Date();
  zip.addReadStreamLazy('messages.json', { mtime: modified }, (done) =>
    done(null, Readable.from(messagesJson(deps.store, hubId, contact))),
  );
  for (const messageId of media) {
    zip.addReadStreamLazy(`content/${messageId}`, { mtime: modified, compress: false }, (done) => {
      void (async () => {
        const item = await deps.store.content.get(hubId, messageId);
        const body = item?.sha256 ? await deps.blobs.read(hubId, item.sha256) : undefined;
        // Erased or released since the list was made: an empty entry rather than a broken archive.
        return body ?? Readable.from([]);
      })().then(
        (stream) => done(null, stream),
        (error: Error) => done(error, Readable.from([])),
      );
    });
  }
  zip.end();
  return { contact, zip: zip.outputStream as Readable };
}
