/**
 * The HubSpot inbox page over HTTP (CONTRACT §18), inside the account screen's scope (its CSP,
 * no-store, session and CSRF rules):
 *
 *   GET  /account/hubs/:hubId/hubspot              the connection's state
 *   POST /account/hubs/:hubId/hubspot/connect      to HubSpot's authorize page (a new state)
 *   GET  /account/hubspot/callback?code&state      back from it: the inboxes to choose from
 *   POST /account/hubs/:hubId/hubspot/inbox        the inbox chosen: connected
 *   POST /account/hubs/:hubId/hubspot/disconnect   `Disconnect HubSpot`
 *
 * The callback is a GET that HubSpot's page sends the owner to: it needs the session that began
 * the authorization, and uses its state once.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PAGE_SECURITY_HEADERS } from '../../lib/html.js';
import type { PathMethods } from '../../lib/methods.js';
import type { HubspotConnections } from '../hubspot/hubspot.connect.js';
import { HUBSPOT_WORDS } from './account.hubspot.i18n.js';
import { chooseInboxPage, hubspotPage, hubspotPath } from './account.hubspot.pages.js';
import { formOf, type PageKit } from './account.kit.js';
import { messagePage } from './account.pages.js';
import type { AccountService, SignedIn } from './account.usecases.js';

type HubParams = { hubId: string };
const CALLBACK = '/account/hubspot/callback';

export function declareHubspotPaths(app: FastifyInstance, methods: PathMethods): void {
  methods.declare(app, { url: '/account/hubs/:hubId/hubspot', allowed: ['GET', 'HEAD'] });
  methods.declare(app, { url: CALLBACK, allowed: ['GET', 'HEAD'] });
  for (const action of ['connect', 'inbox', 'disconnect']) {
    methods.declare(app, { url: `/account/hubs/:hubId/hubspot/${action}`, allowed: ['POST'] });
  }
}

export function registerHubspotPages(
  scope: FastifyInstance,
  kit: PageKit,
  accounts: AccountService,
  hubspot: HubspotConnections,
): void {
  const common = async (request: FastifyRequest, signedIn: SignedIn, hubId: string) => {
    // The hub must be the account's (not_found otherwise: a page saying so).
    const { timeZone } = await accounts.hubOverview(signedIn, hubId);
    const { language, words } = kit.languageOf(request);
    return {
      language,
      words,
      hw: HUBSPOT_WORDS[language],
      email: signedIn.account.email,
      csrfToken: kit.csrfToken(signedIn),
      hubId,
      timeZone,
    };
  };
  const redirectUri = (request: FastifyRequest) => `${kit.baseUrl(request)}${CALLBACK}`;
  // The page's Connect HubSpot form is answered with a redirect to HubSpot's authorize page, which
  // the screen's form-action 'self' would stop: this page's policy names HubSpot's origin too.
  const policy = PAGE_SECURITY_HEADERS['Content-Security-Policy'].replace(
    "form-action 'self'",
    `form-action 'self' ${hubspot.authorizeOrigin()}`,
  );

  scope.get<{ Params: HubParams; Querystring: { lang?: string; done?: string } }>(
    '/account/hubs/:hubId/hubspot',
    async (request, reply) => {
      const path = hubspotPath(request.params.hubId);
      const switched = kit.switchLanguage(request, reply, path);
      if (switched) return switched;
      const signedIn = await kit.signedInOf(request);
      if (!signedIn) return reply.redirect('/account', 303);
      const args = await common(request, signedIn, request.params.hubId);
      const done = request.query.done;
      const notice =
        done === 'connected'
          ? args.hw.done
          : done === 'disconnected'
            ? args.hw.disconnectedNotice
            : undefined;
      const status = await hubspot.status(request.params.hubId);
      reply.header('Content-Security-Policy', policy);
      return kit.html(reply, 200, hubspotPage({ ...args, status, notice }));
    },
  );

  scope.post<{ Params: HubParams }>('/account/hubs/:hubId/hubspot/connect', async (request, reply) => {
    const signedIn = await kit.requirePost(request, reply, formOf(request).get('csrf') ?? undefined);
    if (!signedIn) return reply;
    await common(request, signedIn, request.params.hubId);
    const url = await hubspot.begin(signedIn.account.id, request.params.hubId, redirectUri(request));
    return reply.redirect(url, 303);
  });

  scope.get<{ Querystring: { code?: string; state?: string; error?: string } }>(
    CALLBACK,
    async (request, reply) => {
      const signedIn = await kit.signedInOf(request);
      if (!signedIn) return reply.redirect('/account', 303);
      const { language, words } = kit.languageOf(request);
      const { code, state, error } = request.query;
      if (error !== undefined || !code || !state) {
        const message = error !== undefined ? HUBSPOT_WORDS[language].declined : words.formExpired;
        return kit.html(reply, 400, messagePage({ language, words, message }));
      }
      const { hubId, inboxes } = await hubspot.finish(signedIn.account.id, state, code, redirectUri(request));
      const args = await common(request, signedIn, hubId);
      return kit.html(reply, 200, chooseInboxPage({ ...args, state, inboxes }));
    },
  );

  scope.post<{ Params: HubParams }>('/account/hubs/:hubId/hubspot/inbox', async (request, reply) => {
    const form = formOf(request);
    const signedIn = await kit.requirePost(request, reply, form.get('csrf') ?? undefined);
    if (!signedIn) return reply;
    await common(request, signedIn, request.params.hubId);
    await hubspot.connect(
      signedIn.account.id,
      request.params.hubId,
      form.get('state') ?? '',
      form.get('inbox') ?? '',
    );
    return reply.redirect(`${hubspotPath(request.params.hubId)}?done=connected`, 303);
  });

  scope.post<{ Params: HubParams }>('/account/hubs/:hubId/hubspot/disconnect', async (request, reply) => {
    const signedIn = await kit.requirePost(request, reply, formOf(request).get('csrf') ?? undefined);
    if (!signedIn) return reply;
    const args = await common(request, signedIn, request.params.hubId);
    const { hubspotError } = await hubspot.disconnect(request.params.hubId);
    if (hubspotError === undefined)
      return reply.redirect(`${hubspotPath(request.params.hubId)}?done=disconnected`, 303);
    const status = await hubspot.status(request.params.hubId);
    return kit.html(
      reply,
      200,
      hubspotPage({ ...args, status, notice: args.hw.hubspotRefusedDisable(hubspotError) }),
    );
  });
}
