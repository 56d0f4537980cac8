/**
 * GET /openapi.json and GET /docs, both made from the schemas of the routes registered after
 * registerDocsRoutes (so register it first). The document is made on first request, then kept.
 */
import type { FastifyInstance } from 'fastify';
import { PAGE_SECURITY_HEADERS } from '../../lib/html.js';
import { JSON_TYPE } from '../../lib/http.js';
import { type DocumentedRoute, openApiDocument } from './docs.openapi.js';
import { docsPage } from './docs.page.js';

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

export interface DocsRouteDeps {
  /** Base URL clients reach the API at (CHATLOG_PUBLIC_URL), for the page's examples. */
  publicUrl: string | undefined;
}

export function registerDocsRoutes(app: FastifyInstance, deps: DocsRouteDeps): void {
  const routes: DocumentedRoute[] = [];
  app.addHook('onRoute', (route) => {
    if (route.schema?.operationId) routes.push(route);
  });
  let document: ReturnType<typeof openApiDocument> | undefined;
  let json: string | undefined;

  app.get('/openapi.json', async (_request, reply) => {
    document ??= openApiDocument(routes);
    json ??= JSON.stringify(document);
    return reply.type(JSON_TYPE).header('Cache-Control', 'no-cache').send(json);
  });

  app.get('/docs', async (request, reply) => {
    // Rendered per request: without CHATLOG_PUBLIC_URL the examples use the Host the client sent.
    // The Host is the client's own word: only a plain host[:port] makes it into the page.
    const given = request.headers.host ?? '';
    const host = HOST.test(given) ? given : 'chatlog.example.com';
    const baseUrl = deps.publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${host}`;
    document ??= openApiDocument(routes);
    return reply
      .headers(PAGE_SECURITY_HEADERS)
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .send(docsPage(document, baseUrl));
  });
}
