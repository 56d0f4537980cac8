/** GET /metrics for Prometheus, and the per-request counters behind it. */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sendError } from '../../lib/framework-errors.js';
import type { Metrics } from '../../lib/metrics.js';
import { metricsErrors } from './metrics.errors.js';

export interface MetricsRouteDeps {
  metrics: Metrics;
  /** Bearer token /metrics requires, when set. */
  token: string | undefined;
}

export function registerMetricsRoutes(app: FastifyInstance, deps: MetricsRouteDeps): void {
  const { metrics } = deps;
  app.addHook('onResponse', async (request, reply) => {
    metrics.request(
      request.routeOptions.url ?? 'unmatched',
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
  });
  const token = deps.token ? Buffer.from(`Bearer ${deps.token}`) : undefined;
  app.get('/metrics', async (request, reply) => {
    if (token) {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== token.length || !timingSafeEqual(given, token)) {
        return sendError(reply, metricsErrors.tokenRequired());
      }
    }
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });
}
