/**
 * GET / : a person who opens the server's address in a browser finds where to go (the account
 * screen, the API reference) instead of a JSON 404; /favicon.ico is 204, no icon. Other unknown paths
 * keep their JSON 404.
 */
import type { FastifyInstance } from 'fastify';
import { PAGE_SECURITY_HEADERS } from '../../lib/html.js';
import type { PathMethods } from '../../lib/methods.js';

export const HOME_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>chatlog</title>
<link rel="stylesheet" href="/account/assets/account.css">
</head>
<body>
<header class="top"><span class="brand">chatlog</span><nav aria-label="Pages"><a href="/account">API keys</a> <a href="/docs">API reference</a></nav></header>
<main id="main">
<h1>chatlog</h1>
<p>Keeps the LINE chat messages of HubSpot portals and serves them through one read-only JSON API.</p>
<ul>
<li><a href="/account">API keys</a>: sign in to issue, copy and revoke the keys of your hubs.</li>
<li><a href="/docs">API reference</a>: every endpoint, parameter and error (also as <a href="/openapi.json">OpenAPI 3.1</a>).</li>
</ul>
<p>Messages are read with <code>GET /api/line/{hubId}/messages?apikey=KEY&amp;from=YYYY-MM-DD&amp;to=YYYY-MM-DD</code>.</p>
</main>
</body>
</html>
`;

export function registerHomeRoutes(app: FastifyInstance, methods: PathMethods): void {
  methods.declare(app, { url: '/', allowed: ['GET', 'HEAD'] });
  app.get('/', async (_request, reply) =>
    reply
      // Cache-Control: private, no-store, as on every answer (set for all in app.ts).
      .headers(PAGE_SECURITY_HEADERS)
      .type('text/html; charset=utf-8')
      .send(HOME_PAGE),
  );
  // Browsers ask every page's site for an icon: "none" rather than a 404 in every console.
  methods.declare(app, { url: '/favicon.ico', allowed: ['GET', 'HEAD'] });
  app.get('/favicon.ico', async (_request, reply) => reply.code(204).send());
}
