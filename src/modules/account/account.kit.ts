/**
 * What every page of the account screen shares (its PageKit): the language a request asks for, the
 * signed-in account, a page's answer, a form post's checks (same site, signed in, the session's CSRF
 * token), cookies, and the scope's own rules (forms parsed, the pages' security headers, one value
 * per query parameter, a refused form post answered with a page). The pages are in
 * account.keys.handlers.ts, account.webhooks.handlers.ts and account.conversations.handlers.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseCookies, serializeCookie } from '../../lib/cookies.js';
import { AppError } from '../../lib/errors.js';
import { PAGE_SECURITY_HEADERS } from '../../lib/html.js';
import type { KeySummary } from '../keys/keys.usecases.js';
import { type Language, pickLanguage, WORDS, type Words } from './account.i18n.js';
import { messagePage } from './account.pages.js';
import type { AccountService, SignedIn } from './account.usecases.js';

export const SESSION_COOKIE = 'chatlog_session';
export const SIGN_IN_COOKIE = 'chatlog_signin';
export const LANGUAGE_COOKIE = 'chatlog_lang';
const FORM_BYTES = 16 * 1024;

export interface PageKit {
  languageOf(request: FastifyRequest): { language: Language; words: Words };
  signedInOf(request: FastifyRequest): Promise<SignedIn | undefined>;
  html(reply: FastifyReply, status: number, body: string): FastifyReply;
  /** The signed-in account of a same-site form post with the session's token; else the answer is sent. */
  requirePost(
    request: FastifyRequest,
    reply: FastifyReply,
    token: string | undefined,
  ): Promise<SignedIn | undefined>;
  csrfToken(signedIn: SignedIn): string;
  /** The hub's keys (the audit page names each record's key by its label). */
  keysOf(signedIn: SignedIn, hubId: string): Promise<KeySummary[]>;
  /** `?lang=en|ja`: the language cookie set and a redirect to `path`; undefined without it. */
  switchLanguage(request: FastifyRequest, reply: FastifyReply, path: string): FastifyReply | undefined;
  /** A cookie of the screen (path /account, Secure behind https). */
  cookie(request: FastifyRequest, name: string, value: string, maxAge: number | undefined): string;
  /** The read API's URL of a hub, as clients reach it. */
  apiUrl(request: FastifyRequest, hubId: string): string;
  /** The MCP server's URL (CONTRACT §15), as assistants reach it. */
  mcpUrl(request: FastifyRequest): string;
  /** chatlog's own base URL, as browsers reach it (where HubSpot sends an owner back). */
  baseUrl(request: FastifyRequest): string;
}

function isSecure(request: FastifyRequest, publicUrl: string | undefined): boolean {
  return request.protocol === 'https' || (publicUrl ?? '').startsWith('https:');
}

/** A POST from another site: refused before anything else (the CSRF token is the second lock). */
export function isCrossSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = request.headers.origin;
  // "null": the page's Referrer-Policy (no-referrer) hides the origin of its own form posts;
  // Sec-Fetch-Site, the CSRF token and the SameSite cookie still tell a cross-site post.
  if (origin === undefined || origin === 'null') return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}

export function formOf(request: FastifyRequest): URLSearchParams {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

/** Sets the account screen's rules on `scope` and makes its PageKit. */
export function accountScope(
  scope: FastifyInstance,
  accounts: AccountService,
  publicUrl: string | undefined,
): PageKit {
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BYTES },
    (_request, body, done) => done(null, new URLSearchParams(body as string)),
  );
  scope.addHook('onSend', async (_request, reply, payload) => {
    // Cache-Control: private, no-store comes with every answer (app.ts); the assets say otherwise.
    // Kept media bring their own policy (a sandbox): it is kept.
    const own = reply.getHeader('Content-Security-Policy');
    reply.headers(PAGE_SECURITY_HEADERS);
    if (own !== undefined) reply.header('Content-Security-Policy', own);
    return payload;
  });

  // One value per query parameter on these pages, the last when a URL repeats one (?from=…&from=…):
  // the pages read strings, and a list would be a fault (500) instead of the page.
  scope.addHook('preValidation', async (request) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (!query) return;
    for (const [name, value] of Object.entries(query)) {
      if (Array.isArray(value)) query[name] = value.at(-1);
    }
  });

  // A refused form post gets a page saying why; the copy request (and any fault) keeps JSON.
  scope.setErrorHandler((error, request, reply) => {
    if (!(error instanceof AppError) || request.url.endsWith('/reveal') || error.status >= 500) throw error;
    const { language, words } = languageOf(request);
    const message = error.status === 404 ? words.notFound : error.message;
    return html(reply, error.status, messagePage({ language, words, message }));
  });

  const languageOf = (request: FastifyRequest): { language: Language; words: Words } => {
    const language = pickLanguage(
      parseCookies(request.headers.cookie).get(LANGUAGE_COOKIE),
      request.headers['accept-language'],
    );
    return { language, words: WORDS[language] };
  };
  const cookie = (request: FastifyRequest, name: string, value: string, maxAge: number | undefined) =>
    serializeCookie(name, value, { path: '/account', maxAge, secure: isSecure(request, publicUrl) });
  const signedInOf = (request: FastifyRequest): Promise<SignedIn | undefined> =>
    accounts.session(parseCookies(request.headers.cookie).get(SESSION_COOKIE));
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).type('text/html; charset=utf-8').send(body);
  const baseUrl = (request: FastifyRequest) =>
    (publicUrl ?? `${isSecure(request, publicUrl) ? 'https' : 'http'}://${request.headers.host}`).replace(
      /\/+$/,
      '',
    );
  const apiUrl = (request: FastifyRequest, hubId: string) => `${baseUrl(request)}/api/line/${hubId}/messages`;
  const mcpUrl = (request: FastifyRequest) => `${baseUrl(request)}/mcp`;

  /** The signed-in account of a form post with a valid token; otherwise the answer is sent. */
  const requirePost = async (request: FastifyRequest, reply: FastifyReply, token: string | undefined) => {
    const { words, language } = languageOf(request);
    if (isCrossSite(request)) {
      html(reply, 403, messagePage({ language, words, message: words.formExpired }));
      return undefined;
    }
    const signedIn = await signedInOf(request);
    if (!signedIn) {
      reply.redirect('/account', 303);
      return undefined;
    }
    if (!accounts.checkCsrf(signedIn.sessionId, token)) {
      html(reply, 403, messagePage({ language, words, message: words.formExpired }));
      return undefined;
    }
    return signedIn;
  };

  return {
    languageOf,
    signedInOf,
    html,
    requirePost,
    cookie,
    apiUrl,
    mcpUrl,
    baseUrl,
    csrfToken: (signedIn) => accounts.csrfToken(signedIn.sessionId),
    keysOf: (signedIn, hubId) => accounts.keysOf(signedIn, hubId),
    switchLanguage: (request, reply, path) => {
      const lang = (request.query as { lang?: string }).lang;
      if (lang !== 'en' && lang !== 'ja') return undefined;
      return reply
        .header('Set-Cookie', cookie(request, LANGUAGE_COOKIE, lang, 365 * 86_400))
        .redirect(path, 303);
    },
  };
}
