/** GET /api/line/:hubId/reports: how well the account answers (CONTRACT §17). */
import type { FastifyInstance } from 'fastify';
import { JSON_TYPE, NO_STORE, rawQueryOf } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import { checkedByHandler } from '../../lib/schemas.js';
import { reportErrors } from './reports.errors.js';
import { reportRouteSchema } from './reports.schemas.js';
import { buildReport, checkReportRequest, type ReportDeps } from './reports.usecases.js';

export const REPORTS_PATH = '/api/line/:hubId/reports';

export interface ReportRouteDeps extends ReportDeps {
  methods: PathMethods;
}

export function registerReportRoutes(app: FastifyInstance, deps: ReportRouteDeps): void {
  app.route<{ Params: { hubId: string } }>({
    method: 'GET',
    url: REPORTS_PATH,
    exposeHeadRoute: false,
    schema: reportRouteSchema,
    // checkReportRequest checks in the contract's order; a schema validator running first would not.
    validatorCompiler: checkedByHandler,
    handler: async (request, reply) => {
      reply.header('Vary', 'Authorization').header('Cache-Control', NO_STORE);
      const checked = await checkReportRequest(deps, {
        hubId: request.params.hubId,
        query: rawQueryOf(request.raw.url ?? ''),
        authorization: request.headers.authorization,
        audit: request.audit ?? undefined,
      });
      const report = await buildReport(deps.reports, checked.query);
      return reply.headers(checked.headers).type(JSON_TYPE).send(JSON.stringify(report));
    },
  });
  deps.methods.declare(app, {
    url: REPORTS_PATH,
    allowed: ['GET'],
    refuseByRoute: true,
    refusal: reportErrors.methodNotAllowed,
  });
}
