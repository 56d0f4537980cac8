/**
 * node --import tsx clients/typescript/example.ts   (CHATLOG_URL, CHATLOG_KEY, CHATLOG_HUB from
 * `npm run demo`): yesterday's messages of a hub, one line each.
 */
import { ChatlogClient, ChatlogError } from './chatlog-client.js';

const client = new ChatlogClient({
  baseUrl: process.env.CHATLOG_URL ?? 'http://127.0.0.1:3000',
  apiKey: process.env.CHATLOG_KEY ?? '',
});
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
try {
  const contacts = await client.messages(process.env.CHATLOG_HUB ?? '6662225', {
    from: process.env.CHATLOG_FROM ?? yesterday,
    to: process.env.CHATLOG_TO ?? yesterday,
  });
  for (const contact of contacts) {
    for (const message of contact.messages) {
      console.log(
        `${message.createdAt}  ${contact.name || contact.lineId}  ${message.sender}: ${message.msg}`,
      );
    }
  }
} catch (error) {
  if (error instanceof ChatlogError) {
    console.error(`chatlog answered ${error.status} ${error.code}: ${error.message}`);
    process.exitCode = 1;
  } else throw error;
}
