/**
 * Display names from LINE's profile endpoints, for hubs that have a channel access token.
 * Best effort: a failed or slow look-up never blocks storing a message, and the token never
 * reaches a log line.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SourceKind } from '../../store/store.js';

export interface ProfileLookup {
  lineId: string;
  kind: SourceKind | null;
  chatId: string | null;
}

const LOOKUP_TIMEOUT_MS = 5_000;

export function profilePath(lookup: ProfileLookup): string {
  const user = encodeURIComponent(lookup.lineId);
  if (lookup.kind === 'group' && lookup.chatId)
    return `/v2/bot/group/${encodeURIComponent(lookup.chatId)}/member/${user}`;
  if (lookup.kind === 'room' && lookup.chatId)
    return `/v2/bot/room/${encodeURIComponent(lookup.chatId)}/member/${user}`;
  return `/v2/bot/profile/${user}`;
}

/** The friend's display name, or undefined when LINE does not give one. */
export async function fetchDisplayName(
  baseUrl: string,
  accessToken: string,
  lookup: ProfileLookup,
  log: FastifyBaseLogger,
): Promise<string | undefined> {
  try {
    const response = await fetch(baseUrl + profilePath(lookup), {
      headers: { Authorization: `Bearer ${accessToken}` },
      signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS),
    });
    if (!response.ok) {
      log.warn({ status: response.status }, 'LINE profile look-up refused');
      return undefined;
    }
    const body = (await response.json()) as { displayName?: unknown };
    return typeof body.displayName === 'string' && body.displayName !== ''
      ? body.displayName.slice(0, 200)
      : undefined;
  } catch (error) {
    log.warn({ reason: (error as Error).name }, 'LINE profile look-up failed');
    return undefined;
  }
}
