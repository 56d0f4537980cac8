/**
 * Prometheus metrics (prom-client) for /metrics: requests and their latency by route pattern, method
 * and status (never by hub, key or URL), messages stored by source, webhook signature failures,
 * rate-limited requests, the store's connection pools, media downloads (by outcome, bytes, queue,
 * bytes kept), retention runs (by outcome, messages removed, the last success and failure), the
 * messages held for reports, and Node's own (event-loop lag included).
 *
 * prom-client is loaded after the server listens, so that it does not delay the first answer;
 * what happens before it is loaded is kept and counted when it is.
 */
import { createRequire } from 'node:module';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** A connection pool's state as the gauges show it (a store's pools give it: helpers know no store). */
export interface PoolState {
  pool: string;
  total: number;
  idle: number;
  waiting: number;
}

type Event =
  | { kind: 'request'; route: string; method: string; status: number; seconds: number }
  | { kind: 'stored'; source: string; count: number }
  | { kind: 'webhook_refused'; reason: string }
  | { kind: 'download'; outcome: string; bytes: number }
  | { kind: 'send'; outcome: string }
  | { kind: 'hubspot_published' }
  | { kind: 'retention'; outcome: 'ok' | 'failed'; removed: number; at: number };

const EARLY_EVENTS_KEPT = 10_000;

interface Instruments {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  duration: Histogram<'route' | 'method' | 'status'>;
  stored: Counter<'source'>;
  signatureFailures: Counter<'reason'>;
  rateLimited: Counter;
  pools: Gauge<'pool' | 'state'>;
  downloads: Counter<'outcome'>;
  sends: Counter<'outcome'>;
  hubspotPublished: Counter;
  downloadedBytes: Counter;
  retentionRuns: Counter<'outcome'>;
  retentionRemoved: Counter;
  retentionLastSuccess: Gauge;
  retentionLastFailure: Gauge;
}

/** Figures read from the store when /metrics is asked (each a query: keep them few). */
export interface StoreGauges {
  /** Media downloads waiting (every hub). */
  downloadQueue(): Promise<number>;
  /** Bytes of media kept (every hub). */
  contentBytes(): Promise<number>;
  /** Hubs connected to a HubSpot inbox, and their messages not yet published (CONTRACT §18). */
  hubspot?(): Promise<{ connected: number; waiting: number; failing: number }>;
  /** Messages this node holds in memory for reports (no query: the process's own figure). */
  reportMessagesHeld?(): number;
}

export class Metrics {
  private instruments: Instruments | undefined;
  private early: Event[] = [];
  private loading: Promise<void> | undefined;

  constructor(
    private readonly poolState: () => PoolState[] = () => [],
    private readonly gauges?: StoreGauges,
  ) {}

