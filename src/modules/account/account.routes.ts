/**
 * The account screen over HTTP: /account (sign-in, or the keys of the account's hubs), each hub's
 * webhooks page (/account/hubs/:hubId/webhooks), their form posts, the copy/show request, and the
 * static files. Every answer carries a strict CSP and no-store; every state change needs a
 * same-origin request and the session's CSRF token.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseCookies, serializeCookie } from '../../lib/cookies.js';
import { AppError } from '../../lib/errors.js';
import { PAGE_SECURITY_HEADERS } from '../../lib/html.js';
import { httpErrors } from '../../lib/http.errors.js';
import { JSON_TYPE } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { packageRoot } from '../../lib/package-root.js';
import type { ContentStore } from '../../store/content/content-store.js';
import type { Store } from '../../store/store.js';
import type { WebhookService } from '../webhooks/webhooks.usecases.js';
import {
  declareConversationPaths,
  type PageKit,
  registerConversationRoutes,
} from './account.conversations.handlers.js';
import { AccountConversations } from './account.conversations.js';
import { accountErrors } from './account.errors.js';
import { type Language, pickLanguage, WORDS, type Words } from './account.i18n.js';
import { confirmRevokePage, keysPage, messagePage, signInPage, webhooksPath } from './account.pages.js';
import { type AccountService, SESSION_TTL_MS, type SignedIn } from './account.usecases.js';
import { AccountWebhooks } from './account.webhooks.js';
import { confirmRemovePage, type WebhooksPageArgs, webhooksPage } from './account.webhooks.pages.js';
import { WEBHOOKS_SCRIPT } from './account.webhooks.script.js';

export const SESSION_COOKIE = 'chatlog_session';
const SIGN_IN_COOKIE = 'chatlog_signin';
const LANGUAGE_COOKIE = 'chatlog_lang';
const FORM_BYTES = 16 * 1024;

/** public/ at the package's root. */
const publicDir = () => path.join(packageRoot(), 'public');
const ASSETS: Record<string, string> = {
  'account.js': 'text/javascript; charset=utf-8',
  'account.css': 'text/css; charset=utf-8',
};

/** A file of public/, read once: they do not change while chatlog runs. */
const publicFiles = new Map<string, Promise<Buffer>>();
function publicFile(name: string): Promise<Buffer> {
  let file = publicFiles.get(name);
  if (!file) {
    file = fs.promises.readFile(path.join(publicDir(), name));
    file.catch(() => publicFiles.delete(name));
    publicFiles.set(name, file);
  }
  return file;
}

export interface AccountRouteDeps {
  accounts: AccountService;
  /** Base URL of the API as clients reach it (for the API URL and the curl example). */
  publicUrl: string | undefined;
  methods: PathMethods;
  /** Outgoing webhooks: each hub's endpoints on a page of its own (CONTRACT §10, §14). */
  webhooks: WebhookService;
  /** The conversations, search, downloads and erasure of each hub (CONTRACT §13, §14). */
  store: Store;
  blobs: ContentStore;
  clock: () => number;
}

function isSecure(request: FastifyRequest, publicUrl: string | undefined): boolean {
  return request.protocol === 'https' || (publicUrl ?? '').startsWith('https:');
}

