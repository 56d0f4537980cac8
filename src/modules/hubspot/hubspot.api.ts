/**
 * HubSpot's APIs that chatlog calls (CONTRACT §18), on `HUBSPOT_API_BASE_URL`, as HubSpot documents
 * them (docs/research/hubspot-custom-channels.md has each source):
 *
 *   POST /conversations/custom-channels/2026-09/{channelId}/messages   publish a message (Bearer)
 *   POST /oauth/2026-03/token                                          a token for a refresh token
 *
 * The custom channels are called at 2026-09, HubSpot's newest version ("for new integrations,
 * always use the latest date version"; §18 names 2026-03, whose message shapes are the same, but
 * whose set has no inbox list). One call, never throwing: what HubSpot answered, as the publisher
 * needs it. A token goes only in the Authorization header or a form body, never into an outcome.
 */
export const CUSTOM_CHANNELS_VERSION = '2026-09';
export const OAUTH_VERSION = '2026-03';
/** Shorter than the publisher's lease margin: no call outlives the lease it began under. */
const CALL_TIMEOUT_MS = 10_000;

export type HubspotAnswer<T> =
  | { kind: 'ok'; value: T }
  /** The access token was refused: refresh it, once. */
  | { kind: 'unauthorized'; reason: string }
  /** 429, 5xx, 423, 477, the network: later (Retry-After when HubSpot gave one). */
  | { kind: 'retry'; reason: string; retryAfterMs?: number | undefined }
  /** Another 4xx: HubSpot's words. */
  | { kind: 'refused'; status: number; reason: string };

/** HubSpot's words from an error body (`message`, and the first of `errors[].message`). */
function hubspotWords(status: number, body: unknown): string {
  const record = (body ?? {}) as { message?: unknown; category?: unknown; errors?: unknown };
  const parts: string[] = [];
  if (typeof record.category === 'string') parts.push(record.category);
  if (typeof record.message === 'string') parts.push(record.message);
  if (Array.isArray(record.errors)) {
    for (const error of record.errors.slice(0, 3)) {
      const message = (error as { message?: unknown } | null)?.message;
      if (typeof message === 'string') parts.push(message);
    }
  }
  const words = parts.join(': ').slice(0, 500);
  return `HubSpot answered ${status}${words ? `: ${words}` : ''}`;
}

async function call<T>(
  url: string,
  init: RequestInit,
  read: (body: unknown) => T | undefined,
): Promise<HubspotAnswer<T>> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
    return {
      kind: 'retry',
      reason: timedOut ? 'HubSpot did not answer in time' : 'HubSpot could not be reached',
    };
  }
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (res.ok) {
    const value = read(body);
    return value === undefined
      ? { kind: 'retry', reason: `HubSpot answered ${res.status} with a body chatlog could not read` }
      : { kind: 'ok', value };
  }
  const reason = hubspotWords(res.status, body);
  if (res.status === 401) return { kind: 'unauthorized', reason };
  if (res.status === 429 || res.status === 423 || res.status === 477 || res.status >= 500) {
    const after = res.headers.get('retry-after');
    const seconds = after !== null && /^\d{1,6}$/.test(after) ? Number(after) : undefined;
    return { kind: 'retry', reason, retryAfterMs: seconds === undefined ? undefined : seconds * 1000 };
  }
  return { kind: 'refused', status: res.status, reason };
}

const base = (url: string) => url.replace(/\/+$/, '');

/** HubSpot's id of what it made (a string, or a number in some answers), or `fallback`. */
function idOf(body: unknown, fallback?: string): { id: string } | undefined {
  const id = (body as { id?: unknown } | undefined)?.id ?? fallback;
  return typeof id === 'string' || typeof id === 'number' ? { id: String(id) } : undefined;
}

export interface DeliveryIdentifier {
  type: 'CHANNEL_SPECIFIC_OPAQUE_ID';
  value: string;
}

/** HubSpot's `ChannelIntegrationMessageEgg`, the fields chatlog sends. */
export interface PublishedMessage {
  channelAccountId: string;
  messageDirection: 'INCOMING' | 'OUTGOING';
  senders: Array<{ deliveryIdentifier: DeliveryIdentifier; name?: string }>;
  recipients: Array<{ deliveryIdentifier: DeliveryIdentifier; name?: string }>;
  text: string;
  timestamp: string;
  attachments: [];
  integrationThreadId: string;
  integrationIdempotencyId: string;
  associateWithContactId?: number;
}