  /** Loads prom-client and registers the metrics; safe to call more than once. */
  load(): Promise<void> {
    // required (it is CommonJS), so that its names are the same whether chatlog runs bundled or not.
    this.loading ??= Promise.resolve().then(() => {
      const client = createRequire(import.meta.url)('prom-client') as typeof import('prom-client');
      const registry = new client.Registry();
      client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
      const poolState = this.poolState;
      const gauges = this.gauges;
      if (gauges) {
        new client.Gauge({
          name: 'chatlog_content_downloads_queued',
          help: 'Media downloads from LINE waiting or being retried (every hub)',
          registers: [registry],
          async collect() {
            this.set(await gauges.downloadQueue());
          },
        });
        new client.Gauge({
          name: 'chatlog_content_stored_bytes',
          help: 'Bytes of media kept (every hub; the same bytes once per hub)',
          registers: [registry],
          async collect() {
            this.set(await gauges.contentBytes());
          },
        });
        const held = gauges.reportMessagesHeld?.bind(gauges);
        if (held) {
          new client.Gauge({
            name: 'chatlog_report_messages_held',
            help: 'Messages this node holds in memory for reports, 22 bytes each (CHATLOG_REPORTS_MEMORY_MB bounds them)',
            registers: [registry],
            collect() {
              this.set(held());
            },
          });
        }
        const hubspot = gauges.hubspot?.bind(gauges);
        if (hubspot) {
          // One look at the store for the three (collect runs for each gauge asked).
          let read:
            | { at: number; figures: Promise<{ connected: number; waiting: number; failing: number }> }
            | undefined;
          const figures = () => {
            if (!read || Date.now() - read.at > 1_000) read = { at: Date.now(), figures: hubspot() };
            return read.figures;
          };
          for (const [name, help, key] of [
            ['chatlog_hubspot_connected_hubs', 'Hubs connected to a HubSpot inbox', 'connected'],
            [
              'chatlog_hubspot_messages_waiting',
              'Messages of connected hubs not yet published to HubSpot (alert when it keeps growing)',
              'waiting',
            ],
            [
              'chatlog_hubspot_hubs_paused',
              'Connected hubs whose publishing waits after an error (429, 5xx, a token HubSpot refused)',
              'failing',
            ],
          ] as const) {
            new client.Gauge({
              name,
              help,
              registers: [registry],
              async collect() {
                this.set((await figures())[key]);
              },
            });
          }
        }
      }
      const instruments: Instruments = {
        registry,
        requests: new client.Counter({
          name: 'chatlog_http_requests_total',
          help: 'HTTP requests answered, by route pattern, method and status',
          labelNames: ['route', 'method', 'status'],
          registers: [registry],
        }),
        duration: new client.Histogram({
          name: 'chatlog_http_request_duration_seconds',
          help: 'Time from the request to the end of its answer, by route pattern, method and status',
          labelNames: ['route', 'method', 'status'],
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
          registers: [registry],
        }),
        stored: new client.Counter({
          name: 'chatlog_messages_stored_total',
          help: 'Messages stored, by source (webhook, ingest_api)',
          labelNames: ['source'],
          registers: [registry],
        }),
        signatureFailures: new client.Counter({
          name: 'chatlog_webhook_signature_failures_total',
          help:
            'LINE webhook requests refused (401), by reason: invalid_hub_id, unknown_hub, no_channel_secret, ' +
            'missing_signature, malformed_signature, wrong_signature',
          labelNames: ['reason'],
          registers: [registry],
        }),
        rateLimited: new client.Counter({
          name: 'chatlog_rate_limited_total',
          help: 'Requests refused with 429 by a key rate limit or the sign-in throttle',
          registers: [registry],
        }),
        pools: new client.Gauge({
          name: 'chatlog_store_connections',
          help: 'Store connections by pool and state (in use, idle) and requests waiting for one',
          labelNames: ['pool', 'state'],
          registers: [registry],
          collect() {
            for (const state of poolState()) {
              this.set({ pool: state.pool, state: 'in_use' }, state.total - state.idle);
              this.set({ pool: state.pool, state: 'idle' }, state.idle);
              this.set({ pool: state.pool, state: 'waiting' }, state.waiting);
            }
          },
        }),
        downloads: new client.Counter({
          name: 'chatlog_content_downloads_total',
          help: 'Media download attempts by outcome: done, pending (to retry), preparing (LINE not ready), gone (LINE no longer had it), failed (given up)',
          labelNames: ['outcome'],
          registers: [registry],
        }),
        sends: new client.Counter({
          name: 'chatlog_sends_total',
          help: 'Pushes of replies to LINE by outcome: sent, pending (to retry), failed (refused by LINE, or given up after 24 hours)',
          labelNames: ['outcome'],
          registers: [registry],
        }),
        hubspotPublished: new client.Counter({
          name: 'chatlog_hubspot_messages_published_total',
          help: 'Messages this node published to HubSpot inboxes (CONTRACT §18)',
          registers: [registry],
        }),
        downloadedBytes: new client.Counter({
          name: 'chatlog_content_downloaded_bytes_total',
          help: 'Bytes of media downloaded from LINE and kept',
          registers: [registry],
        }),
        retentionRuns: new client.Counter({
          name: 'chatlog_retention_runs_total',
          help: 'Retention runs of a hub by outcome: ok, failed (alert on any increase of failed)',
          labelNames: ['outcome'],
          registers: [registry],
        }),
        retentionRemoved: new client.Counter({
          name: 'chatlog_retention_messages_removed_total',
          help: 'Messages removed by retention',
          registers: [registry],
        }),
        retentionLastSuccess: new client.Gauge({
          name: 'chatlog_retention_last_success_timestamp_seconds',
          help: 'When a retention run last ended well on this node (alert when it grows old while hubs have retention)',
          registers: [registry],
        }),
        retentionLastFailure: new client.Gauge({
          name: 'chatlog_retention_last_failure_timestamp_seconds',
          help: 'When a retention run last failed on this node (0: never)',
          registers: [registry],
        }),
      };
      this.instruments = instruments;
      for (const event of this.early) this.apply(event);
      this.early = [];
    });
    return this.loading;
  }

