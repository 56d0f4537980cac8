/** GET /healthz (liveness) and GET /readyz (readiness) for load balancers and orchestrators. */
import type { FastifyInstance } from 'fastify';
import { sendError } from '../../lib/framework-errors.js';
import { JSON_TYPE } from '../../lib/http.js';
import { beforeAnyRouteResponses, unavailableResponse } from '../../lib/schemas.js';
import { healthErrors } from './health.errors.js';

const HEALTH_SCHEMA = {
  operationId: 'health',
  summary: 'The process runs',
  description: 'Liveness: 200 while the process runs, whatever the store does.',
  tags: ['health'],
  response: {
    200: { description: 'Alive.', type: 'object', properties: { status: { const: 'ok' } } },
    ...beforeAnyRouteResponses,
  },
} as const;

const READY_SCHEMA = {
  operationId: 'ready',
  summary: 'The store answers and its schema is current',
  description: 'Readiness: 503 while the store does not answer (route traffic elsewhere), else 200.',
  tags: ['health'],
  response: {
    200: { description: 'Ready for traffic.', type: 'object', properties: { status: { const: 'ready' } } },
    ...beforeAnyRouteResponses,
    503: unavailableResponse,
  },
} as const;

export interface HealthRouteDeps {
  /** True when the store answers and its schema is current. */
  ready(): Promise<boolean>;
}

export function registerHealthRoutes(app: FastifyInstance, deps: HealthRouteDeps): void {
  void app.register(async (scope) => {
    scope.get('/healthz', { schema: HEALTH_SCHEMA }, async (_request, reply) =>
      reply.type(JSON_TYPE).send({ status: 'ok' }),
    );
    scope.get('/readyz', { schema: READY_SCHEMA }, async (_request, reply) => {
      const ready = await deps.ready().catch(() => false);
      if (!ready) return sendError(reply, healthErrors.notReady());
      return reply.type(JSON_TYPE).send({ status: 'ready' });
    });
  });
}