export function publishMessage(
  apiBaseUrl: string,
  accessToken: string,
  channelId: string,
  message: PublishedMessage,
): Promise<HubspotAnswer<{ id: string }>> {
  return call(
    `${base(apiBaseUrl)}/conversations/custom-channels/${CUSTOM_CHANNELS_VERSION}/${encodeURIComponent(channelId)}/messages`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(message),
    },
    (body) => idOf(body),
  );
}

export interface OAuthTokens {
  accessToken: string;
  refreshToken: string;
  /** Seconds the access token lasts. */
  expiresIn: number;
}

function readTokens(body: unknown): OAuthTokens | undefined {
  const b = (body ?? {}) as { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown };
  if (typeof b.access_token !== 'string' || typeof b.refresh_token !== 'string') return undefined;
  const expiresIn = Number(b.expires_in);
  if (!Number.isFinite(expiresIn) || expiresIn <= 0) return undefined;
  return { accessToken: b.access_token, refreshToken: b.refresh_token, expiresIn };
}

/** The OAuth client: the app's id and secret (CHATLOG_HUBSPOT_CLIENT_ID, _CLIENT_SECRET). */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

/** HubSpot's token endpoint (form-encoded): tokens for one grant of the app's client. */
function grantTokens(
  apiBaseUrl: string,
  client: OAuthClient,
  grant: Record<string, string>,
): Promise<HubspotAnswer<OAuthTokens>> {
  return call(
    `${base(apiBaseUrl)}/oauth/${OAUTH_VERSION}/token`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...grant,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }).toString(),
    },
    readTokens,
  );
}

/** New tokens for a refresh token. */
export function refreshTokens(
  apiBaseUrl: string,
  client: OAuthClient,
  refreshToken: string,
): Promise<HubspotAnswer<OAuthTokens>> {
  return grantTokens(apiBaseUrl, client, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

/** Sets the status of a message an agent wrote (its send to LINE ended): SENT, or FAILED with why. */
export function setMessageStatus(
  apiBaseUrl: string,
  accessToken: string,
  channelId: string,
  messageId: string,
  status: { statusType: 'SENT' } | { statusType: 'FAILED'; errorMessage: string },
): Promise<HubspotAnswer<true>> {
  return call(
    `${base(apiBaseUrl)}/conversations/custom-channels/${CUSTOM_CHANNELS_VERSION}/${encodeURIComponent(channelId)}/messages/${encodeURIComponent(messageId)}`,
    {
      method: 'PATCH',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(status),
    },
    () => true,
  );
}

/** Tokens for the code HubSpot's authorize page gave back (the `Connect HubSpot` step). */
export function exchangeCode(
  apiBaseUrl: string,
  client: OAuthClient,
  code: string,
  redirectUri: string,
): Promise<HubspotAnswer<OAuthTokens>> {
  return grantTokens(apiBaseUrl, client, {
    grant_type: 'authorization_code',
    redirect_uri: redirectUri,
    code,
  });
}

/** The HubSpot account (portal) an access token is for (HubSpot's access-token metadata). */
export function portalOf(
  apiBaseUrl: string,
  accessToken: string,
): Promise<HubspotAnswer<{ portalId: string }>> {
  return call(
    `${base(apiBaseUrl)}/oauth/v1/access-tokens/${encodeURIComponent(accessToken)}`,
    { method: 'GET' },
    (body) => {
      const hubId = (body as { hub_id?: unknown } | undefined)?.hub_id;
      return typeof hubId === 'number' || typeof hubId === 'string' ? { portalId: String(hubId) } : undefined;
    },
  );
}

export interface Inbox {
  id: string;
  name: string;
  type: string;
}

/** The portal's inboxes and help desks, not archived (every page). */
export async function listInboxes(apiBaseUrl: string, accessToken: string): Promise<HubspotAnswer<Inbox[]>> {
  const inboxes: Inbox[] = [];
  let after: string | undefined;
  for (let page = 0; page < 50; page++) {
    const query = new URLSearchParams({ limit: '100', archived: 'false', ...(after && { after }) });
    const answer = await call(
      `${base(apiBaseUrl)}/conversations/conversations/${CUSTOM_CHANNELS_VERSION}/inboxes?${query}`,
      { method: 'GET', headers: { authorization: `Bearer ${accessToken}` } },
      (body) => {
        const b = body as { results?: unknown; paging?: { next?: { after?: unknown } } } | undefined;
        if (!Array.isArray(b?.results)) return undefined;
        const results = b.results.flatMap(
          (r: { id?: unknown; name?: unknown; type?: unknown; archived?: unknown }) =>
            (typeof r?.id === 'string' || typeof r?.id === 'number') &&
            typeof r.name === 'string' &&
            r.archived !== true
              ? [{ id: String(r.id), name: r.name, type: typeof r.type === 'string' ? r.type : 'INBOX' }]
              : [],
        );
        const next = b.paging?.next?.after;
        return { results, next: typeof next === 'string' && next !== '' ? next : undefined };
      },
    );
    if (answer.kind !== 'ok') return answer;
    inboxes.push(...answer.value.results);
    after = answer.value.next;
    if (after === undefined) break;
  }
  return { kind: 'ok', value: inboxes };
}

const channelPath = (apiBaseUrl: string, channelId: string) =>
  `${base(apiBaseUrl)}/conversations/custom-channels/${CUSTOM_CHANNELS_VERSION}/${encodeURIComponent(channelId)}`;

/** A channel account of chatlog's channel in the inbox: the hub's place in HubSpot. */
export function createChannelAccount(
  apiBaseUrl: string,
  accessToken: string,
  channelId: string,
  account: { inboxId: string; name: string; deliveryIdentifier: DeliveryIdentifier },
): Promise<HubspotAnswer<{ id: string }>> {
  return call(
    `${channelPath(apiBaseUrl, channelId)}/channel-accounts`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...account, authorized: true }),
    },
    (body) => idOf(body),
  );
}