/** A POST from another site: refused before anything else (the CSRF token is the second lock). */
function isCrossSite(request: FastifyRequest): boolean {
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

function formOf(request: FastifyRequest): URLSearchParams {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

export function registerAccountRoutes(app: FastifyInstance, deps: AccountRouteDeps): void {
  const { accounts } = deps;
  const webhooks = new AccountWebhooks(deps.webhooks);
  // Another method on these paths is 405 (a page's path: from the not-found handler).
  deps.methods.declare(app, { url: '/account', allowed: ['GET', 'HEAD'] });
  deps.methods.declare(app, { url: '/account/hubs/:hubId/webhooks', allowed: ['GET', 'HEAD', 'POST'] });
  for (const url of [
    '/account/sign-in',
    '/account/sign-out',
    '/account/hubs/:hubId/keys',
    '/account/keys/:keyId/revoke',
    '/account/keys/:keyId/reveal',
    '/account/hubs/:hubId/webhooks/:endpointId/remove',
    '/account/hubs/:hubId/webhooks/:endpointId/retry',
  ]) {
    deps.methods.declare(app, { url, allowed: ['POST'] });
  }
  deps.methods.declare(app, { url: '/account/assets/:file', allowed: ['GET', 'HEAD'] });
  declareConversationPaths(app, deps.methods);
  const conversations = new AccountConversations({ store: deps.store, blobs: deps.blobs, clock: deps.clock });

  app.register(async (scope) => {
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
      serializeCookie(name, value, { path: '/account', maxAge, secure: isSecure(request, deps.publicUrl) });
    const signedInOf = (request: FastifyRequest): Promise<SignedIn | undefined> =>
      accounts.session(parseCookies(request.headers.cookie).get(SESSION_COOKIE));
    const html = (reply: FastifyReply, status: number, body: string) =>
      reply.code(status).type('text/html; charset=utf-8').send(body);
    const apiUrl = (request: FastifyRequest, hubId: string) => {
      const base =
        deps.publicUrl ?? `${isSecure(request, deps.publicUrl) ? 'https' : 'http'}://${request.headers.host}`;
      return `${base}/api/line/${hubId}/messages`;
    };

    const showSignIn = (
      request: FastifyRequest,
      reply: FastifyReply,
      status: number,
      extra: { email?: string; error?: string } = {},
    ) => {
      let token = parseCookies(request.headers.cookie).get(SIGN_IN_COOKIE);
      if (!token || token.length > 100) {
        token = randomBytes(24).toString('base64url');
        reply.header('Set-Cookie', cookie(request, SIGN_IN_COOKIE, token, 3600));
      }
      return html(
        reply,
        status,
        signInPage({ ...languageOf(request), token: accounts.signInToken(token), ...extra }),
      );
    };

    const showKeys = async (
      request: FastifyRequest,
      reply: FastifyReply,
      signedIn: SignedIn,
      notice?: { text: string; newKeyId?: string },
    ) => {
      const hubs = [];
      for (const hubId of signedIn.hubIds) {
        hubs.push({
          hubId,
          apiUrl: apiUrl(request, hubId),
          keys: await accounts.keysOf(signedIn, hubId),
          ...(await accounts.hubOverview(signedIn, hubId)),
          webhookCount: await webhooks.countOf(signedIn, hubId),
        });
      }
      return html(
        reply,
        200,
        keysPage({
          ...languageOf(request),
          email: signedIn.account.email,
          csrfToken: accounts.csrfToken(signedIn.sessionId),
          hubs,
          notice: notice?.text,
          newKeyId: notice?.newKeyId,
        }),
      );
    };

    /** A hub's webhooks page; throws not_found (a page saying so) for a hub not on the account. */
    const showWebhooks = async (
      request: FastifyRequest,
      reply: FastifyReply,
      signedIn: SignedIn,
      hubId: string,
      status: number,
      extra: Pick<WebhooksPageArgs, 'notice' | 'added' | 'refused'> = {},
    ) => {
      const endpoints = await webhooks.endpointsOf(signedIn, hubId);
      const { timeZone } = await accounts.hubOverview(signedIn, hubId);
      return html(
        reply,
        status,
        webhooksPage({
          ...languageOf(request),
          email: signedIn.account.email,
          csrfToken: accounts.csrfToken(signedIn.sessionId),
          hubId,
          timeZone,
          endpoints,
          ...extra,
        }),
      );
    };

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

    const kit: PageKit = {
      languageOf,
      signedInOf,
      html,
      requirePost,
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
    registerConversationRoutes(scope, kit, conversations);

    scope.get<{ Querystring: { lang?: string; issued?: string; revoked?: string } }>(
      '/account',
      async (request, reply) => {
        const lang = request.query.lang;
        if (lang === 'en' || lang === 'ja') {
          return reply
            .header('Set-Cookie', cookie(request, LANGUAGE_COOKIE, lang, 365 * 86_400))
            .redirect('/account', 303);
        }
        const signedIn = await signedInOf(request);
        if (!signedIn) return showSignIn(request, reply, 200);
        const { words } = languageOf(request);
        const mentioned = request.query.issued ?? request.query.revoked;
        if (mentioned) {
          const key = await accounts.keyOf(signedIn, mentioned);
          if (key) {
            const label = key.label || words.noLabel;
            return showKeys(request, reply, signedIn, {
              text: request.query.issued ? words.keyCreated(label) : words.keyRevoked(label),
              newKeyId: request.query.issued ? key.id : undefined,
            });
          }
        }
        return showKeys(request, reply, signedIn);
      },
    );

    scope.post('/account/sign-in', async (request, reply) => {
      const form = formOf(request);
      const { words, language } = languageOf(request);
      const signInCookie = parseCookies(request.headers.cookie).get(SIGN_IN_COOKIE);
      const token = form.get('csrf') ?? '';
      if (
        isCrossSite(request) ||
        !signInCookie ||
        token.length === 0 ||
        token !== accounts.signInToken(signInCookie)
      ) {
        return html(reply, 403, messagePage({ language, words, message: words.formExpired }));
      }
      const email = form.get('email') ?? '';
      const result = await accounts.signIn(email, form.get('password') ?? '', request.ip);
      if (!result.ok) {
        if (result.reason === 'throttled') {
          reply.header('Retry-After', String(result.retryAfterSeconds));
          return showSignIn(request, reply, 429, {
            email,
            error: words.throttled(Math.ceil(result.retryAfterSeconds / 60)),
          });
        }
        return showSignIn(request, reply, 401, { email, error: words.wrongCredentials });
      }
      return reply
        .header('Set-Cookie', [
          cookie(request, SESSION_COOKIE, result.sessionId, SESSION_TTL_MS / 1000),
          cookie(request, SIGN_IN_COOKIE, '', 0),
        ])
        .redirect('/account', 303);
    });

    scope.post('/account/sign-out', async (request, reply) => {
      const signedIn = await requirePost(request, reply, formOf(request).get('csrf') ?? undefined);
      if (!signedIn) return reply;
      await accounts.signOut(signedIn.sessionId);
      return reply.header('Set-Cookie', cookie(request, SESSION_COOKIE, '', 0)).redirect('/account', 303);
    });

    scope.post<{ Params: { hubId: string } }>('/account/hubs/:hubId/keys', async (request, reply) => {
      const form = formOf(request);
      const signedIn = await requirePost(request, reply, form.get('csrf') ?? undefined);
      if (!signedIn) return reply;
      const key = await accounts.issueKey(
        signedIn,
        request.params.hubId,
        form.get('label') ?? '',
        form.get('scope') ?? 'read',
      );
      return reply.redirect(`/account?issued=${encodeURIComponent(key.id)}`, 303);
    });

    scope.post<{ Params: { keyId: string } }>('/account/keys/:keyId/revoke', async (request, reply) => {
      const form = formOf(request);
      const signedIn = await requirePost(request, reply, form.get('csrf') ?? undefined);
      if (!signedIn) return reply;
      if (form.get('confirm') !== 'yes') {
        const key = await accounts.keyOf(signedIn, request.params.keyId);
        if (!key) throw accountErrors.keyNotFound();
        return html(
          reply,
          200,
          confirmRevokePage({
            ...languageOf(request),
            csrfToken: accounts.csrfToken(signedIn.sessionId),
            key,
          }),
        );
      }
      const key = await accounts.revokeKey(signedIn, request.params.keyId);
      return reply.redirect(`/account?revoked=${encodeURIComponent(key.id)}`, 303);
    });

    scope.get<{
      Params: { hubId: string };
      Querystring: { lang?: string; removed?: string; retried?: string };
    }>('/account/hubs/:hubId/webhooks', async (request, reply) => {
      const path = webhooksPath(request.params.hubId);
      const lang = request.query.lang;
      if (lang === 'en' || lang === 'ja') {
        return reply
          .header('Set-Cookie', cookie(request, LANGUAGE_COOKIE, lang, 365 * 86_400))
          .redirect(path, 303);
      }
      const signedIn = await signedInOf(request);
      if (!signedIn) return reply.redirect('/account', 303);
      const { words } = languageOf(request);
      const { removed, retried } = request.query;
      const retriedCount = retried !== undefined && /^\d{1,9}$/.test(retried) ? Number(retried) : undefined;
      return showWebhooks(request, reply, signedIn, request.params.hubId, 200, {
        notice:
          removed !== undefined
            ? words.endpointRemoved
            : retriedCount !== undefined
              ? words.retried(retriedCount)
              : undefined,
      });
    });

    // Adding an endpoint answers with the page itself, not a redirect: the one page with its secret.
    scope.post<{ Params: { hubId: string } }>('/account/hubs/:hubId/webhooks', async (request, reply) => {
      const form = formOf(request);
      const signedIn = await requirePost(request, reply, form.get('csrf') ?? undefined);
      if (!signedIn) return reply;
      const { hubId } = request.params;
      const url = form.get('url') ?? '';
      const { words } = languageOf(request);
      let added: Awaited<ReturnType<AccountWebhooks['add']>>;
      try {
        added = await webhooks.add(signedIn, hubId, url);
      } catch (error) {
        // A URL the rules refuse (webhooks.url.ts): the form again, with the URL and why.
        if (!(error instanceof AppError) || error.status !== 400) throw error;
        const reason = error.message.replace(/^url is refused: /, '');
        return showWebhooks(request, reply, signedIn, hubId, 400, {
          refused: { url: url.slice(0, 2048), message: words.urlRefused(reason) },
        });
      }
      return showWebhooks(request, reply, signedIn, hubId, 200, {
        notice: words.endpointAdded,
        added: { url: added.url, secret: added.secret },
      });
    });

    scope.post<{ Params: { hubId: string; endpointId: string } }>(
      '/account/hubs/:hubId/webhooks/:endpointId/remove',
      async (request, reply) => {
        const form = formOf(request);
        const signedIn = await requirePost(request, reply, form.get('csrf') ?? undefined);
        if (!signedIn) return reply;
        const { hubId, endpointId } = request.params;
        const endpoint = await webhooks.endpointOf(signedIn, hubId, endpointId);
        if (!endpoint) {
          const { language, words } = languageOf(request);
          return html(reply, 404, messagePage({ language, words, message: words.endpointNotFound }));
        }
        if (form.get('confirm') !== 'yes') {
          return html(
            reply,
            200,
            confirmRemovePage({
              ...languageOf(request),
              csrfToken: accounts.csrfToken(signedIn.sessionId),
              hubId,
              endpoint,
            }),
          );
        }
        await webhooks.remove(signedIn, hubId, endpointId);
        return reply.redirect(`${webhooksPath(hubId)}?removed=1`, 303);
      },
    );

    scope.post<{ Params: { hubId: string; endpointId: string } }>(
      '/account/hubs/:hubId/webhooks/:endpointId/retry',
      async (request, reply) => {
        const form = formOf(request);
        const signedIn = await requirePost(request, reply, form.get('csrf') ?? undefined);
        if (!signedIn) return reply;
        const { hubId, endpointId } = request.params;
        if (!(await webhooks.endpointOf(signedIn, hubId, endpointId))) {
          const { language, words } = languageOf(request);
          return html(reply, 404, messagePage({ language, words, message: words.endpointNotFound }));
        }
        const count = await webhooks.retryNow(signedIn, hubId, endpointId);
        return reply.redirect(`${webhooksPath(hubId)}?retried=${count}`, 303);
      },
    );

    // The copy and show icons: the one answer of the screen that carries a full key.
    scope.post<{ Params: { keyId: string } }>('/account/keys/:keyId/reveal', async (request, reply) => {
      if (isCrossSite(request)) throw accountErrors.crossSite();
      const signedIn = await signedInOf(request);
      if (!signedIn) throw accountErrors.signInFirst();
      const token = request.headers['x-csrf-token'];
      if (!accounts.checkCsrf(signedIn.sessionId, typeof token === 'string' ? token : undefined)) {
        throw accountErrors.badCsrfToken();
      }
      const key = await accounts.revealKey(signedIn, request.params.keyId);
      return reply.type(JSON_TYPE).send({ key });
    });

    scope.get<{ Params: { file: string } }>('/account/assets/:file', async (request, reply) => {
      if (request.params.file === 'webhooks.js') {
        return reply
          .type('text/javascript; charset=utf-8')
          .header('Cache-Control', 'no-cache')
          .send(WEBHOOKS_SCRIPT);
      }
      const type = ASSETS[request.params.file];
      if (!type) throw httpErrors.notFound();
      return reply
        .type(type)
        .header('Cache-Control', 'no-cache')
        .send(await publicFile(request.params.file));
    });
  });
}
