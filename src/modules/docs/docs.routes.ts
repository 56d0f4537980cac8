/**
 * GET /openapi.json and GET /docs, both made from the schemas of the routes registered after
 * registerDocsRoutes (so register it first). The document is made on first request, then kept; its
 * `servers` entry is CHATLOG_PUBLIC_URL, or the address the client asked at.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PAGE_SECURITY_HEADERS } from '../../lib/html.js';
import { JSON_TYPE } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { pickLanguage } from '../account/account.i18n.js';
import { type DocumentedRoute, type JsonObject, openApiDocument } from './docs.openapi.js';
import { type DocumentedTools, docsPage } from './docs.page.js';

/** Documents kept at once, one per server address (a bound on what Host headers can make us keep). */
const MAX_DOCUMENTS = 20;
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

export interface DocsRouteDeps {
  /** Base URL clients reach the API at (CHATLOG_PUBLIC_URL), for the page's examples. */
  publicUrl: string | undefined;
  methods: PathMethods;
  /** The MCP server's tools, listed on the page (CONTRACT §15). */
  tools?: DocumentedTools | undefined;
}

export function registerDocsRoutes(app: FastifyInstance, deps: DocsRouteDeps): void {
  const routes: DocumentedRoute[] = [];
  app.addHook('onRoute', (route) => {
    if (route.schema?.operationId) routes.push(route);
  });
  // One document per address it names as its server (CHATLOG_PUBLIC_URL: only one).
  const documents = new Map<string, { document: JsonObject; json: string }>();
  const documentFor = (baseUrl: string) => {
    let made = documents.get(baseUrl);
    if (!made) {
      if (documents.size >= MAX_DOCUMENTS) documents.clear();
      const document = openApiDocument(routes, baseUrl);
      made = { document, json: JSON.stringify(document) };
      documents.set(baseUrl, made);
    }
    return made;
  };
  // Without CHATLOG_PUBLIC_URL, the address the client asked at. The Host is the client's own word:
  // only a plain host[:port] makes it into the document and the page.
  const baseUrlOf = (request: FastifyRequest) => {
    const given = request.headers.host ?? '';
    const host = HOST.test(given) ? given : 'chatlog.example.com';
    return deps.publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${host}`;
  };

  app.get('/openapi.json', async (request, reply) => {
    const { json } = documentFor(baseUrlOf(request));
    return reply.type(JSON_TYPE).header('Cache-Control', 'no-cache').send(json);
  });

  // /openapi.json is not declared: another method there is 404, as it always was.
  deps.methods.declare(app, { url: '/docs', allowed: ['GET', 'HEAD'] });
  app.get('/docs', async (request, reply) => {
    // Rendered per request: without CHATLOG_PUBLIC_URL the examples use the Host the client sent.
    const baseUrl = baseUrlOf(request);
    const { document } = documentFor(baseUrl);
    const language = pickLanguage(undefined, request.headers['accept-language']);
    return reply
      .headers(PAGE_SECURITY_HEADERS)
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .header('Content-Language', language)
      .header('Vary', 'Accept-Language')
      .send(docsPage(document, baseUrl, language, deps.tools));
  });
}
