/**
 * A typed client for chatlog's read API (GET /api/line/:hubId/messages) and its reports
 * (GET /api/line/:hubId/reports), for Node 18+ and browsers:
 * no dependency but `fetch`. Its types follow the OpenAPI document (/openapi.json): chatlog's test
 * suite checks them, at compile time, against the route schemas the document is generated from, and
 * runs this client against a live server.
 */

export interface Message {
  /** "You" for a message from the account side, else the friend's display name. */
  sender: string;
  msg: string;
  contentType: string;
  /** UTC, `YYYY-MM-DDTHH:MM:SS.sssZ`. */
  createdAt: string;
}

export interface Contact {
  lineId: string;
  /** The HubSpot contact id, "" while the friend is not linked. */
  vid: string;
  /** The display name, "" while unknown. */
  name: string;
  messages: Message[];
}

/** Every error code chatlog can answer with (made from src/lib/errors.ts: scripts/client-error-codes.ts --write). */
export const ERROR_CODES = [
  'missing_api_key',
  'invalid_api_key',
  'invalid_signature',
  'invalid_hub_id',
  'forbidden',
  'duplicate_parameter',
  'invalid_date',
  'invalid_range',
  'range_too_long',
  'invalid_time_zone',
  'ambiguous_credentials',
  'insufficient_scope',
  'invalid_cursor',
  'invalid_limit',
  'invalid_wait',
  'cursor_expired',
  'invalid_query',
  'invalid_url',
  'content_pending',
  'content_not_found',
  'range_not_satisfiable',
  'contact_not_found',
  'no_channel_access_token',
  'rate_limited',
  'method_not_allowed',
  'not_found',
  'bad_request',
  'invalid_body',
  'payload_too_large',
  'unsupported_media_type',
  'request_header_too_large',
  'request_timeout',
  'internal_error',
  'unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** An answer that was not 200: its status, chatlog's stable code and message, and Retry-After. */
export class ChatlogError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode | 'unexpected_response',
    message: string,
    /** Seconds to wait before retrying, when the server said (429 and 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ChatlogError';
  }
}

export interface MessagesQuery {
  /** First day, `YYYY-MM-DD`, in the hub's time zone (or `tz`). */
  from?: string;
  /** Last day, included. */
  to?: string;
  /** IANA time zone to read from/to in, instead of the hub's. */
  tz?: string;
}

export interface ReportQuery {
  /** First day, `YYYY-MM-DD`, in the hub's time zone (or `tz`). */
  from: string;
  /** Last day, included: at most 366 days in all. */
  to: string;
  /** IANA time zone to read the days in, instead of the hub's. */
  tz?: string;
}

export interface ReportFigures {
  /** Messages from friends (every sender but "You"). */
  fromFriends: number;
  /** Messages from the account (sender "You"). */
  fromAccount: number;
  /** Contacts with at least one message. */
  contacts: number;
  /** Contacts whose first message ever (of those kept) falls here. */
  newContacts: number;
  /** Waits that start here: a friend's message that is the contact's first or follows the account's. */
  waits: number;
  answered: number;
  unanswered: number;
  /** The answered waits' response times in seconds, nearest rank; null when none was answered. */
  responseSeconds: { median: number | null; p90: number | null };
}

export interface Report {
  hubId: string;
  timeZone: string;
  from: string;
  to: string;
  totals: ReportFigures;
  /** Every day of the range, oldest first. */
  days: Array<ReportFigures & { day: string }>;
  /** Messages from friends by weekday (0 = Monday) and hour, in the zone. */
  hours: number[][];
}

export interface ChatlogClientOptions {
  /** Where chatlog answers, e.g. `https://chatlog.example.com`. */
  baseUrl: string;
  /** An API key of scope `read` (`chl_...`). */
  apiKey: string;
  fetch?: typeof fetch;
}

export class ChatlogClient {
  private readonly baseUrl: string;
  private readonly fetcher: typeof fetch;

  constructor(private readonly options: ChatlogClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetcher = options.fetch ?? fetch;
  }

  /** The hub's contacts with their messages in the range (every message when no range is given). */
  messages(hubId: string, query: MessagesQuery = {}): Promise<Contact[]> {
    return this.get<Contact[]>(`/api/line/${encodeURIComponent(hubId)}/messages`, query);
  }

  /** How well the account answered in the range: totals, one row a day, the weekday × hour grid. */
  report(hubId: string, query: ReportQuery): Promise<Report> {
    return this.get<Report>(`/api/line/${encodeURIComponent(hubId)}/reports`, query);
  }

  private async get<T>(path: string, query: { from?: string; to?: string; tz?: string }): Promise<T> {
    const params = new URLSearchParams({ apikey: this.options.apiKey });
    for (const name of ['from', 'to', 'tz'] as const) {
      const value = query[name];
      if (value !== undefined) params.set(name, value);
    }
    const response = await this.fetcher(`${this.baseUrl}${path}?${params}`, {
      headers: { accept: 'application/json' },
    });
    if (response.ok) return (await response.json()) as T;
    const retryAfter = Number(response.headers.get('retry-after'));
    const body = (await response.json().catch(() => undefined)) as
      | { error?: { code?: string; message?: string } }
      | undefined;
    const code = body?.error?.code;
    if (code && (ERROR_CODES as readonly string[]).includes(code)) {
      throw new ChatlogError(
        response.status,
        code as ErrorCode,
        body?.error?.message ?? code,
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
      );
    }
    throw new ChatlogError(response.status, 'unexpected_response', `unexpected answer ${response.status}`);
  }
}
