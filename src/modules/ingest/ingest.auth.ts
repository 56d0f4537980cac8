/** The ingest API's key: `Authorization: Bearer <key>`, scope `ingest`, checked by keys.authorize. */
import type { KeyedEndpoint } from '../keys/keys.authorize.js';
import { ingestKeyErrors } from '../keys/keys.errors.js';

/** The ingest API does not read the hub's settings, so it only checks that the key is the hub's. */
export const INGEST_API = {
  scope: 'ingest',
  refusals: ingestKeyErrors,
  readsHub: false,
  limitFieldsOnRefusals: false,
} as const satisfies KeyedEndpoint;
