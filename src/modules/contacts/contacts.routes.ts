/** DELETE /api/line/:hubId/contacts/:lineId: erase a contact (CONTRACT §13), with an admin key. */
import type { FastifyInstance } from 'fastify';
import { JSON_TYPE } from '../../lib/http.js';
import type { PathMethods } from '../../lib/methods.js';
import type { Store } from '../../store/store.js';
import { type AuthorizeDeps, keyCheckHook, partTwoEndpoint } from '../keys/keys.authorize.js';
import { eraseContact } from './contacts.erasure.js';
import { contactErrors } from './contacts.errors.js';
import { eraseContactRouteSchema } from './contacts.schemas.js';

const CONTACT_PATH = '/api/line/:hubId/contacts/:lineId';
const ADMIN = partTwoEndpoint('admin', 'erase contacts', false);

export interface ContactRouteDeps {
  store: Pick<Store, 'contacts' | 'search'>;
  authorize: AuthorizeDeps;
  methods: PathMethods;
  clock: () => number;
}

export function registerContactRoutes(app: FastifyInstance, deps: ContactRouteDeps): void {
  void app.register(async (scope) => {
    scope.addHook('onRequest', keyCheckHook(deps.authorize, ADMIN));
    scope.route<{ Params: { hubId: string; lineId: string } }>({
      method: 'DELETE',
      url: CONTACT_PATH,
      schema: eraseContactRouteSchema,
      handler: async (request, reply) => {
        const { hubId, lineId } = request.params;
        const erased = await eraseContact(deps, hubId, lineId);
        if (erased === undefined) throw contactErrors.notFound(lineId);
        return reply.type(JSON_TYPE).send({ erased: { messages: erased } });
      },
    });
  });
  deps.methods.declare(app, {
    url: CONTACT_PATH,
    allowed: ['DELETE'],
    refuseByRoute: true,
    refusal: () => contactErrors.methodNotAllowed(),
  });
}
