/**
 * POST, GET and DELETE /mcp (CONTRACT §15): the MCP server over Streamable HTTP, stateless, so any
 * node answers any request (the SDK's createMcpHandler: the 2026-07-28 revision per request, and the
 * 2025 revisions by a fresh server per request, with no session to keep). The key is checked from
 * the Authorization header before any MCP message is read (`Bearer <key>` of scope read; the query
 * parameter is not taken here): none or a bad one is 401 with a Bearer challenge, another scope 403.
 * The request is not an audit record itself: each tool call is one (mcp.server.ts).
 */
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import type { PathMethods } from '../../lib/methods.js';
import type { Hub } from '../../store/store.js';
import { type AuthorizeDeps, authorize, keyInBearer, type PartTwoEndpoint } from '../keys/keys.authorize.js';
import { partTwoKeyErrors } from '../keys/keys.errors.js';
import { createMcpServer, type McpServerDeps, mcpSdk } from './mcp.server.js';

export const MCP_PATH = '/mcp';
/** The largest MCP message read (a tool call's arguments are small). */
const BODY_LIMIT = 256 * 1024;

const MCP: PartTwoEndpoint<true> = {
  scope: 'read',
  refusals: {
    ...partTwoKeyErrors('read', 'read the archive through MCP'),
    missing: () =>
      new AppError('missing_api_key', 'send an API key of scope read as Authorization: Bearer <key>', {
        'WWW-Authenticate': 'Bearer realm="chatlog"',
      }),
  },
  readsHub: true,
  limitFieldsOnRefusals: true,
};

export interface McpRouteDeps {
  tools: McpServerDeps;
  /** CHATLOG_PUBLIC_URL: a web page of this origin may call /mcp (as may one of this machine's). */
  publicUrl: string | undefined;
  authorize: AuthorizeDeps;
  methods: PathMethods;
  /** Reports what the SDK could not answer (a log line). */
  onError(error: Error): void;
}

interface Caller {
  hub: Hub;
  keyId: string;
  authorization: string;
  admitted: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpCaller?: Caller;
  }
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a browser's `Origin` may call /mcp: CHATLOG_PUBLIC_URL's origin, or a page of this
 * machine (loopback). Not the Host asked at: under DNS rebinding the attacker's name is the Host too.
 */
export function allowedOrigin(origin: string, publicUrl: string | undefined): boolean {
  let asked: URL;
  try {
    asked = new URL(origin);
  } catch {
    return false;
  }
  if (LOOPBACK.has(asked.hostname)) return true;
  if (publicUrl === undefined) return false;
  try {
    return new URL(publicUrl).origin === asked.origin;
  } catch {
    return false;
  }
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  // Made at the first MCP request (mcpSdk).
  let made: McpHttpHandler | undefined;
  const handler = () => {
    made ??= mcpSdk().createMcpHandler(
      (context) => {
        const caller = context.authInfo?.extra?.caller as (Caller & { client: string }) | undefined;
        if (!caller) throw new Error('an MCP request reached the handler without its key');
        return createMcpServer(deps.tools, caller, caller.client);
      },
      { legacy: 'stateless', maxRequestBodySize: BODY_LIMIT, onerror: deps.onError },
    );
    return made;
  };
  app.addHook('onClose', async () => made?.close());
  void app.register(async (scope) => {
    // The body goes to the SDK as it came: it reads and checks it itself.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    scope.addHook('onRequest', async (request, reply) => {
      reply.header('Vary', 'Authorization');
      // DNS rebinding (the MCP specification's transport security): a web page of another site,
      // reaching this server under a name of its own, is refused before anything else.
      const origin = request.headers.origin;
      if (origin !== undefined && !allowedOrigin(origin, deps.publicUrl)) {
        throw new AppError(
          'forbidden',
          'a request from a web page of another site is refused (its Origin header); MCP clients send none',
        );
      }
      const authorization = request.headers.authorization;
      const access = await authorize(deps.authorize, {
        presented: keyInBearer(authorization),
        hubId: undefined,
        endpoint: MCP,
      });
      reply.headers(await access.admit());
      request.mcpCaller = {
        hub: access.hub,
        keyId: access.key.id,
        authorization: authorization ?? '',
        admitted: true,
      };
    });
    scope.route({
      method: ['GET', 'POST', 'DELETE'],
      url: MCP_PATH,
      handler: (request, reply) => answer(request, reply),
    });
  });
  deps.methods.declare(app, { url: MCP_PATH, allowed: ['GET', 'POST', 'DELETE'] });

  async function answer(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const caller = request.mcpCaller as Caller;
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const body = typeof request.body === 'string' ? request.body : undefined;
    const abort = new AbortController();
    // The client left before its answer was written (the request's own 'close' comes once its body is read).
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const web = new Request(`http://${request.headers.host ?? 'localhost'}${request.url}`, {
      method: request.method,
      headers,
      signal: abort.signal,
      ...(body !== undefined && request.method === 'POST' && { body }),
    });
    const response = await handler().fetch(web, {
      authInfo: {
        token: 'checked',
        clientId: caller.keyId,
        scopes: ['read'],
        extra: { caller: { ...caller, client: request.ip } },
      },
    });
    reply.code(response.status);
    response.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    if (!response.body) return reply.send();
    return reply.send(Readable.fromWeb(response.body as unknown as NodeReadableStream));
  }
}