  private record(event: Event): void {
    if (this.instruments) this.apply(event);
    else if (this.early.length < EARLY_EVENTS_KEPT) this.early.push(event);
  }

  private apply(event: Event): void {
    const m = this.instruments;
    if (!m) return;
    if (event.kind === 'stored') {
      m.stored.inc({ source: event.source }, event.count);
      return;
    }
    if (event.kind === 'download') {
      m.downloads.inc({ outcome: event.outcome });
      if (event.bytes > 0) m.downloadedBytes.inc(event.bytes);
      return;
    }
    if (event.kind === 'send') {
      m.sends.inc({ outcome: event.outcome });
      return;
    }
    if (event.kind === 'hubspot_published') {
      m.hubspotPublished.inc();
      return;
    }
    if (event.kind === 'retention') {
      m.retentionRuns.inc({ outcome: event.outcome });
      if (event.removed > 0) m.retentionRemoved.inc(event.removed);
      (event.outcome === 'ok' ? m.retentionLastSuccess : m.retentionLastFailure).set(event.at / 1000);
      return;
    }
    if (event.kind === 'webhook_refused') {
      m.signatureFailures.inc({ reason: event.reason });
      return;
    }
    const labels = { route: event.route, method: event.method, status: String(event.status) };
    m.requests.inc(labels);
    m.duration.observe(labels, event.seconds);
    if (event.status === 429) m.rateLimited.inc();
  }

  /** `route` is the pattern (`/api/line/:hubId/messages`), never the URL. */
  request(route: string, method: string, status: number, seconds: number): void {
    this.record({ kind: 'request', route, method, status, seconds });
  }

  stored(source: 'webhook' | 'ingest_api', count: number): void {
    if (count > 0) this.record({ kind: 'stored', source, count });
  }

  /** `reason` is one of a fixed few (modules/ingest's WebhookRefusal), never request data. */
  webhookRefused(reason: string): void {
    this.record({ kind: 'webhook_refused', reason });
  }

  /** One media download attempt's outcome, and the bytes it kept. */
  downloaded(outcome: 'done' | 'pending' | 'preparing' | 'gone' | 'failed', bytes: number): void {
    this.record({ kind: 'download', outcome, bytes });
  }

  /** One push of a reply to LINE: how it ended. */
  sent(outcome: 'sent' | 'pending' | 'failed'): void {
    this.record({ kind: 'send', outcome });
  }

  /** One message published to a HubSpot inbox. */
  hubspotPublished(): void {
    this.record({ kind: 'hubspot_published' });
  }

  /** One retention run of a hub: how it ended and the messages it removed. */
  retention(outcome: 'ok' | 'failed', removed: number, at: number): void {
    this.record({ kind: 'retention', outcome, removed, at });
  }

  /** The Prometheus text exposition. */
  async render(): Promise<{ contentType: string; body: string }> {
    await this.load();
    const registry = this.instruments?.registry;
    if (!registry) throw new Error('metrics are not loaded');
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}
