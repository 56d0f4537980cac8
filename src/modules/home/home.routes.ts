/**
 * GET / : a person who opens the server's address in a browser finds where to go (the account
 * screen, the API reference) instead of a JSON 404, in English or Japanese as the browser asks; /favicon.ico is 204, no icon. Other unknown paths
 * keep their JSON 404.
 */
import type { FastifyInstance } from 'fastify';
import { PAGE_SECURITY_HEADERS } from '../../lib/html.js';
import type { PathMethods } from '../../lib/methods.js';
import { type Language, pickLanguage } from '../account/account.i18n.js';

const WORDS = {
  en: {
    pages: 'Pages',
    keys: 'API keys',
    reference: 'API reference',
    about: 'Keeps the LINE chat messages of HubSpot portals and serves them through one read-only JSON API.',
    keysItem: 'sign in to issue, copy and revoke the keys of your hubs.',
    referenceItem: (openapi: string) => `every endpoint, parameter and error (also as ${openapi}).`,
    read: (call: string) => `Messages are read with ${call}.`,
  },
  ja: {
    pages: 'ページ',
    keys: 'API キー',
    reference: 'API リファレンス',
    about: 'HubSpot ポータルの LINE のメッセージを保存し、読み取り専用の JSON API ひとつで返します。',
    keysItem: 'サインインして、ハブのキーを発行・コピー・無効化します。',
    referenceItem: (openapi: string) =>
      `すべてのエンドポイント、パラメーター、エラー(${openapi} もあります)。`,
    read: (call: string) => `メッセージは ${call} で読みます。`,
  },
};

/** The page in the language the browser asks for (Accept-Language): English or Japanese. */
export function homePage(language: Language): string {
  const w = WORDS[language];
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>chatlog</title>
<link rel="stylesheet" href="/account/assets/account.css">
</head>
<body>
<header class="top"><span class="brand">chatlog</span><nav aria-label="${w.pages}"><a href="/account">${w.keys}</a> <a href="/docs">${w.reference}</a></nav></header>
<main id="main">
<h1>chatlog</h1>
<p>${w.about}</p>
<ul>
<li><a href="/account">${w.keys}</a>: ${w.keysItem}</li>
<li><a href="/docs">${w.reference}</a>: ${w.referenceItem('<a href="/openapi.json">OpenAPI 3.1</a>')}</li>
</ul>
<p>${w.read('<code>GET /api/line/{hubId}/messages?apikey=KEY&amp;from=YYYY-MM-DD&amp;to=YYYY-MM-DD</code>')}</p>
</main>
</body>
</html>
`;
}

export function registerHomeRoutes(app: FastifyInstance, methods: PathMethods): void {
  methods.declare(app, { url: '/', allowed: ['GET', 'HEAD'] });
  app.get('/', async (request, reply) => {
    const language = pickLanguage(undefined, request.headers['accept-language']);
    return (
      reply
        // Cache-Control: private, no-store, as on every answer (set for all in app.ts).
        .headers(PAGE_SECURITY_HEADERS)
        .header('Content-Language', language)
        .header('Vary', 'Accept-Language')
        .type('text/html; charset=utf-8')
        .send(homePage(language))
    );
  });
  // Browsers ask every page's site for an icon: "none" rather than a 404 in every console.
  methods.declare(app, { url: '/favicon.ico', allowed: ['GET', 'HEAD'] });
  app.get('/favicon.ico', async (_request, reply) => reply.code(204).send());
}
