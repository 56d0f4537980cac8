/**
 * Data in, live: LINE webhooks, account-side messages from the ingest API, and linking a LINE
 * friend to a HubSpot contact. Everything a request brings commits durably, all or nothing,
 * before the answer.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { parseTimestamp, TIMESTAMP_RULE } from '../../lib/calendar.js';
import type { AppError } from '../../lib/errors.js';
import { httpErrors } from '../../lib/http.errors.js';
import type { SecretBox } from '../../lib/secrets.js';
import type { Hub, IngestOperation, IngestOutcome, Store } from '../../store/store.js';
import { ContactService } from '../contacts/contacts.usecases.js';
import { isValidHubId } from '../hubs/hubs.usecases.js';
import { ingestErrors } from './ingest.errors.js';
import type { AccountMessage } from './ingest.schemas.js';
import { isValidLineSignature, lineSignatureProblem, type WebhookRefusal } from './line.signature.js';
import { InvalidWebhookBody, translateWebhook } from './line.webhook.js';

export interface IngestDeps {
  store: Pick<Store, 'hubs' | 'messages' | 'contacts'>;
  secrets: SecretBox;
  log: FastifyBaseLogger;
  lineApiBaseUrl: string;
  clock?: () => number;
  /** Told how many messages each request stored (for metrics). */
  onStored?: (source: 'webhook' | 'ingest_api', count: number) => void;
  /** Told why each refused webhook was refused (for metrics). */
  onWebhookRefused?: (reason: WebhookRefusal) => void;
}

function invalidBody(message: string): AppError {
  return httpErrors.invalidBody(message);
}

/** How long a hub's channel secret, once it verified a signature, is reused without reading the store. */
const HUB_SECRET_REUSE_MS = 1000;
const HUB_SECRETS_KEPT = 10_000;

export class IngestService {
  private readonly clock: () => number;
  /** Contact writes and LINE display names. */
  readonly contacts: ContactService;
  private readonly recentHubs = new Map<string, { hub: Hub; secret: string; until: number }>();

  constructor(private readonly deps: IngestDeps) {
    this.clock = deps.clock ?? Date.now;
    this.contacts = new ContactService({ ...deps, clock: this.clock });
  }

  /**
   * The hub, if the body is signed with its channel secret. A secret that verified a signature in
   * the last second is tried first, without a round trip to the store (LINE sends bursts); when it
   * does not verify, the store is read, so a new secret works at once.
   */
  private async verifiedHub(
    hubId: string,
    rawBody: Buffer,
    signature: string | undefined,
  ): Promise<Hub | WebhookRefusal> {
    const recent = this.recentHubs.get(hubId);
    if (recent && recent.until > Date.now() && isValidLineSignature(recent.secret, rawBody, signature)) {
      return recent.hub;
    }
    const hub = await this.deps.store.hubs.get(hubId);
    if (!hub) return 'unknown_hub';
    if (!hub.lineChannelSecretEncrypted) return 'no_channel_secret';
    const secret = this.deps.secrets.decrypt(hub.lineChannelSecretEncrypted);
    const problem = lineSignatureProblem(secret, rawBody, signature);
    if (problem) return problem;
    if (this.recentHubs.size >= HUB_SECRETS_KEPT) this.recentHubs.clear();
    this.recentHubs.set(hubId, { hub, secret, until: Date.now() + HUB_SECRET_REUSE_MS });
    return hub;
  }

  /**
   * POST /webhooks/line/:hubId. The signature is checked before anything is parsed; an unknown
   * hub, a hub without a channel secret and a bad signature all answer the same 401.
   */
  async receiveWebhook(
    hubId: string,
    rawBody: Buffer,
    signature: string | undefined,
    contentType: string | undefined,
    log: FastifyBaseLogger = this.deps.log,
  ) {
    const hub = isValidHubId(hubId) ? await this.verifiedHub(hubId, rawBody, signature) : 'invalid_hub_id';
    if (typeof hub === 'string') {
      // The client is told no more than 401 (LINE's own answer to a wrong signature); the operator
      // is told which. Never the body, the secret or the signature.
      log.warn({ hubId: hubId.slice(0, 40), reason: hub }, 'LINE webhook refused');
      this.deps.onWebhookRefused?.(hub);
      throw ingestErrors.invalidSignature();
    }
    if (!/^application\/json\s*(;|$)/i.test(contentType ?? '')) throw httpErrors.notJsonBody();
    let body: unknown;
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw invalidBody('the body is not valid JSON');
    }
    const now = this.clock();
    let translation: ReturnType<typeof translateWebhook>;
    try {
      translation = translateWebhook(body, now);
    } catch (error) {
      if (error instanceof InvalidWebhookBody) throw invalidBody(error.message);
      throw error;
    }
    if (translation.operations.length === 0) return;
    const { untimed, unidentified } = translation;
    if (untimed > 0 || unidentified > 0) {
      // Kept (LINE has no history to ask again), but the operator should know LINE sent less.
      log.warn(
        { hubId, untimed, unidentified },
        'LINE message events without a usable timestamp (stored at their arrival time) or without the sender id (stored under an empty lineId)',
      );
    }
    const outcome = await this.deps.store.messages.ingest(hubId, translation.operations, now);
    this.deps.onStored?.('webhook', outcome.stored);
    this.contacts.lookUpNames(hub, translation.operations, translation.profileCandidates, outcome);
  }

  /**
   * POST /ingest/line/:hubId/messages: account-side messages, all or nothing. Their shape was
   * validated by the route's schema (ingest.schemas.ts); what is left is reading the times.
   */
  async recordMessages(hubId: string, messages: readonly AccountMessage[]): Promise<IngestOutcome> {
    const now = this.clock();
    const operations: IngestOperation[] = messages.map((message, index) =>
      this.toOperation(message, index, now),
    );
    const outcome = await this.deps.store.messages.ingest(hubId, operations, now);
    this.deps.onStored?.('ingest_api', outcome.stored);
    return outcome;
  }

  private toOperation(message: AccountMessage, index: number, now: number): IngestOperation {
    let createdAt = now;
    if (message.createdAt !== undefined && message.createdAt !== null) {
      const parsed = parseTimestamp(message.createdAt);
      if (parsed === undefined) {
        throw invalidBody(`body[${index}].createdAt: ${TIMESTAMP_RULE}`);
      }
      createdAt = parsed;
    }
    const id = message.id ?? randomUUID();
    return {
      kind: 'message',
      lineId: message.lineId,
      sender: message.sender ?? 'You',
      msg: message.msg,
      contentType: message.contentType ?? 'text',
      createdAt,
      sourceId: `ingest:${id}`,
      // The message id (CONTRACT part two) is the record's id when it is one; else the store assigns one.
      id,
      sourceKind: null,
      sourceChatId: null,
    };
  }
}
