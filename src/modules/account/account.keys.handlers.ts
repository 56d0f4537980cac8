/**
 * The account screen's own pages: /account (sign-in, or the keys of the account's hubs), signing in
 * and out, issuing and revoking a key, and the copy/show request, the one answer of the screen that
 * carries a full key.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseCookies } from '../../lib/cookies.js';
import { JSON_TYPE } from '../../lib/http.js';
import { accountErrors } from './account.errors.js';
import {
  formOf,
  isCrossSite,
  LANGUAGE_COOKIE,
  type PageKit,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
} from './account.kit.js';
import { confirmRevokePage, keysPage, messagePage, signInPage } from './account.pages.js';
import { type AccountService, SESSION_TTL_MS, type SignedIn } from './account.usecases.js';
import type { AccountWebhooks } from './account.webhooks.js';

export function registerKeyPages(
  scope: FastifyInstance,
  kit: PageKit,
  accounts: AccountService,
  webhooks: AccountWebhooks,
): void {
  const { languageOf, signedInOf, html, requirePost, cookie, apiUrl, mcpUrl } = kit;

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
        mcpUrl: mcpUrl(request),
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
}
