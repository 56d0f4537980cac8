/**
 * The account screen over HTTP, put together: its paths (another method is 405), one scope with its
 * rules and PageKit (account.kit.ts), the pages (keys and sign-in, webhooks, conversations: each in
 * its own handlers file), and the static files. Every answer carries a strict CSP and no-store;
 * every state change needs a same-origin request and the session's CSRF token. Its services are made
 * by app.ts, as every module's are.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { httpErrors } from '../../lib/http.errors.js';
import type { PathMethods } from '../../lib/methods.js';
import { packageRoot } from '../../lib/package-root.js';
import type { HubspotConnections } from '../hubspot/hubspot.connect.js';
import { declareConversationPaths, registerConversationRoutes } from './account.conversations.handlers.js';
import type { AccountConversations } from './account.conversations.js';
import { declareHubspotPaths, registerHubspotPages } from './account.hubspot.handlers.js';
import { registerKeyPages } from './account.keys.handlers.js';
import { accountScope } from './account.kit.js';
import { declareReportPaths, registerReportPages } from './account.reports.handlers.js';
import type { AccountService } from './account.usecases.js';
import { registerWebhookPages } from './account.webhooks.handlers.js';
import type { AccountWebhooks } from './account.webhooks.js';
import { WEBHOOKS_SCRIPT } from './account.webhooks.script.js';

export { SESSION_COOKIE } from './account.kit.js';

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
  webhooks: AccountWebhooks;
  /** The conversations, search, downloads and erasure of each hub (CONTRACT §13, §14). */
  conversations: AccountConversations;
  /** Each hub's HubSpot inbox (CONTRACT §18). */
  hubspot: HubspotConnections;
}

export function registerAccountRoutes(app: FastifyInstance, deps: AccountRouteDeps): void {
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
  declareReportPaths(app, deps.methods);
  declareHubspotPaths(app, deps.methods);

  app.register(async (scope) => {
    const kit = accountScope(scope, deps.accounts, deps.publicUrl);
    registerKeyPages(scope, kit, deps.accounts, deps.webhooks);
    registerWebhookPages(scope, kit, deps.accounts, deps.webhooks);
    registerConversationRoutes(scope, kit, deps.conversations);
    registerReportPages(scope, kit, deps.conversations);
    registerHubspotPages(scope, kit, deps.accounts, deps.hubspot);

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
