/**
 * The one way a path says which methods it takes: `methods.declare(...)` beside the path's routes.
 * Every other method gets 405 method_not_allowed with an Allow header, before any other check:
 *   - on API paths, the other methods Fastify can route get a route of their own that refuses in
 *     onRequest, before any key check and before any body is read;
 *   - methods Fastify cannot route (PROPFIND, LOCK, TRACE and QUERY on paths that do not route
 *     them...), and every other method on the pages' paths, reach the not-found handler, which asks
 *     `refusalFor(path)`: 405 on a declared path, else 404.
 */
import type { FastifyInstance, HTTPMethods } from 'fastify';
import type { AppError } from './errors.js';
import { httpErrors } from './http.errors.js';

/** The methods an API path refuses with a route of its own (those it does not take). */
const ROUTED_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'POST'] as const;

export interface PathDeclaration {
  /** The path as its routes name it (`/ingest/line/:hubId/messages`); `:name` is one segment. */
  url: string;
  /** The methods it takes, in the order the Allow header lists them. */
  allowed: readonly HTTPMethods[];
  /**
   * An API path: the other methods are refused by a route of the path's own (see above). Pages leave
   * them to the not-found handler.
   */
  refuseByRoute?: boolean;
  /** The routed refusal, when the path words it otherwise (the read API's; CONTRACT §1). */
  refusal?: () => AppError;
  /**
   * `:name` may be empty, as Fastify routes it in the middle of a path: the read API answers an
   * empty hub id itself (invalid_hub_id), so its 405 covers that path too.
   */
  emptySegments?: boolean;
}

export class PathMethods {
  private readonly paths: Array<{ pattern: RegExp; allow: string }> = [];

  /** Declares a path's methods; `scope` is where its refusing route goes (the routes' own scope). */
  declare(scope: FastifyInstance, path: PathDeclaration): void {
    const allow = path.allowed.join(', ');
    const segment = path.emptySegments ? '[^/]*' : '[^/]+';
    const source = path.url
      .split('/')
      .map((part) => (part.startsWith(':') ? segment : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    // A trailing slash is accepted (ignoreTrailingSlash), so `/` itself is the one path ending in one.
    this.paths.push({ pattern: new RegExp(source.endsWith('/') ? `^${source}$` : `^${source}/?$`), allow });
    if (!path.refuseByRoute) return;
    const refusal = path.refusal ?? (() => httpErrors.methodNotAllowed(allow));
    const refuse = async () => {
      throw refusal();
    };
    scope.route({
      method: ROUTED_METHODS.filter((method) => !path.allowed.includes(method)),
      url: path.url,
      onRequest: refuse,
      handler: refuse,
    });
  }

  /** For the not-found handler: 405 for another method on a declared path; undefined (404) otherwise. */
  refusalFor(path: string): AppError | undefined {
    const allow = this.paths.find(({ pattern }) => pattern.test(path))?.allow;
    return allow === undefined ? undefined : httpErrors.methodNotAllowed(allow);
  }
}
