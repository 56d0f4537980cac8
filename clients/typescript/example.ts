/**
 * node --import tsx clients/typescript/example.ts: the messages of a hub over some days, one line
 * each. CHATLOG_URL, CHATLOG_KEY and CHATLOG_HUB as `npm run demo` prints them; CHATLOG_FROM and
 * CHATLOG_TO the days (YYYY-MM-DD), by default those of the demo's conversations.
 */
import { ChatlogClient, ChatlogError } from './chatlog-client.js';

const client = new ChatlogClient({
  baseUrl: process.env.CHATLOG_URL ?? 'http://127.0.0.1:3000',
  apiKey: process.env.CHATLOG_KEY ?? '',
});
const hubId = process.env.CHATLOG_HUB ?? '6662225';
const from = process.env.CHATLOG_FROM ?? '2019-11-03';
const to = process.env.CHATLOG_TO ?? '2019-11-04';
try {
  const contacts = await client.messages(hubId, { from, to });
  let count = 0;
  for (const contact of contacts) {
    for (const message of contact.messages) {
      count += 1;
      console.log(
        `${message.createdAt}  ${contact.name || contact.lineId}  ${message.sender}: ${message.msg}`,
      );
    }
  }
  console.error(
    count === 0
      ? `hub ${hubId} has no message from ${from} to ${to}: set CHATLOG_FROM and CHATLOG_TO to days that have some`
      : `${count} messages of hub ${hubId} from ${from} to ${to}`,
  );
} catch (error) {
  if (error instanceof ChatlogError) {
    console.error(`chatlog answered ${error.status} ${error.code}: ${error.message}`);
    process.exitCode = 1;
  } else throw error;
}
