/**
 * `npm run bench`: the benchmark suite Q1-Q6 on SQLite and PostgreSQL (bench/suite.ts), each
 * figure with its ratio to a baseline measured in the same run.
 *
 *   npm run bench -- --generate [--messages N --contacts N --small-hubs N --seed S]   make the dataset
 *   npm run bench [-- --store sqlite|postgres] [--seconds S]                         run Q1-Q6
 *   npm run bench -- export-rss [--messages N]      peak RSS of one whole-hub export, per encoding
 *   npm run bench -- webhook-ingest [--events-per-request N]   durable webhook events/s on SQLite
 *   npm run bench -- compare-answers --before DIR --after DIR [--store sqlite|postgres|both]
 *                                   the same requests and exports to two checkouts, compared byte for byte
 *   npm run bench -- feed [--store sqlite|postgres|both] [--rounds 2] [--rate 200] [--seconds 10]
 *                         [--deliveries 20000] [--load-seconds 5] [--parts 1,2,3]
 *                                   the change feed and outgoing webhooks (issue 16): catch-up vs Q3,
 *                                   wake-up latency, delivery throughput, Q5 while deliveries run
 *   npm run bench -- media [--store sqlite|postgres|both] [--rounds 3] [--parts 1,2] [--large-mb 50]
 *                          [--images 2000] [--image-kb 20] [--large-count 10] [--load-seconds 5]
 *                                   media (issue 17): serving a large content vs a bare file server,
 *                                   RSS growth, downloads from a fake LINE, Q5 while they run
 *   npm run bench -- search [--store sqlite|postgres|both] [--rounds 3] [--seconds 10] [--concurrency 8]
 *                           [--import-messages 200000] [--load-seconds 5] [--parts 1,2]
 *                                   search (issue 18): first page p50/p99 with 8 searchers beside a
 *                                   brute-force scan; the index's bytes, import and Q5 with and without it
 *   npm run bench -- retention [--store sqlite|postgres|both] [--messages 1000000] [--load-seconds 5] [--rounds 3]
 *                                   retention (issue 19): Q5 while the server purges a large backlog
 *   npm run bench -- busy-writes [--seconds 10] [--rate 200] [--connections 32] [--workers 1] [--root DIR]
 *                                   webhook reply p50/p99 alone and while 32 connections read uncached
 *                                   whole days (issue 20, goal 5), on the suite's SQLite dataset
 *   npm run bench -- mcp [--store sqlite|postgres|both] [--rounds 3] [--seconds 10] [--concurrency 8]
 *                                   the MCP server (issue 44): get_conversation, list_contacts p50/p99;
 *                                   search_messages against §12's endpoint in the same run
 *   npm run bench -- reads [--rounds 3] [--root DIR]
 *                                   uncached day, month and whole hub on one connection against the raw
 *                                   scan of the same rows (issue 20, goal 2), SQLite
 *   npm run bench -- both-cores [--rounds 3] [--seconds 10] [--root DIR]
 *                                   one day uncached with 32 connections (issue 20, goal 3): chatlog
 *                                   (default --workers and 1), an older build, the in-memory server
 *   npm run bench -- day-parts [--rounds 5] [--covering]
 *                                   where one day's answer goes inside SQLite, part by part (issue 20,
 *                                   goal 3); --covering: the same from an index that keeps the JSON
 *   npm run bench -- write-steps [--events 4000] [--group 16] [--rounds 3]
 *                                   one webhook event step by step without HTTP (issue 45, goal 2):
 *                                   signature, parse, translation, each SQL statement, each index,
 *                                   COMMIT and its checkpoints, the WAL's pages and fdatasync
 *   npm run bench -- sends [--store sqlite|postgres] [--rounds 3] [--seconds 10] [--rate 200] [--line-ms 50]
 *                                   replies to LINE friends (issue 46): the 202's p99 and the way from
 *                                   202 to the stored message, against the ingest API at the same rate
 *   npm run bench -- reports [--store sqlite|postgres|both] [--rounds 3] [--seconds 10] [--rate 50]
 *                                   reports (issue 47): 28 and 366 days on the 2M-message hub while
 *                                   webhooks arrive, against the read API's answer of the same days
 *   npm run bench -- start [--rounds 9]
 *                                   spawn to the first answered read (issue 20, goal 6): chatlog as
 *                                   installed (bundled), unbundled, and a bare Node HTTP server
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NAMED: Record<string, string> = {
  'export-rss': 'bench/export-rss.ts',
  'webhook-ingest': 'bench/webhook-ingest.ts',
  'compare-answers': 'bench/compare-answers.ts',
  'q1-busy': 'bench/q1-busy.ts',
  feed: 'bench/feed.ts',
  media: 'bench/media.ts',
  search: 'bench/search.ts',
  mcp: 'bench/mcp.ts',
  retention: 'bench/retention.ts',
  'busy-writes': 'bench/busy-writes.ts',
  reads: 'bench/reads.ts',
  start: 'bench/start.ts',
  'both-cores': 'bench/both-cores.ts',
  'day-parts': 'bench/day-parts.ts',
  'write-steps': 'bench/write-steps.ts',
  sends: 'bench/sends.ts',
  reports: 'bench/reports.ts',
};

const [first, ...rest] = process.argv.slice(2);
const named = first ? NAMED[first] : undefined;
const file = named ?? 'bench/suite.ts';
const args = named ? rest : process.argv.slice(2);
const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, file), ...args], {
  cwd: ROOT,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
