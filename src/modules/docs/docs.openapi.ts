/**
 * The OpenAPI 3.1 document (GET /openapi.json), generated from the routes' own schemas: every route
 * whose schema has an operationId is an operation; its params, querystring and headers become
 * parameters, its body the request body, its response entries the answers with their error codes.
 * Shapes used in several places are shared as components.
 */
import type { FastifySchema } from 'fastify';
import { errorSchema } from '../../lib/schemas.js';
import { accountMessageSchema, contactLinkBodySchema, contactLinkSchema } from '../ingest/ingest.schemas.js';
import { contactSchema, messageSchema } from '../messages/messages.schemas.js';

export interface DocumentedRoute {
  method: string | string[];
  url: string;
  schema?: FastifySchema | undefined;
}

export type JsonObject = Record<string, unknown>;

const COMPONENTS: Record<string, unknown> = {
  Contact: contactSchema,
  Message: messageSchema,
  AccountMessage: accountMessageSchema,
  ContactLinkChange: contactLinkBodySchema,
  ContactLink: contactLinkSchema,
  Error: errorSchema,
};

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The schema with every shape that is a component replaced by a reference to it. */
function withRefs(schema: unknown, componentOf: Map<string, string>, self?: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => withRefs(item, componentOf));
  if (!isObject(schema)) return schema;
  const name = componentOf.get(JSON.stringify(schema));
  if (name !== undefined && name !== self) return { $ref: `#/components/schemas/${name}` };
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, withRefs(value, componentOf)]),
  );
}

function parameters(schema: unknown, where: 'path' | 'query' | 'header', refs: Map<string, string>) {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const { description, ...rest } = isObject(property) ? property : {};
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description === undefined ? {} : { description }),
      schema: withRefs(rest, refs),
    };
  });
}

function response(entry: unknown, refs: Map<string, string>): JsonObject {
  const { description, headers, examples, ...schema } = isObject(entry) ? entry : {};
  const answer: JsonObject = { description: description ?? '' };
  if (isObject(headers)) {
    answer.headers = Object.fromEntries(
      Object.entries(headers).map(([name, header]) => {
        const { description: meaning, ...rest } = isObject(header) ? header : {};
        return [name, { description: meaning, schema: rest }];
      }),
    );
  }
  if (schema.type !== 'null') {
    answer.content = {
      'application/json': {
        schema: withRefs(schema, refs),
        ...(Array.isArray(examples) ? { example: examples[0] } : {}),
      },
    };
  }
  return answer;
}

function operation(schema: FastifySchema, refs: Map<string, string>): JsonObject {
  const { operationId, summary, description, security, body } = schema;
  const checkOrder = schema['x-check-order'];
  return {
    operationId,
    summary,
    ...(description === undefined ? {} : { description }),
    ...(security === undefined ? {} : { security }),
    ...(checkOrder === undefined ? {} : { 'x-check-order': checkOrder }),
    parameters: [
      ...parameters(schema.params, 'path', refs),
      ...parameters(schema.querystring, 'query', refs),
      ...parameters(schema.headers, 'header', refs),
    ],
    ...(body === undefined
      ? {}
      : {
          requestBody: { required: true, content: { 'application/json': { schema: withRefs(body, refs) } } },
        }),
    responses: Object.fromEntries(
      Object.entries(isObject(schema.response) ? schema.response : {}).map(([status, entry]) => [
        status,
        response(entry, refs),
      ]),
    ),
  };
}

export function openApiDocument(routes: readonly DocumentedRoute[]): JsonObject {
  const refs = new Map(Object.entries(COMPONENTS).map(([name, schema]) => [JSON.stringify(schema), name]));
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    if (!route.schema?.operationId) continue;
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    for (const method of methods) {
      paths[path] = { ...paths[path], [method.toLowerCase()]: operation(route.schema, refs) };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'chatlog',
      version: '1',
      description:
        'The LINE chat messages of HubSpot portals ("hubs"), served back through one read-only JSON API. ' +
        'Every error is {"error":{"code","message"}}; the code is stable, the message is for people.',
    },
    paths,
    components: {
      securitySchemes: {
        ingestKey: { type: 'http', scheme: 'bearer', description: 'An API key of scope ingest.' },
      },
      schemas: Object.fromEntries(
        Object.entries(COMPONENTS).map(([name, schema]) => [name, withRefs(schema, refs, name)]),
      ),
    },
  };
}
