/**
 * A retention purge while webhooks arrive (CONTRACT §13), on SQLite and on PostgreSQL: a hub with
 * a large backlog of year-old messages is purged by the retention worker while signed LINE webhooks
 * keep coming for the same hub. Every webhook is answered 200 and stored, every old message goes,
 * nothing new is removed. (`npm run bench -- retention` measures Q5 during a purge of 1,000,000.)
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { RetentionWorker } from '../../src/modules/retention/retention.worker.js';
import type { ImportMessage } from '../../src/store/store.js';
import { body, messageEvent, signed } from '../fixtures/line.js';
import { LogCapture, rawRequest, startTestServer, type TestServer } from '../helpers.js';

const HUB = '7820001';
const SECRET = 'retention-scale-channel-secret';
const BACKLOG = Number(process.env.CHATLOG_TEST_RETENTION_MESSAGES ?? 20_000);
const DAY = 86_400_000;
let server: TestServer;

before(async () => {
  server = await startTestServer();
  await server.hubs.add(HUB, { lineChannelSecret: SECRET, timeZone: 'Asia/Tokyo' });
  const yearAgo = Date.now() - 365 * DAY;
  async function* backlog(): AsyncGenerator<ImportMessage[]> {
    for (let done = 0; done < BACKLOG; done += 5000) {
      yield Array.from({ length: Math.min(5000, BACKLOG - done) }, (_, i) => ({
        lineId: `U${String((done + i) % 500).padStart(32, '0')}`,
        vid: '',
        name: '',
        sender: null,
        msg: `old ${done + i}`,
        contentType: 'text',
        createdAt: yearAgo + done + i,
        sourceId: `old:${done + i}`,
      }));
    }
  }
  await server.store.messages.importAll(HUB, backlog(), Date.now());
  await server.hubs.add(HUB, { retentionDays: 30 });
});
after(() => server?.close());

test(`${BACKLOG.toLocaleString('en-US')} old messages purged while webhooks arrive: every webhook stored, every old message gone`, async () => {
  const logs = new LogCapture();
  const worker = new RetentionWorker({
    store: server.store,
    log: createLogger('info', logs),
    clock: Date.now,
    // Runs of 2 s (a minute in production): the backlog takes several, each handing over to the next.
    runMs: 2_000,
  });
  // The server's own retention worker (one a minute) may take a run between two of this one's:
  // as another node would. Runs go on, whoever holds the lease, until no old message is left.
  const oldLeft = async () => (await server.store.retention.preview(HUB, Date.now() - 100 * DAY)).messages;
  const deadline = Date.now() + 60 * 60_000;
  let purging = true;
  const purge = (async () => {
    const outcomes = await worker.runDue();
    while ((await oldLeft()) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      outcomes.push(...(await worker.runDue()));
    }
    // The search index rewritten without them (SQLite, in the background), webhooks still coming.
    await server.store.search.compacted();
    return outcomes;
  })().finally(() => {
    purging = false;
  });
  let sent = 0;
  const slowest: number[] = [];
  const sender = async (n: number) => {
    while (purging || sent < 40) {
      const id = `7820${n}${String(sent++).padStart(8, '0')}`;
      const raw = body([
        messageEvent({ id, type: 'text', quoteToken: 'q', text: `new ${id}` }, { timestamp: Date.now() }),
      ]);
      const started = performance.now();
      const res = await rawRequest(server.url, 'POST', `/webhooks/line/${HUB}`, signed(SECRET, raw), raw);
      slowest.push(performance.now() - started);
      assert.equal(res.status, 200, res.body.toString());
    }
  };
  await Promise.all([purge, sender(1), sender(2), sender(3), sender(4)]);
  const outcomes = await purge;
  const runs = () => [...logs.lines, ...server.logs.lines].filter((line) => line.includes('retention'));
  assert.equal(await oldLeft(), 0, `no old message left; the runs said:\n${runs().join('\n')}`);
  const kept = await server.store.retention.preview(HUB, Date.now() + DAY);
  assert.equal(kept.messages, sent, 'every webhook message kept, nothing else');
  // Every removal is logged by the run that made it, whichever worker held the lease: when the
  // backlog is in before the server's worker first looks (a second after it starts), that one takes
  // the whole purge and this one logs nothing. A run logs once it has counted what is left, a moment
  // after its last delete: wait for that line rather than read the log before it is written.
  const removedAsLogged = () =>
    runs()
      .map((line) => JSON.parse(line) as { msg: string; removed?: number })
      .filter((line) => line.msg === 'retention run')
      .reduce((sum, run) => sum + (run.removed ?? 0), 0);
  for (const until = Date.now() + 30_000; removedAsLogged() < BACKLOG && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(removedAsLogged(), BACKLOG, `every removal logged; the runs said:\n${runs().join('\n')}`);
  slowest.sort((a, b) => b - a);
  const p99 = slowest[Math.floor(slowest.length / 100)] ?? 0;
  process.stderr.write(
    `retention scale: ${BACKLOG} purged (${outcomes.length} run(s) by this worker, others by the server's own) while ${sent} webhooks came; webhook replies p99 ${p99.toFixed(0)} ms, slowest ${slowest[0]?.toFixed(0)} ms\n`,
  );
});
