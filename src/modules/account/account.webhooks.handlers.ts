/**
 * Each hub's webhooks page (/account/hubs/:hubId/webhooks, CONTRACT §10, §14): its endpoints and
 * their recent deliveries, adding one (the answer is the page itself, the one that shows its
 * secret), removing one after a confirmation, and Retry now.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import { formOf, LANGUAGE_COOKIE, type PageKit } from './account.kit.js';
import { messagePage, webhooksPath } from './account.pages.js';
import type { AccountService, SignedIn } from './account.usecases.js';
import type { AccountWebhooks } from './account.webhooks.js';
import { confirmRemovePage, type WebhooksPageArgs, webhooksPage } from './account.webhooks.pages.js';

export function registerWebhookPages(
  scope: FastifyInstance,
  kit: PageKit,
  accounts: AccountService,
  webhooks: AccountWebhooks,
): void {
  const { languageOf, signedInOf, html, requirePost, cookie } = kit;

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
}