/** `authorized: false` disables the channel account (HubSpot has no way to delete one). */
export function disableChannelAccount(
  apiBaseUrl: string,
  accessToken: string,
  channelId: string,
  channelAccountId: string,
): Promise<HubspotAnswer<true>> {
  return call(
    `${channelPath(apiBaseUrl, channelId)}/channel-accounts/${encodeURIComponent(channelAccountId)}`,
    {
      method: 'PATCH',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ authorized: false }),
    },
    () => true,
  );
}

/** The developer account's key and the app's id: what registering the channel takes. */
export interface Developer {
  apiKey: string;
  appId: string;
}

/** chatlog's custom channel as HubSpot keeps it: LINE text both ways, one thread per friend. */
export function channelDefinition(webhookUrl: string) {
  return {
    name: 'LINE (chatlog)',
    webhookUrl,
    channelDescription: "LINE Official Account conversations, kept by chatlog; agents' replies go to LINE",
    capabilities: {
      deliveryIdentifierTypes: ['CHANNEL_SPECIFIC_OPAQUE_ID'],
      threadingModel: 'INTEGRATION_THREAD_ID',
      allowOutgoingMessages: true,
      allowConversationStart: false,
      allowInlineImages: false,
      allowMultipleRecipients: false,
      richText: [],
      outgoingAttachmentTypes: [],
      allowedFileAttachmentMimeTypes: [],
      maxFileAttachmentCount: 0,
      maxFileAttachmentSizeBytes: 0,
      maxTotalFileAttachmentSizeBytes: 0,
    },
  };
}

/**
 * Registers chatlog's custom channel with the developer key (HubSpot's guide: `hapikey` and `appId`
 * in the query), or, given the id of one registered before, updates it (its webhook URL).
 */
export function registerChannel(
  apiBaseUrl: string,
  developer: Developer,
  webhookUrl: string,
  existingId: string | undefined,
): Promise<HubspotAnswer<{ id: string }>> {
  const query = new URLSearchParams({ hapikey: developer.apiKey, appId: developer.appId });
  const root = `${base(apiBaseUrl)}/conversations/custom-channels/${CUSTOM_CHANNELS_VERSION}`;
  return call(
    existingId === undefined ? `${root}?${query}` : `${root}/${encodeURIComponent(existingId)}?${query}`,
    {
      method: existingId === undefined ? 'POST' : 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(channelDefinition(webhookUrl)),
    },
    (body) => idOf(body, existingId),
  );
}
