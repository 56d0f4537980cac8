/**
 * The load of `npm run bench -- mcp`, in its own process: N assistants, each an official SDK client
 * (Streamable HTTP, Bearer key) calling one tool again and again for a while, every answer parsed.
 * Prints one JSON line: calls, failures, p50/p99 latency, calls/s, the items of the last answer.
 *
 *   node --import tsx bench/mcp-client.ts <base> <key> <concurrency> <seconds> <tool> <arguments JSON>
 *
 * `lineIds` in the arguments (a JSON array) spreads get_conversation over those contacts.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { percentile } from './feed-common.js';

const [base = '', key = '', concurrencyText = '8', secondsText = '10', tool = '', argsText = '{}'] =
  process.argv.slice(2);
const concurrency = Number(concurrencyText);
const { lineIds, ...fixed } = JSON.parse(argsText) as { lineIds?: string[] } & Record<string, unknown>;
const latencies: number[] = [];
let failed = 0;
let items = -1;

async function connect(): Promise<Client> {
  const client = new Client({ name: 'chatlog-bench', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

let next = 0;
async function once(client: Client): Promise<void> {
  const args = lineIds ? { ...fixed, lineId: lineIds[next++ % lineIds.length] } : fixed;
  const started = performance.now();
  try {
    const result = await client.callTool({ name: tool, arguments: args });
    if (result.isError) {
      failed += 1;
      return;
    }
    latencies.push(performance.now() - started);
    const structured = result.structuredContent as Record<string, unknown>;
    const list = Object.values(structured).find(Array.isArray);
    items = list ? list.length : 1;
  } catch {
    failed += 1;
  }
}

const clients = await Promise.all(Array.from({ length: concurrency }, () => connect()));
// A few answers first, not counted.
for (const client of clients) await once(client);
latencies.length = 0;
const started = performance.now();
const deadline = started + Number(secondsText) * 1000;
await Promise.all(
  clients.map(async (client) => {
    while (performance.now() < deadline) await once(client);
  }),
);
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify({
    requests: latencies.length,
    failed,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    perSecond: latencies.length / seconds,
    results: items,
  })}\n`,
);
await Promise.all(clients.map((client) => client.close()));
